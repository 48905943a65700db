import type { SourceRange, SyntaxNode } from '../parsing/syntax';
import type { ImportTable } from './imports';
import type { Budget } from './interpreter/budget';
import type { ModuleObject, Scope } from './interpreter/pyValues';

/**
 * The analyzer's output: what a training script says about each model and its training set-up,
 * before any shape or memory arithmetic. Every value remembers where in the source it came from.
 */

/** A value found in the source, with the place it was read from and how. */
export interface Sourced<T> {
  readonly value: T;
  readonly range: SourceRange;
  /** Short human text: "DataLoader(batch_size=...)", "constant BATCH_SIZE", "default". */
  readonly origin: string;
}

/** A value while it is being read: the node it came from, turned into a `Sourced` range when kept. */
export interface Found<T> {
  value: T;
  node: SyntaxNode;
  origin: string;
}

export type ModelKind = 'sequential' | 'module' | 'layer' | 'catalog';

export interface ModelDescription {
  /** The variable the model is bound to, or the class name when the file never builds it. */
  readonly name: string;
  readonly kind: ModelKind;
  /** Where the model is constructed (or the class defined, when it is never constructed). */
  readonly range: SourceRange;
  /** The module tree as the script builds it: layers, containers, user modules, parameters. */
  readonly root: ModuleObject;
  /** The construction (or class definition) node; the tree must be alive while it is used. */
  readonly node: SyntaxNode;
  /** Sample shapes of the tensors the script passes to the model (`model(x, y)` with example tensors), when known. */
  readonly exampleInputs?: Sourced<readonly (readonly number[])[]>;
  /** How many arguments the training code passes to the model (`model(x, targets)`), when it calls it. */
  readonly invocationArity?: number;
  /** The model's own set-up where the data flow settles it (modelSetup.ts), over the file's `TrainingSetup`. */
  readonly setup?: ModelSetup;
  /** Every call the script makes of the model runs with autograd off (a teacher under `torch.no_grad()`): where the first is. It is estimated as inference. */
  readonly inferenceOnly?: SourceRange;
  /** The script unfreezes parameters the analysis cannot follow: what it freezes is not applied to the layer table (requiresGrad.ts). */
  readonly unfollowedUnfreeze?: SourceRange;
}

/**
 * What a model has of its own: the optimizer given its parameters, the loader its training loop
 * iterates. A key present with an undefined value means "none of the file's is this model's".
 */
export interface ModelSetup {
  readonly optimizer?: OptimizerSource;
  readonly batchSize?: Sourced<number>;
  readonly precision?: Sourced<Precision>;
  /** Why the model has no optimizer though the file has some (they are given other models' parameters). */
  readonly optimizerMissing?: string;
  /** The module paths whose parameters the optimizer holds, where it holds only parts of the model (`Adam(model.fc.parameters())`); absent: all. */
  readonly optimizedPaths?: readonly string[];
}

export type OptimizerKind = 'sgd' | 'sgd-momentum' | 'adam' | 'adamw' | 'rmsprop' | 'adagrad' | 'other';
/**
 * The optimizer, and the state it keeps beyond what its kind keeps, in copies of the weights:
 * RMSprop's momentum buffer (`momentum` > 0) and average gradient (`centered=True`), Adam's and
 * AdamW's running maximum (`amsgrad=True`).
 */
export interface OptimizerSource extends Sourced<OptimizerKind> {
  readonly extraStateCopies?: number;
}
export type Precision = 'fp32' | 'fp16-mixed' | 'bf16-mixed' | 'fp16' | 'bf16';
/** The dtype a pretrained model's weights are loaded in (`from_pretrained(torch_dtype=...)`). */
/** `auto`: the checkpoint's own dtype (`torch_dtype="auto"`, TRL's default for a hub id). */
export type WeightDtype = 'fp32' | 'bf16' | 'fp16' | 'auto';

/** bitsandbytes quantization of the frozen base weights. */
export interface QuantizationSetup {
  readonly bits: 4 | 8;
  readonly quantType?: 'nf4' | 'fp4';
  readonly doubleQuant: boolean;
}

/** GaLore by the Trainer (`optim="galore_adamw"`, galoreSetup.ts): its rank and the modules it projects, as written; undefined where the script leaves them to defaults. */
export interface GaloreSetup {
  readonly rank?: number;
  /** `optim_target_modules`: keys of module paths, one regular expression, or "all-linear". */
  readonly targets?: string | readonly string[];
  /** The `_layerwise` variants step each parameter in the backward and free its gradient. */
  readonly layerwise: boolean;
}

/** A PEFT adapter: `lora` (with `dora`), `adalora`, `ia3`, `prompttuning`... and what the script gave it. */
export interface AdapterSetup {
  readonly method: string;
  readonly rank?: number;
  readonly alpha?: number;
  /** Module names (`q_proj`, `v_proj`) or `"all-linear"`; undefined: PEFT's default for the architecture. */
  readonly targetModules?: string | readonly string[];
  readonly dora: boolean;
  /** True when `get_peft_model` or a TRL trainer's `peft_config=` applies it. */
  readonly applied: boolean;
  /** LoRA's `lora_dropout` when above 0: a dropped-out copy of each adapted module's input. */
  readonly dropout?: number;
  /** Prompt and prefix tuning's `num_virtual_tokens`. */
  readonly virtualTokens?: number;
  /** `modules_to_save` (a new head, `["classifier"]`): modules trained in full beside the adapter. */
  readonly modulesToSave?: readonly string[];
  /** IA3's `feedforward_modules` (scaled on their input rather than their output). */
  readonly feedforwardModules?: string | readonly string[];
  /** Prefix tuning's `prefix_projection=True` and its `encoder_hidden_size`. */
  readonly prefixProjection?: { readonly hidden?: number };
  /** The task: SEQ_2_SEQ_LM doubles prompt and prefix tuning's virtual tokens (encoder and decoder). */
  readonly taskType?: string;
  /**
   * The keywords that size OFT, BOFT and LoKr adapters as written (`oft_block_size`, `block_share`,
   * `boft_block_size`, `boft_block_num`, `boft_n_butterfly_factor`, `decompose_both`, `decompose_factor`):
   * a number or boolean, or null when written but not readable.
   */
  readonly shapeOptions?: Readonly<Record<string, number | boolean | null>>;
}

/** What a hand-written loop keeps of the model's output through the backward: `output`, a name holds it all; `none`, only the loss. */
export type OutputsHeld = 'output' | 'none';

export interface TrainingSetup {
  readonly batchSize?: Sourced<number>;
  /** Shape of one sample, without the batch dimension: the first of `inputCandidates`. */
  readonly inputShape?: Sourced<readonly number[]>;
  /** Every sample shape the script suggests (example tensors, datasets), best first; each model takes the first its layers accept. */
  readonly inputCandidates: readonly Sourced<readonly number[]>[];
  /** Sample shapes of a TensorDataset's tensors, for models that take several inputs. */
  readonly datasetSamples?: Sourced<readonly (readonly number[])[]>;
  /** Tokens per sample for models that start with an embedding (tokenizer max_length, SEQ_LEN constants). */
  readonly sequenceLength?: Sourced<number>;
  /** Side of the square images the transforms produce (Resize, CenterCrop...), for models whose channels come from their first layer. */
  readonly imageSize?: Sourced<number>;
  readonly optimizer?: OptimizerSource;
  readonly precision?: Sourced<Precision>;
  readonly gradientCheckpointing?: Sourced<boolean>;
  /** A fused loss kernel that never holds the fp32 logits (Unsloth's, Liger's): fineTuning.ts's `fusedLoss`. */
  readonly fusedLoss?: Sourced<'inPlace' | 'linear'>;
  /** Checkpointed layers' saved inputs moved to the CPU (Unsloth's "unsloth" checkpointing): the GPU holds about one layer's. */
  readonly activationOffload?: Sourced<boolean>;
  readonly compiled?: Sourced<boolean>;
  /** Micro-batches per optimizer step, when more than one (frameworkSetup.ts); one step's memory is that of one micro-batch. */
  readonly gradientAccumulation?: Sourced<number>;
  /** A strategy that shards the model across GPUs (FSDP, DeepSpeed), which the estimate (one unsharded replica) does not model. */
  readonly sharding?: Sourced<string>;
  /** Fine-tuning a pretrained model (fineTuningSetup.ts): the dtype its weights are loaded in. */
  readonly weightDtype?: Sourced<WeightDtype>;
  readonly quantization?: Sourced<QuantizationSetup>;
  readonly adapter?: Sourced<AdapterSetup>;
  /** `prepare_model_for_kbit_training(...)`, and whether it turns gradient checkpointing on. */
  readonly kbitPrepared?: Sourced<{ readonly checkpointing: boolean }>;
  /** `from_pretrained(attn_implementation=...)`: "eager" keeps the attention probabilities, "sdpa" and "flash_attention_2" do not. */
  readonly attentionImplementation?: Sourced<string>;
  /** The Trainer's `optim=` name as written (`paged_adamw_8bit`), which says the optimizer state's bytes. */
  readonly optimizerName?: Sourced<string>;
  /** `AdamW(fused=True)` or `AdamW(foreach=False)`: how the step runs, which says its temporaries (fineTuning.ts's `optimizerStep`). */
  readonly optimizerStep?: Sourced<'fused' | 'per-tensor'>;
  /** GaLore's projection of the gradients, when the Trainer's optimizer is one of its (galoreSetup.ts). */
  readonly galore?: Sourced<GaloreSetup>;
  /** A Hugging Face, TRL or Lightning Trainer runs the steps: it drops the model's outputs (the logits) before the backward. */
  readonly hfTrainer?: Sourced<string>;
  /** A hand-written loop's hold on the model's output through the backward (modelOutputs.ts): a name keeps it all, or only the loss is kept. */
  readonly modelOutputs?: Sourced<OutputsHeld>;
  /** `use_cache=False` (modelOutputs.ts): transformers returns no keys and values with the output. */
  readonly useCache?: Sourced<boolean>;
  /** `torch.backends.cudnn.benchmark` as the script sets it (cudnnBenchmark.ts). */
  readonly cudnnBenchmark?: Sourced<boolean>;
  /** An encoder-decoder's label tokens per sample (the labels' tokenizer max_length). */
  readonly targetSequenceLength?: Sourced<number>;
  /** A TRL preference trainer (DPO, ORPO, CPO) or GRPO, and where its reference log-probabilities come from (preferenceSetup.ts). */
  readonly preference?: Sourced<PreferenceSetup>;
  /** How the job is spread over several GPUs (shardingSetup.ts): DDP, FSDP or DeepSpeed ZeRO, from the script, its configs or its launch command. */
  readonly distributed?: Sourced<DistributedSetup>;
  /** How many GPUs the job runs on (`torchrun --nproc_per_node`, accelerate's `num_processes`, Lightning's `devices`). */
  readonly gpuCount?: Sourced<number>;
}

/**
 * TRL's preference training: each sample is a prompt with a chosen and a rejected answer, run
 * together. DPO compares them with a reference: `model` where the script passes `ref_model=`,
 * `precomputed` where `precompute_ref_log_probs=True` (or `reference_free=True`) leaves none in the
 * step, else `default` (the model with its PEFT adapter disabled, or a frozen copy of it). ORPO and
 * CPO have no reference. KTO trains single answers with DPO's reference. GRPO trains on generated
 * completions, its reference only with a KL term.
 */
export interface PreferenceSetup {
  readonly trainer: 'DPO' | 'KTO' | 'ORPO' | 'CPO' | 'GRPO';
  readonly reference: 'model' | 'precomputed' | 'default' | 'none';
  /** GRPO: the completion's tokens (max_completion_length), over which the logits are computed. */
  readonly completionTokens?: number;
}

/**
 * A data-parallel strategy as ZeRO counts what it partitions: stage 0 nothing (DDP, FSDP NO_SHARD),
 * 1 the optimizer state, 2 also gradients (SHARD_GRAD_OP), 3 also parameters (FULL_SHARD).
 */
export interface DistributedSetup {
  readonly kind: 'ddp' | 'fsdp' | 'zero';
  readonly stage: 0 | 1 | 2 | 3;
  /** FSDP HYBRID_SHARD: sharded within a node, replicated across nodes. */
  readonly hybrid?: boolean;
  readonly offloadOptimizer?: boolean;
  readonly offloadParams?: boolean;
  /** DDP(gradient_as_bucket_view=True). */
  readonly bucketView?: boolean;
  /** DeepSpeed's reduce_bucket_size and stage3_prefetch_bucket_size in elements; 'auto' (the HF integration fills them from the hidden size). */
  readonly reduceBucket?: number | 'auto';
  readonly prefetchBucket?: number | 'auto';
  readonly overlapComm?: boolean;
  /** GPUs per node, when the launch says (Lightning's devices with num_nodes, torchrun's nproc_per_node). */
  readonly gpusPerNode?: number;
  /** The project file the strategy was read from when it is not the script (an accelerate config, a launch script), as shown. */
  readonly file?: string;
}

/** A loop that runs training steps (trainingLoops.ts), with the names it mentions, to tell which model it trains. */
export interface TrainingLoop {
  readonly range: SourceRange;
  readonly names: ReadonlySet<string>;
}

export interface AnalysisNote {
  readonly severity: 'warning' | 'info';
  readonly message: string;
  readonly range?: SourceRange;
}

/** What `forward()` interpretation needs from the file: its imports and module-level names. */
export interface AnalysisContext {
  readonly imports: ImportTable;
  readonly scope: Scope;
  /** What is left of the file's analysis budget for following the models' forward(). */
  readonly budget: Budget;
}

/** Everything the analyzer read from one file. */
export interface SourceAnalysis {
  readonly models: readonly ModelDescription[];
  readonly context: AnalysisContext;
  readonly setup: TrainingSetup;
  /** The outermost loops that run a training step, in source order. */
  readonly trainingLoops: readonly TrainingLoop[];
  /** Values read from environment variables, configuration files and the user's assumptions, in the order read (config/configSources.ts). */
  readonly configReadings: readonly ConfigReading[];
  readonly notes: readonly AnalysisNote[];
  /** True when tree-sitter found syntax errors; the analysis is then best effort. */
  readonly hasSyntaxErrors: boolean;
  /** With a project: the project files whose text the analysis read (imported modules), sorted. */
  readonly projectFiles?: readonly string[];
}

/** One value the script read from a configuration source, as the estimate shows it. */
export interface ConfigReading {
  /** The name it is read under: `BATCH_SIZE`, `model.n_layer`, `vocab_size`. */
  readonly key: string;
  readonly value: string;
  /** Short text: "configs/train.yaml", "environment variable BATCH_SIZE is unset: its default", "set by the user". */
  readonly origin: string;
  /** For a value from a configuration file: the file (relative to the project root) and the key's 1-based line. */
  readonly configLine?: { readonly file: string; readonly line: number };
  /** Where the script reads it (the range knows its file when that is an imported module). */
  readonly range: SourceRange;
  /** For a size that comes from the data (`len(corpus.dictionary)`): what it is, for the words shown and the quick fix. */
  readonly dataDerived?: 'vocabulary size' | 'number of classes';
}
