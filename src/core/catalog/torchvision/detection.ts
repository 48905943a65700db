/**
 * torchvision's Faster R-CNN builders (`torchvision.models.detection.fasterrcnn_resnet50_fpn(
 * num_classes=2)`), answered from data measured from the library (scripts/catalog/
 * generate_detection.py): a detection model resizes every image to its own size and samples a
 * fixed number of proposals per image in training, so one measured table per image stands for
 * any input; the traced graphs of the classification catalog cannot run its forward.
 *
 * Options as torchvision 0.14 honours them: `num_classes`; `weights` (COCO weights: 91 classes,
 * backbone trained); `weights_backbone` (default ImageNet: batch norms frozen and all but 3
 * backbone stages frozen; None: everything trains); `trainable_backbone_layers` only at its
 * default. Anything else is a miss that names it.
 */
import type { LayerRow } from '../../layerTable/layerTable';
import type { CatalogArchitecture, CatalogMiss, CatalogOptions, CatalogTable } from '../catalog';
import { CatalogInputError } from '../catalog';
import { unknownNameMessage } from '../closestNames';
import data from '../data/torchvisionDetection.json';

/** A number of the data, or a + b * num_classes. */
type Linear = number | { readonly a: number; readonly b: number };
type Shape = readonly Linear[] | null;
type StoredRow = readonly [string, string, Shape, Linear, Linear, boolean];

interface StoredVariant {
  readonly params: Linear;
  readonly rows: readonly StoredRow[];
}

interface StoredModel {
  readonly className: string;
  readonly minSize: readonly number[];
  readonly maxSize: number;
  readonly variants: Readonly<Record<'trainedBackbone' | 'untrainedBackbone', StoredVariant>>;
}

const MODELS = data.models as unknown as Readonly<Record<string, StoredModel>>;
const INPUT = data.input as readonly number[];
const DEFAULT_CLASSES = data.defaultNumClasses;
/** trainable_backbone_layers when the backbone is trained and the script does not say. */
const DEFAULT_TRAINABLE_LAYERS = 3;
const ACCEPTED = new Set(['progress']);

export function detectionModelNames(): string[] {
  return Object.keys(MODELS).sort();
}

export function detectionArchitecture(name: string, options: CatalogOptions): CatalogArchitecture | CatalogMiss {
  const model = MODELS[name];
  const where = `torchvision.models.detection.${name}`;
  if (!model) return { miss: unknownNameMessage('torchvision detection', name, detectionModelNames()) };
  const weights = options.weights ?? (options.pretrained === true ? 'DEFAULT' : null);
  const backbone = options.weights_backbone !== undefined ? options.weights_backbone : options.pretrained_backbone === false ? null : 'DEFAULT';
  const trained = weights !== null && weights !== false ? true : backbone !== null && backbone !== false;
  let classes = DEFAULT_CLASSES;
  for (const [option, value] of Object.entries(options)) {
    if (ACCEPTED.has(option) || ['weights', 'pretrained', 'weights_backbone', 'pretrained_backbone'].includes(option)) continue;
    if (option === 'num_classes') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return { miss: `${where}: \`num_classes\` should be a positive int, not ${String(value)}` };
      // torchvision's own words (_ovewrite_value_param).
      if (weights !== null && weights !== false && value !== DEFAULT_CLASSES) return { miss: `${where}(weights=...): The parameter 'num_classes' expected value ${DEFAULT_CLASSES} but got ${value} instead.` };
      classes = value;
      continue;
    }
    // Without a trained backbone torchvision makes every layer trainable, whatever is asked.
    if (option === 'trainable_backbone_layers' && (value === null || value === DEFAULT_TRAINABLE_LAYERS || !trained)) continue;
    return { miss: `${where}: the catalog cannot build it with ${option}=${String(value)} (it covers num_classes, weights, weights_backbone and trainable_backbone_layers=${DEFAULT_TRAINABLE_LAYERS})` };
  }
  const variant = model.variants[trained ? 'trainedBackbone' : 'untrainedBackbone'];
  const rows = variant.rows.map((row) => toRow(row, classes));
  const note = `${name} resizes each image to ${model.minSize.join('/')} pixels on its short side (at most ${model.maxSize} on the long one) and trains on sampled proposals: the rows are per image, measured at the internal size of a ${INPUT.join('x')} image, whatever the script's images are`;
  return {
    library: 'torchvision',
    name,
    className: model.className,
    params: linear(variant.params, classes),
    input: { kind: 'image', defaultShape: INPUT },
    source: `torchvision ${data.torchvision} detection (generated)`,
    table(sample: readonly number[]): CatalogTable {
      if (sample.length !== 3 || sample[0] !== INPUT[0] || !sample.every((d) => Number.isInteger(d) && d > 0)) {
        throw new CatalogInputError(`${name} takes RGB images (3, height, width), such as ${INPUT.join('x')}; not [${sample.join(', ')}]`);
      }
      return { inputShape: [...sample], rows, notes: [note] };
    },
  };
}

function linear(value: Linear, classes: number): number {
  return typeof value === 'number' ? value : value.a + value.b * classes;
}

function toRow([path, type, shape, activations, params, trainable]: StoredRow, classes: number): LayerRow {
  return { path, type, outputShape: shape ? shape.map((d) => linear(d, classes)) : null, activations: linear(activations, classes), params: linear(params, classes), trainable };
}
