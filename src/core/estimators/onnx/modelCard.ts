/**
 * The model card that sits beside each bundled ONNX model (`models/<family>.card.json`), as far
 * as the runner reads it. The training pipeline (harness/training/export.py) writes it; it also
 * records the training data, library versions and metrics for people.
 */
import type { ModelFamily } from '../family';

export interface CardFeature {
  readonly name: string;
  readonly transform: string;
  /** The training data's range; outside it the estimate extrapolates (see outOfDistribution). */
  readonly min: number;
  readonly max: number;
  /** The same value in every training run: the graph zeroes it, so no value of it changes the output. */
  readonly constantInTraining?: boolean;
}

export interface CardBins {
  /** The graph output holding the probabilities, [N, count]. */
  readonly name: string;
  readonly widthMiB: number;
  readonly count: number;
  /** The bin reported as the estimate's `memory.bin` (the research's width for the family). */
  readonly primary: boolean;
}

export interface ModelCard {
  readonly family: ModelFamily;
  /** The ONNX file, relative to the card. */
  readonly file: string;
  readonly featureDefinitionVersion: number;
  readonly input: { readonly name: string };
  readonly features: readonly CardFeature[];
  readonly outputs: {
    readonly memory: { readonly name: string; readonly columns: readonly ['low', 'point', 'high']; readonly pointQuantile: number; readonly range: { readonly quantiles: readonly [number, number] } };
    readonly bins: readonly CardBins[];
    readonly utilization: { readonly classes: readonly ['low', 'medium', 'high']; readonly smact: string | null; readonly smocc: string | null; readonly drama: string | null };
  };
  readonly selfTest?: { readonly features: readonly (readonly number[])[]; readonly outputs: Readonly<Record<string, readonly (readonly number[])[]>> };
}

/**
 * Features of one row outside the card's training range, as readable phrases (empty when inside).
 * Features that were constant in training are left out: the graph ignores them (the analytical
 * anchor carries what they mean, such as the optimizer and the precision).
 */
export function outOfDistribution(card: ModelCard, names: readonly string[], values: readonly number[]): string[] {
  const out: string[] = [];
  card.features.forEach((feature, i) => {
    const value = values[i]!;
    if (names[i] !== feature.name) throw new Error(`model card feature ${i} is ${feature.name}, the code computes ${names[i]}`);
    if (feature.constantInTraining) return;
    if (value < feature.min) out.push(`${feature.name} ${round(value)} < ${round(feature.min)}`);
    else if (value > feature.max) out.push(`${feature.name} ${round(value)} > ${round(feature.max)}`);
  });
  return out;
}

function round(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 1000 ? String(Math.round(value)) : value.toPrecision(4);
}
