import type { CallEvent } from './interpreter/interpreter';
import type { PyValue } from './interpreter/pyValues';
import type { Found, GaloreSetup } from './modelDescription';
import { argumentNode, HF_ARGUMENTS, simpleName } from './callArguments';

/** transformers' GaLore optimizers: `galore_adamw`, `galore_adamw_8bit`, `galore_adafactor`, each also `_layerwise`. */
const GALORE_OPTIM = /^galore_(adamw|adamw_8bit|adafactor)(_layerwise)?$/;

/**
 * `TrainingArguments(optim="galore_adamw", optim_target_modules=["attn", "mlp"], optim_args="rank=64, ...")`:
 * the rank its `optim_args` give and the modules it projects, each left undefined where the script
 * does not say (or says it in a way the interpreter cannot follow).
 */
export function galoreSetup(events: readonly CallEvent[]): Found<GaloreSetup> | undefined {
  for (const call of events) {
    if (!HF_ARGUMENTS.test(call.qualified)) continue;
    const optim = call.kwargs.get('optim');
    if (typeof optim !== 'string') continue;
    const match = GALORE_OPTIM.exec(optim);
    if (!match) continue;
    const rank = rankOf(call.kwargs.get('optim_args'));
    const targets = targetsOf(call.kwargs.get('optim_target_modules'));
    const said = [`optim="${optim}"`, ...(targets === undefined ? [] : [`optim_target_modules=${typeof targets === 'string' ? JSON.stringify(targets) : `[${targets.map((t) => JSON.stringify(t)).join(', ')}]`}`]), ...(rank === undefined ? [] : [`rank=${rank}`])];
    return {
      value: { ...(rank === undefined ? {} : { rank }), ...(targets === undefined ? {} : { targets }), layerwise: match[2] !== undefined },
      node: argumentNode(call, 'optim'),
      origin: `${simpleName(call.qualified)}(${said.join(', ')})`,
    };
  }
  return undefined;
}

/** `optim_args="rank=64, update_proj_gap=100, scale=0.10"`: the rank, a whole number above zero. */
function rankOf(value: PyValue | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const rank = Number(/(?:^|,)\s*rank\s*=\s*(\d+)\s*(?:,|$)/.exec(value)?.[1]);
  return Number.isInteger(rank) && rank > 0 ? rank : undefined;
}

/** A list of module keys, or one string (a regular expression, or "all-linear"). */
function targetsOf(value: PyValue | undefined): string | readonly string[] | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) && value.length > 0 && value.every((t) => typeof t === 'string') ? value : undefined;
}
