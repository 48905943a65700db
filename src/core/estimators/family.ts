import { layerSpec } from '../layers/layerCatalog';
import type { LayerTable } from '../layerTable/layerTable';

/** The architecture families the estimators are trained per (as in GPUMemNet). */
export type ModelFamily = 'mlp' | 'cnn' | 'transformer';

const TRANSFORMER_TYPES = /^(MultiheadAttention|Transformer.*)$/;

export function modelFamily(table: LayerTable): ModelFamily {
  if (table.rows.some((row) => TRANSFORMER_TYPES.test(row.type))) return 'transformer';
  if (table.rows.some((row) => layerSpec(row.type)?.category === 'conv')) return 'cnn';
  return 'mlp';
}
