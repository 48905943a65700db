// timm's own training API, as timm's train.py and the scripts built on it write a run: the loader
// (`create_loader(dataset, input_size=..., batch_size=...)`), the transform (`create_transform(...)`)
// and the optimizer by name (`create_optimizer_v2(model, opt="adamw")`).
import type { CallEvent } from './interpreter/interpreter';
import { isList, kindOf, type InstanceValue, type PyValue } from './interpreter/pyValues';
import type { OptimizerKind } from './modelDescription';
import { positiveInteger } from './callArguments';

export const TIMM_LOADER = /^timm\.data(\.loader)?\.create_loader$/;
const TIMM_TRANSFORM = /^timm\.data(\.transforms_factory)?\.create_transform$/;
const TIMM_OPTIMIZER = /^timm\.optim(\.optim_factory|\._optim_factory)?\.create_optimizer(_v2)?$/;

/** `create_loader(dataset, input_size, batch_size, ...)`'s batch size. */
export function timmLoaderBatch(call: CallEvent): number | undefined {
  return TIMM_LOADER.test(call.qualified) ? positiveInteger(call.kwargs.get('batch_size') ?? call.args[2]) : undefined;
}

/** The side of the square images `create_transform` or `create_loader` makes (their `input_size`: `(3, 224, 224)` or 224). */
export function timmImageSide(call: CallEvent): number | undefined {
  const loader = TIMM_LOADER.test(call.qualified);
  if (!loader && !TIMM_TRANSFORM.test(call.qualified)) return undefined;
  const size = call.kwargs.get('input_size') ?? call.args[loader ? 1 : 0];
  if (positiveInteger(size)) return positiveInteger(size);
  return isList(size) && size.length === 3 && positiveInteger(size[1]) === positiveInteger(size[2]) ? positiveInteger(size[1]) : undefined;
}

/** timm's optimizer names (`opt`, lower case, without a `lookahead_` prefix) by what they hold: SGD's default momentum is 0.9. */
const TIMM_OPTIMIZERS: Readonly<Record<string, OptimizerKind>> = {
  sgd: 'sgd-momentum',
  nesterov: 'sgd-momentum',
  momentum: 'sgd-momentum',
  adam: 'adam',
  adamw: 'adamw',
  rmsprop: 'rmsprop',
  rmsproptf: 'rmsprop',
  adagrad: 'adagrad',
};

/**
 * The optimizer `create_optimizer_v2(model, opt="adamw")` or `create_optimizer(args, model)` (with
 * `args.opt`) makes, with its name for the origin; undefined for another call or a name that is not
 * a constant. Optimizers outside the table hold two states a parameter, as Adam's (the others' default).
 */
export function timmOptimizer(call: CallEvent): { kind: OptimizerKind; name: string } | undefined {
  if (!TIMM_OPTIMIZER.test(call.qualified)) return undefined;
  const v2 = call.qualified.endsWith('_v2');
  // create_optimizer reads its settings from the namespace `args` (train.py's command line).
  const args = v2 ? undefined : call.args[0] ?? call.kwargs.get('args');
  const settings: ReadonlyMap<string, PyValue> = v2 ? call.kwargs : kindOf(args) === 'instance' ? (args as InstanceValue).attrs : new Map();
  const opt = settings.get('opt') ?? (v2 ? (call.args[1] ?? 'sgd') : undefined);
  if (typeof opt !== 'string') return undefined;
  const name = opt.toLowerCase().replace(/^lookahead_/, '');
  const momentum = settings.get('momentum');
  const kind = TIMM_OPTIMIZERS[name] ?? 'other';
  return { kind: kind === 'sgd-momentum' && momentum === 0 ? 'sgd' : kind, name: opt };
}
