import type { AdapterSetup } from '../analysis/modelDescription';
import { ia3Defaults, loraTargets, type TransformerShape } from './fineTuning';

/**
 * The trainable parameters of PEFT's methods other than LoRA, counted as PEFT builds them, or
 * undefined with the reason when the script does not give what they depend on. LoRA's own count
 * is loraParams (fineTuning.ts).
 */
export type PeftCount = { readonly params: number; readonly extraTokens: number } | { readonly unknown: string };

const names = (value: string | readonly string[] | undefined): readonly string[] | undefined => (value === undefined ? undefined : typeof value === 'string' ? [value] : value);

export function peftParams(shape: TransformerShape, adapter: AdapterSetup): PeftCount {
  // Encoder-decoder tasks put virtual tokens on both sides (PEFT's num_transformer_submodules = 2).
  const submodules = adapter.taskType === 'SEQ_2_SEQ_LM' ? 2 : 1;
  const kv = shape.kvHeads * shape.headDim;
  switch (adapter.method) {
    case 'ia3': {
      // A learned vector per targeted linear: the size of its output, or of its input for feedforward modules (scaled before the matmul).
      const defaults = ia3Defaults(shape);
      const feedforward = names(adapter.feedforwardModules) ?? (adapter.targetModules === undefined ? defaults.feedforward : []);
      const scaledOnInput = new Set(loraTargets(shape, feedforward).map((t) => t.name));
      const params = loraTargets(shape, adapter.targetModules ?? defaults.targets).reduce((sum, t) => sum + (scaledOnInput.has(t.name) ? t.cols : t.rows) * (t.perLayer ? (t.decoder ? (shape.decoderLayers ?? 0) : shape.layers) : 1), 0);
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
    default:
      return { unknown: `the ${adapter.method} adapter's parameters are not counted (only LoRA's, IA3's, prompt and prefix tuning's are)` };
  }
}
