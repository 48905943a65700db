// OmegaConf's `${...}` interpolations in a configuration read from files (Hydra's composition, OmegaConf.load and merge).
import { isList, kindOf, type DictValue, type PyValue } from '../interpreter/pyValues';

/** Bounds on resolving: passes (chains), nesting, and values looked at in all. */
const MAX_INTERPOLATION_PASSES = 4;
const MAX_INTERPOLATION_DEPTH = 16;
const MAX_INTERPOLATED_VALUES = 20_000;

/**
 * OmegaConf's interpolations, resolved in place as reading them would resolve them:
 * `num_classes: ${data.num_classes}` takes that key's value, `${paths.root}/data` the text with
 * each part put in. Resolvers (`${oc.env:HOME}`), relative paths (`${.x}`) and keys that are
 * missing or in a circle are left as written.
 */
export function resolveInterpolations(root: PyValue): void {
  if (kindOf(root) !== 'dict') return;
  const lookup = (path: string): PyValue | undefined => {
    let value: PyValue | undefined = root;
    for (const key of path.split('.')) value = kindOf(value) === 'dict' ? (value as DictValue).entries.get(key) : isList(value) && /^[0-9]+$/.test(key) ? value[Number(key)] : undefined;
    return value;
  };
  const resolve = (text: string): PyValue => {
    const whole = /^\$\{([A-Za-z_][\w]*(?:\.[\w]+)*)\}$/.exec(text);
    if (whole) {
      const value = lookup(whole[1]!);
      return value === undefined || (typeof value === 'string' && value.includes('${')) ? text : value;
    }
    return text.replace(/\$\{([A-Za-z_][\w]*(?:\.[\w]+)*)\}/g, (written, path: string) => {
      const value = lookup(path);
      return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' ? String(value) : written;
    });
  };
  // A few passes settle chains (`a: ${b}`, `b: ${c}`); a circle stays as written.
  let visited = 0;
  for (let pass = 0; pass < MAX_INTERPOLATION_PASSES; pass++) {
    let changed = false;
    const walk = (value: PyValue, depth: number): void => {
      if (depth > MAX_INTERPOLATION_DEPTH || ++visited > MAX_INTERPOLATED_VALUES) return;
      const entries: [string | number, PyValue][] = kindOf(value) === 'dict' ? [...(value as DictValue).entries] : isList(value) ? value.map((item, i) => [i, item]) : [];
      for (const [key, item] of entries) {
        if (typeof item === 'string' && item.includes('${')) {
          const resolved = resolve(item);
          if (resolved === item) continue;
          changed = true;
          if (typeof key === 'number') (value as PyValue[])[key] = resolved;
          else (value as DictValue).entries.set(key, resolved);
        } else if (typeof item === 'object' && item !== null) walk(item, depth + 1);
      }
    };
    walk(root, 0);
    if (!changed) break;
  }
}

