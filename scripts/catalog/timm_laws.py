"""Size laws: how a layer-table number follows the input's height H and width W.

The timm catalog records each model's layer table at a few dozen input sizes (on the meta device,
where a forward pass costs no arithmetic) and keeps, for every number of every row, the law that
explains all of them. A chain of convolutions and poolings maps a side of n pixels to
floor((n + a) / s) (each layer is floor((n + p) / q) with integers, and such maps compose into
one of the same form), patch tokens are products of two such sides plus the class/register
tokens, and a stage that upsamples multiplies by k. So one law covers them all:

    value = c + k * floor((H + a) / s) * floor((W + b) / t)

with either factor absent (s or t = 0). The samples pin `a` down only to an interval (sizes with
residues the samples did not try may round either way); the law keeps the interval, and the
TypeScript side says so in a note when a user's size falls where the interval's ends disagree.

Encoded as a number (constant) or a list [c, k, a, s, aSpan, b, t, bSpan]
(src/core/catalog/timm/timmLaws.ts evaluates it).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

Law = object  # int | List[int]

#: Strides as networks have them (powers of two, Swin's 4 x 7 windows, 14-pixel patches...): a
#: candidate among these is preferred when the samples allow several.
NICE_STRIDES = sorted({2 ** i * m for i in range(0, 10) for m in (1, 3, 7)} | {14, 28, 56, 112, 224, 448, 5, 10, 20, 40, 80, 160})


def _floor_fit(xs: Sequence[int], fs: Sequence[int]) -> List[Tuple[int, int, int]]:
    """Every (a, s, span) with floor((x + a') / s) == f for every sample and every a' in
    [a, a + span], likeliest first (nice strides, then the slope's)."""
    pairs = sorted(set(zip(xs, fs)))
    if len({x for x, _ in pairs}) != len(pairs):
        return []
    if all(f == pairs[0][1] for _, f in pairs):
        return []
    span_x = pairs[-1][0] - pairs[0][0]
    span_f = pairs[-1][1] - pairs[0][1]
    if span_f <= 0:
        return []
    estimate = span_x / span_f
    candidates = []
    # Each pair of samples bounds s: |s * df - dx| < s, so s lies within a factor of two of the slope.
    for s in range(max(1, int(estimate / 2)), min(1025, int(estimate * 2) + 2)):
        lo = max(s * f - x for x, f in pairs)
        hi = min(s * f + s - 1 - x for x, f in pairs)
        if lo <= hi:
            candidates.append((s not in NICE_STRIDES, abs(s - estimate), s, lo, hi))
    return [(lo, s, hi - lo) for _, _, s, lo, hi in sorted(candidates)][:6]


def fit_one(xs: Sequence[int], ys: Sequence[int]) -> List[Tuple[int, int, Tuple[int, int, int]]]:
    """Candidates (c, k, (a, s, span)) with y = c + k * floor((x + a) / s) for all samples, 0 <= c < k."""
    k = 0
    for y in ys[1:]:
        k = math.gcd(k, abs(y - ys[0]))
    if k == 0:
        return []
    c = ys[0] % k
    return [(c, k, floor) for floor in _floor_fit(xs, [(y - c) // k for y in ys])]


def evaluate(law: Law, h: int, w: int, high: bool = False) -> int:
    """The law at (h, w); `high` takes each interval's upper end (a value that differs from the
    lower end's means the samples left this size's rounding open). A law of ten numbers adds
    m * F + n * G to the product (a relative-position table of (2F - 1)(2G - 1) entries)."""
    if isinstance(law, int):
        return law
    c, k, a, s, a_span, b, t, b_span = law[:8]  # type: ignore[index]
    f = (h + a + (a_span if high else 0)) // s if s else 1
    g = (w + b + (b_span if high else 0)) // t if t else 1
    value = c + k * f * g
    if len(law) == 10:  # type: ignore[arg-type]
        value += law[8] * f + law[9] * g  # type: ignore[index]
    return value


_CACHE: Dict[Tuple[Tuple[Tuple[int, int], ...], Tuple[int, ...]], Optional[Law]] = {}


def fit(samples: Sequence[Tuple[int, int]], values: Sequence[int]) -> Optional[Law]:
    """fit_uncached, remembered: most rows share their numbers' sequences with other rows."""
    key = (tuple(samples), tuple(values))
    if key not in _CACHE:
        if len(_CACHE) > 100000:
            _CACHE.clear()
        _CACHE[key] = fit_uncached(samples, values)
    found = _CACHE[key]
    return list(found) if isinstance(found, list) else found


def fit_uncached(samples: Sequence[Tuple[int, int]], values: Sequence[int]) -> Optional[Law]:
    """The law through every (H, W) -> value sample, or None. The first sample is the default
    size, and the others must include runs where only H or only W moves away from it."""
    if all(v == values[0] for v in values):
        return values[0]
    h0, w0 = samples[0]
    along_h = [(h, v) for (h, w), v in zip(samples, values) if w == w0]
    along_w = [(w, v) for (h, w), v in zip(samples, values) if h == h0]
    moves_h = len({v for _, v in along_h}) > 1
    moves_w = len({v for _, v in along_w}) > 1
    fits_h = fit_one([h for h, _ in along_h], [v for _, v in along_h]) if moves_h else []
    fits_w = fit_one([w for w, _ in along_w], [v for _, v in along_w]) if moves_w else []
    candidates: List[List[int]] = []
    if moves_h and not moves_w:
        candidates += [[c, k, a, s, span, 0, 0, 0] for c, k, (a, s, span) in fits_h]
    elif moves_w and not moves_h:
        candidates += [[c, k, 0, 0, 0, b, t, span] for c, k, (b, t, span) in fits_w]
    for (_, _, (a, s, a_span)), (_, _, (b, t, b_span)) in [(fh, fw) for fh in fits_h for fw in fits_w]:
        # y = c + k F(H) G(W): the single-side fits may have absorbed a shift of F or G into a.
        for da in range(0, 4):
            for db in range(0, 4):
                law = [0, 1, a - da * s, s, a_span, b - db * t, t, b_span]
                f0 = (h0 + law[2]) // s
                g0 = (w0 + law[5]) // t
                # Two samples fix c and k; every other one must agree.
                other = next(((hw, v) for hw, v in zip(samples, values) if (hw[0] + law[2]) // s * ((hw[1] + law[5]) // t) != f0 * g0), None)
                if other is None:
                    continue
                (h1, w1), v1 = other
                p0, p1 = f0 * g0, ((h1 + law[2]) // s) * ((w1 + law[5]) // t)
                if (v1 - values[0]) % (p1 - p0):
                    continue
                k = (v1 - values[0]) // (p1 - p0)
                candidates.append([values[0] - k * p0, k, law[2], s, a_span, law[5], t, b_span])
    for law in candidates:
        refined = _refine(law, samples, values)
        if refined is not None:
            return refined
    for (_, _, (a, s, a_span)), (_, _, (b, t, b_span)) in [(fh, fw) for fh in fits_h for fw in fits_w]:
        law = _with_linear_terms(samples, values, a, s, b, t)
        if law is not None:
            refined = _refine(law, samples, values)
            if refined is not None:
                return refined
    return None


def _with_linear_terms(samples: Sequence[Tuple[int, int]], values: Sequence[int], a: int, s: int, b: int, t: int) -> Optional[List[int]]:
    """c + k F G + m F + n G through every sample, F and G given: four samples whose
    (1, FG, F, G) are independent fix the integers, and the rest must agree."""
    rows = [((h + a) // s, (w + b) // t, v) for (h, w), v in zip(samples, values)]
    chosen: List[Tuple[int, int, int]] = []
    for row in rows:
        trial = chosen + [row]
        if _rank([[Fraction(1), Fraction(f * g), Fraction(f), Fraction(g)] for f, g, _ in trial]) == len(trial):
            chosen = trial
        if len(chosen) == 4:
            break
    if len(chosen) < 4:
        return None
    solution = _solve([[Fraction(1), Fraction(f * g), Fraction(f), Fraction(g)] for f, g, _ in chosen], [Fraction(v) for _, _, v in chosen])
    if solution is None or any(x.denominator != 1 for x in solution):
        return None
    c, k, m, n = (int(x) for x in solution)
    law = [c, k, a, s, 0, b, t, 0, m, n]
    return law if all(evaluate(law, h, w) == v for (h, w), v in zip(samples, values)) else None


def _rank(matrix: List[List[Fraction]]) -> int:
    rows = [row[:] for row in matrix]
    rank = 0
    for col in range(len(rows[0]) if rows else 0):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def _solve(matrix: List[List[Fraction]], rhs: List[Fraction]) -> Optional[List[Fraction]]:
    """Gauss-Jordan on a square system; None if singular."""
    n = len(matrix)
    rows = [matrix[i][:] + [rhs[i]] for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def _refine(law: List[int], samples: Sequence[Tuple[int, int]], values: Sequence[int]) -> Optional[List[int]]:
    """The law with its intervals narrowed to the offsets every sample agrees with (the one-side
    fits did not see the samples where both sides move)."""
    c, k, a, s, a_span, b, t, b_span = law[:8]
    extra = law[8:]
    good = [
        (a2, b2)
        for a2 in range(a, a + a_span + 1)
        for b2 in range(b, b + b_span + 1)
        if all(evaluate([c, k, a2, s, 0, b2, t, 0, *extra], h, w) == v for (h, w), v in zip(samples, values))
    ]
    if not good:
        return None
    a_lo, a_hi = min(g[0] for g in good), max(g[0] for g in good)
    b_lo, b_hi = min(g[1] for g in good), max(g[1] for g in good)
    refined = [c, k, a_lo, s, a_hi - a_lo, b_lo, t, b_hi - b_lo, *extra]
    if all(evaluate(refined, h, w) == v and evaluate(refined, h, w, high=True) == v for (h, w), v in zip(samples, values)):
        return refined
    return None
