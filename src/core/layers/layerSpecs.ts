/**
 * The torch.nn layer types the estimator understands, by class name. Each kind of layer lives in its own
 * module; this one registers them. See layerSpec.ts for what a spec answers.
 *
 * Calling conventions:
 * - `forward(inputs, args, call)`: `inputs` are the call's tensor arguments in PyTorch's positional
 *   order, as full shapes (a tensor passed by keyword goes at its position): (query, key, value)
 *   for MultiheadAttention, so x three times for self-attention; (x1, x2) for Bilinear; (src, tgt)
 *   for Transformer; (tgt, memory) for TransformerDecoder(Layer); (input, offsets) for
 *   EmbeddingBag; (input, indices) for MaxUnpool. Optional state (an RNN's hx) may be left out.
 * - `call.kwargs` holds the call's other arguments by name, also those written positionally
 *   (`mha(q, k, v, None, False)` is need_weights=False). Read today: need_weights and
 *   average_attn_weights (MultiheadAttention; absent, None or unresolved means the default
 *   True) and output_size as a list of ints (ConvTranspose, MaxUnpool).
 * - Outputs nest as PyTorch returns them: LSTM gives [output, [h_n, c_n]], GRU and RNN
 *   [output, h_n], LSTMCell [h, c], MultiheadAttention [attn_output, attn_weights or null],
 *   MaxPool/AdaptiveMaxPool/FractionalMaxPool with return_indices [output, indices].
 * - `params(args, inputs)` needs `inputs` only for the Lazy layers (LazyLinear, LazyConv*,
 *   LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*), which take their size from the first input.
 * - A layer passed as an argument (TransformerEncoder's encoder_layer, `norm=nn.LayerNorm(d)`,
 *   Transformer's custom_encoder / custom_decoder) is a LayerValue `{ layer: { type, args, kwargs } }`
 *   (modelDescription.ts); its parameters are counted as often as PyTorch clones it.
 * - Every failure is a LayerArgumentError with a message for the user; anything else is a bug.
 */
import { activationLayers } from './activation';
import { attentionLayers } from './attention';
import { convolutionLayers } from './convolution';
import { dropoutLayers } from './dropout';
import { embeddingLayers } from './embedding';
import type { LayerSpec } from './layerSpec';
import { linearLayers } from './linear';
import { normalizationLayers } from './normalization';
import { paddingLayers } from './padding';
import { poolingLayers } from './pooling';
import { recurrentLayers } from './recurrent';
import { reshapeLayers } from './reshape';
import { einopsLayers } from './einops';
import type { LayerSpecGroup } from './shapes';
import { transformerLayers } from './transformer';
import { upsamplingLayers } from './upsampling';

export type { LayerCategory, LayerSpec } from './layerSpec';

const SPECS = new Map<string, LayerSpec>();

function register(group: LayerSpecGroup): void {
  for (const [type, spec] of Object.entries(group)) {
    if (SPECS.has(type)) throw new Error(`layer type ${type} is registered twice`);
    SPECS.set(type, spec);
  }
}

register(linearLayers);
register(convolutionLayers);
register(normalizationLayers);
register(activationLayers);
register(dropoutLayers);
register(poolingLayers);
register(reshapeLayers);
register(einopsLayers);
register(upsamplingLayers);
register(paddingLayers);
register(embeddingLayers);
register(recurrentLayers);
register(attentionLayers);
// Transformer stacks look their nested layers up in the finished specs.
register(transformerLayers(layerSpec));

export function layerSpec(type: string): LayerSpec | undefined {
  return SPECS.get(type);
}

export function knownLayerTypes(): string[] {
  return [...SPECS.keys()].sort();
}
