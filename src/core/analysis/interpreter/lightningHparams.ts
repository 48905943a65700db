// Lightning's `self.save_hyperparameters()`: the arguments of the __init__ it is called in become `self.hparams`.
import type { SyntaxNode } from '../../parsing/syntax';
import { asModule, kindOf, type InstanceValue, type PyValue, type Scope } from './pyValues';

/**
 * `self.save_hyperparameters()` inside `__init__(self, lr=2e-4, batch_size=256)`: sets
 * `self.hparams` to those arguments as the call received them (`self.hparams.batch_size` is then
 * 256, or what the script passed), as Lightning does for a LightningModule and a
 * LightningDataModule. With names (`save_hyperparameters("lr")`), only those. Returns false when
 * `node` is not such a call on `self` of an enclosing method.
 */
export function saveHyperparameters(node: SyntaxNode, args: readonly PyValue[], scope: Scope): boolean {
  const fn = node.childForFieldName('function');
  if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'save_hyperparameters' || fn.childForFieldName('object')?.text !== 'self') return false;
  let method = node.parent;
  while (method && method.type !== 'function_definition') method = method.parent;
  if (!method) return false;
  const self = scope.get('self');
  const module = asModule(self);
  const target = module?.attrs ?? (kindOf(self) === 'instance' ? (self as InstanceValue).attrs : undefined);
  if (!target) return false;
  const only = args.filter((arg): arg is string => typeof arg === 'string');
  const hparams = new Map<string, PyValue>();
  for (const parameter of method.childForFieldName('parameters')?.namedChildren ?? []) {
    const name = parameter.type === 'identifier' ? parameter.text : parameter.type === 'typed_parameter' ? parameter.namedChildren[0]?.text : parameter.childForFieldName('name')?.text;
    if (!name || name === 'self' || (only.length > 0 && !only.includes(name))) continue;
    const value = scope.get(name);
    if (value !== undefined) hparams.set(name, value);
  }
  target.set('hparams', { kind: 'instance', className: 'AttributeDict', attrs: hparams });
  return true;
}
