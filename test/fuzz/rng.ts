/** A small deterministic PRNG (mulberry32) for the fuzzer's hand-written mutators. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [low, high], both included. */
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** One of `choices`, each with its weight. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let r = this.next() * total;
    for (const [value, weight] of choices) {
      r -= weight;
      if (r < 0) return value;
    }
    return choices[choices.length - 1]![0];
  }
}

function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Mixes a run seed and an input index into the seed of that one input, so any input can be rebuilt alone. */
export function inputSeed(seed: number, index: number): number {
  const h = mix32((mix32((seed ^ 0x9e3779b9) >>> 0) + Math.imul(index + 1, 0x9e3779b9)) >>> 0);
  // fast-check wants a 32-bit signed seed.
  return h | 0;
}
