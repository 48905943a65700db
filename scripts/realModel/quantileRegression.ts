/**
 * Linear quantile regression by iteratively reweighted least squares: each step solves weighted
 * least squares with weights tau / |r| above the fit and (1 - tau) / |r| below it, which is the
 * pinball loss's majoriser; |r| is held away from zero so a point on the fit does not dominate.
 */
const RESIDUAL_FLOOR = 1e-3;
const RIDGE = 1e-6;

export interface Sample {
  readonly x: readonly number[];
  readonly y: number;
  readonly weight: number;
}

export function fitQuantile(samples: readonly Sample[], tau: number, iterations = 60): number[] {
  let beta = solveWeighted(samples, samples.map((s) => s.weight));
  for (let step = 0; step < iterations; step++) {
    const weights = samples.map((s) => {
      const residual = s.y - dot(beta, s.x);
      return (s.weight * (residual > 0 ? tau : 1 - tau)) / Math.max(Math.abs(residual), RESIDUAL_FLOOR);
    });
    beta = solveWeighted(samples, weights);
  }
  return beta;
}

export function dot(beta: readonly number[], x: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += beta[i]! * x[i]!;
  return sum;
}

/** argmin sum w (y - x.b)^2 + RIDGE |b|^2, by the normal equations and Gaussian elimination. */
function solveWeighted(samples: readonly Sample[], weights: readonly number[]): number[] {
  const k = samples[0]!.x.length;
  const a = Array.from({ length: k }, (_, i) => Array.from({ length: k + 1 }, (_, j) => (i === j ? RIDGE : 0)));
  samples.forEach((s, n) => {
    const w = weights[n]!;
    for (let i = 0; i < k; i++) {
      const wi = w * s.x[i]!;
      for (let j = 0; j < k; j++) a[i]![j]! += wi * s.x[j]!;
      a[i]![k]! += wi * s.y;
    }
  });
  return solve(a);
}

/** Solves the augmented k x (k+1) system in place, with partial pivoting. */
export function solve(a: number[][]): number[] {
  const k = a.length;
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let row = col + 1; row < k; row++) if (Math.abs(a[row]![col]!) > Math.abs(a[pivot]![col]!)) pivot = row;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    const p = a[col]![col]!;
    if (p === 0) throw new Error('quantile regression: singular system');
    for (let row = 0; row < k; row++) {
      if (row === col) continue;
      const factor = a[row]![col]! / p;
      if (factor === 0) continue;
      for (let j = col; j <= k; j++) a[row]![j]! -= factor * a[col]![j]!;
    }
  }
  return a.map((row, i) => row[k]! / row[i]!);
}
