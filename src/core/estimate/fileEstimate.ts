import type { AnalysisNote, OptimizerKind, Precision } from '../analysis/modelDescription';
import type { MemoryBreakdown } from '../estimators/analytical';
import type { ModelFamily } from '../estimators/family';
import type { FineTuningJob } from '../estimators/fineTuning';
import type { ShardingSpec } from '../estimators/shardedFineTuning';
import type { LayerTable } from '../layerTable/layerTable';
import type { ShardingSummary } from '../estimators/shardedFineTuning';

/**
 * The estimate of one file: what the editor presents, and (through estimateJson.ts, which keeps
 * the published shape) what the CLI prints with --json. A value an estimator cannot provide yet is
 * null, never a guess.
 */
export interface FileEstimate {
  readonly file: string;
  readonly gpu: { readonly id: string; readonly name: string; readonly memoryMiB: number };
  readonly models: readonly ModelEstimate[];
  /** Problems with the file as a whole (syntax errors, no model found). */
  readonly warnings: readonly string[];
  /** For a script estimated with its project: the root, and the project files the analysis read (an edit to one of them changes the estimate). */
  readonly project?: { readonly root: string; readonly files: readonly string[] };
  /**
   * The per-sample shape the script's data gives (`ImageFolder` after `CenterCrop(64)`: [3, 64, 64]),
   * read from the file whether or not a model was found: the dry run's fake batches where no model
   * says its input (a model from a library the analysis does not know).
   */
  readonly dataShape?: readonly number[];
  /** Two or more models with an estimate: the script's one process, which is what the GPU must hold (scriptProcess.ts). */
  readonly process?: ScriptProcess;
}

export type Risk = 'fits' | 'tight' | 'oom';

/** The whole script as one process, where it has two or more models with an estimate. */
export interface ScriptProcess {
  /** The models counted, in the script's order. */
  readonly models: readonly string[];
  /** Those that run inference only (every call under torch.no_grad()): their weights are added, not their step. */
  readonly inferenceOnly: readonly string[];
  /** The process's peak as nvidia-smi would show it: one CUDA context. */
  readonly estimateMiB: number;
  readonly fits: boolean;
  readonly risk: Risk;
  /** The batch the models share; null when they take different batches. */
  readonly batchSize: number | null;
  /** The largest shared batch whose process peak fits the GPU; null when the models take different batches or a curve is missing. */
  readonly maxBatchSize: number | null;
}

export interface MemoryEstimate {
  /** Peak GPU memory of a training step as nvidia-smi would show it. */
  readonly estimateMiB: number | null;
  readonly lowMiB: number | null;
  readonly highMiB: number | null;
  /** The ensemble's most probable memory bin; null until an ensemble covers this family. */
  readonly bin: { readonly lowMiB: number; readonly highMiB: number; readonly probability: number } | null;
  /** Which estimator produced `estimateMiB` (estimators.ts's rule): the family's trained ensemble, the real-model estimator, or our analytical model. */
  readonly method: 'analytical' | 'ensemble' | 'real-model' | 'fineTuning' | null;
  /** The quantiles `lowMiB` and `highMiB` are, where there is a range: [0.1, 0.9]. */
  readonly rangeQuantiles?: readonly [number, number];
  readonly breakdown: MemoryBreakdown | null;
  /** How the ensemble ran, when it did (see src/core/estimators/learned.ts). */
  readonly ensemble?: EnsembleRun;
  /** A fine-tuning job on several GPUs: `estimateMiB` is per GPU, for `sharding.gpus` of them (shardedFineTuning.ts). */
  readonly sharding?: ShardingSummary;
}

export interface EnsembleRun {
  /** The bundled model, `models/cnn.onnx`. */
  readonly model: string;
  /** The onnxruntime execution provider that ran it (`wasm`: onnxruntime-web on the CPU, see onnx/onnxRuntime.ts). */
  readonly executionProvider: 'cpu' | 'cuda' | 'wasm';
  /** The quantile of the learned distribution used as the point estimate, and the range's quantiles. */
  readonly pointQuantile: number;
  readonly rangeQuantiles: readonly [number, number];
  /** Features outside the training data's range (empty when inside). */
  readonly outOfDistribution: readonly string[];
  /** Our analytical model's estimate, the anchor the ensemble's learned correction multiplies (MiB). */
  readonly analyticalMiB: number;
  /** The ensemble over its batch grid, as far as the report's memory curve reaches (for its range band). */
  readonly curve?: readonly { readonly batchSize: number; readonly estimateMiB: number; readonly lowMiB: number; readonly highMiB: number }[];
}

/** An assumption behind the estimate, with the 1-based line it was read from (null: a default). */
export interface Assumption {
  readonly name: 'batchSize' | 'inputShape' | 'optimizer' | 'precision' | 'gradientCheckpointing' | 'compiled' | 'gradientAccumulation' | 'targetLength' | 'loss' | 'weightDtype' | 'quantization' | 'adapter' | 'trainer' | 'config' | 'dataDerived';
  /**
   * For `config` and `dataDerived`: the name the value is read under (`BATCH_SIZE`, `model.n_layer`, `ntokens`); `--set KEY=...` replaces it.
   * For a `batchSize` given by the user: the name the script's own was read under (a constant, an argparse option's dest), if any.
   */
  readonly key?: string;
  readonly value: string;
  readonly origin: string;
  readonly line: number | null;
  /** The project file `line` is in, relative to the project root, when it is not the script (a value read in an imported module, a configuration file). */
  readonly file?: string;
  /** For `dataDerived`: what the data decides (`vocabulary size`, `number of classes`). */
  readonly what?: string;
}

/** Lines first to last, 1-based, both included. */
export interface LineRange {
  readonly startLine: number;
  readonly endLine: number;
}

export type UtilizationClass = 'low' | 'medium' | 'high';

export interface ArchitectureRef {
  readonly library: 'torchvision' | 'timm' | 'transformers';
  readonly name: string;
  readonly className: string;
  /** Where the catalog's numbers come from (the library version it was generated with, or a published configuration). */
  readonly source: string;
}

export interface ModelEstimate {
  readonly name: string;
  /** 1-based line of the construction (or class definition). */
  readonly line: number;
  /** 1-based line of the script's class the model is an instance of (`class Net(nn.Module):`); null for torch.nn layers and catalog models. */
  readonly classLine: number | null;
  /** The project file that defines that class, relative to the project root, when it is not the script itself (`from model import GPT`); `classLine` is then a line of that file. */
  readonly classFile?: string;
  /** The outermost loops that train this model (around `loss.backward()`, `optimizer.step()`, or calling a function that does), 1-based lines. */
  readonly trainingLoops: readonly LineRange[];
  readonly params: number;
  readonly batchSize: number | null;
  readonly family: ModelFamily;
  /** The standard architecture the model is (or contains), from the catalog: `torchvision` `resnet50`. */
  readonly architecture: ArchitectureRef | null;
  readonly inputShape: readonly number[] | null;
  readonly optimizer: OptimizerKind;
  /** State the optimizer keeps beyond its kind's, in copies of the weights (RMSprop's momentum, AMSGrad's maximum); absent: none. */
  readonly optimizerExtraCopies?: number;
  readonly precision: Precision;
  /** `torch.utils.checkpoint` or `gradient_checkpointing_enable()` in the script. */
  readonly gradientCheckpointing: boolean;
  /** `torch.compile(model)` in the script. */
  readonly compiled: boolean;
  /** Every call the script makes of the model runs with autograd off (a distillation teacher): estimated as inference. */
  readonly inferenceOnly?: true;
  readonly memory: MemoryEstimate;
  /** Every registered estimator's figure (src/core/estimate/estimators.ts), in the registry's order. */
  readonly estimates: readonly EstimatorReading[];
  readonly utilization: { readonly smact: UtilizationClass | null; readonly smocc: UtilizationClass | null; readonly drama: UtilizationClass | null };
  /** Whether the estimate fits the GPU's memory; null when there is no estimate. */
  readonly fits: boolean | null;
  readonly risk: Risk | null;
  /** Largest batch size whose estimate fits the GPU; null without an estimate. */
  readonly maxBatchSize: number | null;
  /** For a fine-tune the fine-tuning model estimates: the longest sequence that fits and the changes that make it fit (fineTuningRemedies.ts). */
  readonly fineTuning?: FineTuningOutlook;
  readonly assumptions: readonly Assumption[];
  readonly layerTable: LayerTable;
  /** What the estimate could not see or had to assume, with the source range each is about (zero-based) where it has one; notes.ts words them. */
  readonly notes: readonly AnalysisNote[];
}

/**
 * What one registered estimator made of a model, named as every surface shows it (the
 * estimator's own names, estimator.ts), so no surface has code per estimator.
 */
export interface EstimatorReading {
  /** The estimator's id: `analytical`, `horus`, `ensemble`. */
  readonly estimator: string;
  readonly label: string;
  readonly short: string;
  /** How the estimate is attributed when it is this one's: `CNN ensemble`. */
  readonly attribution: string;
  /**
   * `estimate`: the one that counts (estimators.ts's rule picked it); `candidate`: the rule could
   * have picked it, but another came first (or it has not run yet); `comparison`: shown beside the
   * estimate, never picked, or passed over because the model lies outside its training data.
   */
  readonly role: 'estimate' | 'candidate' | 'comparison';
  /** MiB, rounded; null when the estimator did not run (no batch size, no ensemble for the family). */
  readonly estimateMiB: number | null;
  readonly lowMiB: number | null;
  readonly highMiB: number | null;
  /** Where its figure may fall short, in words (the dry run's cudnnCaveats). */
  readonly caveats?: readonly string[];
}

/* What fits a fine-tune (fineTuningRemedies.ts, longestSequence.ts work it out). */

export type RemedyKind = 'checkpointing' | 'sdpa' | 'noKeyValueCache' | 'precomputedReference' | 'accumulation' | 'lora' | 'fourBit' | 'galore' | 'optimizer8bit' | 'noKlTerm' | 'shorterSequence';

export interface Remedy {
  /** The change, or the two changes of a pair, in the order they were applied. */
  readonly changes: readonly RemedyKind[];
  /** What to change, in words: `gradient checkpointing`, `batch 2 x 4 accumulation`. */
  readonly change: string;
  /** The estimate with the change (MiB, the driver's figure, as the estimate states it). */
  readonly driverMiB: number;
  readonly fits: boolean;
  readonly risk: Risk;
  /** The training computes the same updates (up to rounding): checkpointing, SDPA, accumulation. */
  readonly sameTraining: boolean;
}

/** What the fine-tuning estimate says beyond the script's own set-up, on the chosen GPU. */
export interface FineTuningOutlook {
  /** The job as estimated (the script's batch): the report works out its memory at other batch sizes and on other GPUs. */
  readonly job: FineTuningJob;
  /** Several GPUs: how the job is sharded; every figure of the outlook is then per GPU. */
  readonly sharding?: ShardingSpec;
  /** The job's estimate at the script's batch and sequence (MiB, the driver's figure). */
  readonly driverMiB: number;
  readonly gpuMiB: number;
  readonly batch: number;
  readonly seq: number;
  readonly longestSequence: LongestSequence;
  /**
   * Empty when the job fits comfortably (risk `fits`, nothing to change). Otherwise every single
   * change that applies to the job, and, when none of them fits outside the safety margin, the
   * pairs that fit; smallest estimate first.
   */
  readonly remedies: readonly Remedy[];
}

export interface LongestSequence {
  /** The longest length that fits (tokens); 0 when not even 64 tokens fit. */
  readonly tokens: number;
  /** The model's maximum position (config.json's max_position_embeddings); null when its config gives none. */
  readonly modelMaximum: number | null;
  /** The model's maximum itself fits: no longer sequence is possible, whatever the memory. */
  readonly modelMaximumFits: boolean;
  /** The job's estimate at `tokens` (MiB, the driver's figure); null when nothing fits. */
  readonly driverMiB: number | null;
}
