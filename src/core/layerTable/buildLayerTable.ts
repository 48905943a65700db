import type { AnalysisContext, AnalysisNote, ModelDescription, Sourced, TrainingSetup } from '../analysis/modelDescription';
import { BudgetExceeded, Interpreter, type FunctionalRowType } from '../analysis/interpreter/interpreter';
import { isLoss } from '../analysis/interpreter/torchModules';
import { applyGradSettings, gradSettingsOf } from '../analysis/interpreter/requiresGrad';
import { isUnresolvedValue, kindOf, toValue, tuple, type ModuleObject, type PyValue, type TensorValue } from '../analysis/interpreter/pyValues';
import { layerOutputValue, shapeOf, tensor, tensorsIn } from '../analysis/interpreter/tensorOps';
import { CatalogInputError, CatalogPartError, type CatalogTable } from '../catalog/catalog';
import { LayerArgs, LayerArgumentError } from '../layers/layerArgs';
import { heldPretrained, inputCandidates } from './inputCandidates';
import { unreadModulesNote } from './unreadModules';
import { layerSpec } from '../layers/layerSpecs';
import type { ForwardCall } from '../layers/layerSpec';
import { BATCH, batched, outputTensors, perSampleElements, perSampleShape, type LayerOutput, type TensorShape } from '../layers/tensorShape';
import type { SourceRange, SyntaxNode } from '../parsing/syntax';
import { formatCount } from '../format/units';
import { firstRecordedCall } from './frozenLayers';
import { checkpointedBlocks } from './checkpointSegments';
import { catalogCallTable, catalogPartPath, catalogRowKey, replacementsOf, uncalledCatalogRows } from './catalogPartCalls';
import { LAYER_TABLE_SCHEMA_VERSION, childPath, isFunctionalRow, linearInFeatures, type LayerRow, type LayerTable, type MeasuredActivations } from './layerTable';

export interface LayerTableResult {
  readonly table: LayerTable;
  /** The sample shape used and where it came from. */
  readonly inputShape?: Sourced<readonly number[]>;
  /** True when forward() could not be followed and the rows are in declaration order. */
  readonly orderFromDeclaration: boolean;
  readonly notes: readonly AnalysisNote[];
}

/** What one forward() trial may spend of the file's budget. */
const FORWARD_STEPS = 100_000;
const FORWARD_MILLIS = 60;
const MAX_INPUT_TRIALS = 4;

/**
 * Follows the model's `forward()` with the sample shape the script suggests, one row per layer
 * call (the schema in docs/layer-table.md). Where several sample shapes are suggested (an example
 * tensor, a dataset), the first the model accepts wins. Falls back to declaration order, and says
 * so, where forward() cannot be followed.
 */
export function buildLayerTable(model: ModelDescription, setup: TrainingSetup, context: AnalysisContext): LayerTableResult {
  const result = followModel(model, setup, context);
  // A model run for inference only says so itself: its calls without autograd need no note of their own.
  const frozen = frozenNote(model, result.table, !model.inferenceOnly);
  const unread = unreadModulesNote(model.name, model.root, model.range);
  const extra = [...(frozen ? [frozen] : []), ...(unread ? [unread] : [])];
  const noted = extra.length ? { ...result, notes: [...result.notes, ...extra] } : result;
  return model.inferenceOnly ? asInference(noted, model, model.inferenceOnly) : noted;
}

/** A model the script only calls with autograd off: every call is a row without autograd (rule 11), so the step is its weights and one forward pass. */
function asInference(result: LayerTableResult, model: ModelDescription, where: SourceRange): LayerTableResult {
  const rows = result.table.rows.map((row) => (row.noGrad ? row : { ...row, noGrad: true as const }));
  const note: AnalysisNote = {
    severity: 'info',
    message: `${model.name}: every call the script makes of it runs with autograd off (torch.no_grad()): estimated as inference, its weights and one forward pass; nothing is kept for backward and no optimizer state is counted.`,
    range: where,
  };
  return { ...result, table: { ...result.table, rows }, notes: [...result.notes, note] };
}

function followModel(model: ModelDescription, setup: TrainingSetup, context: AnalysisContext): LayerTableResult {
  const inputs: (Sourced<readonly (readonly number[])[]> & { seqFirst?: boolean; assumed?: boolean })[] = [
    ...(model.exampleInputs ? [model.exampleInputs] : []),
    ...(setup.datasetSamples ? [setup.datasetSamples] : []),
    ...inputCandidates(model, setup).map((candidate) => ({ ...candidate, value: [candidate.value], seqFirst: candidate.seqFirst })),
  ];
  const offered = Boolean(model.exampleInputs || setup.datasetSamples || setup.inputCandidates.length);
  let best: (LayerTableResult & { score: number; layoutMismatches: number }) | undefined;
  for (const input of inputs.slice(0, MAX_INPUT_TRIALS)) {
    const result = followForward(model, input, context, setup.targetSequenceLength?.value);
    // A size assumed for want of one (224 x 224 images) is no reading of the script: not where the
    // script gives inputs of its own (a mismatch there is the finding), nor where the forward does not take it.
    if (input.assumed && (offered || result.table.incomplete || result.orderFromDeclaration || result.layoutMismatches > 0)) continue;
    const score = sizedLayerRows(result.table.rows) - (result.orderFromDeclaration ? 0.5 : 0) - result.layoutMismatches;
    if (!best || score > best.score) best = { ...result, score };
    if (!result.table.incomplete && !result.orderFromDeclaration && result.layoutMismatches === 0) break;
  }
  if (!best) {
    const result = followForward(model, undefined, context, setup.targetSequenceLength?.value);
    return {
      ...result,
      notes: [{ severity: 'warning', message: `${model.name}: input shape unknown, so activations are not counted. Add an example tensor such as torch.randn(batch_size, ...).`, range: model.range }, ...result.notes],
    };
  }
  const { score: _score, layoutMismatches: _mismatches, ...result } = best;
  return result;
}

/** The input of a library model called by keyword: transformers' `model(pixel_values=x)`, `model(input_ids=ids, ...)`; timm's and torchvision's `x`. */
const INPUT_KEYWORDS = ['pixel_values', 'input_ids', 'x', 'input'];

function keywordInput(kwargs: ReadonlyMap<string, PyValue>): PyValue[] {
  const name = INPUT_KEYWORDS.find((keyword) => kwargs.has(keyword));
  return name === undefined ? [] : [kwargs.get(name)!];
}

function followForward(model: ModelDescription, sources: (Sourced<readonly (readonly number[])[]> & { seqFirst?: boolean }) | undefined, context: AnalysisContext, decoderTokens?: number): LayerTableResult & { layoutMismatches: number } {
  const input = sources && { ...sources, value: sources.value[0]! };
  const recorder = new RowRecorder(model.root, model.unfollowedUnfreeze === undefined, decoderTokens);
  const interpreter = forwardInterpreter(recorder, context);
  let orderFromDeclaration = false;
  const notes: AnalysisNote[] = [];
  if (input) {
    try {
      // Each tensor parameter of forward() gets the matching example input, else the first one.
      const arity = Math.max(forwardArity(model.root, interpreter), sources.value.length, model.invocationArity ?? 0);
      const full = (sample: readonly number[]): TensorShape => (sources.seqFirst ? [sample[0]!, BATCH, ...sample.slice(1)] : batched([...sample]));
      const values = Array.from({ length: arity }, (_, i) => tensor(full(sources.value[i] ?? input.value)));
      // A module holding a pretrained model whose forward is not followed (a LightningModule calls it in training_step, often with `**batch`): the held model runs on the sample.
      const held = heldPretrained(model.root);
      const ownForward = !held || !model.root.classValue || kindOf(interpreter.classAttribute(model.root.classValue, 'forward')) === 'function';
      if (held && !ownForward) interpreter.callValue({ kind: 'module', module: held }, [values[0]!], new Map(), model.node);
      else interpreter.callValue({ kind: 'module', module: model.root }, values, new Map(), model.node);
      if (held && ownForward && recorder.calls.length === 0) interpreter.callValue({ kind: 'module', module: held }, [values[0]!], new Map(), model.node);
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      notes.push({ severity: 'warning', message: `${model.name}: forward() takes too long to follow (${error.message}).`, range: model.range });
      orderFromDeclaration = true;
    }
    if (recorder.calls.length === 0 && model.root.kind !== 'layer') orderFromDeclaration = true;
  } else orderFromDeclaration = true;
  if (!orderFromDeclaration && input && recorder.calls.some((row) => row.outputShape === null)) {
    // Part of forward() was lost (a library call, an unknown layer): see whether declaration order sizes more.
    const fallback = new RowRecorder(model.root, model.unfollowedUnfreeze === undefined, decoderTokens);
    const fallbackInterpreter = forwardInterpreter(fallback, context);
    fallback.declarationOrder(input.value, fallbackInterpreter, model.node);
    if (sizedLayerRows(fallback.calls) > sizedLayerRows(recorder.calls)) {
      notes.push({ severity: 'warning', message: `${model.name}: forward() could not be followed throughout; layers are listed in declaration order.`, range: model.range });
      return { table: fallback.table(model.name, input.value), inputShape: input, orderFromDeclaration: true, notes: [...notes, ...fallbackInterpreter.notes], layoutMismatches: fallback.layoutMismatches };
    }
  }
  if (orderFromDeclaration) {
    if (input) notes.push({ severity: 'warning', message: `${model.name}: forward() could not be followed; layers are listed in declaration order.`, range: model.range });
    recorder.declarationOrder(input?.value, interpreter, model.node);
  }
  notes.push(...interpreter.notes);
  return { table: recorder.table(model.name, input?.value), inputShape: input, orderFromDeclaration, notes, layoutMismatches: recorder.layoutMismatches };
}

/** What the script froze or runs without autograd, said once: the estimate changes a lot with it, so the user should see it was read. */
function frozenNote(model: ModelDescription, table: LayerTable, callsWithoutAutograd: boolean): AnalysisNote | undefined {
  const frozenParams = table.totals.params - table.totals.trainableParams;
  const withoutAutograd = table.rows.filter((row) => row.noGrad);
  if (frozenParams === 0) {
    if (withoutAutograd.length === 0 || !callsWithoutAutograd) return undefined;
    const params = withoutAutograd.reduce((sum, row) => sum + (row.params ?? 0), 0);
    return {
      severity: 'info',
      message: `${model.name}: ${withoutAutograd.length} layer call${withoutAutograd.length === 1 ? '' : 's'} in forward run with autograd off (torch.no_grad()): they keep nothing for backward${params > 0 ? `, and the ${formatCount(params)} parameters only they use get no gradient or optimizer state` : ''}.`,
      range: model.range,
    };
  }
  const calls = table.rows.filter((row) => (row.activations ?? 0) > 0);
  const start = firstRecordedCall(table, calls);
  const kept = start === 0 ? '' : start < calls.length ? `, and the layers before \`${calls[start]!.path}\` keep no activations for backward` : ', and no layer keeps activations for backward';
  return {
    severity: 'info',
    message: `${model.name}: ${formatCount(frozenParams)} parameters frozen (requires_grad=False), ${formatCount(table.totals.trainableParams)} trained: the frozen ones get no gradients or optimizer state${kept}.`,
    // The first statement that froze some.
    range: gradSettingsOf(model.root).find((setting) => !setting.trainable)?.range ?? model.range,
  };
}

/** Rows of layer-module calls whose output shape is known (functional rows are not counted: they only follow their inputs). */
function sizedLayerRows(rows: readonly LayerRow[]): number {
  return rows.filter((row) => row.outputShape !== null && !isFunctionalRow(row)).length;
}

/** An interpreter in forward mode whose layer calls become rows of `recorder`, on one trial's share of the budget. */
function forwardInterpreter(recorder: RowRecorder, context: AnalysisContext): Interpreter {
  const interpreter: Interpreter = new Interpreter(
    context.imports,
    {
      onModuleCall: (module, args, kwargs, node): PyValue => recorder.call(module, args, kwargs, node, interpreter),
      onFunctionalCall: (type, output) => recorder.functional(type, output, interpreter.gradDisabled > 0),
      onCheckpoint: (run) => recorder.checkpointed(run),
    },
    context.budget.limit(FORWARD_STEPS, FORWARD_MILLIS),
  );
  interpreter.forwardMode = true;
  return interpreter;
}

/** How many tensors forward() takes: its parameters without defaults (src and tgt for a Transformer). */
function forwardArity(root: ModuleObject, interpreter: Interpreter): number {
  if (root.kind !== 'user' || !root.classValue) return 1;
  const forward = interpreter.classAttribute(root.classValue, 'forward');
  if (kindOf(forward) !== 'function') return 1;
  const parameters = (forward as { node: { childForFieldName(n: string): { namedChildren: { type: string }[] } | null } }).node.childForFieldName('parameters')?.namedChildren ?? [];
  return Math.max(1, parameters.filter((p) => p.type === 'identifier').length - 1);
}

/** Collects rows as forward() calls layers, counting each parameter once (tied weights, reused layers). */
class RowRecorder {
  readonly calls: LayerRow[] = [];
  /** Parameter rows of catalog architectures, listed with the script's own Parameter rows first. */
  private readonly catalogParameters: LayerRow[] = [];
  /** What autograd saves in the catalog architectures' forward, by their path (summed over calls). */
  private readonly measured = new Map<string, MeasuredActivations>();
  /** Sequence layers that received a tensor whose batch is not where their batch_first says. */
  layoutMismatches = 0;
  private readonly paths = new Map<number, string>();
  private readonly counted = new Set<string>();
  private readonly called = new Set<number>();
  /** The standard architectures' rows already in the table (catalogRowKey): a part run twice counts its parameters once. */
  private readonly catalogEmitted = new Set<string>();
  /** Paths of the user-defined modules whose forward() is running, innermost last; the root's is "". */
  private readonly forwardPaths: string[] = [];
  /** Checkpointed segments numbered so far, and whether one is running (a checkpoint inside another is the outer's). */
  private segments = 0;
  private inSegment = false;

  /** `applyGradSettings`: false where the script unfreezes parameters the analysis cannot follow (every parameter then counts as trained); `decoderTokens`: the labels' length, for an encoder-decoder's decoder. */
  constructor(
    private readonly root: ModuleObject,
    private readonly applySettings = true,
    private readonly decoderTokens?: number,
  ) {
    this.paths.set(root.id, '');
    for (const [path, module] of root.namedModules()) this.paths.set(module.id, path);
  }

  call(module: ModuleObject, inputs: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, interpreter: Interpreter): PyValue {
    const before = this.calls.length;
    try {
      // A module wrapped for activation checkpointing runs each call as a segment (rule 12).
      if (module.checkpointWrapped) return this.checkpointed(() => this.callRows(module, inputs, kwargs, node, interpreter));
      return this.callRows(module, inputs, kwargs, node, interpreter);
    } finally {
      // Rows of calls made with autograd off (rule 11) say so: they keep nothing for backward.
      if (interpreter.gradDisabled > 0) for (let i = before; i < this.calls.length; i++) if (!this.calls[i]!.noGrad) this.calls[i] = { ...this.calls[i]!, noGrad: true };
    }
  }

  /** Runs the body of a checkpoint call: the calls it makes are one segment (rule 12), numbered in call order. */
  checkpointed(run: () => PyValue): PyValue {
    if (this.inSegment) return run();
    const before = this.calls.length;
    this.inSegment = true;
    try {
      return run();
    } finally {
      this.inSegment = false;
      if (this.calls.length > before) {
        const segment = this.segments++;
        for (let i = before; i < this.calls.length; i++) this.calls[i] = { ...this.calls[i]!, checkpoint: segment };
      }
    }
  }

  private callRows(module: ModuleObject, inputs: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, interpreter: Interpreter): PyValue {
    // A layer subclass is sized as its layer: its own forward() computes the same output another way (a permute, a standardized weight).
    const ownForward = module.kind !== 'layer' && module.classValue && kindOf(interpreter.classAttribute(module.classValue, 'forward')) === 'function';
    if (module.kind === 'sequential' && !ownForward) {
      let value: PyValue = inputs[0] ?? null;
      for (const child of module.children.values()) value = interpreter.callValue({ kind: 'module', module: child }, [value], new Map(), node);
      return value;
    }
    if (module.kind === 'user' || ownForward) {
      this.forwardPaths.push(this.paths.get(module.id) ?? module.className);
      try {
        return interpreter.runForward(module, [...inputs], new Map(kwargs), node);
      } finally {
        this.forwardPaths.pop();
      }
    }
    if (module.kind === 'catalog') {
      const output = this.callCatalog(module, inputs.length > 0 ? inputs : keywordInput(kwargs), node, interpreter);
      // `_, pooled = self.bert(ids, mask, return_dict=False)`: a base model's tuple of its hidden states and its pooled output.
      const value = kindOf(output) === 'tensor' ? (output as TensorValue) : undefined;
      if (kwargs.get('return_dict') === false && value?.lastHiddenState) {
        return tuple([tensor([...value.lastHiddenState]), ...(value.pooledOutput ? [tensor([...value.pooledOutput])] : [])]);
      }
      return output;
    }
    if (module.kind !== 'layer' || !module.layer) {
      interpreter.note(node, `${module.className} is a container and cannot be called`);
      return tensor(null);
    }
    // A loss inside forward() returns a scalar and is no layer of the model.
    if (isLoss(module.layer.type)) return tensor([]);
    this.called.add(module.id);
    if (module.catalog) this.catalogEmitted.add(catalogRowKey(module, ''));
    const path = this.pathOf(module);
    const spec = layerSpec(module.layer.type);
    const args = new LayerArgs(module.layer);
    // Tensors are the layer's inputs; other positional values are options (`mha(q, k, v, None, False)`).
    const tensorInputs = inputs.filter((value) => shapeOf(value) !== undefined || isUnresolvedValue(value));
    const shapes = tensorInputs.map(shapeOf);
    const options = new Map(kwargs);
    if (module.layer.type === 'MultiheadAttention') {
      ['key_padding_mask', 'need_weights', 'attn_mask', 'average_attn_weights'].forEach((name, i) => {
        const value = inputs[3 + i];
        if (value !== undefined && !options.has(name)) options.set(name, value);
      });
    }
    const params = this.countParams(module, shapes.every((s): s is TensorShape => !!s) ? shapes : undefined, interpreter, node);
    if (!spec) {
      this.calls.push({ path, type: module.layer.type, outputShape: null, activations: null, params, trainable: true });
      return tensor(null);
    }
    if (!shapes.length || shapes.some((s) => !s)) {
      this.calls.push({ path, type: module.layer.type, outputShape: null, activations: null, params, trainable: true });
      return tensor(null);
    }
    this.checkLayout(module, shapes[0]!);
    const call: ForwardCall = { kwargs: Object.fromEntries([...options].map(([k, v]) => [k, toValue(v, k)])) };
    let output: LayerOutput;
    try {
      output = spec.forward(shapes as TensorShape[], args, call);
    } catch (error) {
      if (!(error instanceof LayerArgumentError)) throw error;
      // A norm's subclass with a forward() of its own (LayerNorm2d: over NCHW's channels) keeps its input's shape, as every norm does.
      if (module.classValue && spec.category === 'norm') output = shapes[0]!;
      else {
        interpreter.note(node, `${path}: ${error.message}`);
        this.calls.push({ path, type: module.layer.type, outputShape: null, activations: null, params, trainable: true });
        return tensor(null);
      }
    }
    const tensors = outputTensors(output);
    const first = tensors[0];
    const eagerAttention = spec.eagerAttention?.(shapes as TensorShape[], args, call);
    const stackedLayers = spec.stackedLayers?.(args);
    if (eagerAttention && options.has('need_weights') && !['boolean', 'number'].includes(typeof call.kwargs.need_weights)) {
      interpreter.note(node, `${path}: need_weights is not read; counted as True, PyTorch's default, which keeps the attention matrices`);
    }
    this.calls.push({
      path,
      type: module.layer.type,
      outputShape: first ? perSampleShape(first) : null,
      activations: tensors.reduce((sum, t) => sum + perSampleElements(t), 0),
      params,
      trainable: true,
      ...(eagerAttention ? { eagerAttention } : {}),
      ...(stackedLayers !== undefined ? { stackedLayers } : {}),
    });
    // A layer subclass's own modules (detectron2's Conv2d: its norm, then its activation) run on the layer's output, in the order it registered them.
    let value = layerOutputValue(output);
    for (const child of module.classValue ? module.children.values() : []) value = interpreter.callValue({ kind: 'module', module: child }, [value], new Map(), node);
    return value;
  }

  /**
   * A `torch.cat` / `torch.stack` made by forward() code: a row under the path of the
   * innermost user-defined module whose forward() is running (rule 2 of docs/layer-table.md).
   */
  functional(type: FunctionalRowType, output: PyValue, noGrad: boolean): void {
    const shape = shapeOf(output);
    if (!shape) return;
    this.calls.push({ path: this.forwardPaths[this.forwardPaths.length - 1] ?? '', type, outputShape: perSampleShape(shape), activations: perSampleElements(shape), params: 0, trainable: true, ...(noGrad ? { noGrad: true as const } : {}) });
  }

  /**
   * A standard architecture's rows from the catalog, for the sample it receives, under this
   * module's path; layers the script put in place of the architecture's (`model.fc = ...`) are
   * called instead of the rows they replace, on the same input.
   */
  private callCatalog(called: ModuleObject, inputs: readonly PyValue[], node: SyntaxNode, interpreter: Interpreter): PyValue {
    const part = called.catalog!;
    // `backbone.forward_features(x)` runs the architecture itself, without its head: its rows go under the architecture's path.
    const module = part.featuresOnly ? part.root : called;
    const where = this.pathOf(module);
    const shape = shapeOf(inputs[0]);
    if (!shape) return tensor(null);
    let table: CatalogTable;
    try {
      table = catalogCallTable(called, perSampleShape(shape), this.decoderTokens === undefined ? {} : { decoderTokens: this.decoderTokens });
    } catch (error) {
      if (!(error instanceof CatalogInputError) && !(error instanceof CatalogPartError)) throw error;
      interpreter.note(node, `${where || part.architecture.name}: ${error.message}`);
      return tensor(null);
    }
    for (const message of table.notes) interpreter.note(node, `${part.architecture.name}: ${message}`);
    if (table.savedActivations) {
      const earlier = this.measured.get(where);
      const peak = table.savedActivations.forwardPeakBytesPerSample;
      // The same part called again holds its forwards' saved tensors together, but their peaks one at a time.
      const forwardPeak = Math.max(earlier?.forwardPeakBytesPerSample ?? 0, peak ?? 0);
      this.measured.set(where, {
        path: where,
        savedBytesPerSample: (earlier?.savedBytesPerSample ?? 0) + table.savedActivations.bytesPerSample,
        ...(forwardPeak > 0 ? { forwardPeakBytesPerSample: forwardPeak } : {}),
        source: table.savedActivations.source,
        library: table.savedActivations.library,
      });
    }
    const prefix = (path: string) => childPath(where, path);
    const replaced = replacementsOf(module);
    const replacements = replaced.filter(([path]) => table.rows.some((row) => row.path === path || row.path.startsWith(`${path}.`)));
    for (const [path] of replaced) {
      if (!replacements.some(([replaced]) => replaced === path)) interpreter.note(node, `${part.architecture.name} has no layer \`${path}\` that forward calls; the layer put there is not counted`);
    }
    let output: PyValue = table.outputs
      ? table.outputs.map((shape) => tensor(batched([...shape])))
      : {
          ...tensor(table.output ? batched([...table.output]) : null),
          ...(table.lastHiddenState ? { lastHiddenState: batched([...table.lastHiddenState]) } : {}),
          ...(table.pooledOutput ? { pooledOutput: batched([...table.pooledOutput]) } : {}),
        };
    const done = new Set<string>();
    const first = this.calls.length;
    table.rows.forEach((row, i) => {
      const replacement = replacements.find(([path]) => row.path === path || row.path.startsWith(`${path}.`));
      if (!replacement) {
        const key = catalogRowKey(module, row.path);
        const counted = this.catalogEmitted.has(key) ? { ...row, params: 0 } : row;
        this.catalogEmitted.add(key);
        if (row.type === 'Parameter') this.catalogParameters.push({ ...counted, path: prefix(row.path) });
        else this.calls.push({ ...counted, path: prefix(row.path) });
        return;
      }
      if (done.has(replacement[0])) return;
      done.add(replacement[0]);
      // Where the catalog records no inputs (timm), a Linear's is its in_features.
      const inFeatures = linearInFeatures(row);
      const input = table.rowInputs?.[i] ?? (inFeatures === undefined ? undefined : [inFeatures]);
      if (!input) {
        interpreter.note(node, `${part.architecture.name}: the input of \`${replacement[0]}\` is not known, so the layer put there is not sized`);
        this.calls.push({ path: prefix(replacement[0]), type: replacement[1].className, outputShape: null, activations: null, params: null, trainable: true });
        return;
      }
      const result = interpreter.callValue({ kind: 'module', module: replacement[1] }, [tensor(batched([...input]))], new Map(), node);
      // A replaced head is what the model returns.
      if (table.rows.slice(i + 1).every((later) => later.type === 'Parameter' || later.path === replacement[0] || later.path.startsWith(`${replacement[0]}.`))) output = result;
    });
    if (part.root.blocksCheckpointed && !this.inSegment) this.checkpointBlocks(first, where);
    return output;
  }

  /** An architecture's own checkpointing (rule 12): each of its blocks (checkpointedBlocks), from the call at `first` on, is a segment. */
  private checkpointBlocks(first: number, where: string): void {
    // The architecture's modules forward never calls (listed last, rule 5) run in no segment.
    const calls = this.calls.slice(first);
    const paths = calls.map((row) => (row.outputShape === null && row.activations === 0 ? undefined : where === '' ? row.path : row.path.slice(where.length + 1)));
    const blocks = checkpointedBlocks(paths);
    let previous: string | undefined;
    blocks.forEach((block, i) => {
      if (paths[i] === undefined) return;
      if (block !== undefined && block !== previous) this.segments++;
      previous = block;
      if (block !== undefined) this.calls[first + i] = { ...calls[i]!, checkpoint: this.segments - 1 };
    });
  }

  /** The path a module's rows go under: where the model registers it, or where it reaches it through a standard architecture it holds. */
  private pathOf(module: ModuleObject): string {
    return catalogPartPath(module, this.paths) ?? this.paths.get(module.id) ?? module.className;
  }

  private checkLayout(module: ModuleObject, input: TensorShape): void {
    if (!module.layer || !/^(LSTM|GRU|RNN|Transformer(Encoder|Decoder)?(Layer)?|MultiheadAttention)$/.test(module.layer.type) || input.length !== 3) return;
    const batchAxis = module.layer.kwargs.batch_first === true ? 0 : 1;
    const dim = input[batchAxis];
    if (!(typeof dim === 'object' && dim !== null && (dim as { batch: number }).batch === 1)) this.layoutMismatches += 1;
  }

  /** When forward() cannot be followed: every layer once, in registration order, shapes chained. */
  declarationOrder(sample: readonly number[] | undefined, interpreter: Interpreter, node: SyntaxNode): void {
    try {
      this.chainLayers(sample, interpreter, node);
    } catch (error) {
      // Out of budget: the rows recorded so far stand, the rest are listed unsized by table().
      if (!(error instanceof BudgetExceeded)) throw error;
    }
  }

  private chainLayers(sample: readonly number[] | undefined, interpreter: Interpreter, node: SyntaxNode): void {
    this.calls.length = 0;
    this.called.clear();
    let value: PyValue = sample ? tensor(batched([...sample])) : tensor(null);
    const layers = this.root.kind === 'layer' ? [this.root] : this.root.namedModules().map(([, m]) => m).filter((m) => m.kind === 'layer');
    for (const layer of layers) {
      if (shapeOf(value) === null && layer.className === 'Linear' && layer.layer) {
        try {
          value = tensor(batched([new LayerArgs(layer.layer).int(0, 'in_features')]));
        } catch {
          // Leave the shape unknown.
        }
      }
      const result = this.call(layer, [value], new Map(), node, interpreter);
      value = tensorsIn(result)[0] ?? tensor(null);
    }
  }

  private countParams(module: ModuleObject, shapes: TensorShape[] | undefined, interpreter: Interpreter, node: SyntaxNode): number | null {
    const spec = module.layer && layerSpec(module.layer.type);
    if (!spec || !module.layer) return null;
    let total: number;
    try {
      total = spec.params(new LayerArgs(module.layer), shapes);
    } catch (error) {
      if (!(error instanceof LayerArgumentError)) throw error;
      interpreter.note(node, `${this.paths.get(module.id) ?? module.className}: ${error.message}`);
      return null;
    }
    return this.countOnce(module, total);
  }

  /** The part of a layer's `total` parameters no earlier row counted: a tied weight and a reused layer count once. */
  private countOnce(module: ModuleObject, total: number): number {
    const weight = tiedWeightNumel(module);
    const weightKey = `${(module.tiedWeightOf ?? module).id}.weight`;
    const restKey = `${module.id}.rest`;
    let count = 0;
    if (weight > 0 && !this.counted.has(weightKey)) count += weight;
    if (!this.counted.has(restKey)) count += total - weight;
    this.counted.add(weightKey);
    this.counted.add(restKey);
    return count;
  }

  table(model: string, sample: readonly number[] | undefined): LayerTable {
    const parameterRows: LayerRow[] = [];
    for (const [path, module] of [['', this.root] as [string, ModuleObject], ...this.root.namedModules()]) {
      // A layer's own weights are its spec's; a subclass of one may register more (a hand-written LoRA's A and B).
      if (module.kind === 'layer' && !module.classValue) continue;
      for (const [name, parameter] of module.parameters) {
        parameterRows.push({ path: path ? `${path}.${name}` : name, type: 'Parameter', outputShape: null, activations: 0, params: parameter.numel, trainable: parameter.trainable });
      }
    }
    const unused: LayerRow[] = [];
    const layers = this.root.kind === 'layer' ? [['', this.root] as [string, ModuleObject]] : this.root.namedModules();
    for (const [path, module] of layers) {
      if (module.kind !== 'layer' || this.called.has(module.id) || isLoss(module.className)) continue;
      unused.push({ path, type: module.layer?.type ?? module.className, outputShape: null, activations: 0, params: this.unusedParams(module), trainable: true });
      if (module.catalog) this.catalogEmitted.add(catalogRowKey(module, ''));
    }
    unused.push(...uncalledCatalogRows(this.root.kind === 'catalog' ? [['', this.root]] : this.root.namedModules(), this.catalogEmitted));
    // What the script froze (`requires_grad_(False)`, a loop over parameters) decides `trainable`, as the harness reads it after the script ran.
    const listed = [...parameterRows, ...this.catalogParameters, ...this.calls, ...unused];
    const rows = this.applySettings ? applyGradSettings(listed, gradSettingsOf(this.root)) : listed;
    const sum = (values: (number | null)[]) => values.reduce<number>((total, v) => total + (v ?? 0), 0);
    return {
      schemaVersion: LAYER_TABLE_SCHEMA_VERSION,
      model,
      inputShape: sample ? [...sample] : null,
      rows,
      totals: {
        params: sum(rows.map((r) => r.params)),
        trainableParams: sum(rows.filter((r) => r.trainable).map((r) => r.params)),
        // The layer-module calls' outputs only: functional rows (torch.cat) are not counted (rule 2).
        activations: sum(rows.filter((r) => !isFunctionalRow(r)).map((r) => r.activations)),
      },
      incomplete: rows.some((r) => r.params === null || r.activations === null),
      ...(this.measured.size > 0 ? { measuredActivations: [...this.measured.values()] } : {}),
    };
  }

  private unusedParams(module: ModuleObject): number | null {
    const spec = module.layer && layerSpec(module.layer.type);
    if (!spec || !module.layer) return null;
    try {
      return this.countOnce(module, spec.params(new LayerArgs(module.layer)));
    } catch {
      return null;
    }
  }
}

/** Elements of a layer's `weight`, for the layers whose weights scripts tie (language-model heads). */
function tiedWeightNumel(module: ModuleObject): number {
  const layer = module.layer;
  if (!layer) return 0;
  const args = new LayerArgs(layer);
  try {
    if (layer.type === 'Linear') return args.int(0, 'in_features') * args.int(1, 'out_features');
    if (layer.type === 'Embedding') return args.int(0, 'num_embeddings') * args.int(1, 'embedding_dim');
  } catch {
    return 0;
  }
  return 0;
}
