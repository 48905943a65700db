// A catalog architecture's rows at its usual input, for what scripts do with its parts (list them, slice them, freeze them).
import type { CatalogArchitecture } from '../../catalog/catalog';
import type { LayerRow } from '../../layerTable/layerTable';

const cache = new WeakMap<object, readonly LayerRow[] | null>();

/** Cached per architecture; null where it cannot be sized at its usual input. */
export function catalogRows(architecture: CatalogArchitecture): readonly LayerRow[] | null {
  if (cache.has(architecture)) return cache.get(architecture)!;
  let rows: readonly LayerRow[] | null = null;
  try {
    rows = architecture.table(architecture.input.defaultShape).rows;
  } catch {
    // Not sizable at its usual input: its parts are not listed.
  }
  cache.set(architecture, rows);
  return rows;
}
