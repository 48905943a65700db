/**
 * The values a user assumes by name, as the CLI's `--set name=value` and the `gpuEstimator.assume`
 * setting give them: checked and typed here, once, for both. A name is what the script reads a
 * value under (an argparse option's dest, an environment variable, a config key or its dotted
 * path, a top-level constant, a dataclass field); a value is a number, `true`/`false`, or text.
 */
/** A value the user assumes for a name: a number, a string or a boolean. */
export type AssumedValue = number | string | boolean;

/** A Python-ish name, dotted for a config key's path (`model.n_layer`), `-` allowed as in option names. */
const NAME = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;
const NUMBER = /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/;
/** More names than anyone sets by hand. */
export const MAX_ASSUMED = 200;

/** `1000` and `3e-4` are numbers, `true`/`false` booleans, anything else the text itself. */
export function assumedValueOf(text: string): AssumedValue {
  const t = text.trim();
  if (NUMBER.test(t.replace(/_/g, '')) && /[0-9]/.test(t)) {
    const value = Number(t.replace(/_/g, ''));
    if (Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return value;
  }
  if (/^(true|True)$/.test(t)) return true;
  if (/^(false|False)$/.test(t)) return false;
  return text;
}

/** `name=value` as `--set` takes it; an error message (one line) for anything else. */
export function parseAssignment(text: string): { name: string; value: AssumedValue } | string {
  const equals = text.indexOf('=');
  const name = equals < 0 ? text.trim() : text.slice(0, equals).trim();
  if (equals < 0 || !NAME.test(name)) return `--set needs NAME=VALUE (batch_size=64, model.n_layer=12, BATCH_SIZE=1000), got "${text}"`;
  const value = text.slice(equals + 1);
  if (value.trim() === '') return `--set ${name}= needs a value`;
  return { name, value: assumedValueOf(value) };
}

/**
 * The `gpuEstimator.assume` setting: an object of names to numbers, booleans or strings. Entries
 * that are not are left out and named in `problems` (the settings UI lets anything through).
 */
export function assumedValuesFrom(setting: unknown): { values: Record<string, AssumedValue>; problems: string[] } {
  const values: Record<string, AssumedValue> = {};
  const problems: string[] = [];
  if (setting === undefined || setting === null) return { values, problems };
  if (typeof setting !== 'object' || Array.isArray(setting)) return { values, problems: ['gpuEstimator.assume must be an object of names to values ({"vocab_size": 50257})'] };
  for (const [name, value] of Object.entries(setting as Record<string, unknown>)) {
    if (Object.keys(values).length >= MAX_ASSUMED) {
      problems.push(`gpuEstimator.assume: more than ${MAX_ASSUMED} names; the rest are ignored`);
      break;
    }
    if (!NAME.test(name)) problems.push(`gpuEstimator.assume: "${name}" is not a name a script reads a value under`);
    else if (typeof value === 'number' && Number.isFinite(value)) values[name] = value;
    else if (typeof value === 'boolean') values[name] = value;
    else if (typeof value === 'string') values[name] = assumedValueOf(value);
    else problems.push(`gpuEstimator.assume: the value of "${name}" must be a number, true/false or text`);
  }
  return { values, problems };
}
