/**
 * The analyzer's output: what a training script says about each model and its training set-up,
 * before any shape or memory arithmetic. Every value remembers where in the source it came from.
 */

/** Zero-based, as tree-sitter and VS Code count. */
export interface SourceRange {
  readonly startLine: number;
  readonly startColumn: number;
  readonly endLine: number;
  readonly endColumn: number;
}

/** A value found in the source, with the place it was read from and how. */
export interface Sourced<T> {
  readonly value: T;
  readonly range: SourceRange;
  /** Short human text: "DataLoader(batch_size=...)", "constant BATCH_SIZE", "default". */
  readonly origin: string;
}

/** An argument the analyzer could not reduce to a constant, and why. */
export interface Unresolved {
  readonly unresolved: string;
  readonly reason: string;
}

export type Value = number | string | boolean | null | readonly Value[] | Unresolved;

export function isUnresolved(value: Value | undefined): value is Unresolved {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'unresolved' in value;
}

/** One layer construction as written, e.g. `nn.Linear(784, 512)`. */
export interface LayerCall {
  /** The `torch.nn` class name: `Linear`, `Conv2d`, ... */
  readonly type: string;
  /** Dotted path inside the model, as `named_modules()` would print it: `0`, `encoder.fc1`. */
  readonly path: string;
  readonly args: readonly Value[];
  readonly kwargs: Readonly<Record<string, Value>>;
  readonly range: SourceRange;
}

export type ModelKind = 'sequential' | 'module';

export interface ModelDescription {
  /** The variable the model is bound to, or the class name. */
  readonly name: string;
  readonly kind: ModelKind;
  /** Where the model is constructed (or the class defined, when it is never constructed). */
  readonly range: SourceRange;
  /** Layers in execution order. */
  readonly layers: readonly LayerCall[];
  /** True when the order is declaration order rather than a followed `forward()`. */
  readonly orderFromDeclaration: boolean;
}

export type OptimizerKind = 'sgd' | 'sgd-momentum' | 'adam' | 'adamw' | 'rmsprop' | 'adagrad' | 'other';
export type Precision = 'fp32' | 'fp16-mixed' | 'bf16-mixed' | 'fp16' | 'bf16';

export interface TrainingSetup {
  readonly batchSize?: Sourced<number>;
  /** Shape of one sample, without the batch dimension. */
  readonly inputShape?: Sourced<readonly number[]>;
  readonly optimizer?: Sourced<OptimizerKind>;
  readonly precision?: Sourced<Precision>;
}

export interface AnalysisNote {
  readonly severity: 'warning' | 'info';
  readonly message: string;
  readonly range?: SourceRange;
}

/** Everything the analyzer read from one file. */
export interface SourceAnalysis {
  readonly models: readonly ModelDescription[];
  readonly setup: TrainingSetup;
  readonly notes: readonly AnalysisNote[];
  /** True when tree-sitter found syntax errors; the analysis is then best effort. */
  readonly hasSyntaxErrors: boolean;
}
