import { optimizerBytes, type OptimizerState } from './optimizerState';

/**
 * GaLore (Zhao et al., 2024; transformers' `optim="galore_adamw"` and its 8-bit, Adafactor and
 * layerwise variants): the targeted weight matrices train in full, but their gradients are projected
 * onto `rank` directions before the optimizer sees them, so the optimizer's state is that of the
 * projected gradient and the projection itself. The other parameters keep their optimizer's full state.
 */

/** What a GaLore fine-tune sets (`optim_args="rank=..."`, `optim_target_modules=[...]`). */
export interface GaloreJob {
  readonly rank: number;
  /** Substrings of module paths (`["attn", "mlp"]`), one regular expression the whole path must match, or "all-linear": every linear of the layers. */
  readonly targets: string | readonly string[];
}

/** transformers' GaLore default rank (`optim_args` without `rank=`). */
export const GALORE_DEFAULT_RANK = 128;

/** The module of a layer a projection is in, by the names transformers' models give it (Llama's self_attn and mlp, BERT's attention, BLOOM's self_attention, T5's SelfAttention and DenseReluDense...). */
const PART_PATHS: Readonly<Record<'attention' | 'mlp', readonly string[]>> = {
  attention: ['self_attn', 'attn', 'attention', 'attention.self', 'attention.output', 'self_attention', 'SelfAttention'],
  mlp: ['mlp', 'feed_forward', 'ffn', 'intermediate', 'output', 'DenseReluDense', 'block_sparse_moe'],
};
const ATTENTION = /^(q_proj|k_proj|v_proj|qkv_proj|o_proj)$/;

/** The paths a layer's linear may have inside its layer (`self_attn.q_proj`, `attention.self.query`), by its part of the layer and the names it goes by. */
export function layerModulePaths(name: string, aliases: readonly string[]): string[] {
  const parts = PART_PATHS[ATTENTION.test(name) ? 'attention' : 'mlp'];
  return parts.flatMap((part) => aliases.map((alias) => `${part}.${alias}`));
}

/**
 * Whether transformers' GaLore set-up takes a linear (its check_target_module_exists): a list's keys
 * match a module whose path contains one of them or that one matches whole as a regular expression
 * (`[r".*.attn.*", r".*.mlp.*"]`); a string is one regular expression over the whole path
 * (`model.layers.0.self_attn.q_proj`); "all-linear" takes every linear of the layers.
 */
export function galoreTargeted(paths: readonly string[], targets: GaloreJob['targets']): boolean {
  if (targets === 'all-linear') return true;
  const full = paths.map((path) => `model.layers.0.${path}`);
  if (typeof targets === 'string') return matchesWhole(targets, full);
  return targets.some((key) => key !== '' && (full.some((path) => path.includes(key)) || matchesWhole(key, full)));
}

function matchesWhole(expression: string, paths: readonly string[]): boolean {
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${expression})$`);
  } catch {
    return false;
  }
  return paths.some((path) => pattern.test(path));
}

/**
 * One targeted matrix's optimizer state: the projected gradient is `rank` by the larger side (GaLore
 * projects on the smaller side), and the optimizer keeps its usual state over that (optimizerState.ts).
 * The projection is `rank` rows of the SVD's factor: GaLore-torch casts 16-bit weights' back to their
 * dtype (a copy, `rank` by the smaller side), but for fp32 weights keeps the slice, a view that holds
 * the whole square factor (the smaller side squared, as a dry run of GaLore-torch 1.0 shows).
 */
export function galoreStateBytes(rows: number, cols: number, rank: number, optimizer: OptimizerState, paramBytes: number): number {
  const r = Math.min(rank, rows, cols);
  const short = Math.min(rows, cols);
  const projection = (paramBytes === 4 ? short : r) * short * paramBytes;
  return optimizerBytes(optimizer, { rows: Math.max(rows, cols), cols: r }, paramBytes) + projection;
}

/**
 * The projection's refresh (every update_proj_gap steps, the first step too): an SVD of the gradient
 * in fp32 (torch.linalg.svd, reduced): the fp32 copy, U and Vh, for the largest targeted matrix.
 */
export function galoreRefreshBytes(rows: number, cols: number): number {
  const k = Math.min(rows, cols);
  return 4 * (rows * cols + k * (rows + cols));
}
