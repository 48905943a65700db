"""A timm model's whole catalog record: base rows with size laws, option coefficients, variants,
pretrained tags (see generate_timm.py for the format's place)."""
from __future__ import annotations

import copy
import difflib
import json
from typing import Any, Dict, List, Optional, Tuple

import timm
import torch
from timm.models import _registry

from timm_laws import fit
from timm_record import (ERRORS, MIXED_OFFSETS, SIDE_OFFSETS, VARIANT_SIZE, Sampler, build, fit_output, fit_rows, key, sizes, sweep, table)

#: Linear options: their default and two probe values; the head's (num_classes) or the stem's
#: (in_chans) parameters are linear in them and the other rows do not change.
LINEAR = {"num_classes": ("nc", (10,)), "in_chans": ("ic", (1,))}
#: global_pool values scripts pass (timm's heads take more: avgmax, catavgmax, map...; those are misses).
GLOBAL_POOLS = ("", "avg", "max", "token")
#: Options that become variants (another row list) when they change the table.
VARIANTS: List[Dict[str, Any]] = [{"num_classes": 0}, {"drop_path_rate": 0.1}, {"features_only": True}] + [{"global_pool": g} for g in GLOBAL_POOLS]
#: Options checked to leave the table unchanged (or to change it the same way at another value).
SAME_AS = [({"drop_path_rate": 0.3}, {"drop_path_rate": 0.1}), ({"drop_rate": 0.2}, {})]


def family(name: str) -> str:
    return _registry._model_to_module[name]


def default_cfg(name: str) -> Any:
    return timm.models.get_pretrained_cfg(name)


def tags(name: str, base_cfg: Any) -> Dict[str, Dict[str, Any]]:
    """Pretrained tags whose config changes what create_model("name.tag") builds: timm sets
    num_classes, global_pool and in_chans from the tag's config (and img_size where the model's
    input is fixed) unless the call passes them."""
    out: Dict[str, Dict[str, Any]] = {}
    for full in _registry._model_with_tags.get(name, []):
        tag = full.split(".", 1)[1] if "." in full else ""
        cfg = _registry._model_pretrained_cfgs.get(full)
        if cfg is None or not tag:
            continue
        diff: Dict[str, Any] = {}
        if cfg.num_classes is not None and cfg.num_classes >= 0 and cfg.num_classes != base_cfg.num_classes:
            diff["num_classes"] = cfg.num_classes
        if list(cfg.input_size) != list(base_cfg.input_size):
            diff["input"] = list(cfg.input_size)
            if cfg.fixed_input_size:
                diff["img_size"] = list(cfg.input_size[1:])
        out[tag] = diff
    return out


def linear_coefficients(name: str, strict: bool, base_table: Dict[str, Any], rows: List[list], output: Optional[List[Any]], base_options: Dict[str, Any]) -> Dict[str, Any]:
    """Adds each linear option's coefficient to the rows' params (in place); returns, per option,
    its default, or the reason it is not covered."""
    sample = base_table["inputShape"]
    result: Dict[str, Any] = {}
    for option, (symbol, probes) in LINEAR.items():
        default = base_cfg_default(name, option, sample)
        values = [p if p != default else p + 1 for p in probes]
        coefficients: List[Optional[int]] = [None] * len(rows)
        reason = None
        symbol_dims: Dict[Tuple[int, int], int] = {}
        for value in values:
            try:
                model = build(name, {**base_options, option: value})
                probe = table(model, [value if option == "in_chans" else sample[0], *sample[1:]], name)
            except ERRORS as error:
                reason = f"timm refuses {option}={value}: {str(error).splitlines()[0][:160]}"
                break
            if key(probe["rows"]) != key(base_table["rows"]):
                reason = f"{option}={value} changes which layers the model has"
                break
            for i, (b, p) in enumerate(zip(base_table["rows"], probe["rows"])):
                diff = p["params"] - b["params"]
                if diff % (value - default):
                    reason = f"{b['path']}'s parameters are not linear in {option}"
                    break
                m = diff // (value - default)
                if coefficients[i] is not None and coefficients[i] != m:
                    reason = f"{b['path']}'s parameters are not linear in {option}"
                    break
                coefficients[i] = m
                bs, ps = b["outputShape"] or [], p["outputShape"] or []
                for d, (x, y) in enumerate(zip(bs, ps)):
                    if x != y:
                        if x == default and y == value and symbol_dims.get((i, d), 1) == 1:
                            symbol_dims[(i, d)] = 1
                        elif symbol == "ic" and x % default == 0 and y == x // default * value and rows[i][3][d] == x and symbol_dims.get((i, d), x // default) == x // default:
                            # A multiple of the input channels (TNT's pixel unfold: in_chans x 16 x 16).
                            symbol_dims[(i, d)] = x // default
                        else:
                            reason = f"{b['path']}'s output changes with {option} in a way the catalog does not model"
                if p["activations"] - (_prod(ps) if p["outputShape"] else 0) != b["activations"] - (_prod(bs) if b["outputShape"] else 0):
                    reason = f"{b['path']}'s extra outputs change with {option}"
            if reason:
                break
        if reason:
            result[option] = {"default": default, "reason": reason}
            continue
        result[option] = {"default": default}
        for i, m in enumerate(coefficients):
            if m:
                params = rows[i][2]
                if not (isinstance(params, list) and len(params) == 3 and isinstance(params[1], int)):
                    params = [params, 0, 0]
                params[1 if symbol == "nc" else 2] = m
                rows[i][2] = params
        for (i, d), multiple in symbol_dims.items():
            rows[i][3][d] = symbol if multiple == 1 else [symbol, multiple]
        if output is not None and option == "num_classes":
            for d, law in enumerate(output):
                if law == default:
                    output[d] = symbol
    return result


def _prod(shape: List[int]) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


def base_cfg_default(name: str, option: str, sample: List[int]) -> int:
    if option == "in_chans":
        return sample[0]
    cfg = default_cfg(name)
    return cfg.num_classes if cfg.num_classes is not None and cfg.num_classes >= 0 else 1000


def is_strict(name: str, h0: int, w0: int, channels: int) -> Tuple[bool, Optional[str]]:
    """Whether the model takes other sizes only when built for them (img_size)."""
    model = build(name, {})
    for dh, dw in ((32, 32), (64, 0)):
        try:
            table(model, [channels, h0 + dh, w0 + dw], name)
            return False, None
        except ERRORS as error:
            message = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
    try:
        table(build(name, {"img_size": (h0 + 32, w0 + 32)}), [channels, h0 + 32, w0 + 32], name)
        return True, None
    except ERRORS:
        return False, message


def _signature(tables: List[Dict[str, Any]], i: int) -> str:
    return json.dumps([[t["rows"][i][k] for k in ("type", "outputShape", "activations", "params", "trainable")] for t in tables])


def borrow_numbers(series: List[List[int]], base_table: Dict[str, Any], tables: List[Dict[str, Any]], points: List[Any], raw_rows: List[list], vtables: List[Dict[str, Any]]) -> List[Any]:
    """Laws for a variant's own numbers, known at one or two sizes: a constant where they agree,
    else the law of a base row's number with the same values at both sizes, else not derived."""
    laws = _law_table(tables, points, raw_rows, len(vtables))
    out: List[Any] = []
    for values in series:
        if len(values) > 1 and all(v == values[0] for v in values):
            out.append(values[0])
        else:
            out.append(laws.get(tuple(values), [values[0], None]))
    return out


_LAWS: Dict[int, Dict[Any, Any]] = {}


def _law_table(tables: List[Dict[str, Any]], points: List[Any], raw_rows: List[list], count: int) -> Dict[Any, Any]:
    """(value at the default size[, value at the variant's second size]) -> a base law giving them."""
    cache_key = id(raw_rows) * 10 + count
    if cache_key in _LAWS:
        return _LAWS[cache_key]
    second = points.index(points[0]) if count == 1 else next(i for i, p in enumerate(points) if p == (points[0][0] + VARIANT_SIZE[0], points[0][1] + VARIANT_SIZE[1]))
    found: Dict[Any, Any] = {}
    for i, row in enumerate(raw_rows):
        shapes = [tables[0]["rows"][i]["outputShape"], tables[second]["rows"][i]["outputShape"]]
        if row[3] is None or shapes[0] is None:
            continue
        for d, law in enumerate(row[3]):
            if isinstance(law, list) and len(law) == 2:
                continue
            values = (shapes[0][d],) if count == 1 else (shapes[0][d], shapes[1][d])
            if len(set(values)) > 1:
                found.setdefault(values, law)
    _LAWS.clear()
    _LAWS[cache_key] = found
    return found


def borrow_rows(vtables: List[Dict[str, Any]], base_tables: List[Dict[str, Any]], raw_rows: List[list], tables: List[Dict[str, Any]], points: List[Any]) -> Tuple[List[Any], List[bool]]:
    """A variant's rows: a base row's index (with the variant's path where it differs) where the
    row has the same numbers as that base row at every size recorded, else a row of its own."""
    base_sig = [_signature(base_tables, i) for i in range(len(base_tables[0]["rows"]))]
    own_sig = [_signature(vtables, i) for i in range(len(vtables[0]["rows"]))]
    matcher = difflib.SequenceMatcher(None, base_sig, own_sig, autojunk=False)
    matched: Dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            matched[block.b + k] = block.a + k
    rows: List[Any] = []
    own: List[bool] = []
    for i, row in enumerate(vtables[0]["rows"]):
        if i in matched:
            rows.append([matched[i], row["path"]])
            own.append(False)
            continue
        numbers = lambda f: [f(t["rows"][i]) for t in vtables]  # noqa: E731
        params = borrow_numbers([numbers(lambda r: r["params"])], base_tables[0], tables, points, raw_rows, vtables)[0]
        shape = None
        if row["outputShape"] is not None:
            shape = borrow_numbers([numbers(lambda r, d=d: r["outputShape"][d]) for d in range(len(row["outputShape"]))], base_tables[0], tables, points, raw_rows, vtables)
        entry = [row["path"], row["type"], params, shape, row["trainable"]]
        extra = numbers(lambda r: r["activations"] - (_prod(r["outputShape"]) if r["outputShape"] is not None else 0))
        if any(extra):
            entry.append(borrow_numbers([extra], base_tables[0], tables, points, raw_rows, vtables)[0])
        rows.append(entry)
        own.append(True)
    return rows, own


def encode_variant(rows: List[Any], own: List[bool], base_rows: List[list]) -> List[Any]:
    """Runs of base rows ([start, count], or [index, 1, path] where the path differs) and own rows."""
    out: List[Any] = []
    for row, is_own in zip(rows, own):
        if is_own:
            out.append(row)
            continue
        index, path = row
        last = out[-1] if out else None
        if path != base_rows[index][0]:
            out.append([index, 1, path])
        elif isinstance(last, list) and len(last) == 2 and isinstance(last[0], int) and last[0] + last[1] == index:
            last[1] += 1
        else:
            out.append([index, 1])
    return out


def record(name: str) -> Dict[str, Any]:
    cfg = default_cfg(name)
    channels, h0, w0 = (int(x) for x in cfg.input_size)
    strict, fixed_reason = is_strict(name, h0, w0, channels)
    base = Sampler(name, {}, channels, strict)
    points, tables, outputs, refused = sweep(base, sizes(h0, w0, SIDE_OFFSETS, MIXED_OFFSETS) if fixed_reason is None else [(h0, w0)])
    rows, unfitted = fit_rows(points, tables)
    raw_rows = copy.deepcopy(rows)
    output = fit_output(points, outputs)
    base_table = tables[0]
    options = linear_coefficients(name, strict, base_table, rows, output, {})

    second = (h0 + VARIANT_SIZE[0], w0 + VARIANT_SIZE[1])
    base_second = tables[points.index(second)] if second in points else None
    variants: Dict[str, Any] = {}
    for variant in VARIANTS:
        (option, value), = variant.items()
        label = f"{option}={json.dumps(value)}"
        try:
            sampler = Sampler(name, variant, channels, strict)
            vtable, vout = sampler.at(h0, w0)
        except ERRORS as error:
            variants[label] = {"refused": str(error).splitlines()[0][:200] if str(error) else type(error).__name__}
            continue
        if vtable["rows"] == base_table["rows"]:
            variants[label] = {"same": True}
            continue
        vtables, vouts = [vtable], [vout]
        if base_second is not None:
            try:
                t1, o1 = sampler.at(*second)
                if key(t1["rows"]) == key(vtable["rows"]):
                    vtables.append(t1)
                    vouts.append(o1)
            except ERRORS:
                pass
        vrows, own = borrow_rows(vtables, [base_table] + ([base_second] if len(vtables) > 1 else []), raw_rows, tables, points)
        entry: Dict[str, Any] = {"rows": encode_variant(vrows, own, raw_rows), "params": vtable["totals"]["params"]}
        entry["output"] = borrow_numbers([[o[d] for o in vouts] for d in range(len(vout))], base_table, tables, points, raw_rows, vtables) if len({len(o) for o in vouts}) == 1 else [[d, None] for d in vout]
        if option == "global_pool" and any(own) and options["num_classes"].get("reason") is None:
            if not _variant_classes(name, variant, vtable, options["num_classes"]["default"], vrows, own, entry["output"]):
                # A head this variant builds that num_classes does not change linearly.
                entry["classes"] = False
            entry["rows"] = encode_variant(vrows, own, raw_rows)
        if option == "features_only":
            entry["outputs"] = feature_outputs(name, channels, h0, w0, strict)
        variants[label] = entry
    same_as = {}
    for probe, reference in SAME_AS:
        (option, value), = probe.items()
        try:
            t = table(build(name, probe), [channels, h0, w0], name)
            ref = table(build(name, reference), [channels, h0, w0], name) if reference else base_table
            same_as[f"{option}={json.dumps(value)}"] = t["rows"] == ref["rows"]
        except ERRORS:
            same_as[f"{option}={json.dumps(value)}"] = False
    img_size = None
    img_size_error = None
    if not strict:
        try:
            probe_model = build(name, {"img_size": (h0 + 32, w0 + 32)})
        except ERRORS:
            img_size = "refused"  # the constructor has no img_size (TypeError) or refuses this one
        else:
            try:
                t = table(probe_model, [channels, h0, w0], name)
                img_size = "same" if t["rows"] == base_table["rows"] else "changes"
            except ERRORS as error:
                # timm builds it with img_size, and the model it built fails (CrossVit).
                img_size = "fails"
                message = str(error).splitlines()[0][:160] if str(error).strip() else ""
                img_size_error = f"img_size={h0 + 32} on a {h0}x{w0} input: {type(error).__name__}" + (f": {message}" if message else "")
    out: Dict[str, Any] = {
        "className": type(build(name, {})).__name__,
        "family": family(name),
        "input": [channels, h0, w0],
        "params": base_table["totals"]["params"],
        "rows": rows,
        "options": options,
        "variants": variants,
        "sameAs": same_as,
        "tags": tags(name, cfg),
        "sizes": len(points),
    }
    if strict:
        out["strict"] = True
    if fixed_reason is not None:
        out["fixed"] = fixed_reason
    if img_size is not None:
        out["imgSize"] = img_size
    if img_size_error is not None:
        out["imgSizeError"] = img_size_error
    if output is not None:
        out["output"] = output
    if refused:
        out["refused"] = refused
    if unfitted:
        out["unfitted"] = unfitted
    return out


def feature_outputs(name: str, channels: int, h0: int, w0: int, strict: bool) -> Optional[List[List[Any]]]:
    """Laws for every feature map a features_only model returns (its forward returns a list,
    which the script indexes: `self.backbone(x)[-1]`); None where timm refuses features_only."""
    points = [(h0, w0)] + [(h0 + d, w0) for d in SIDE_OFFSETS[:4]] + [(h0, w0 + d) for d in SIDE_OFFSETS[:4]] + [(h0 + 32, w0 + 64)]
    shapes: List[List[List[int]]] = []
    done: List[Tuple[int, int]] = []
    model = None
    for h, w in points:
        try:
            if strict or model is None:
                model = build(name, {"features_only": True, **({"img_size": (h, w)} if strict else {})})
            with torch.no_grad():
                out = model(torch.empty(2, channels, h, w, device="meta"))
        except ERRORS:
            if not done:
                return None
            continue
        done.append((h, w))
        shapes.append([list(t.shape[1:]) for t in (out if isinstance(out, (list, tuple)) else [out])])
    if len({json.dumps([len(s) for s in maps]) for maps in shapes}) != 1:
        return None
    laws = []
    for i, first in enumerate(shapes[0]):
        dims = []
        for d in range(len(first)):
            law = fit(done, [maps[i][d] for maps in shapes])
            dims.append(law if law is not None else [first[d], None])
        laws.append(dims)
    return laws


def _variant_classes(name: str, variant: Dict[str, Any], vtable: Dict[str, Any], default: int, vrows: List[Any], own: List[bool], vout: List[Any]) -> bool:
    """Gives the variant's own rows their num_classes coefficient (the head after another pool),
    from one more build with num_classes=10; False where the head is not linear in it."""
    try:
        probe = table(build(name, {**variant, "num_classes": 10}), vtable["inputShape"], name)
    except ERRORS:
        return False
    if key(probe["rows"]) != key(vtable["rows"]):
        return False
    for i, (b, p) in enumerate(zip(vtable["rows"], probe["rows"])):
        if not own[i]:
            continue
        diff = b["params"] - p["params"]
        if diff % (default - 10):
            return False
        if diff:
            vrows[i][2] = [vrows[i][2], diff // (default - 10), 0]
        for d, (x, y) in enumerate(zip(b["outputShape"] or [], p["outputShape"] or [])):
            if x != y:
                if (x, y) != (default, 10):
                    return False
                vrows[i][3][d] = "nc"
    for d, law in enumerate(vout):
        if law == default or law == [default, None]:
            vout[d] = "nc"
    return True
