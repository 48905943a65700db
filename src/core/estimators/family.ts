import { layerSpec } from '../layers/layerSpecs';
import type { LayerTable } from '../layerTable/layerTable';

/** The architecture families the estimators are trained per (as in GPUMemNet). */
export type ModelFamily = 'mlp' | 'cnn' | 'transformer';
export const MODEL_FAMILIES: readonly ModelFamily[] = ['mlp', 'cnn', 'transformer'];

const TRANSFORMER_TYPES = /^(MultiheadAttention|Transformer.*)$/;

/**
 * Attention written out of Linear layers (Hugging Face models, GPTs from scratch) shows no
 * attention module: a stack of LayerNorms and Linears over embedded tokens or patches (an
 * Embedding, or learned Parameters such as position embeddings), with no recurrent layer and at
 * most a patch-embedding convolution or two, is a Transformer too.
 */
function looksLikeTransformer(table: LayerTable): boolean {
  const count = (test: (type: string) => boolean) => table.rows.filter((row) => test(row.type)).length;
  const category = (type: string) => layerSpec(type)?.category;
  // Hand-written norms (nanoGPT's LayerNorm with a bias switch) are Parameter rows; so are GPT-2's projections (transformers' Conv1D: a weight and a bias each).
  return (
    (count((type) => type === 'LayerNorm' || type === 'RMSNorm') >= 2 || count((type) => type === 'Parameter') >= 2) &&
    (count((type) => type === 'Linear') >= 4 || count((type) => type === 'Parameter') >= 8) &&
    count((type) => type === 'Embedding' || type === 'Parameter') >= 1 &&
    count((type) => category(type) === 'conv') <= 2 &&
    count((type) => category(type) === 'recurrent') === 0
  );
}

export function modelFamily(table: LayerTable): ModelFamily {
  if (table.rows.some((row) => TRANSFORMER_TYPES.test(row.type)) || looksLikeTransformer(table)) return 'transformer';
  if (table.rows.some((row) => layerSpec(row.type)?.category === 'conv')) return 'cnn';
  return 'mlp';
}
