/**
 * The analytical model as data: the constants of analytical.ts and what each row type keeps for
 * backward (torch.nn layer types from the layer specs, functional rows such as torch.cat from
 * src/core/layers/layerTraits.ts). The Python training pipeline
 * (harness/training/analytical.py) reads this as `analyticalModel.json` to compute the same
 * anchor features; `npm run features:sync` rewrites the file and a unit test fails when it is stale.
 */
import { OPTIMIZER_COPIES, PRECISION_BYTES, RUNTIME_OVERHEAD_MIB } from '../estimators/analytical';
import { BYTES_PER_MIB } from '../format/units';
import { layerTraits, rowTypesWithTraits, type LayerTraits } from '../layers/layerTraits';

export type { LayerTraits } from '../layers/layerTraits';

export interface AnalyticalModelData {
  readonly comment: string;
  readonly bytesPerMiB: number;
  readonly runtimeOverheadMiB: number;
  readonly precisionBytes: Readonly<Record<string, { weights: number; activations: number }>>;
  readonly optimizerCopies: Readonly<Record<string, number>>;
  readonly layerTraits: Readonly<Record<string, LayerTraits>>;
}

export function analyticalModelData(): AnalyticalModelData {
  const traits: Record<string, LayerTraits> = Object.fromEntries(rowTypesWithTraits().map((type) => [type, layerTraits(type)!]));
  return {
    comment: 'Generated from src/core/estimators/analytical.ts and src/core/layers by `npm run features:sync`; do not edit.',
    bytesPerMiB: BYTES_PER_MIB,
    runtimeOverheadMiB: RUNTIME_OVERHEAD_MIB,
    precisionBytes: { ...PRECISION_BYTES },
    optimizerCopies: { ...OPTIMIZER_COPIES },
    layerTraits: traits,
  };
}

/** The file's text: two-space JSON with a trailing newline, as committed. */
export function analyticalModelJson(): string {
  return `${JSON.stringify(analyticalModelData(), null, 2)}\n`;
}
