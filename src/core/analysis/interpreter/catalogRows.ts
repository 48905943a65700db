// A catalog architecture's table at its usual input, for what scripts do with its parts (list them, slice them, freeze them) and read of it (its width).
import type { CatalogArchitecture, CatalogTable } from '../../catalog/catalog';
import type { LayerRow } from '../../layerTable/layerTable';

const cache = new WeakMap<object, CatalogTable | null>();

/** Cached per architecture; null where it cannot be sized at its usual input. */
export function catalogTableAtDefault(architecture: CatalogArchitecture): CatalogTable | null {
  if (cache.has(architecture)) return cache.get(architecture)!;
  let table: CatalogTable | null = null;
  try {
    table = architecture.table(architecture.input.defaultShape);
  } catch {
    // Not sizable at its usual input: its parts are not listed.
  }
  cache.set(architecture, table);
  return table;
}

/** The rows of catalogTableAtDefault; null where it cannot be sized at its usual input. */
export function catalogRows(architecture: CatalogArchitecture): readonly LayerRow[] | null {
  return catalogTableAtDefault(architecture)?.rows ?? null;
}
