/**
 * What autograd saves for backward in a catalog architecture's forward pass, measured with its
 * library when the catalog was generated (harness/saved_activations.py on the meta device, with
 * PyTorch 2's fused attention): scripts/catalog/timm_saved.py and torchvision_saved.py write
 * data/timmSaved.json and data/torchvisionSaved.json; attention_saved.py, with PyTorch 2 itself,
 * the models whose attention torch 1.13 could not run fused: data/torchvisionAttentionSaved.json
 * (torchvision's vit_*) and data/transformersSaved.json (the transformers catalog's image models,
 * per `checkpoint:class`). A layer table lists torch.nn modules; a library's own layer classes and
 * the functional code between its modules (residual additions, `x * gamma`, activations called as
 * functions, concatenations inside blocks) save tensors no row shows, and this figure is what the
 * real-model estimator's replay holds for them (docs/real-model-estimator.md).
 */
import timmData from './data/timmSaved.json';
import torchvisionData from './data/torchvisionSaved.json';
import torchvisionAttentionData from './data/torchvisionAttentionSaved.json';
import transformersData from './data/transformersSaved.json';
import type { CatalogTable } from './catalog';
import type { MeasuredLibrary } from '../layerTable/layerTable';

interface SavedData {
  readonly versions: Readonly<Record<string, string>>;
  /**
   * Per model: [bytes autograd saves per sample at fp32, height, width of the default input, and
   * the most bytes per sample a no-grad forward holds at once, where it was linear in the batch].
   */
  readonly models: Readonly<Record<string, readonly [number, number, number, number?]>>;
}

/** One measurement file and how a figure from it is attributed. */
interface Measured {
  readonly data: SavedData;
  readonly source: string;
}

const SAVED = "autograd's saved tensors on the meta device";

const DATA: Readonly<Record<MeasuredLibrary, readonly Measured[]>> = {
  timm: [{ data: timmData as unknown as SavedData, source: `timm ${timmData.versions.timm} (torch ${timmData.versions.torch}), ${SAVED}` }],
  torchvision: [
    { data: torchvisionData as unknown as SavedData, source: `torchvision ${torchvisionData.versions.torchvision} (torch ${torchvisionData.versions.torch}), ${SAVED}` },
    {
      data: torchvisionAttentionData as unknown as SavedData,
      source: `torchvision ${torchvisionAttentionData.versions.torchvision} (torch ${torchvisionAttentionData.versions.torch}), ${SAVED} with fused attention`,
    },
  ],
  transformers: [
    {
      data: transformersData as unknown as SavedData,
      source: `transformers ${transformersData.versions.transformers} (torch ${transformersData.versions.torch}), ${SAVED} with fused attention`,
    },
  ],
};

/**
 * What `model` of `library` saves per sample at an h x w input, or undefined where it was not
 * measured. Other sizes than the measured one scale by the pixel count: a ConvNet's feature maps
 * and a vision Transformer's tokens (fused attention: no N x N matrix) both grow with it.
 */
export function measuredSavedActivations(library: MeasuredLibrary, model: string, h: number, w: number): CatalogTable['savedActivations'] {
  for (const { data, source } of DATA[library]) {
    const measured = Object.prototype.hasOwnProperty.call(data.models, model) ? data.models[model] : undefined;
    if (!measured) continue;
    const [bytes, h0, w0, forwardPeak] = measured;
    const scaled = (figure: number) => Math.round((figure * h * w) / (h0 * w0));
    return { bytesPerSample: scaled(bytes), source, library, ...(forwardPeak === undefined ? {} : { forwardPeakBytesPerSample: scaled(forwardPeak) }) };
  }
  return undefined;
}
