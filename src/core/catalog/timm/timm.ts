/**
 * The timm part of the catalog: `timm.create_model("resnet50", num_classes=10)`. timm models are
 * answered with the torchvision model of the same architecture and parameter count (timmModels.ts)
 * or, for Xception, with the published architecture the generator builds; either way the layer
 * table's module paths are torchvision's (or the generator's), not always timm's (timm calls some
 * layers act1, global_pool.pool...). The notes and `source` say so.
 */
import type { CatalogArchitecture, CatalogMiss, CatalogOptions } from '../catalog';
import { TIMM_BLOBS, TIMM_INDEX, TIMM_VERSIONS } from '../data/timm';
import { torchvisionArchitecture, TORCHVISION_VERSION } from '../torchvision/torchvision';
import { unknownNameMessage } from '../closestNames';
import { pythonValue, tracedArchitecture } from '../traced/tracedArchitecture';
import { BlobCache } from '../traced/tracedData';
import { TIMM_ALIASES, TIMM_MODELS, type TimmModel } from './timmModels';

const blobs = new BlobCache(TIMM_BLOBS);

/** Options create_model takes that cannot change the layer table. */
const NO_EFFECT = ['pretrained', 'drop_rate', 'drop_path_rate', 'drop_block_rate', 'pretrained_cfg', 'checkpoint_path', 'scriptable', 'exportable', 'no_jit'];

/** The timm model names the catalog knows (aliases included), sorted. */
export function timmModelNames(): string[] {
  return [...Object.keys(TIMM_MODELS), ...Object.keys(TIMM_ALIASES)].sort();
}

/**
 * The catalog's name for a create_model name: `resnet50.a1_in1k` (a pretrained tag), `timm/resnet50`
 * and `hf_hub:timm/resnet50.tv_in1k` (the Hub) all give resnet50; undefined if unknown.
 */
export function timmName(name: string): string | undefined {
  const bare = name.replace(/^hf[-_]hub:/, '').replace(/^timm\//, '').split('.')[0]!;
  const canonical = TIMM_ALIASES[bare] ?? bare;
  return canonical in TIMM_MODELS ? canonical : undefined;
}

export function timmArchitecture(name: string, options: CatalogOptions): CatalogArchitecture | CatalogMiss {
  const canonical = timmName(name);
  if (canonical === undefined) return { miss: unknownNameMessage('timm', name, timmModelNames()) };
  const model = TIMM_MODELS[canonical]!;
  const where = `timm.create_model("${canonical}")`;
  const accepted = ['num_classes', 'in_chans', 'global_pool', ...(model.sizeOption ? [model.sizeOption] : []), ...NO_EFFECT];
  let classes: number | undefined;
  let size: number | undefined;
  for (const [option, value] of Object.entries(options)) {
    if (option === 'num_classes') {
      if (value === 0) return { miss: `${where}: num_classes=0 (no classifier) is not covered by the catalog` };
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return { miss: `${where}: num_classes should be a positive int, not ${pythonValue(value)}` };
      classes = value;
    } else if (option === 'in_chans') {
      if (value !== 3) return { miss: `${where}: the catalog covers only in_chans=3 (its table is built from ${sourceName(model)}, which takes RGB images)` };
    } else if (option === 'global_pool') {
      if (value !== 'avg' && !(model.sizeOption && value === 'token')) return { miss: `${where}: the catalog covers only the default global_pool, not ${pythonValue(value)}` };
    } else if (model.sizeOption && option === model.sizeOption) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return { miss: `${where}: ${option} should be a positive int, not ${pythonValue(value)}` };
      size = value;
    } else if (!NO_EFFECT.includes(option)) {
      return { miss: `${where}: the catalog does not know the option \`${option}\` (it takes ${accepted.join(', ')})` };
    }
  }
  const note = model.built
    ? `timm's ${canonical}: the layer table is traced from the published architecture (Chollet 2017) written with timm's module names; it has timm's published ${formatPublished(model.published)} parameters.`
    : `timm's ${canonical}: the layer table is ${sourceName(model)}'s, whose parameter count matches timm's published ${formatPublished(model.published)}; module paths follow torchvision, and some differ from timm's (act1, global_pool...).${model.note ? ` ${model.note}` : ''}`;
  if (model.built) return builtArchitecture(canonical, model, classes, note);

  const tvOptions: Record<string, number | boolean> = { ...(model.torchvisionOptions ?? {}) };
  if (classes !== undefined) tvOptions.num_classes = classes;
  if (size !== undefined) tvOptions.image_size = size;
  const architecture = torchvisionArchitecture(model.torchvision!, tvOptions);
  if ('miss' in architecture) return { miss: `${where}: ${architecture.miss}` };
  return {
    library: 'timm',
    name: canonical,
    className: model.className,
    params: architecture.params,
    input: { kind: 'image', defaultShape: size !== undefined ? [3, size, size] : [3, model.input, model.input] },
    source: `torchvision ${TORCHVISION_VERSION} ${sourceName(model)} (same parameter count as timm's ${canonical})`,
    table(sample) {
      const table = architecture.table(sample);
      return { ...table, notes: [note, ...table.notes.slice(1)] };
    },
  };
}

function builtArchitecture(name: string, model: TimmModel, classes: number | undefined, note: string): CatalogArchitecture {
  const entry = TIMM_INDEX[model.built!]!;
  return tracedArchitecture({
    library: 'timm',
    name,
    className: entry.className,
    source: `published architecture (${TIMM_VERSIONS.architecture ?? 'scripts/catalog/xception.py'}), traced with torch ${TIMM_VERSIONS.torch ?? ''}`,
    blob: blobs.get(model.built!),
    when: {},
    values: { num_classes: classes ?? 1000 },
    defaultShape: entry.input,
    label: classes !== undefined && classes !== 1000 ? `${name} (num_classes=${classes})` : name,
    notes: [note],
  });
}

function sourceName(model: TimmModel): string {
  if (model.built) return 'the published architecture';
  const options = Object.entries(model.torchvisionOptions ?? {}).map(([k, v]) => `${k}=${pythonValue(v)}`);
  return `torchvision's ${model.torchvision}${options.length > 0 ? `(${options.join(', ')})` : ''}`;
}

function formatPublished(count: number): string {
  return Number.isInteger(count / 1e4) ? `${(count / 1e6).toFixed(2)}M` : count.toLocaleString('en-US');
}
