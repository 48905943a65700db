/**
 * What an optimizer keeps per parameter, by the state's layout: the bytes of each kind for one tensor,
 * and the kind the Trainer's `optim` names (transformers' OptimizerNames) make.
 */

/**
 * `adamw`: two states in the parameter's dtype (torch's AdamW and Adam, Sophia's, schedule-free
 * AdamW's); `-8bit`/`-4bit`: quantized states with blockwise scales (bitsandbytes, torchao);
 * `ademamix`: three full states (AdEMAMix's two averages and second moment, GrokAdamW's);
 * `adafactor`: factored second moments; `momentum`: one state the parameter's size (SGD with momentum,
 * Lion, RMSprop's square average, Adagrad's sum, Adam-mini's first moment); `sgd`: none.
 */
export type OptimizerState = 'adamw' | 'adamw-8bit' | 'adamw-4bit' | 'ademamix' | 'ademamix-8bit' | 'adafactor' | 'momentum' | 'momentum-8bit' | 'sgd';

/** bitsandbytes' 8-bit optimizers (and torchao's low-bit ones) keep tensors under 4096 elements in 32-bit state. */
const MIN_QUANTIZED_SIZE = 4096;
/** A quantized state's bytes per element: its code and an fp32 scale per block (bitsandbytes' and torchao's 8-bit: 256; torchao's 4-bit: 128). */
const EIGHT_BIT = 1 + 4 / 256;
const FOUR_BIT = 0.5 + 4 / 128;

/** The optimizer state one parameter tensor (rows x cols; a vector has one column) keeps, in bytes. */
export function optimizerBytes(optimizer: OptimizerState, tensor: { rows: number; cols: number }, paramBytes: number): number {
  const elements = tensor.rows * tensor.cols;
  const quantized = (states: number, perElement: number) => (elements < MIN_QUANTIZED_SIZE ? states * 4 * elements : states * perElement * elements);
  switch (optimizer) {
    case 'adamw':
      return 2 * elements * paramBytes;
    case 'adamw-8bit':
      return quantized(2, EIGHT_BIT);
    case 'adamw-4bit':
      return quantized(2, FOUR_BIT);
    case 'ademamix':
      return 3 * elements * paramBytes;
    case 'ademamix-8bit':
      return quantized(3, EIGHT_BIT);
    // Adafactor without momentum: a row and a column of fp32 second moments per matrix, a full vector for vectors.
    case 'adafactor':
      return tensor.cols > 1 ? 4 * (tensor.rows + tensor.cols) : 4 * elements;
    case 'momentum':
      return elements * paramBytes;
    case 'momentum-8bit':
      return quantized(1, EIGHT_BIT);
    case 'sgd':
      return 0;
  }
}

/** How the Trainer's optimizer holds its state: its layout, whether it steps in the backward (LOMO's fused update, GaLore's layerwise), whether its state is paged. */
export interface TrainerOptimizer {
  readonly state: OptimizerState;
  readonly inBackward: boolean;
  readonly paged: boolean;
  readonly step: OptimizerStep;
}

/**
 * How the step's kernels run, which says its temporaries: `foreach` (torch's default on a GPU since
 * 2.0) takes the square root of every second moment at once, a temporary the size of one state for
 * the whole model; `per-tensor` (transformers' own AdamW, `adamw_hf`; torch's `foreach=False`, and
 * its default before 2.0) one tensor at a time, two temporaries of the largest; `fused` (torch's
 * `fused=True`, `adamw_torch_fused`, apex's and DeepSpeed's FusedAdam, bitsandbytes') one kernel a
 * tensor, in place, none.
 */
export type OptimizerStep = 'foreach' | 'per-tensor' | 'fused';

/**
 * The state of the Trainer's optimizer by its `optim` name (`paged_adamw_8bit`, `lion_8bit`,
 * `ademamix`, `adamw_torch_4bit`, `lomo`, `galore_adafactor_layerwise`...), or of a library
 * optimizer by its class name (`AdamW8bit`, `PagedLion8bit`, `AdamW4bit`, `Adafactor`). Names it does
 * not know are AdamW's two states, the Trainer's default and the largest of the common ones.
 */
export function trainerOptimizer(name: string): TrainerOptimizer {
  const n = name.toLowerCase();
  const paged = /paged/.test(n);
  // torchao's AdamWFp8 keeps its moments in one byte an element too.
  const eightBit = /8bit|fp8/.test(n);
  // LOMO fuses each gradient's update into the backward and keeps no state; AdaLomo keeps Adafactor's factored moments.
  const step: OptimizerStep = /fused|32bit|paged|bnb/.test(n) ? 'fused' : n === 'adamw_hf' ? 'per-tensor' : 'foreach';
  if (n === 'lomo') return { state: 'sgd', inBackward: true, paged, step };
  if (n === 'adalomo') return { state: 'adafactor', inBackward: true, paged, step };
  const inBackward = /layerwise/.test(n);
  const state: OptimizerState =
    /adafactor/.test(n) ? 'adafactor'
    : /ademamix|grokadamw/.test(n) ? (eightBit ? 'ademamix-8bit' : 'ademamix')
    : /lion|rmsprop|adagrad|schedule_free_sgd|lars/.test(n) || (/^sgd/.test(n) && eightBit) ? (eightBit ? 'momentum-8bit' : 'momentum')
    : /^sgd$/.test(n) ? 'sgd'
    : /4bit/.test(n) ? 'adamw-4bit'
    : eightBit ? 'adamw-8bit'
    : 'adamw';
  return { state, inBackward, paged, step };
}
