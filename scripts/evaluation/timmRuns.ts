import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isCatalogMiss } from '../../src/core/catalog/catalog';
import { timmArchitecture } from '../../src/core/catalog/timm/timm';
import { timmEntry } from '../../src/core/catalog/timm/timmData';
import { RUNTIME_OVERHEAD_MIB } from '../../src/core/estimators/analytical';
import { isFunctionalRow, LAYER_TABLE_SCHEMA_VERSION, type LayerTable } from '../../src/core/layerTable/layerTable';
import { parseCsv } from './referenceData';

/**
 * One timm training run of ../shared/data/gpumemnet-a100/timm_faketensor.csv (A100 40 GB,
 * PyTorch 2.4.1) joined with the model's layer table from the timm catalog (generated from timm
 * 1.0.31 itself, docs/catalog.md) at the model's default input size: the table a script's
 * `timm.create_model("<name>")` gets, so the estimator is trained and judged on what users see.
 */
export interface TimmRun {
  readonly model: string;
  /** timm's model module (resnet, vision_transformer, ...): the family of leave-one-family-out. */
  readonly module: string;
  readonly group: TimmGroup;
  readonly batchSize: number;
  readonly measuredMiB: number;
  /** FakeTensor's estimate for the same run (`Last Numeric Value`, MiB). */
  readonly fakeTensorMiB: number;
  /**
   * The run did not complete its training steps: it filled the GPU (at or near 40 GB), or is a
   * larger batch than such a run, or FakeTensor already needs more than the GPU has, or it measured
   * less than FakeTensor's tensors plus the smallest CUDA context (it crashed before its step's
   * peak), or the model's whole series is flat while FakeTensor's estimate grows (nothing trained).
   * Its peak is a lower bound, kept out of fits and errors.
   */
  readonly lowerBound: boolean;
  readonly table: LayerTable;
  readonly inputSize: readonly number[];
}

export type TimmGroup = 'ConvNets' | 'vision Transformers' | 'MLP-Mixers';

/** Runs whose peak is within this of the A100's 40,960 MiB filled the GPU (the data's README). */
const FILLED_GPU_MIB = 39_000;

/**
 * timm modules by group. Hybrids count where their blocks' memory comes from: attention-based
 * backbones with a convolutional stem are Transformers, convolutions with an attention head are
 * ConvNets; MLP-Mixer-style token mixing (mixer, gMLP, ResMLP) is its own group.
 */
const TRANSFORMER_MODULES = new Set([
  'vision_transformer', 'vision_transformer_hybrid', 'vision_transformer_relpos', 'vision_transformer_sam', 'deit', 'beit', 'eva',
  'swin_transformer', 'swin_transformer_v2', 'swin_transformer_v2_cr', 'cait', 'xcit', 'crossvit', 'pit', 'tnt', 'twins', 'levit',
  'mvitv2', 'maxxvit', 'volo', 'visformer', 'convit', 'coat', 'gcvit', 'pvt_v2', 'efficientformer', 'efficientformer_v2', 'edgenext',
  'nest', 'sequencer', 'davit', 'hiera', 'fastvit', 'tiny_vit', 'focalnet', 'vitamin', 'hieradet_sam2', 'metaformer', 'efficientvit_msra',
  'efficientvit_mit', 'mobilevit', 'vision_transformer_relpos', 'cvt', 'rdnet', 'nextvit', 'aimv2', 'naflexvit', 'fasternet', 'shvit',
]);
const MIXER_MODULES = new Set(['mlp_mixer']);

export function timmGroup(module: string): TimmGroup {
  if (MIXER_MODULES.has(module)) return 'MLP-Mixers';
  if (TRANSFORMER_MODULES.has(module)) return 'vision Transformers';
  return 'ConvNets';
}

/** The catalog's table of a timm model with timm's defaults at its default input; null for a catalog miss. */
export function timmCatalogTable(model: string): { table: LayerTable; module: string; inputSize: number[] } | null {
  const architecture = timmArchitecture(model, {});
  const entry = timmEntry(model);
  if (isCatalogMiss(architecture) || !entry) return null;
  const inputSize = [...architecture.input.defaultShape];
  const { rows, savedActivations } = architecture.table(inputSize);
  const sum = (values: readonly (number | null)[]) => values.reduce<number>((total, v) => total + (v ?? 0), 0);
  const table: LayerTable = {
    schemaVersion: LAYER_TABLE_SCHEMA_VERSION,
    model,
    inputShape: inputSize,
    rows,
    totals: {
      params: sum(rows.map((r) => r.params)),
      trainableParams: sum(rows.filter((r) => r.trainable).map((r) => r.params)),
      activations: sum(rows.filter((r) => !isFunctionalRow(r)).map((r) => r.activations)),
    },
    incomplete: rows.some((r) => r.params === null || r.activations === null),
    ...(savedActivations ? { measuredActivations: [{ path: '', savedBytesPerSample: savedActivations.bytesPerSample, source: savedActivations.source }] } : {}),
  };
  // The blob key is timm's module file, `vision_transformer#3` for one split in parts.
  return { table, module: entry.blob.split('#')[0]!, inputSize };
}

/** The timm runs whose model the catalog resolves; `missing` names the models it does not. */
export function loadTimmRuns(dataDir: string): { runs: TimmRun[]; missing: string[] } {
  const rows = parseCsv(readFileSync(path.join(dataDir, 'timm_faketensor.csv'), 'utf8'));
  const header = rows[0]!;
  const column = (name: string) => {
    const index = header.indexOf(name);
    if (index < 0) throw new Error(`timm_faketensor.csv has no column ${name}`);
    return index;
  };
  const [file, batch, peak, fake] = [column('Filename'), column('Batch Size'), column('Max GPU Memory (MiB)'), column('Last Numeric Value')];
  const tables = new Map<string, { table: LayerTable; module: string; inputSize: number[] } | null>();
  const runs: TimmRun[] = [];
  const missing: string[] = [];
  for (const record of rows.slice(1)) {
    const name = record[file]!.replace(/\.out$/, '');
    const model = name.slice(0, name.lastIndexOf('_'));
    if (!tables.has(model)) {
      const recorded = timmCatalogTable(model);
      tables.set(model, recorded);
      if (!recorded) missing.push(model);
    }
    const recorded = tables.get(model);
    if (!recorded) continue;
    const measuredMiB = Number(record[peak]);
    runs.push({
      model,
      module: recorded.module,
      group: timmGroup(recorded.module),
      batchSize: Number(record[batch]),
      measuredMiB,
      fakeTensorMiB: Number(record[fake]),
      lowerBound: false,
      table: recorded.table,
      inputSize: recorded.inputSize,
    });
  }
  return { runs: markLowerBounds(runs), missing };
}

/** A100 40 GB: what nvidia-smi reports as memory.total. */
const GPU_MIB = 40_960;

/** A series this flat (largest / smallest measured) while FakeTensor's estimate grows this much never trained. */
const FLAT_SERIES = { measuredRatio: 1.1, fakeTensorRatio: 4 };

function markLowerBounds(runs: TimmRun[]): TimmRun[] {
  const byModel = new Map<string, TimmRun[]>();
  for (const run of runs) byModel.set(run.model, [...(byModel.get(run.model) ?? []), run]);
  const marked = new Map<TimmRun, boolean>();
  for (const series of byModel.values()) {
    const sorted = [...series].sort((a, b) => a.batchSize - b.batchSize);
    const measured = sorted.map((run) => run.measuredMiB);
    const fake = sorted.map((run) => run.fakeTensorMiB);
    const flat = sorted.length > 1 && Math.max(...measured) / Math.min(...measured) < FLAT_SERIES.measuredRatio && fake[fake.length - 1]! / fake[0]! > FLAT_SERIES.fakeTensorRatio;
    // A larger batch than one that filled the GPU fills it too. A run that measured less than a
    // smaller batch did is not by that alone a crash: most such series go on growing with the batch
    // (bat_resnext26ts: 6.1 GB at 8, then 4.2, 6.8, 11.6 GB), so only what the run must hold decides.
    let filled = false;
    for (const run of sorted) {
      if (run.measuredMiB >= FILLED_GPU_MIB || run.fakeTensorMiB > GPU_MIB) filled = true;
      marked.set(run, flat || filled || run.measuredMiB < run.fakeTensorMiB + RUNTIME_OVERHEAD_MIB);
    }
  }
  return runs.map((run) => ({ ...run, lowerBound: marked.get(run)! }));
}
