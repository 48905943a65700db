import type { CallEvent } from './interpreter/interpreter';

/**
 * Optimizers outside torch.optim that scripts build themselves, by the libraries that make them:
 * bitsandbytes' 8-bit, 32-bit and paged ones (`bnb.optim.AdamW8bit`, `PagedLion8bit`), torchao's
 * low-bit AdamW (`AdamW8bit`, `AdamW4bit`, `AdamWFp8`), transformers' Adafactor, lion-pytorch's Lion,
 * DeepSpeed's and apex's fused Adam, and GaLore-torch's. Their class names say how their state is
 * kept (optimizerState.ts reads them as it reads the Trainer's `optim` names).
 */
const LIBRARY_OPTIMIZERS: readonly RegExp[] = [
  /^bitsandbytes\.optim(\.\w+)*\.((Paged)?(Adam|AdamW|Lion|RMSprop|Adagrad|SGD|AdEMAMix|LAMB|LARS)(8bit|32bit)?)$/,
  /^torchao\.(optim|prototype\.low_bit_optim)(\.\w+)*\.(AdamW?(8bit|4bit|Fp8))$/,
  /^transformers(\.optimization)?\.(Adafactor)$/,
  /^lion_pytorch(\.\w+)*\.(Lion)$/,
  /^deepspeed\.ops\.(adam|lion)(\.\w+)*\.(FusedAdam|FusedLion)$/,
  /^apex\.optimizers(\.\w+)*\.(FusedAdam|FusedLAMB)$/,
  /^galore_torch(\.\w+)*\.(GaLoreAdamW|GaLoreAdamW8bit|GaLoreAdafactor)$/,
];

/** transformers' own AdamW (deprecated, removed in v5): what the Trainer calls `adamw_hf`, stepping one tensor at a time. */
const TRANSFORMERS_ADAMW = /^transformers(\.optimization)?\.AdamW$/;

/**
 * The class name of a library optimizer the call constructs (`Lion8bit`), with its qualified name
 * (`bitsandbytes.optim.Lion8bit`) for the words; transformers' AdamW by the Trainer's name for it.
 */
export function libraryOptimizerName(call: CallEvent): { readonly name: string; readonly qualified: string } | undefined {
  if (TRANSFORMERS_ADAMW.test(call.qualified)) return { name: 'adamw_hf', qualified: call.qualified };
  if (!LIBRARY_OPTIMIZERS.some((pattern) => pattern.test(call.qualified))) return undefined;
  return { name: call.qualified.slice(call.qualified.lastIndexOf('.') + 1), qualified: call.qualified };
}
