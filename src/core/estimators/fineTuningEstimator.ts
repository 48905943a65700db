import type { TrainingSetup } from '../analysis/modelDescription';
import type { CatalogArchitecture } from '../catalog/catalog';
import type { Estimator } from '../estimate/estimator';
import { BYTES_PER_MIB } from '../format/units';
import type { MemoryBreakdown } from './analytical';
import { estimateFineTuning, keyValueCacheCounted, type FineTuningAdapter, type FineTuningEstimate, type FineTuningJob, type TransformerShape } from './fineTuning';
import { trainerOptimizer, type OptimizerState } from './optimizerState';
import { shapeFromConfig } from './shapeFromConfig';
import { moeNote } from './moe';
import { GALORE_DEFAULT_RANK, type GaloreJob } from './galore';
import { ADALORA_INIT_R, adaloraDefaults, peftParams } from './peftParams';
import { shardingSpec, estimateShardedAt } from './shardedFineTuning';
import type { TrainingJob } from './trainingJob';
import { firstRecordedCall, hasFrozenParts, trainsParameters } from '../layerTable/frozenLayers';
import type { LayerRow, LayerTable } from '../layerTable/layerTable';

/** Model types whose hub checkpoints are stored in 16 bits (their config.json's torch_dtype is bfloat16 or float16). */
const SIXTEEN_BIT_CHECKPOINTS = /^(llama|mistral|mixtral|qwen2|qwen2_moe|qwen3|qwen3_moe|gemma|gemma2|gemma3_text|gemma3|phi|phi3|falcon|bloom|opt|olmo|olmo2|granite|cohere)$/;

/**
 * What a class puts on the model's last layer: a sequence classifier's pooled head; vocabulary logits
 * for the LM heads (ForCausalLM, ForMaskedLM, LMHeadModel, ForConditionalGeneration, ForPreTraining);
 * nothing of size for a base model (`AutoModel`: its hidden states) and the per-token heads (token
 * classification, question answering, ELECTRA's discriminator: a few logits a token) and next-sentence prediction.
 */
function headOf(className: string, config: Readonly<Record<string, unknown>>): TransformerShape['head'] {
  if (/ForSequenceClassification$/.test(className)) return { kind: 'classifier', labels: typeof config.num_labels === 'number' ? config.num_labels : 2 };
  const fewLogits = /(ForTokenClassification|ForQuestionAnswering(Simple)?|ForMultipleChoice|ForNextSentencePrediction)$/.test(className) || className === 'ElectraForPreTraining';
  if (fewLogits || (/Model$/.test(className) && !/LMHeadModel$/.test(className))) return { kind: 'none' };
  return { kind: 'lm' };
}

/**
 * The fine-tuning job of a transformers text model the catalog knows (from_pretrained, or built from
 * its config): with a PEFT adapter, quantized or 16-bit weights, or fully in fp32 as the Trainer's
 * defaults do. The fine-tuning model counts what such training holds (calibrated on published
 * measurements of full fine-tunes too); the real-model estimator learnt from vision models under-
 * estimated a full fine-tune of BERT-large by a fifth. Undefined for every other model (the other
 * estimators then decide). `seq` is the tokens per sample the layer table was built for.
 */
export function fineTuningSpec(setup: TrainingSetup, architecture: CatalogArchitecture | undefined, seq: number | undefined, gpus?: number, table?: LayerTable): TrainingJob['fineTuning'] {
  const hf = architecture?.hfConfig;
  const adapter = setup.adapter?.value.applied ? setup.adapter.value : undefined;
  if (!hf || seq === undefined) return undefined;
  const head = headOf(hf.className, hf.config);
  const shape = shapeFromConfig(hf.modelType, hf.config, head);
  if (typeof shape === 'string') return undefined;
  const notes: string[] = shape.moe ? [moeNote(shape.moe)] : [];
  const quantization = adapter ? setup.quantization?.value : undefined;
  if (setup.quantization && !adapter) notes.push('The weights are quantized but no adapter is applied: a quantized model cannot be fully fine-tuned; its weights are counted at 16 bits.');
  const precision = setup.precision?.value ?? 'fp32';
  // A 16-bit "true" precision (Lightning's "bf16-true", `model.half()`, `model.to(torch.bfloat16)`) casts the weights themselves.
  const trueHalf = precision === 'bf16' || precision === 'fp16';
  const written = setup.weightDtype?.value ?? (trueHalf ? precision : undefined);
  // "auto" loads the checkpoint's own dtype: the decoders published since Llama in 16 bits, the older families (BERT, GPT-2, T5) in fp32.
  const dtype = written === 'auto' ? (SIXTEEN_BIT_CHECKPOINTS.test(hf.modelType) ? 'bf16' : 'fp32') : written;
  if (written === 'auto') notes.push(`The weights load in the checkpoint's own dtype ("auto"): ${dtype === 'bf16' ? '16 bits' : 'fp32'}, as ${hf.modelType} checkpoints are published.`);
  if (!dtype && !quantization) notes.push("The weights' dtype is not given (from_pretrained(torch_dtype=...)): fp32 is assumed, transformers 4's default (transformers 5 loads the checkpoint's dtype).");
  const weightBits: FineTuningJob['weightBits'] = quantization ? quantization.bits : dtype === 'bf16' || dtype === 'fp16' ? 16 : 32;
  const mixed = precision === 'bf16-mixed' || precision === 'fp16-mixed';
  // prepare_model_for_kbit_training makes the embeddings and norms fp32, and bitsandbytes returns each quantized linear's output in its input's dtype: without autocast the whole forward is fp32.
  const kbitFp32 = weightBits < 16 && setup.kbitPrepared !== undefined && !mixed;
  const computeBytes = !kbitFp32 && (mixed || weightBits !== 32 || precision === 'bf16' || precision === 'fp16') ? 2 : 4;
  const name = setup.optimizerName?.value ?? '';
  const kind = setup.optimizer?.value;
  // The Trainer's optim name says the state's layout (optimizerState.ts); a torch optimizer of the script's own, its kind:
  // SGD with momentum, RMSprop and Adagrad keep one state a parameter (momentum, square average, sum).
  const named = name ? trainerOptimizer(name) : undefined;
  const optimizer: OptimizerState = named && named.state !== 'adamw' ? named.state : kind === 'sgd-momentum' || kind === 'rmsprop' || kind === 'adagrad' ? 'momentum' : kind === 'sgd' ? 'sgd' : 'adamw';
  if (/^galore/i.test(name) && !setup.galore) notes.push(`GaLore-torch's ${name} built by the script: its parameter groups, which carry the rank and say which matrices it projects, are not read, so every parameter's full optimizer state is counted (an upper bound).`);
  if (named?.inBackward && !/^galore/.test(name)) notes.push(`optim="${name}" applies each gradient in the backward as soon as it is made: no gradients are held for a step${named.state === 'sgd' ? ', and LOMO keeps no optimizer state' : ", and AdaLomo keeps Adafactor's factored moments"}.`);
  let fineTuningAdapter: FineTuningAdapter | undefined;
  // Prompt tuning prepends its virtual tokens to every sample.
  let extraTokens = 0;
  if (adapter) {
    if (adapter.method === 'lora' || adapter.method === 'adalora') {
      // AdaLoRA runs as LoRA does (its singular values, r per linear, are left out of the job), at its initial rank, on its own default targets.
      const targetModules = adapter.targetModules ?? (adapter.method === 'adalora' ? adaloraDefaults(shape, hf.modelType) : undefined);
      const rank = adapter.rank ?? (adapter.method === 'adalora' ? ADALORA_INIT_R : undefined);
      fineTuningAdapter = { method: 'lora', ...(rank === undefined ? {} : { rank }), ...(targetModules === undefined ? {} : { targetModules }), dora: adapter.dora };
      if (adapter.rank === undefined) notes.push(adapter.method === 'adalora' ? `AdaLoRA's init_r is not readable; PEFT's default ${ADALORA_INIT_R} is assumed.` : "The adapter's rank is not readable; PEFT's default 8 is assumed.");
    } else {
      const counted = peftParams(shape, adapter, hf.modelType);
      if ('unknown' in counted) {
        // Counted as none, said once here (the estimator would say it again).
        fineTuningAdapter = { method: 'other', trainableParams: 0 };
        notes.push(`The adapter's parameters are not counted: ${counted.unknown}; they are few, so the estimate is close.`);
      } else {
        fineTuningAdapter = adapter.method === 'ia3'
          ? { method: 'ia3', trainableParams: counted.params, ...(adapter.targetModules === undefined ? {} : { targetModules: adapter.targetModules }), ...(adapter.feedforwardModules === undefined ? {} : { feedforwardModules: adapter.feedforwardModules }) }
          : { method: 'other', trainableParams: counted.params };
        extraTokens = counted.extraTokens;
      }
    }
  }
  const preference = preferenceJob(setup, fineTuningAdapter !== undefined, notes);
  const galore = galoreJob(setup, fineTuningAdapter !== undefined, notes);
  if (shape.decoderLayers && !setup.targetSequenceLength) notes.push(`The decoder's length is taken as the encoder's (${seq} tokens): no tokenizer call for the labels with a max_length was found.`);
  const job: Omit<FineTuningJob, 'batch'> = {
    shape,
    seq: seq + extraTokens,
    ...(fineTuningAdapter ? { adapter: fineTuningAdapter } : {}),
    weightBits,
    doubleQuant: quantization?.doubleQuant ?? false,
    computeBytes,
    // The Trainer's bf16=True, accelerate's and Lightning's mixed precision autocast whatever the weights' dtype.
    autocast: mixed,
    optimizer,
    paged: named?.paged === true,
    optimizerStep: setup.optimizerStep?.value ?? named?.step ?? 'foreach',
    optimizerInBackward: named?.inBackward === true,
    checkpointing: setup.gradientCheckpointing?.value ?? false,
    activationOffload: setup.gradientCheckpointing?.value === true && setup.activationOffload?.value === true,
    ...(setup.fusedLoss ? { fusedLoss: setup.fusedLoss.value } : {}),
    // transformers' default is SDPA where the model supports it; "eager" keeps the probabilities.
    eagerAttention: setup.attentionImplementation?.value === 'eager',
    flashAttention: /^flash_attention/.test(setup.attentionImplementation?.value ?? ''),
    compiled: setup.compiled?.value === true,
    adapterDropout: (adapter?.dropout ?? 0) > 0,
    // A hand-written loop keeps `outputs` (and its logits) through `loss.backward()` unless it takes the loss straight from the call; the Trainer does not.
    logitsHeld: setup.hfTrainer === undefined && setup.modelOutputs?.value !== 'none',
    keyValueCacheHeld: setup.hfTrainer === undefined && setup.modelOutputs?.value === 'output' && setup.useCache?.value !== false,
    ...(shape.decoderLayers && setup.targetSequenceLength ? { targetSeq: setup.targetSequenceLength.value } : {}),
    ...(setup.gradientAccumulation ? { accumulation: setup.gradientAccumulation.value } : {}),
    kbitPrepared: setup.kbitPrepared !== undefined,
    ...(table && !fineTuningAdapter ? frozenPart(table, shape.layers) : {}),
    ...(preference ? { preference } : {}),
    ...(galore ? { galore } : {}),
  };
  if (keyValueCacheCounted(job)) notes.push(`The loop keeps the model's output through the backward (${setup.modelOutputs!.origin.split(':')[0]}), and with use_cache on (the config's default) transformers returns every layer's keys and values in it: counted. \`use_cache=False\` in from_pretrained, or \`loss = model(**batch).loss\`, frees them.`);
  // Several GPUs (shardedFineTuning.ts): the strategy and count, estimated per GPU.
  const sharding = shardingSpec(setup, shape, gpus, notes);
  return { job, notes, ...(sharding ? { sharding } : {}) };
}

/** GaLore over a full fine-tune (galore.ts), with the note that says what it projects and what was assumed. */
function galoreJob(setup: TrainingSetup, adapter: boolean, notes: string[]): GaloreJob | undefined {
  const found = setup.galore?.value;
  if (!found) return undefined;
  if (adapter) {
    notes.push("GaLore with an adapter projects only the adapter's own small matrices: their optimizer state is counted in full.");
    return undefined;
  }
  const rank = found.rank ?? GALORE_DEFAULT_RANK;
  const targets = found.targets ?? 'all-linear';
  const which = targets === 'all-linear' ? 'every linear layer of the layers' : `the linear layers matching ${typeof targets === 'string' ? JSON.stringify(targets) : targets.join(', ')}`;
  const assumed = [
    ...(found.rank === undefined ? [`The rank is not given (optim_args="rank=..."): transformers' default ${GALORE_DEFAULT_RANK} is assumed.`] : []),
    ...(found.targets === undefined ? ['No optim_target_modules is readable (transformers requires it): every linear layer of the layers is assumed.'] : []),
  ];
  notes.push(`GaLore: the gradients of ${which} are projected to rank ${rank}, and their optimizer state is over the projection (rank x the larger side) plus the projection itself; the other parameters keep a full state${found.layerwise ? '. Layerwise: each parameter steps in the backward and its gradient is freed there' : ''}. Refreshing the projection takes an SVD of the largest gradient in fp32.${assumed.length ? ` ${assumed.join(' ')}` : ''}`);
  return { rank, targets };
}

/** TRL's preference trainer as the job counts it, with the note that says what it holds beyond a supervised step. */
function preferenceJob(setup: TrainingSetup, adapter: boolean, notes: string[]): FineTuningJob['preference'] {
  const found = setup.preference?.value;
  if (!found) return undefined;
  const trainer = found.trainer.toLowerCase() as NonNullable<FineTuningJob['preference']>['trainer'];
  const reference = found.reference === 'model' ? 'separate' : found.reference === 'default' ? 'default' : 'none';
  if (trainer === 'grpo') {
    const kept = reference === 'none' ? 'no reference model (beta=0)' : adapter ? 'the reference is the model with its adapter disabled (no weights of its own)' : 'without an adapter TRL keeps a frozen copy of the model as the reference: its weights are counted again';
    notes.push(`GRPO: the batch is of generated completions, each with its prompt; the logits are over the completion's ${found.completionTokens ?? 'tokens'} tokens only, and generation's key-value cache is counted against the training step; ${kept}. A vLLM server generating on other GPUs (use_vllm=True) holds nothing here; TRL's defaults are 0.17's.`);
    return { trainer, reference, ...(found.completionTokens ? { completionTokens: found.completionTokens } : {}) };
  }
  const answers = trainer === 'kto'
    ? "KTO: single answers marked desirable or not, with mismatched ones for the KL term (a forward without gradients)"
    : `${found.trainer}: each prompt's chosen and rejected answers run together, so activations and logits are those of twice the batch`;
  // Without an adapter TRL copies the model as the reference; with one, the model runs with its adapter disabled.
  const held =
    reference === 'separate' ? 'the reference model is taken to be the same checkpoint, loaded as the trained one: its weights are counted again, without gradients or optimizer state'
    : reference === 'default' && !adapter ? 'without an adapter TRL keeps a frozen copy of the model as the reference: its weights are counted again, without gradients or optimizer state'
    : reference === 'default' ? 'the reference is the model with its adapter disabled: a forward without gradients, no weights of its own'
    : trainer === 'dpo' || trainer === 'kto' ? 'the reference log-probabilities are not computed in the step'
    : `${found.trainer} has no reference model; its loss adds the chosen answers' NLL`;
  notes.push(`${answers}; ${held}.`);
  return { trainer, reference };
}

/** Numbered layers in transformers' module paths: `bert.encoder.layer.3.`, `model.layers.3.`, `transformer.h.3.`, `encoder.block.3.`. */
const LAYER_INDEX = /(?:^|\.)(?:layer|layers|h|block|blocks)\.(\d+)(?:\.|$)/;

/** What the script froze of a full fine-tune (frozenLayers.ts): the trained parameters, and how many layers autograd records. */
function frozenPart(table: LayerTable, layers: number): Pick<FineTuningJob, 'frozen'> {
  if (!hasFrozenParts(table)) return {};
  const calls = table.rows.filter((row) => (row.activations ?? 0) > 0);
  const start = firstRecordedCall(table, calls);
  const index = (row: LayerRow | undefined) => (row ? LAYER_INDEX.exec(row.path)?.[1] : undefined);
  const first = index(calls[start]);
  // The first recorded call inside a layer: that layer and the ones after it; before every layer (the embeddings): all; after them (the head): none.
  const recordedLayers = first !== undefined ? layers - Number(first) : calls.slice(start).some((row) => index(row) !== undefined) ? layers : 0;
  // Parameters only calls without autograd use get no gradient, whatever requires_grad says.
  const trainableParams = table.rows.filter(trainsParameters).reduce((sum, row) => sum + (row.params ?? 0), 0);
  return { frozen: { trainableParams, recordedLayers } };
}

/** The fine-tuning estimate as the parts the estimate's breakdown shows. */
export function fineTuningBreakdown(estimate: FineTuningEstimate): MemoryBreakdown {
  const mib = (bytes: number) => bytes / BYTES_PER_MIB;
  return {
    weightsMiB: mib(estimate.baseWeights + estimate.trainableWeights),
    gradientsMiB: mib(estimate.heldGradients),
    optimizerMiB: mib(estimate.optimizerState),
    activationsMiB: mib(estimate.driver - estimate.context - estimate.baseWeights - estimate.trainableWeights - estimate.heldGradients - estimate.optimizerState),
    // The CUDA context and the fitted margin (FITTED_MARGIN, fitted on published measurements).
    overheadMiB: mib(estimate.context + estimate.fittedMargin),
    contextMiB: mib(estimate.context),
  };
}

/**
 * The fine-tuning model (fineTuning.ts) as an estimator: for a pretrained Transformer fine-tuned
 * with an adapter or loaded quantized or in 16 bits, the driver's figure of its physical model and
 * the margin fitted on published measurements (not the verdict's safety margin).
 */
export const fineTuningEstimator: Estimator<MemoryBreakdown> = {
  id: 'fineTuning',
  label: 'Fine-tuning model',
  short: 'Fine-tune',
  attribution: () => 'fine-tuning model',
  onlyWhereItApplies: true,
  pass: 'analysis',
  estimate({ job }) {
    const spec = job.fineTuning;
    if (!spec) return null;
    const { sharding } = spec;
    const at = (batch: number) => (sharding ? estimateShardedAt(spec.job, sharding, batch) : estimateFineTuning({ ...spec.job, batch }));
    const estimate = at(job.batchSize);
    return {
      method: 'fineTuning',
      pointMiB: (estimate.driver + estimate.fittedMargin) / BYTES_PER_MIB,
      range: null,
      warnings: [...spec.notes, ...estimate.notes],
      memoryAt: (batchSize) => {
        const other = at(batchSize);
        return (other.driver + other.fittedMargin) / BYTES_PER_MIB;
      },
      detail: fineTuningBreakdown(estimate),
    };
  },
};
