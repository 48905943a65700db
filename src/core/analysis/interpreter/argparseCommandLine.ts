/**
 * argparse reading the command line the script is run with (the CLI's words after `--`): the
 * options `add_argument` declared, then `parse_args()` sets each one the words give
 * (`--config-file configs/x.yaml`, `--batch-size=64`, `--amp`, a positional `imagenet`), converted
 * by its `type` (int, float, str, bool), `action` (store_true/false/const, count, append) and
 * `nargs`, over its default. Words the parser does not declare are skipped, as
 * parse_known_args() would; with no words, the defaults stand.
 */
import { assumedValueOf } from '../config/assumedValues';
import { kindOf, type ExternalValue, type InstanceValue, type PyValue } from './pyValues';

interface ArgumentSpec {
  /** `--batch-size`, `-b`; none for a positional argument. */
  readonly flags: readonly string[];
  readonly dest: string;
  readonly action?: string;
  readonly type?: PyValue;
  readonly nargs?: PyValue;
  readonly constant?: PyValue;
}

/** The arguments each parser declared, in order (a parser and its argument groups share one list). */
const declared = new WeakMap<InstanceValue, ArgumentSpec[]>();
/** More arguments than a parser declares by hand. */
const MAX_ARGUMENTS = 500;

/** `parser.add_argument(...)`: what parse_args() needs to read the option from the command line. */
export function declareArgument(parser: InstanceValue, flags: readonly string[], dest: string, kwargs: ReadonlyMap<string, PyValue>): void {
  const list = declared.get(parser) ?? [];
  if (list.length >= MAX_ARGUMENTS) return;
  const action = kwargs.get('action');
  list.push({ flags: flags.filter((flag) => flag.startsWith('-')), dest, ...(typeof action === 'string' ? { action } : {}), type: kwargs.get('type'), nargs: kwargs.get('nargs'), constant: kwargs.get('const') });
  declared.set(parser, list);
}

/** The values the words give the parser's arguments, by dest (only those the words set). */
export function parseCommandLine(parser: InstanceValue, words: readonly string[], current: ReadonlyMap<string, PyValue>): Map<string, PyValue> {
  const specs = declared.get(parser) ?? [];
  const found = new Map<string, PyValue>();
  const positionals = specs.filter((spec) => spec.flags.length === 0);
  let position = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') continue;
    if (!word.startsWith('-') || /^-[0-9.]/.test(word)) {
      const spec = positionals[position++];
      if (!spec) continue;
      // `opts` with nargs=argparse.REMAINDER (yacs's KEY VALUE pairs): every word from here on.
      if (isRemainder(spec)) {
        found.set(spec.dest, words.slice(i).map((text) => text));
        break;
      }
      const many = spec.nargs === '+' || spec.nargs === '*';
      const taken = many ? takeValues(words, i, Infinity) : [word];
      if (many) i += taken.length - 1;
      found.set(spec.dest, many ? taken.map((text) => converted(spec, text)) : converted(spec, word));
      continue;
    }
    const equals = word.indexOf('=');
    const flag = equals >= 0 ? word.slice(0, equals) : word;
    const spec = specs.find((s) => s.flags.includes(flag));
    if (!spec) continue;
    const inline = equals >= 0 ? word.slice(equals + 1) : undefined;
    switch (spec.action) {
      case 'store_true':
      case 'store_false':
        found.set(spec.dest, spec.action === 'store_true');
        continue;
      case 'store_const':
        found.set(spec.dest, spec.constant ?? null);
        continue;
      case 'count': {
        const before = found.get(spec.dest) ?? current.get(spec.dest);
        found.set(spec.dest, (typeof before === 'number' ? before : 0) + 1);
        continue;
      }
      default:
        break;
    }
    const count = typeof spec.nargs === 'number' ? spec.nargs : spec.nargs === '+' || spec.nargs === '*' ? Infinity : spec.nargs === '?' ? 1 : 1;
    const values = inline !== undefined ? [inline] : takeValues(words, i + 1, count);
    if (inline === undefined) i += values.length;
    if (values.length === 0) {
      if (spec.nargs === '?') found.set(spec.dest, spec.constant ?? null);
      continue;
    }
    const value = spec.nargs === undefined || spec.nargs === '?' ? converted(spec, values[0]!) : values.map((text) => converted(spec, text));
    if (spec.action === 'append') {
      const before = found.get(spec.dest);
      found.set(spec.dest, [...(Array.isArray(before) ? before : []), value]);
    } else found.set(spec.dest, value);
  }
  return found;
}

function isRemainder(spec: ArgumentSpec): boolean {
  return spec.nargs === '...' || (kindOf(spec.nargs) === 'external' && (spec.nargs as ExternalValue).name === 'argparse.REMAINDER');
}

/** Up to `count` words from `start` that are values, not options. */
function takeValues(words: readonly string[], start: number, count: number): string[] {
  const values: string[] = [];
  for (let i = start; i < words.length && values.length < count; i++) {
    const word = words[i]!;
    if (word.startsWith('-') && !/^-[0-9.]/.test(word)) break;
    values.push(word);
  }
  return values;
}

/** A word as the argument's `type` makes it (int, float, str, bool); without one, or with the script's own function (`str2bool`), numbers and booleans read as such. */
function converted(spec: ArgumentSpec, text: string): PyValue {
  const type = kindOf(spec.type) === 'external' ? (spec.type as ExternalValue).name : undefined;
  if (type === 'builtins.str') return text;
  if (type === 'builtins.int') return /^[-+]?[0-9]+$/.test(text.trim()) ? Number(text) : text;
  if (type === 'builtins.float') return Number.isFinite(Number(text)) && text.trim() !== '' ? Number(text) : text;
  if (type === 'builtins.bool') return text !== '';
  return assumedValueOf(text);
}
