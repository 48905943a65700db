/**
 * Parts of standard architectures in the layer table: a part called on its own
 * (`self.backbone.layer4(x)`, `nn.Sequential(*list(resnet.children())[:-1])(x)`,
 * `vgg16().features(x)`), its rows under the path the script's model gives it, each parameter
 * counted once however often the part runs, and the rest of an architecture the model holds
 * but never calls listed as uncalled (PyTorch counts its parameters all the same).
 */
import { catalogRows } from '../analysis/interpreter/catalogRows';
import type { ModuleObject } from '../analysis/interpreter/pyValues';
import type { CatalogTable } from '../catalog/catalog';
import { rowsPartTable } from '../catalog/rowsPart';
import { childPath, isFunctionalRow, isUnderPath, type LayerRow } from './layerTable';

/** The modules timm's `forward_head` runs after `forward_features`, by their first path segment. */
const HEAD_MODULES = new Set(['head', 'fc', 'classifier', 'global_pool', 'fc_norm', 'head_drop', 'pre_logits', 'head_dist']);

/**
 * timm's `forward_features`: the architecture's rows without its head (the trailing run of rows
 * under `head`, `fc`, `classifier`, `global_pool`, `fc_norm`... , the modules timm's `forward_head`
 * runs), returning the last feature map (or token sequence) the rest produced.
 */
export function featuresTable(table: CatalogTable): CatalogTable {
  const isHead = (row: LayerRow) => HEAD_MODULES.has(row.path.split('.')[0]!);
  let end = table.rows.length;
  while (end > 0 && (isHead(table.rows[end - 1]!) || table.rows[end - 1]!.type === 'Parameter')) end--;
  const body = table.rows.filter((_, i) => i < end || table.rows[i]!.type === 'Parameter');
  const last = [...body].reverse().find((row) => row.type !== 'Parameter' && row.outputShape !== null)?.outputShape;
  const { outputs: _outputs, output: _output, ...rest } = table;
  const kept = (i: number) => i < end || table.rows[i]!.type === 'Parameter';
  return { ...rest, rows: body, ...(table.rowInputs ? { rowInputs: table.rowInputs.filter((_, i) => kept(i)) } : {}), ...(last ? { output: last } : {}) };
}

/** The rows a catalog module gives for one sample: the whole architecture's, or the part's (paths relative to it); throws CatalogInputError or CatalogPartError. */
export function catalogCallTable(module: ModuleObject, sample: readonly number[], options: { readonly decoderTokens?: number } = {}): CatalogTable {
  const { architecture, path, featuresOnly } = module.catalog!;
  if (path === '') return featuresOnly ? featuresTable(architecture.table(sample, options)) : architecture.table(sample, options);
  return architecture.partTable ? architecture.partTable(path, sample) : rowsPartTable(architecture, path, sample);
}

/** The layers the script put in place of the architecture's under this module (`model.fc = ...`), with paths relative to it. */
export function replacementsOf(module: ModuleObject): [string, ModuleObject][] {
  const { root, path } = module.catalog!;
  if (path === '') return [...root.children];
  return [...root.children].filter(([replaced]) => replaced.startsWith(`${path}.`)).map(([replaced, child]) => [replaced.slice(path.length + 1), child]);
}

/** A catalog row's identity across calls: the architecture object and the row's path in it. */
export function catalogRowKey(module: ModuleObject, relativePath: string): string {
  const { root, path } = module.catalog!;
  return `${root.id}:${childPath(path, relativePath)}`;
}

/**
 * The path under which a part of a standard architecture the model holds shows its rows, where
 * that is the holder's path and the part's: a part the model reaches through the architecture
 * (`self.backbone.layer1`, not registered itself), or one registered again after the architecture
 * (`self.stem = nn.Sequential(*list(self.backbone.children())[:4])`), which PyTorch names by its
 * first path, `backbone.conv1`.
 */
export function catalogPartPath(module: ModuleObject, paths: ReadonlyMap<number, string>): string | undefined {
  const part = module.catalog;
  if (!part || part.path === '') return undefined;
  const rootPath = paths.get(part.root.id);
  if (rootPath === undefined) return undefined;
  if (paths.has(module.id) && registrationOrder(paths).get(module.id)! < registrationOrder(paths).get(part.root.id)!) return undefined;
  return childPath(rootPath, part.path);
}

const orders = new WeakMap<ReadonlyMap<number, string>, Map<number, number>>();

/** Each module's place in named_modules() order (the order the path map was filled in). */
function registrationOrder(paths: ReadonlyMap<number, string>): Map<number, number> {
  let order = orders.get(paths);
  if (!order) orders.set(paths, (order = new Map([...paths.keys()].map((id, i) => [id, i]))));
  return order;
}

/**
 * Rows for what the model holds of standard architectures but forward never ran: a held
 * architecture whose parts were called one by one (its head never), or a held part never called.
 * `emitted` holds catalogRowKey()s of the rows already in the table.
 */
export function uncalledCatalogRows(holders: readonly (readonly [string, ModuleObject])[], emitted: ReadonlySet<string>): LayerRow[] {
  const rows: LayerRow[] = [];
  const listed = new Set<string>();
  for (const [where, module] of holders) {
    const part = module.catalog;
    if (module.kind !== 'catalog' || !part) continue;
    const prefix = part.path ? `${part.path}.` : '';
    const replaced = [...part.root.children.keys()];
    for (const row of catalogRows(part.architecture) ?? []) {
      if (!row.path.startsWith(prefix) && part.path !== '') continue;
      const relative = row.path.slice(prefix.length);
      const key = catalogRowKey(module, relative);
      if (emitted.has(key) || listed.has(key) || isFunctionalRow(row)) continue;
      if (replaced.some((path) => isUnderPath(row, path))) continue;
      listed.add(key);
      rows.push({ ...row, path: childPath(where, relative), outputShape: null, activations: 0 });
    }
  }
  return rows;
}
