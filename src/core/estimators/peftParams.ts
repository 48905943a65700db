import type { AdapterSetup } from '../analysis/modelDescription';
import { ia3Defaults, loraTargets, repeats, type ParameterTensor, type TransformerShape } from './fineTuning';

/**
 * The trainable parameters of PEFT's methods other than LoRA, counted as PEFT builds them (PEFT's
 * tuners, read for their parameterisation: AdaLoRA, LoHa, LoKr, VeRA, OFT, BOFT, IA3, prompt and
 * prefix tuning), or the reason when the script does not give what they depend on. LoRA's own
 * count is loraParams (fineTuning.ts).
 */
export type PeftCount = { readonly params: number; readonly extraTokens: number } | { readonly unknown: string };

const names = (value: string | readonly string[] | undefined): readonly string[] | undefined => (value === undefined ? undefined : typeof value === 'string' ? [value] : value);

/** `modelType` (config.json's model_type) picks AdaLoRA's default targets, which differ from LoRA's for OPT and BART. */
export function peftParams(shape: TransformerShape, adapter: AdapterSetup, modelType?: string): PeftCount {
  // Encoder-decoder tasks put virtual tokens on both sides (PEFT's num_transformer_submodules = 2).
  const submodules = adapter.taskType === 'SEQ_2_SEQ_LM' ? 2 : 1;
  const kv = shape.kvHeads * shape.headDim;
  switch (adapter.method) {
    case 'ia3': {
      // A learned vector per targeted linear: the size of its output, or of its input for feedforward modules (scaled before the matmul).
      const defaults = ia3Defaults(shape);
      const feedforward = names(adapter.feedforwardModules) ?? (adapter.targetModules === undefined ? defaults.feedforward : []);
      const scaledOnInput = new Set(loraTargets(shape, feedforward).map((t) => t.name));
      const params = loraTargets(shape, adapter.targetModules ?? defaults.targets).reduce((sum, t) => sum + (scaledOnInput.has(t.name) ? t.cols : t.rows) * repeats(shape, t), 0);
      return { params, extraTokens: 0 };
    }
    case 'prompttuning': {
      if (adapter.virtualTokens === undefined) return { unknown: 'num_virtual_tokens is not readable' };
      // An embedding of num_virtual_tokens x the hidden size, prepended to every sample.
      const tokens = adapter.virtualTokens * submodules;
      return { params: tokens * shape.hidden, extraTokens: adapter.virtualTokens };
    }
    case 'prefixtuning': {
      if (adapter.virtualTokens === undefined) return { unknown: 'num_virtual_tokens is not readable' };
      const tokens = adapter.virtualTokens * submodules;
      // A key and a value per layer and virtual token (the grouped width for grouped-query attention).
      const width = shape.layers * 2 * kv;
      if (!adapter.prefixProjection) return { params: tokens * width, extraTokens: 0 };
      // With a projection: an embedding of the hidden size, then Linear(hidden, encoder_hidden_size), tanh, Linear(encoder_hidden_size, width), with biases.
      const inner = adapter.prefixProjection.hidden ?? shape.hidden;
      return { params: tokens * shape.hidden + (shape.hidden + 1) * inner + (inner + 1) * width, extraTokens: 0 };
    }
    case 'adalora': {
      // AdaLoRA's SVD form at its initial rank: P (r x in), Q (out x r) and the singular values (r) per targeted linear; pruning masks them, the tensors stay.
      const rank = adapter.rank;
      if (rank === undefined) return { unknown: 'init_r is not readable' };
      return { params: perLinear(shape, adapter.targetModules ?? adaloraDefaults(shape, modelType), (t) => rank * (t.rows + t.cols) + rank), extraTokens: 0 };
    }
    case 'loha': {
      // Two Hadamard-multiplied low-rank products, each out x r and r x in.
      const rank = adapter.rank;
      if (rank === undefined) return { unknown: 'r is not readable' };
      return { params: perLinear(shape, adapter.targetModules, (t) => 2 * rank * (t.rows + t.cols)), extraTokens: 0 };
    }
    case 'lokr':
      return lokrParams(shape, adapter);
    case 'vera': {
      // The random projections are shared frozen buffers; each targeted linear trains two scaling vectors, d (r) and b (out).
      const rank = adapter.rank;
      if (rank === undefined) return { unknown: 'r is not readable' };
      return { params: perLinear(shape, adapter.targetModules, (t) => t.rows + rank), extraTokens: 0 };
    }
    case 'oft':
      return oftParams(shape, adapter);
    case 'boft':
      return boftParams(shape, adapter);
    default:
      return { unknown: `the ${adapter.method} adapter's parameters are not counted (only LoRA's, AdaLoRA's, LoHa's, LoKr's, VeRA's, OFT's, BOFT's, IA3's, prompt and prefix tuning's are)` };
  }
}

/** The adapter's parameters summed over the linears it targets (PEFT's LoRA defaults when not given), `each` of one linear. */
function perLinear(shape: TransformerShape, targets: AdapterSetup['targetModules'], each: (t: ParameterTensor) => number): number {
  return loraTargets(shape, targets).reduce((sum, t) => sum + each(t) * repeats(shape, t), 0);
}

/** AdaLoraConfig's default init_r. */
export const ADALORA_INIT_R = 12;

/** PEFT's AdaLoRA defaults (TRANSFORMERS_MODELS_TO_ADALORA_TARGET_MODULES_MAPPING): every projection for T5, OPT and BART; otherwise LoRA's. */
export function adaloraDefaults(shape: TransformerShape, modelType: string | undefined): readonly string[] | undefined {
  if (shape.t5Names) return ['q', 'k', 'v', 'o', 'wi', 'wi_0', 'wi_1', 'wo'];
  if (modelType === 'opt' || modelType === 'bart') return ['q_proj', 'k_proj', 'v_proj', 'out_proj', 'fc1', 'fc2'];
  return undefined;
}

type Option = number | boolean | null | undefined;
const option = (adapter: AdapterSetup, name: string): Option => adapter.shapeOptions?.[name];
const unreadable = (adapter: AdapterSetup, names: readonly string[]): string | undefined => names.find((name) => option(adapter, name) === null);

/**
 * Two factors whose product is `dimension`, the smaller first, as close to its square root as the
 * divisors allow; with a positive `factor` that divides it, that factor and the rest (LyCORIS's factorization).
 */
export function kroneckerFactors(dimension: number, factor = -1): [number, number] {
  if (factor > 0 && dimension % factor === 0) return [factor, dimension / factor];
  const limit = factor === -1 ? dimension : factor;
  let [m, n] = [1, dimension];
  while (m < n) {
    let next = m + 1;
    while (dimension % next !== 0) next += 1;
    if (next > limit) break;
    [m, n] = [next, dimension / next];
  }
  return m > n ? [n, m] : [m, n];
}

/**
 * LoKr: the weight is the Kronecker product of w1 (out_a x in_a) and w2 (out_b x in_b), each dimension
 * split by kroneckerFactors. w2 is low-rank (r x (out_b + in_b)) when r is under half its larger side;
 * w1 only with decompose_both.
 */
function lokrParams(shape: TransformerShape, adapter: AdapterSetup): PeftCount {
  const rank = adapter.rank;
  if (rank === undefined) return { unknown: 'r is not readable' };
  const bad = unreadable(adapter, ['decompose_both', 'decompose_factor']);
  if (bad) return { unknown: `${bad} is not readable` };
  const decomposeBoth = option(adapter, 'decompose_both') === true;
  const factorOption = option(adapter, 'decompose_factor');
  const factor = typeof factorOption === 'number' ? factorOption : -1;
  return {
    params: perLinear(shape, adapter.targetModules, (t) => {
      const [outA, outB] = kroneckerFactors(t.rows, factor);
      const [inA, inB] = kroneckerFactors(t.cols, factor);
      const w1 = decomposeBoth && rank < Math.max(outA, inA) / 2 ? rank * (outA + inA) : outA * inA;
      const w2 = rank < Math.max(outB, inB) / 2 ? rank * (outB + inB) : outB * inB;
      return w1 + w2;
    }),
    extraTokens: 0,
  };
}

/** The divisor of `dimension` nearest `wanted` (the lower one on a tie), as PEFT adjusts an OFT block size or count that does not divide the layer. */
function nearestDivisor(dimension: number, wanted: number): number {
  if (wanted >= dimension) return dimension;
  let higher = wanted;
  while (higher <= dimension && dimension % higher !== 0) higher += 1;
  let lower = wanted;
  while (lower > 1 && dimension % lower !== 0) lower -= 1;
  return wanted - lower <= higher - wanted ? lower : higher;
}

/**
 * OFT (PEFT 0.14 and later): a block-diagonal rotation of each targeted linear's input, r blocks of
 * b x b with r x b = in, each block a skew-symmetric matrix stored as its b(b-1)/2 upper entries;
 * one block for all with block_share. Exactly one of r and oft_block_size (32 by default) is set.
 */
function oftParams(shape: TransformerShape, adapter: AdapterSetup): PeftCount {
  const bad = unreadable(adapter, ['oft_block_size', 'block_share']);
  if (bad) return { unknown: `${bad} is not readable` };
  const blockOption = option(adapter, 'oft_block_size');
  const blockSize = typeof blockOption === 'number' ? blockOption : blockOption === undefined ? 32 : 0;
  const rank = adapter.rank ?? 0;
  if ((rank > 0) === (blockSize > 0)) return { unknown: `OFTConfig takes either r or oft_block_size, not ${rank > 0 ? 'both' : 'neither'} (r=${rank}, oft_block_size=${blockSize})` };
  const shared = option(adapter, 'block_share') === true;
  return {
    params: perLinear(shape, adapter.targetModules, (t) => {
      const size = rank > 0 ? t.cols / nearestDivisor(t.cols, rank) : nearestDivisor(t.cols, blockSize);
      const blocks = shared ? 1 : t.cols / size;
      return (blocks * size * (size - 1)) / 2;
    }),
    extraTokens: 0,
  };
}

/**
 * BOFT: boft_n_butterfly_factor (1 by default: OFT's single factor) butterfly factors, each of
 * boft_block_num blocks of boft_block_size² (one of the two given, 4 by default), stored whole,
 * plus a scale per output.
 */
function boftParams(shape: TransformerShape, adapter: AdapterSetup): PeftCount {
  const bad = unreadable(adapter, ['boft_block_size', 'boft_block_num', 'boft_n_butterfly_factor']);
  if (bad) return { unknown: `${bad} is not readable` };
  const num = (name: string, fallback: number) => {
    const value = option(adapter, name);
    return typeof value === 'number' ? value : fallback;
  };
  const blockSize = num('boft_block_size', 4);
  const blockNum = num('boft_block_num', 0);
  const factors = num('boft_n_butterfly_factor', 1);
  if ((blockSize > 0) === (blockNum > 0)) return { unknown: `BOFTConfig takes either boft_block_size or boft_block_num, not ${blockSize > 0 ? 'both' : 'neither'}` };
  return {
    params: perLinear(shape, adapter.targetModules, (t) => {
      const size = blockSize > 0 ? blockSize : t.cols / blockNum;
      return factors * (t.cols / size) * size * size + t.rows;
    }),
    extraTokens: 0,
  };
}
