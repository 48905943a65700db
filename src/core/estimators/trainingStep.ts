/**
 * The allocations a training step makes, derived from a layer table, and their replay through the
 * CUDA caching allocator (src/core/allocator): the physical part of the real-model estimator.
 *
 * The sequence, per iteration (two are replayed: the first creates the optimizer state after its
 * backward, the second runs forward and backward with that state resident, which is where most
 * steps peak):
 * - the input batch (and its labels) arrive;
 * - forward: every row's output is allocated in call order; an output backward needs (the row
 *   saves it, the next row saves its input, or it is the last row) stays until backward reaches
 *   its row, any other is freed once the next row has produced its own; masks such as Dropout's
 *   stay too;
 * - the loss over the last row's output, in fp32 (cross-entropy's log-softmax is kept);
 * - backward, from the loss (its two fp32 gradients), then from the last row: the gradient of each row's input is allocated, then the
 *   gradient of its output and what the row kept are freed; a row's weight gradient is allocated
 *   when backward reaches it and lives until `zero_grad(set_to_none=True)`, PyTorch 2's default;
 * - the optimizer step: state created at the first step (Adam: two moments; SGD with momentum: one
 *   buffer), and Adam's multi-tensor step allocates one temporary per parameter tensor;
 * - zero_grad frees the gradients; the batch is dropped.
 * Weights are allocated once before the first iteration. Attention matrices (Dropout rows on
 * [heads, N, N] inside an attention block) are not allocated: PyTorch 2 runs timm's and Hugging
 * Face's attention through fused scaled-dot-product kernels that never materialise them.
 *
 * Where the table carries what autograd was measured to save in a part of the model
 * (`measuredActivations`: a catalog architecture, whose library's own layers and functional code
 * save tensors no row shows), that part's activation tensors (outputs, masks, their gradients)
 * are scaled so that what it keeps for backward is the measured figure.
 */
import { CachingAllocator, type AllocatorEvent, type AllocatorStats } from '../allocator/cachingAllocator';
import { isUnderPath, type LayerRow, type LayerTable } from '../layerTable/layerTable';
import { layerTraits, rowExtraBytesPerElement } from '../layers/layerTraits';
import { PRECISION_BYTES } from './analytical';
import { eagerAttentionBytesPerElement, rowEagerAttention } from './eagerAttention';
import { optimizesParameters, recordedCalls, trainsParameters } from '../layerTable/frozenLayers';
import { checkpointSegments, keptThroughForward } from '../layerTable/checkpointSegments';
import { autocastRows, isAutocast } from './autocastBytes';
import type { TrainingJob } from './trainingJob';

/** Optimizer state per parameter tensor, in copies, and whether its step allocates one temporary copy. */
const OPTIMIZER_STATE: Readonly<Record<TrainingJob['optimizer'], { copies: number; temporary: boolean }>> = {
  sgd: { copies: 0, temporary: false },
  'sgd-momentum': { copies: 1, temporary: false },
  adam: { copies: 2, temporary: true },
  adamw: { copies: 2, temporary: true },
  rmsprop: { copies: 1, temporary: true },
  adagrad: { copies: 1, temporary: true },
  other: { copies: 2, temporary: true },
};

/** What the replay found, in bytes. */
export interface StepReplay {
  readonly stats: AllocatorStats;
  /** Weights, their gradients and the optimizer state (live tensors, rounded to 512 bytes). */
  readonly stateBytes: number;
  /** The activations, masks and input batch kept for backward at the end of forward. */
  readonly savedBytes: number;
  /** Elements of the attention matrices the fused kernels do not materialise, per sample. */
  readonly attentionElements: number;
  /**
   * Bytes per sample that eager attention keeps for backward (docs/layer-table.md, rule 9): the
   * score matrices of nn.MultiheadAttention rows called with need_weights left True and of the
   * script's own attention. Not allocated by the replay yet; the features see them
   * (attentionShare).
   */
  readonly eagerAttentionBytes: number;
  /** The part of savedBytes in parts of the model whose saved activations were measured (`measuredActivations`). */
  readonly measuredSavedBytes: number;
  /** The loss's own tensors at their peak, the start of backward: the fp32 log-softmax of the output and its two gradients. */
  readonly lossBytes: number;
  /** The largest of the transients a frozen part's forward allocates beyond its rows (forwardTransients), 0 where there is none. */
  readonly frozenForwardBytes: number;
}

/** The measured parts' activations: what the table's rows are scaled by, and which rows are measured. */
export interface ActivationScales {
  /** Per active row, the factor its activation tensors are scaled by (1 outside every measured part). */
  readonly scales: number[];
  /** Per active row, whether it lies in a measured part. */
  readonly measured: boolean[];
  /** Whether the whole model (its input included) is a measured part. */
  readonly wholeModel: boolean;
}

/**
 * For each measured part, the measured bytes over what its rows keep by the table's account
 * (kept outputs and masks at fp32, and the model's input for the whole model).
 */
export function activationScales(table: LayerTable, active: readonly LayerRow[], kept: readonly boolean[]): ActivationScales {
  const fp32 = PRECISION_BYTES.fp32.activations;
  const scales = active.map(() => 1);
  const measured = active.map(() => false);
  let wholeModel = false;
  for (const part of table.measuredActivations ?? []) {
    wholeModel ||= part.path === '';
    let tableBytes = part.path === '' && table.inputShape ? table.inputShape.reduce((a, b) => a * b, 1) * fp32 : 0;
    const under: number[] = [];
    active.forEach((row, index) => {
      if (!isUnderPath(row, part.path)) return;
      under.push(index);
      measured[index] = true;
      const elements = row.activations ?? 0;
      tableBytes += (kept[index] ? elements * fp32 : 0) + elements * rowExtraBytesPerElement(row);
    });
    if (tableBytes <= 0 || part.savedBytesPerSample <= 0) continue;
    for (const index of under) scales[index] = part.savedBytesPerSample / tableBytes;
  }
  return { scales, measured, wholeModel };
}

/** A row that is an attention matrix's dropout: [.., N, N] output under an attention module. */
export function isAttentionMatrix(row: Pick<LayerRow, 'type' | 'path' | 'outputShape'>): boolean {
  const shape = row.outputShape;
  if (row.type !== 'Dropout' || !shape || shape.length < 3) return false;
  if (shape[shape.length - 1] !== shape[shape.length - 2]) return false;
  return /(^|[._])(attn|attention)([._]|$)|attn_drop/i.test(row.path);
}

/**
 * A measured part whose calls autograd does not record (a frozen backbone, a teacher under
 * no_grad; up to its first recorded call) holds, at the fullest point of its forward, what was measured
 * (`forwardPeakBytesPerSample`): its block's input (the residual stream), an activation's input and
 * output, the library's own tensors. The replay holds a row's output and the one before it; the
 * difference is allocated for a moment beside the rows where the replay holds most. Per active
 * row index, the bytes of that transient.
 */
export function forwardTransients(
  table: LayerTable,
  active: readonly LayerRow[],
  recorded: readonly boolean[],
  outputBytes: (index: number) => number,
  /** The batch, times the share of the fp32 figure its precision holds. */
  samples: number,
): Map<number, number> {
  const transients = new Map<number, number>();
  for (const part of table.measuredActivations ?? []) {
    if (!part.forwardPeakBytesPerSample) continue;
    // The part's calls before its first recorded one (a head of the script's under a whole frozen model is recorded).
    const under = active.flatMap((row, index) => (isUnderPath(row, part.path) ? [index] : []));
    const firstRecorded = under.findIndex((index) => recorded[index]);
    const rows = firstRecorded < 0 ? under : under.slice(0, firstRecorded);
    if (rows.length === 0) continue;
    let fullest = rows[0]!;
    let held = 0;
    for (const index of rows) {
      const holds = outputBytes(index) + (index > 0 ? outputBytes(index - 1) : 0);
      if (holds > held) [fullest, held] = [index, holds];
    }
    const measured = samples * part.forwardPeakBytesPerSample;
    if (measured > held) transients.set(fullest, measured - held);
  }
  return transients;
}

/** The event sequence of `iterations` training steps. */
export function trainingStepEvents(job: TrainingJob, iterations = 2): { events: AllocatorEvent[] } & Omit<StepReplay, 'stats'> {
  const { table, batchSize, optimizer, precision } = job;
  const bytes = PRECISION_BYTES[precision];
  const events: AllocatorEvent[] = [];
  let nextId = 0;
  const alloc = (size: number): number => {
    const id = nextId++;
    events.push({ kind: 'alloc', id, bytes: size });
    return id;
  };
  const free = (id: number): void => {
    events.push({ kind: 'free', id });
  };

  const paramRows = table.rows.filter((row) => (row.params ?? 0) > 0);
  const weightSizes = paramRows.map((row) => (row.params ?? 0) * bytes.weights);
  for (const size of weightSizes) alloc(size);
  // Frozen parameters, and those only called with autograd off (frozenLayers.ts), get neither a gradient nor optimizer state.
  const trainedSizes = paramRows.flatMap((row, index) => (trainsParameters(row) ? [weightSizes[index]!] : []));
  // The optimizer's state and step temporaries: the parameters it was given (`Adam(model.fc.parameters())`), of those that train.
  const optimizedSizes = paramRows.flatMap((row, index) => (optimizesParameters(row, job.optimizedPaths) ? [weightSizes[index]!] : []));
  const round = (size: number): number => Math.ceil(size / 512) * 512;
  const total = (sizes: readonly number[]) => sizes.reduce((sum, size) => sum + round(size), 0);
  const state = { ...OPTIMIZER_STATE[optimizer], copies: OPTIMIZER_STATE[optimizer].copies + (job.optimizerExtraCopies ?? 0) };
  const stateBytes = total(weightSizes) + total(trainedSizes) + total(optimizedSizes) * state.copies;

  // The attention matrices, per checkpointed segment (key: its number) and outside every segment (key: undefined):
  // a segment's are alive one segment at a time, in backward (checkpointSegments.ts).
  const attention = new Map<number | undefined, { elements: number; eagerBytes: number }>();
  // A library part measured with fused attention (a catalog model) runs it fused; the script's own code eagerly.
  const fused = (row: LayerRow) => job.fusedAttention === true || (table.measuredActivations ?? []).some((part) => isUnderPath(row, part.path));
  const active = table.rows.filter((row) => {
    if (row.activations === null || row.activations <= 0) return false;
    const matrix = isAttentionMatrix(row);
    const eager = fused(row) ? undefined : rowEagerAttention(row, matrix);
    if (eager || matrix) {
      const sums = attention.get(row.checkpoint) ?? { elements: 0, eagerBytes: 0 };
      if (eager) sums.eagerBytes += eager.elements * eagerAttentionBytesPerElement(precision, eager.dropout);
      else sums.elements += row.activations;
      attention.set(row.checkpoint, sums);
    }
    return !matrix;
  });
  const outside = attention.get(undefined) ?? { elements: 0, eagerBytes: 0 };
  const segmentSums = [...attention].filter(([segment]) => segment !== undefined).map(([, sums]) => sums);
  const largestSegment = segmentSums.reduce((largest, sums) => (sums.elements * 4 + sums.eagerBytes > largest.elements * 4 + largest.eagerBytes ? sums : largest), { elements: 0, eagerBytes: 0 });
  const attentionElements = outside.elements + largestSegment.elements;
  const eagerAttentionBytes = outside.eagerBytes + largestSegment.eagerBytes;
  const activeRows = new Set(active);
  const inputElements = table.inputShape ? table.inputShape.reduce((a, b) => a * b, 1) : 0;
  // Under autocast (autocastBytes.ts): each row's output dtype, the half copies of inputs and weights it keeps.
  const cast = autocastRows(active, precision, bytes.activations);
  // A row that casts its input keeps the half copy, not the input itself.
  const keepsInputAsIs = (index: number) => layerTraits(active[index]!.type)?.savesInput === true && !cast.castsInput[index];
  const keptIfRecorded = active.map((row, index) => index === active.length - 1 || layerTraits(row.type)?.savesOutput === true || (index + 1 < active.length && keepsInputAsIs(index + 1)));
  // The measured parts' scales are what the whole part keeps, so they are taken before a frozen prefix drops some of it.
  const { scales, measured: measuredRows, wholeModel } = activationScales(table, active, keptIfRecorded);
  // Calls autograd does not record (a frozen prefix, calls under no_grad) keep nothing, except the input of a recorded call that saves its input.
  const recorded = recordedCalls(table, active);
  const lastRecorded = recorded.lastIndexOf(true);
  // A Linear whose weight is frozen keeps only the weight for backward (its input's gradient needs no
  // more: autograd's mm saves the input for the weight's gradient alone); a frozen convolution keeps both.
  // Inside a measured part the rows stand for the whole part's tensors, as measured trained in full
  // (scaled as one), so there they keep what they kept: the part's other tensors would go with them.
  // A Linear subclass with trained parameters of its own (a hand-written LoRA's lora_A) uses its input in them.
  const trainedParameters = table.rows.filter((row) => row.type === 'Parameter' && trainsParameters(row));
  const frozenLinear = (index: number) => {
    const row = active[index]!;
    return row.type === 'Linear' && (row.params ?? 0) > 0 && !trainsParameters(row) && !measuredRows[index] && !trainedParameters.some((parameter) => isUnderPath(parameter, row.path));
  };
  const savesInput = (index: number) => recorded[index] === true && keepsInputAsIs(index) && !frozenLinear(index);
  // A recorded call keeps its output as it would with nothing frozen, except for an unrecorded call after it; the last one's feeds the loss.
  const kept = active.map((row, index) => (recorded[index] ? index === lastRecorded || layerTraits(row.type)?.savesOutput === true || savesInput(index + 1) : savesInput(index + 1)));
  // Checkpointed segments (checkpointSegments.ts) keep only their input through the forward, and are run again in backward.
  const segments = checkpointSegments(active);
  const keptForward = keptThroughForward(kept, segments);
  const inSegment = (index: number) => segments[index] !== undefined && recorded[index] === true;
  // A row's activation elements for the whole batch, as the replay allocates them.
  const batchElements = (index: number): number => batchSize * (active[index]!.activations ?? 0) * scales[index]!;
  // The batch as the loader gives it: fp32 under autocast too.
  const inputBytes = isAutocast(precision) ? 4 : bytes.activations;
  // The loss over the model's output, as cross-entropy computes it: in fp32 whatever the precision
  // (autocast runs it in fp32: a half output is copied up first), keeping the log-softmax for
  // backward. Small for a classifier; for a language model's logits over its vocabulary, one of
  // the largest tensors of the step. The output is the model's as it returns it: a measured part's
  // scale sizes what autograd keeps inside the model, not this.
  const outputElements = lastRecorded >= 0 ? batchSize * (active[lastRecorded]!.activations ?? 0) : 0;
  const outputBytes = lastRecorded >= 0 ? cast.outputBytes[lastRecorded]! : bytes.activations;
  // A frozen part's forward at its fullest, measured at fp32. Under autocast the residual stream and the norms stay
  // fp32 (the CPU dry run of a frozen timm ViT-B under autocast peaks as high as in fp32): taken whole; a model cast
  // to half holds half of it.
  const peakScale = isAutocast(precision) ? 1 : bytes.activations / 4;
  const transients = forwardTransients(table, active, recorded, (index) => batchElements(index) * cast.outputBytes[index]!, batchSize * peakScale);
  let savedBytes = 0;
  let measuredSavedBytes = 0;
  let optimizerState: number[] | null = null;

  for (let iteration = 0; iteration < iterations; iteration++) {
    const input = alloc(batchSize * inputElements * inputBytes);
    const labels = alloc(batchSize * 8);
    const outputs: (number | null)[] = [];
    // Per row, its masks and other extra tensors: one per layer of a Transformer stack (stackedLayers), each layer's own.
    const masks: (number[] | null)[] = [];
    // Under autocast, the half copies of a row's input and weights it keeps for backward.
    const copies: (number[] | null)[] = [];
    let saved = recorded[0] === true && !cast.castsInput[0] ? round(batchSize * inputElements * inputBytes) : 0;
    let measured = wholeModel ? saved : 0;
    // A call's output (and mask): allocated, and the previous call's output freed unless it is kept;
    // a frozen part's transient (forwardTransients) for a moment while both are alive.
    const run = (index: number, keep: readonly boolean[], transient = 0) => {
      const elements = batchElements(index);
      const out = outputs[index] ?? alloc(elements * cast.outputBytes[index]!);
      const extra = recorded[index] ? rowExtraBytesPerElement(active[index]!) : 0;
      const pieces = active[index]!.stackedLayers ?? 1;
      masks[index] = extra > 0 ? Array.from({ length: pieces }, () => alloc((elements * extra) / pieces)) : null;
      let copied = 0;
      if (recorded[index]) {
        const inputCopy = cast.castsInput[index] && layerTraits(active[index]!.type)?.savesInput === true ? 2 * (index > 0 ? batchElements(index - 1) : batchSize * inputElements) : 0;
        const sizes = [inputCopy, cast.weightCopyBytes[index]!].filter((size) => size > 0);
        copies[index] = sizes.length ? sizes.map((size) => alloc(size)) : null;
        copied = sizes.reduce((sum, size) => sum + round(size), 0);
      }
      if (transient > 0) free(alloc(transient));
      const previous = index > 0 ? outputs[index - 1] : null;
      if (previous !== null && previous !== undefined && !keep[index - 1]) {
        free(previous);
        outputs[index - 1] = null;
      }
      outputs[index] = out;
      return (extra > 0 ? round(elements * extra) : 0) + copied;
    };
    const freeCopies = (index: number) => {
      for (const id of copies[index] ?? []) free(id);
      copies[index] = null;
    };
    active.forEach((_, index) => {
      const extra = run(index, keptForward, transients.get(index));
      // Inside a checkpoint the mask (and autocast's copies) are freed with the call's other temporaries: the segment's rerun makes them again.
      const masked = masks[index];
      if (inSegment(index)) {
        for (const id of masked ?? []) free(id);
        masks[index] = null;
        freeCopies(index);
      }
      const keeps = (inSegment(index) ? 0 : extra) + (keptForward[index] ? round(batchElements(index) * cast.outputBytes[index]!) : 0);
      saved += keeps;
      if (measuredRows[index]) measured += keeps;
    });
    const upcast = outputElements > 0 && outputBytes < 4 ? alloc(outputElements * 4) : null;
    const logSoftmax = outputElements > 0 ? alloc(outputElements * 4) : null;
    if (upcast !== null) free(upcast);
    if (logSoftmax !== null) saved += round(outputElements * 4);
    if (saved > savedBytes) [savedBytes, measuredSavedBytes] = [saved, measured];

    // Backward: the loss's gradients first (the log-softmax's and its input's, fp32, together; then
    // the output's in its own dtype). A row's weight gradient appears when backward reaches the row,
    // before what the row kept is freed; parameters outside every called row get theirs at the end.
    const gradients: number[] = [];
    let gradOut: number | null = null;
    if (logSoftmax !== null) {
      const gradLogSoftmax = alloc(outputElements * 4);
      const gradInput = alloc(outputElements * 4);
      free(gradLogSoftmax);
      free(logSoftmax);
      // In fp32 the log-softmax's input gradient is the output's; in half precision it is cast down.
      gradOut = outputBytes === 4 && scales[lastRecorded] === 1 ? gradInput : alloc(batchElements(lastRecorded) * outputBytes);
      if (gradOut !== gradInput) free(gradInput);
    } else if (lastRecorded >= 0) gradOut = alloc(batchElements(lastRecorded) * outputBytes);
    for (let index = lastRecorded; index >= 0; index--) {
      if (!recorded[index]) continue;
      const row = active[index]!;
      // Backward reaches a checkpointed segment: its forward runs again, keeping what it would without checkpointing.
      const segment = segments[index];
      if (segment !== undefined && index === segment.end) {
        for (let call = segment.start; call <= segment.end; call++) run(call, kept);
        if (!kept[segment.end] && outputs[segment.end] !== null) {
          free(outputs[segment.end]!);
          outputs[segment.end] = null;
        }
      }
      const gradIn = index > 0 && recorded[index - 1] ? alloc(batchElements(index - 1) * cast.outputBytes[index - 1]!) : null;
      if ((row.params ?? 0) > 0 && trainsParameters(row)) gradients.push(alloc((row.params ?? 0) * bytes.weights));
      if (gradOut !== null) free(gradOut);
      gradOut = gradIn;
      const out = outputs[index];
      if (out !== null && out !== undefined) free(out);
      for (const id of masks[index] ?? []) free(id);
      freeCopies(index);
    }
    if (gradOut !== null) free(gradOut);
    // What unrecorded calls still hold (an output kept as a recorded call's input, the model's output when nothing trains).
    active.forEach((_, index) => {
      const out = outputs[index];
      if (!recorded[index] && out !== null && out !== undefined) free(out);
    });
    for (const row of paramRows) if (!activeRows.has(row) && trainsParameters(row)) gradients.push(alloc((row.params ?? 0) * bytes.weights));

    if (optimizerState === null) {
      optimizerState = [];
      for (let copy = 0; copy < state.copies; copy++) for (const size of optimizedSizes) optimizerState.push(alloc(size));
    }
    if (state.temporary) {
      const temporaries = optimizedSizes.map((size) => alloc(size));
      temporaries.forEach(free);
    }
    gradients.forEach(free);
    free(labels);
    free(input);
  }
  // The log-softmax and its two gradients, alive together at the start of backward.
  const lossBytes = 3 * round(outputElements * 4);
  const frozenForwardBytes = Math.max(0, ...transients.values());
  return { events, stateBytes, savedBytes, attentionElements, eagerAttentionBytes, measuredSavedBytes, lossBytes, frozenForwardBytes };
}

/** Replays `iterations` training steps of the job through the caching allocator. */
export function replayTrainingStep(job: TrainingJob, iterations = 2): StepReplay {
  const { events, ...figures } = trainingStepEvents(job, iterations);
  const allocator = new CachingAllocator();
  for (const event of events) allocator.apply(event);
  return { stats: allocator.stats(), ...figures };
}
