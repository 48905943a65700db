// Model registries read by name (`MODELS[name]`, `_model_entrypoints.get(name)`): when the name is
// unknown or not registered, a note says which choice the analysis could not make.
import type { Evaluator } from './evaluator';
import { isPartial } from './partials';
import { kindOf, type ClassValue, type DictValue, type PyValue } from './pyValues';

/** How many registered names a note lists. */
const LISTED = 12;

/** A dict whose values are all classes, functions or partials of them: a registry of builders (`{"resnet": ResNet, ...}`). */
export function isRegistry(value: PyValue | undefined): value is DictValue {
  if (kindOf(value) !== 'dict') return false;
  const values = [...(value as DictValue).entries.values()];
  return values.length > 0 && values.every((entry) => kindOf(entry) === 'class' || kindOf(entry) === 'function' || isPartial(entry));
}

/**
 * `registry[key]` or `registry.get(key)` on a registry. A key that picks an entry makes every
 * class registered there an alternative to the one built (so a class left unbuilt is not taken for
 * a model of its own). A key that picks nothing is a note naming the registry, what is registered,
 * and why the key is not one of them (an option with no default, a config key the analysis cannot
 * read): without it the model would silently be missing. The note has no range: the lookup is
 * often in another of the project's files than the script.
 */
export function registryLookup(interp: Evaluator, registry: DictValue, key: PyValue, written: { registry: string; key: string }): void {
  if (typeof key === 'string' && registry.entries.has(key)) {
    for (const entry of registry.entries.values()) {
      const builder = isPartial(entry) ? entry.func : entry;
      if (kindOf(builder) === 'class') interp.registryAlternatives.add(builder as ClassValue);
    }
    return;
  }
  const names = [...registry.entries.keys()];
  const listed = `${names.slice(0, LISTED).join(', ')}${names.length > LISTED ? `, and ${names.length - LISTED} more` : ''}`;
  const keyText = `\`${written.key.split('\n')[0]!.slice(0, 60)}\``;
  const why =
    typeof key === 'string' || typeof key === 'number'
      ? `${JSON.stringify(key)} (${keyText}) is not one of them`
      : key === null
        ? `${keyText} is None (an option or config key without a default)`
        : `${keyText} is a name the analysis does not know`;
  interp.note(undefined, `The model registry \`${written.registry.split('\n')[0]!.slice(0, 60)}\` holds ${names.length} builder${names.length === 1 ? '' : 's'} (${listed}), and ${why}: nothing is built from it. Give that option or key a value with --set NAME=VALUE (or the gpuEstimator.assume setting).`);
}
