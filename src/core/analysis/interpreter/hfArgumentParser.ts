import type { SyntaxNode } from '../../parsing/syntax';
import { assumedValueOf } from '../config/assumedValues';
import { collectFields } from './classes';
import type { Evaluator } from './evaluator';
import { isList, kindOf, tuple, type ClassValue, type DictValue, type InstanceValue, type PyValue } from './pyValues';

/**
 * transformers' `HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))`, the
 * set-up of the Hugging Face example scripts (run_clm.py and the many scripts written from them):
 * `parse_args_into_dataclasses()` fills each dataclass from the command line the script is run with
 * (the CLI's words after `--`) over its defaults; `parse_json_file`/`parse_yaml_file` from a file of the
 * project; `parse_dict` from a dict. A library dataclass (`TrainingArguments`, TRL's `SFTConfig`) is
 * called with the options no dataclass of the script declares, so that its settings are read as if the
 * script had written `TrainingArguments(per_device_train_batch_size=4, bf16=True, ...)`.
 */
export const HF_ARGUMENT_PARSER = /^transformers(\.\w+)*\.HfArgumentParser$/;
const CLASS_NAME = 'HfArgumentParser';
const TYPES = '__dataclass_types__';
const PARSE_METHODS = new Set(['parse_args_into_dataclasses', 'parse_dict', 'parse_json_file', 'parse_yaml_file']);

type CallValue = (callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode) => PyValue;

export function newHfArgumentParser(args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): InstanceValue {
  const given = kwargs.get('dataclass_types') ?? args[0] ?? null;
  const types = isList(given) ? [...given] : given === null ? [] : [given];
  return { kind: 'instance', className: CLASS_NAME, attrs: new Map([[TYPES, types]]) };
}

export function isHfArgumentParser(value: PyValue): boolean {
  return kindOf(value) === 'instance' && (value as InstanceValue).className === CLASS_NAME && (value as InstanceValue).attrs.has(TYPES);
}

/** `--name value`, `--name=value` and a bare `--flag` (True), as HfArgumentParser reads them; values converted as their text reads. */
export function commandLineOptions(words: readonly PyValue[]): Map<string, PyValue> {
  const options = new Map<string, PyValue>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (typeof word !== 'string' || !word.startsWith('--')) continue;
    const equals = word.indexOf('=');
    const name = (equals >= 0 ? word.slice(2, equals) : word.slice(2)).replace(/-/g, '_');
    if (!name) continue;
    const next = words[i + 1];
    if (equals >= 0) options.set(name, converted(word.slice(equals + 1)));
    else if (typeof next === 'string' && !next.startsWith('--')) {
      options.set(name, converted(next));
      i++;
    } else options.set(name, true);
  }
  return options;
}

/** A word as HfArgumentParser's types would read it: a number, a boolean (`true`, `False`, `yes`), None, else the text. */
function converted(text: string): PyValue {
  if (text === 'None') return null;
  if (/^(yes|no)$/i.test(text)) return /^yes$/i.test(text);
  const value = assumedValueOf(text);
  return typeof value === 'string' && /^(TRUE|FALSE)$/.test(text) ? text === 'TRUE' : value;
}

/** A parse method's dataclasses (a tuple, as the script unpacks it), or undefined for another method. */
export function hfArgumentParserMethod(interp: Evaluator, parser: InstanceValue, method: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, callValue: CallValue): PyValue | undefined {
  if (!PARSE_METHODS.has(method)) return undefined;
  let options: Map<string, PyValue>;
  if (method === 'parse_args_into_dataclasses') {
    const given = kwargs.get('args') ?? args[0];
    options = commandLineOptions(isList(given) ? given : (interp.config?.scriptArguments ?? []));
    for (const [name, value] of [...options]) {
      // The user's --set value still wins over the command line's (as for argparse).
      if (interp.config?.assumed(name) !== undefined) options.delete(name);
      else interp.config?.commandLineValue(name, value, node);
    }
  } else {
    const source = method === 'parse_dict' ? (kwargs.get('args') ?? args[0]) : interp.config?.load(kwargs.get('json_file') ?? kwargs.get('yaml_file') ?? args[0] ?? null, 'by-name', node);
    options = kindOf(source) === 'dict' ? new Map<string, PyValue>((source as DictValue).entries) : new Map<string, PyValue>();
  }
  const types = (parser.attrs.get(TYPES) as PyValue[] | undefined) ?? [];
  // Each option goes to the script's dataclass that declares the field; the rest to the library's.
  const claimed = new Set<string>();
  const fieldsOf = new Map<PyValue, readonly string[]>();
  for (const type of types) {
    if (kindOf(type) !== 'class') continue;
    const fields = collectFields(type as ClassValue);
    fieldsOf.set(type, fields);
    for (const field of fields) if (options.has(field)) claimed.add(field);
  }
  const instances = types.map((type) => {
    const fields = fieldsOf.get(type);
    const own = new Map([...options].filter(([name]) => (fields ? fields.includes(name) : !claimed.has(name))));
    return callValue(type, [], own, node);
  });
  const remaining = method === 'parse_args_into_dataclasses' && kwargs.get('return_remaining_strings') === true;
  return tuple(remaining ? [...instances, []] : instances);
}
