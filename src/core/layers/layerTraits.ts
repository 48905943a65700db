/**
 * What the analytical memory model needs to know about each layer-table row type: its category
 * and what autograd keeps of it for backward. Module rows take these from the layer specs
 * (layerSpecs.ts); functional rows (a `torch.cat`, `F.layer_norm` or `F.scaled_dot_product_attention`
 * call in `forward`, row type "torch.<function>", see docs/layer-table.md) take them from the small table below. The
 * functional ops are deliberately NOT in the layer specs: those list the torch.nn modules the
 * interpreter can construct, and `torch.cat` is no module.
 *
 * `npm run features:sync` writes these traits, module and functional alike, into
 * src/core/features/analyticalModel.json for the Python training pipeline.
 */
import { knownLayerTypes, layerSpec, type LayerCategory } from './layerSpecs';

export interface LayerTraits {
  readonly category: LayerCategory | 'functional';
  /** Backward needs this row's input. */
  readonly savesInput: boolean;
  /** Backward needs this row's output. */
  readonly savesOutput: boolean;
  /** Extra bytes kept per output element, such as Dropout's boolean mask. */
  readonly extraBytesPerElement: number;
}

/**
 * Functional rows. Concatenation and stacking keep nothing for backward themselves (their
 * gradient is a slice of the incoming one), but their output is a new tensor: the analytical
 * model counts it when the next row saves its input (a DenseNet block's cat feeding a conv or a
 * norm), and it takes part in the largest-activation transient term. The functional norms and
 * attention keep what their modules would.
 */
const FUNCTIONAL_TRAITS: Readonly<Record<string, LayerTraits>> = {
  'torch.cat': { category: 'functional', savesInput: false, savesOutput: false, extraBytesPerElement: 0 },
  'torch.stack': { category: 'functional', savesInput: false, savesOutput: false, extraBytesPerElement: 0 },
  // The functional norms keep what their modules keep: the input (and per-row statistics, small).
  'torch.layer_norm': { category: 'functional', savesInput: true, savesOutput: false, extraBytesPerElement: 0 },
  'torch.group_norm': { category: 'functional', savesInput: true, savesOutput: false, extraBytesPerElement: 0 },
  'torch.batch_norm': { category: 'functional', savesInput: true, savesOutput: false, extraBytesPerElement: 0 },
  'torch.rms_norm': { category: 'functional', savesInput: true, savesOutput: false, extraBytesPerElement: 0 },
  // The fused kernels keep query, key and value (views of the projection before: its output) and
  // their own output with its log-sum-exp rows; never the L x S matrix.
  'torch.scaled_dot_product_attention': { category: 'functional', savesInput: true, savesOutput: true, extraBytesPerElement: 0 },
  // Attention written out: a product keeps both factors (its inputs), a softmax its output.
  'torch.matmul': { category: 'functional', savesInput: true, savesOutput: false, extraBytesPerElement: 0 },
  'torch.softmax': { category: 'functional', savesInput: false, savesOutput: true, extraBytesPerElement: 0 },
};

/** Looked up per row on every analytical estimate (the largest-batch search makes hundreds). */
const cache = new Map<string, LayerTraits | undefined>();

/** The traits of a row type: a torch.nn module's, a functional op's, or undefined when unknown. */
export function layerTraits(type: string): LayerTraits | undefined {
  if (cache.has(type)) return cache.get(type);
  const spec = layerSpec(type);
  const traits = spec
    ? { category: spec.category, savesInput: spec.savesInput, savesOutput: spec.savesOutput, extraBytesPerElement: spec.extraBytesPerElement ?? 0 }
    : Object.prototype.hasOwnProperty.call(FUNCTIONAL_TRAITS, type)
      ? FUNCTIONAL_TRAITS[type]
      : undefined;
  cache.set(type, traits);
  return traits;
}

/** Every row type with traits: the layer specs' modules and the functional ops, sorted. */
export function rowTypesWithTraits(): string[] {
  return [...knownLayerTypes(), ...Object.keys(FUNCTIONAL_TRAITS)].sort();
}

/** The extra bytes a row keeps per output element (a Dropout's mask; every layer's of a Transformer stack). */
export function rowExtraBytesPerElement(row: { readonly type: string; readonly stackedLayers?: number }): number {
  return (layerTraits(row.type)?.extraBytesPerElement ?? 0) * (row.stackedLayers ?? 1);
}
