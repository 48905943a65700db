/**
 * The analysis pass of one file: syntax tree -> models -> layer tables -> the estimators of the
 * analysis pass (estimators.ts) -> each model's estimate, with the verdict taken of the one that
 * counts. The pipeline (pipeline.ts) adds the learned pass.
 */
import { analyzeSource, type ProjectContext, type SyntaxCache } from '../analysis/analyzeSource';
import type { SourceRange } from '../parsing/syntax';
import type { AdapterSetup, AnalysisNote, ModelDescription, OptimizerKind, Precision, SourceAnalysis, Sourced, TrainingSetup } from '../analysis/modelDescription';
import type { ModuleObject } from '../analysis/interpreter/pyValues';
import { loopsOf } from '../analysis/trainingLoops';
import { setupOf } from '../analysis/modelSetup';
import type { MemoryBreakdown } from '../estimators/analytical';
import { analyticalEstimator } from '../estimators/analyticalEstimator';
import { fineTuningEstimator, fineTuningSpec } from '../estimators/fineTuningEstimator';
import { shardingSummary } from '../estimators/shardedFineTuning';
import { modelFamily, type ModelFamily } from '../estimators/family';
import type { TrainingJob } from '../estimators/trainingJob';
import { GALORE_DEFAULT_RANK } from '../estimators/galore';
import type { GpuProfile } from '../gpus/gpuProfiles';
import { buildLayerTable, type LayerTableResult } from '../layerTable/buildLayerTable';
import { isUnderPath, type LayerTable } from '../layerTable/layerTable';
import { withLoraAdapter } from '../layerTable/loraTable';
import { formatCount } from '../format/units';
import type { Tree } from 'web-tree-sitter';
import { resultOf, type EstimatorResult, type EstimatorResults } from './estimator';
import { readingsOf, runAnalysisEstimators, theEstimate } from './estimators';
import type { ArchitectureRef, Assumption, FileEstimate, MemoryEstimate, ModelEstimate } from './fileEstimate';
import { CUDNN_BENCHMARK_NOTE, noteText } from './notes';
import { fits, largestFittingBatch, riskOf } from './verdict';
import { fineTuningOutlook } from './fineTuningRemedies';
import { modelMaximumPosition } from './longestSequence';
import { relativeTo } from '../project/projectFiles';
import type { AssumedValue } from '../analysis/config/configSources';

export interface EstimateOptions {
  readonly gpu: GpuProfile;
  /** Replaces the batch size found in the source (the CLI's --batch-size, a what-if in the editor). */
  readonly batchSize?: number;
  /** Share of the GPU's memory kept free before an estimate counts as fitting comfortably (0..1). */
  readonly safetyMargin: number;
  /** Values the user assumes by name (the CLI's --set, the gpuEstimator.assume setting): they replace argparse and dataclass defaults, config keys, environment defaults, top-level constants and sizes that come from the data. */
  readonly assume?: Readonly<Record<string, AssumedValue>>;
  /** The arguments the script is run with (the CLI's words after `--`): `sys.argv[1:]`, LightningCLI's `--config`. None by default. */
  readonly scriptArguments?: readonly string[];
  /** GPUs a sharded or data-parallel fine-tuning job runs on (the CLI's --gpus, the gpuEstimator.gpuCount setting), over the count the script's launch says. */
  readonly gpus?: number;
}

/**
 * What an editor keeps between estimates of one document: the analysis cache (syntax copy and
 * statement groups) and each model's layer table. A model whose statement group was reused is
 * the same object as before, so its table is too, while the inputs offered to it are unchanged.
 */
export interface EstimateCache {
  readonly syntax: SyntaxCache;
  tables: Map<string, LayerTableResult>;
}

/** Estimates from an already parsed tree, with the estimators of the analysis pass (the editor keeps trees to re-parse incrementally). The caller owns the tree. */
export function estimateTree(file: string, source: string, tree: Tree, options: EstimateOptions, cache?: EstimateCache, project?: ProjectContext): FileEstimate {
  const gpu = gpuOf(options);
  const analysis = analyzeSource(tree, source, undefined, cache?.syntax, project, options.assume, options.scriptArguments);
  const tables = new Map<string, LayerTableResult>();
  const tableOf = (model: ModelDescription): LayerTableResult => {
    const key = tableKey(model, analysis.setup);
    const cached = cache?.tables.get(key);
    const table = cached ? withCurrentInputSource(cached, model, analysis.setup) : buildLayerTable(model, analysis.setup, analysis.context);
    tables.set(key, table);
    return table;
  };
  const shown = (path: string): string => (project ? relativeTo(path, project.source.root) : path);
  const models = analysis.models.map((model) => estimateModel(model, analysis, options, tableOf(model), shown));
  if (cache) cache.tables = tables;
  const warnings = unique(analysis.notes.filter((note) => !ownedByModel(note, analysis.models)).map(noteText));
  const dataShape = analysis.setup.inputShape?.value ?? transformedImage(analysis.setup.imageSize);
  return { file, gpu, models, warnings, ...(project && analysis.projectFiles ? { project: { root: project.source.root, files: analysis.projectFiles } } : {}), ...(dataShape?.length ? { dataShape } : {}) };
}

export function gpuOf(options: EstimateOptions): FileEstimate['gpu'] {
  return { id: options.gpu.id, name: options.gpu.name, memoryMiB: options.gpu.memoryMiB };
}

/** Everything buildLayerTable reads besides the model object itself. */
/**
 * A table kept from the last analysis, with its input's source as this analysis found it: the
 * value is the same (the key holds it), but the statement that gave it may be one an edit moved
 * in another statement group (a model built by a function the edit did not touch, its image size
 * read in the edited main()).
 */
function withCurrentInputSource(cached: LayerTableResult, model: ModelDescription, setup: TrainingSetup): LayerTableResult {
  const used = cached.inputShape;
  if (!used) return cached;
  const same = (value: readonly number[] | undefined) => value === undefined || JSON.stringify(value) === JSON.stringify(used.value);
  // An image size or a sequence length is the sample's side or length, not the sample: its origin names it.
  const sources: (Omit<Sourced<unknown>, 'value'> & { readonly value?: readonly number[] })[] = [
    ...[model.exampleInputs, setup.datasetSamples].flatMap((s) => (s?.value[0] ? [{ ...s, value: s.value[0] }] : [])),
    ...setup.inputCandidates,
    ...[setup.imageSize, setup.sequenceLength].flatMap((s) => (s ? [{ range: s.range, origin: s.origin }] : [])),
  ];
  const current = sources.find((source) => source.origin === used.origin && same(source.value));
  return current && current.range !== used.range ? { ...cached, inputShape: { ...used, range: current.range } } : cached;
}

function tableKey(model: ModelDescription, setup: TrainingSetup): string {
  return `${model.root.id}:${JSON.stringify([
    model.name,
    model.inferenceOnly !== undefined,
    model.unfollowedUnfreeze !== undefined,
    model.exampleInputs?.value,
    model.invocationArity,
    setup.datasetSamples?.value,
    setup.inputCandidates.map((candidate) => candidate.value),
    setup.imageSize?.value,
    setup.sequenceLength?.value,
    setup.targetSequenceLength?.value,
  ])}`;
}

/** The table with the script's LoRA adapter applied (loraTable.ts), said in a note; the table as read where there is none or it adapts nothing. */
function adaptedTable(table: LayerTable, adapter: Sourced<AdapterSetup> | undefined, notes: AnalysisNote[]): LayerTable {
  if (!adapter?.value.applied || adapter.value.method !== 'lora') return table;
  const lora = withLoraAdapter(table, adapter.value);
  const range = adapter.range;
  if (!lora) {
    notes.push({ severity: 'warning', message: `${adapter.origin} adapts no layer of this model's table (PEFT matches target_modules against module names): every parameter is counted as trained.`, range });
    return table;
  }
  const saved = adapter.value.modulesToSave?.length ? `, and ${adapter.value.modulesToSave.map((m) => `\`${m}\``).join(', ')} (modules_to_save) trained whole` : '';
  notes.push({
    severity: 'info',
    message: `${adapter.origin}: LoRA on ${lora.adapted.length} Linear layers (${formatCount(lora.loraParams)} parameters); the other parameters frozen${saved}.`,
    range,
  });
  return lora.table;
}

function estimateModel(model: ModelDescription, analysis: SourceAnalysis, options: EstimateOptions, layers: LayerTableResult, shown: (path: string) => string): ModelEstimate {
  const setup = setupOf(analysis.setup, model);
  const { inputShape, notes } = layers;
  const modelNotes = uniqueNotes([...analysis.notes.filter((note) => ownedBy(note, model)), ...notes]);
  // A pretrained Transformer fine-tuned with an adapter, quantized or 16-bit weights: its tokens per sample are the table's input.
  const catalogPart = model.root.catalog ?? model.root.wholeCatalogModule()?.catalog;
  const tokens = catalogPart?.architecture.input.kind === 'tokens' ? layers.table.inputShape?.[layers.table.inputShape.length - 1] : undefined;
  const fineTuning = fineTuningSpec(setup, catalogPart?.architecture, tokens, options.gpus, layers.table);
  // A LoRA adapter on a model the fine-tuning model does not take (an image model): the table as PEFT trains it.
  const table = fineTuning ? layers.table : adaptedTable(layers.table, setup.adapter, modelNotes);
  const segments = checkpointedSegments(table);

  const batchSize = options.batchSize ?? setup.batchSize?.value ?? null;
  const optimizer: OptimizerKind = setup.optimizer?.value ?? 'adam';
  const precision: Precision = setup.precision?.value ?? 'fp32';
  const warn = (message: string) => modelNotes.push({ severity: 'warning', message });
  if (batchSize === null) warn('Batch size not found in the source; pass one (CLI: --batch-size) to get an estimate.');
  if (!setup.optimizer && !model.inferenceOnly) warn(model.setup?.optimizerMissing ?? 'No torch.optim optimizer found; Adam is assumed.');
  if (table.incomplete) warn('Some layers could not be sized; the estimate is a lower bound.');
  if (setup.cudnnBenchmark?.value && table.rows.some((row) => /^Conv(Transpose)?[123]d$/.test(row.type)))
    modelNotes.push({ severity: 'info', message: CUDNN_BENCHMARK_NOTE, range: setup.cudnnBenchmark.range });
  const held = model.setup?.optimizedPaths;
  // Where the rest of the model is frozen (a linear probe), nothing else gets gradients: no note.
  const trainedElsewhere = held?.length && table.rows.some((row) => (row.params ?? 0) > 0 && row.trainable && !held.some((path) => isUnderPath(row, path)));
  if (held && trainedElsewhere && setup.optimizer) modelNotes.push({ severity: 'info', message: `The optimizer holds the parameters of ${held.map((path) => `\`${path}\``).join(', ')} only: the others get gradients but no optimizer state.`, range: setup.optimizer.range });

  const family = modelFamily(table);
  // The fine-tuning model estimates sharded jobs per GPU; the other estimators see one unsharded replica.
  if (setup.sharding && !fineTuning?.sharding) modelNotes.push({ severity: 'warning', message: `${setup.sharding.origin} shards the model across GPUs; the estimate is of one unsharded replica, so it is high for each GPU.`, range: setup.sharding.range });
  const { results, maxBatchSize } = batchSize === null ? { results: new Map() as EstimatorResults, maxBatchSize: null } : analysisPass(table, { batchSize, optimizer, precision, ...(setup.optimizer?.extraStateCopies ? { optimizerExtraCopies: setup.optimizer.extraStateCopies } : {}), ...(fineTuning ? { fineTuning } : {}), ...(model.setup?.optimizedPaths ? { optimizedPaths: model.setup.optimizedPaths } : {}) }, family, options.gpu);
  const chosen = theEstimate(results);
  // The breakdown is the analytical model's, or the fine-tuning model's when that is the estimate.
  const analytical = chosen?.estimator === fineTuningEstimator ? (chosen.result as EstimatorResult<MemoryBreakdown>) : resultOf(results, analyticalEstimator);
  const estimate = chosen?.result;
  for (const message of estimate?.warnings ?? []) warn(message);
  const estimateMiB = estimate ? Math.round(estimate.pointMiB) : null;
  const memoryMiB = options.gpu.memoryMiB;
  // What people ask next of a fine-tune (the longest sequence, the change that makes it fit), where the fine-tuning model is the estimate.
  const whatIf = fineTuning && batchSize !== null && chosen?.estimator === fineTuningEstimator ? fineTuningOutlook({ ...fineTuning.job, batch: batchSize }, memoryMiB, options.safetyMargin, modelMaximumPosition(catalogPart?.architecture.hfConfig?.config), fineTuning.sharding) : undefined;
  return {
    name: model.name,
    line: model.range.startLine + 1,
    classLine: model.root.classValue ? model.root.classValue.node.startPosition.row + 1 : null,
    ...(model.root.classValue?.file === undefined ? {} : { classFile: shown(model.root.classValue.file) }),
    trainingLoops: loopsOf(model.name, analysis.trainingLoops, analysis.models.map((m) => m.name)).map(({ range }) => ({ startLine: range.startLine + 1, endLine: range.endLine + 1 })),
    params: table.totals.params,
    batchSize,
    family,
    architecture: architectureOf(model.root),
    inputShape: table.inputShape,
    optimizer,
    ...(setup.optimizer?.extraStateCopies ? { optimizerExtraCopies: setup.optimizer.extraStateCopies } : {}),
    precision,
    gradientCheckpointing: (setup.gradientCheckpointing?.value ?? false) || segments > 0,
    compiled: setup.compiled?.value ?? false,
    memory: {
      estimateMiB,
      lowMiB: estimate?.range ? Math.round(estimate.range.lowMiB) : null,
      highMiB: estimate?.range ? Math.round(estimate.range.highMiB) : null,
      ...(estimate?.range?.quantiles ? { rangeQuantiles: estimate.range.quantiles } : {}),
      bin: null,
      method: estimate ? (estimate.method as MemoryEstimate['method']) : null,
      breakdown: analytical?.detail ?? null,
      ...(fineTuning?.sharding && batchSize !== null && chosen?.estimator === fineTuningEstimator ? { sharding: shardingSummary(fineTuning.job, fineTuning.sharding, batchSize) } : {}),
    },
    estimates: readingsOf(results, family),
    utilization: { smact: null, smocc: null, drama: null },
    // Judged on the exact figure, as the largest fitting batch is: a batch one past it whose
    // estimate rounds down to the GPU's memory does not fit.
    fits: estimate ? fits(estimate.pointMiB, memoryMiB) : null,
    risk: estimate ? riskOf(estimate.pointMiB, memoryMiB, options.safetyMargin) : null,
    maxBatchSize,
    ...(whatIf ? { fineTuning: whatIf } : {}),
    ...(model.inferenceOnly ? { inferenceOnly: true as const } : {}),
    assumptions: [...assumptions(options.batchSize, setup, inputShape, shown, model.inferenceOnly, segments), ...configAssumptions(analysis.configReadings, shown)],
    layerTable: table,
    notes: modelNotes,
  };
}

/**
 * The analysis-pass estimators' results and the largest batch that fits, by layer table: an edit
 * leaves the tables of the models it did not touch the same objects (EstimateCache), so those
 * models are not estimated again (the real-model estimator replays a whole training step).
 */
const analysed = new WeakMap<LayerTable, Map<string, { results: EstimatorResults; maxBatchSize: number | null }>>();

function analysisPass(table: LayerTable, setup: Omit<TrainingJob, 'table'>, family: ModelFamily, gpu: GpuProfile): { results: EstimatorResults; maxBatchSize: number | null } {
  let byJob = analysed.get(table);
  if (!byJob) analysed.set(table, (byJob = new Map<string, { results: EstimatorResults; maxBatchSize: number | null }>()));
  const key = JSON.stringify([setup.batchSize, setup.optimizer, setup.precision, family, gpu.id, gpu.memoryMiB, gpu.architecture, setup.fineTuning?.job, setup.fineTuning?.sharding]);
  const known = byJob.get(key);
  if (known) return known;
  const results = runAnalysisEstimators({ job: { table, ...setup }, family, gpu });
  const estimate = theEstimate(results)?.result;
  // Without the input's shape no activation is counted, and nothing but the batch's labels grows with it: no largest batch.
  const outcome = { results, maxBatchSize: estimate?.memoryAt && table.inputShape ? largestFittingBatch(estimate.memoryAt, gpu.memoryMiB) : null };
  byJob.set(key, outcome);
  return outcome;
}

function architectureOf(root: ModuleObject): ArchitectureRef | null {
  const part = root.catalog ?? root.wholeCatalogModule()?.catalog;
  if (!part) return null;
  const { library, name, className, source } = part.architecture;
  return { library, name, className, source };
}

/** `BATCH_SIZE` from `constant BATCH_SIZE`, `batch_size` from `--batch-size default` (the origins trainingSetup.ts gives a batch size read under a name). */
function batchSizeName(origin: string): string | undefined {
  return /^constant ([A-Za-z_]\w*)$/.exec(origin)?.[1] ?? /^--([\w-]+) default$/.exec(origin)?.[1]?.replace(/-/g, '_');
}

/** How many checkpointed segments the model's table has (rule 12 of docs/layer-table.md). */
function checkpointedSegments(table: LayerTable): number {
  return new Set(table.rows.flatMap((row) => (row.checkpoint === undefined ? [] : [row.checkpoint]))).size;
}

function assumptions(override: number | undefined, setup: SourceAnalysis['setup'], inputShape: Sourced<readonly number[]> | undefined, shown: (path: string) => string, inference?: SourceRange, segments = 0): Assumption[] {
  // A value read in an imported module (the optimizer its method makes) says which file its line is in.
  const line = (found: Sourced<unknown> | undefined): { line: number | null; file?: string } => {
    const file = found?.range.file;
    return { line: found ? found.range.startLine + 1 : null, ...(file === undefined ? {} : { file: shown(file) }) };
  };
  const { batchSize, optimizer, precision } = setup;
  const list: Assumption[] = [];
  if (override !== undefined) {
    // The name the script keeps the size it replaces under: the dry run gives the script the same size there.
    const key = batchSize ? batchSizeName(batchSize.origin) : undefined;
    list.push({ name: 'batchSize', value: String(override), origin: 'given by the user', line: null, ...(key === undefined ? {} : { key }) });
  }
  else if (batchSize) list.push({ name: 'batchSize', value: String(batchSize.value), origin: batchSize.origin, ...line(batchSize) });
  if (inputShape) list.push({ name: 'inputShape', value: `(${inputShape.value.join(', ')})`, origin: inputShape.origin, ...line(inputShape) });
  // A Trainer's optimizer outside torch.optim (`optim="paged_adamw_8bit"`) is shown by its name, not as "other".
  const galore = setup.galore?.value;
  const galoreShown = galore ? ` (GaLore, rank ${galore.rank ?? `${GALORE_DEFAULT_RANK} (default)`})` : '';
  const optimizerShown = optimizer?.value === 'other' && setup.optimizerName ? `${setup.optimizerName.value}${galoreShown}` : (optimizer?.value ?? 'adam');
  // A model run for inference only (a teacher under torch.no_grad()) has no optimizer to assume.
  if (inference) list.push({ name: 'optimizer', value: 'none', origin: 'inference only: every call under torch.no_grad()', line: inference.startLine + 1 });
  else list.push({ name: 'optimizer', value: optimizerShown, origin: optimizer?.origin ?? 'default: none found', ...line(optimizer) });
  // Without autocast a model loaded in 16 bits (from_pretrained(torch_dtype=torch.bfloat16)) computes in 16 bits: not "fp32 by default".
  const weights = setup.weightDtype;
  const sixteenBit = !precision && (weights?.value === 'bf16' || weights?.value === 'fp16') ? weights : undefined;
  if (sixteenBit) list.push({ name: 'precision', value: sixteenBit.value, origin: `no autocast: the forward runs in the weights' dtype (${sixteenBit.origin})`, ...line(sixteenBit) });
  else list.push({ name: 'precision', value: precision?.value ?? 'fp32', origin: precision?.origin ?? 'default: no autocast or .half()', ...line(precision) });
  // The segments the model's forward runs under checkpoints, where the analysis followed them.
  const checkpointed = segments > 0 ? `on (${segments} checkpointed segment${segments === 1 ? '' : 's'})` : 'on';
  if (setup.gradientCheckpointing) list.push({ name: 'gradientCheckpointing', value: checkpointed, origin: setup.gradientCheckpointing.origin, ...line(setup.gradientCheckpointing) });
  else if (segments > 0) list.push({ name: 'gradientCheckpointing', value: checkpointed, origin: "the model's forward", line: null });
  if (setup.compiled) list.push({ name: 'compiled', value: 'on', origin: setup.compiled.origin, ...line(setup.compiled) });
  // One step's memory is one micro-batch's: the batch size above is per step, not per optimizer step.
  if (setup.gradientAccumulation) list.push({ name: 'gradientAccumulation', value: `${setup.gradientAccumulation.value} micro-batches per optimizer step`, origin: setup.gradientAccumulation.origin, ...line(setup.gradientAccumulation) });
  if (setup.targetSequenceLength) list.push({ name: 'targetLength', value: String(setup.targetSequenceLength.value), origin: setup.targetSequenceLength.origin, ...line(setup.targetSequenceLength) });
  if (setup.fusedLoss) list.push({ name: 'loss', value: setup.fusedLoss.value === 'inPlace' ? 'fused cross-entropy, gradient in place' : 'fused linear cross-entropy, a chunk of logits at a time', origin: setup.fusedLoss.origin, ...line(setup.fusedLoss) });
  if (setup.weightDtype) list.push({ name: 'weightDtype', value: setup.weightDtype.value, origin: setup.weightDtype.origin, ...line(setup.weightDtype) });
  if (setup.quantization) {
    const q = setup.quantization.value;
    list.push({ name: 'quantization', value: q.bits === 8 ? '8-bit' : `4-bit ${q.quantType ?? 'fp4'}${q.doubleQuant ? ' double-quantized' : ''}`, origin: setup.quantization.origin, ...line(setup.quantization) });
  }
  if (setup.adapter) {
    const a = setup.adapter.value;
    const targets = a.targetModules === undefined ? 'default modules' : typeof a.targetModules === 'string' ? a.targetModules : a.targetModules.join(', ');
    const value = a.rank === undefined ? a.method : `${a.method}${a.dora ? ' (DoRA)' : ''} rank ${a.rank} on ${targets}${a.applied ? '' : ', never applied'}`;
    list.push({ name: 'adapter', value, origin: setup.adapter.origin, ...line(setup.adapter) });
  }
  if (setup.preference) {
    // TRL's preference or RL trainer, and where its reference log-probabilities come from.
    const p = setup.preference.value;
    const adapted = setup.adapter?.value.applied === true;
    const reference = { model: 'a reference model of its own', precomputed: 'reference precomputed', default: adapted ? 'reference: the model with its adapter disabled' : 'reference: a frozen copy of the model', none: 'no reference' }[p.reference];
    list.push({ name: 'trainer', value: `${p.trainer}, ${reference}${p.completionTokens ? `, logits over ${p.completionTokens} completion tokens` : ''}`, origin: setup.preference.origin, ...line(setup.preference) });
  }
  return list;
}

/** What the script read of environment variables, configuration files and the user's values, each with its file and line. */
function configAssumptions(readings: SourceAnalysis['configReadings'], shown: (path: string) => string): Assumption[] {
  return readings.map((reading) => {
    const where = reading.configLine ?? { line: reading.range.startLine + 1, ...(reading.range.file === undefined ? {} : { file: shown(reading.range.file) }) };
    return {
      name: reading.dataDerived ? 'dataDerived' : 'config',
      key: reading.key,
      value: reading.value,
      origin: reading.origin,
      line: where.line,
      ...(where.file === undefined ? {} : { file: where.file }),
      ...(reading.dataDerived ? { what: reading.dataDerived } : {}),
    };
  });
}

function ownedBy(note: AnalysisNote, model: ModelDescription): boolean {
  return note.range !== undefined && note.range.startLine >= model.range.startLine && note.range.endLine <= model.range.endLine;
}

function ownedByModel(note: AnalysisNote, models: readonly ModelDescription[]): boolean {
  return models.some((model) => ownedBy(note, model));
}

function unique(messages: string[]): string[] {
  return [...new Set(messages)];
}

function uniqueNotes(notes: readonly AnalysisNote[]): AnalysisNote[] {
  const seen = new Set<string>();
  return notes.filter((note) => {
    const key = noteText(note);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The RGB images a transform pipeline makes (`Resize(512)` then `RandomCrop(512)`: 3 x 512 x 512), where no
 * dataset gives a shape (a hub dataset of images): the size the dry run's images take. A size only named
 * (`--resolution`) is not taken for an image.
 */
function transformedImage(size: TrainingSetup['imageSize']): number[] | undefined {
  return size && /^\w+\(\d+\)$/.test(size.origin) ? [3, size.value, size.value] : undefined;
}
