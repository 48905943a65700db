/**
 * Objects of other libraries a model holds as attributes (`self.conv1 = GCNConv(16, 7)` from
 * torch_geometric, `self.lpips = lpips.LPIPS()`): classes the analysis does not read, so their
 * parameters and activations are in no row. Said once per model, by name, so that a model of
 * zero parameters or a low estimate is explained rather than silent.
 */
import type { AnalysisNote } from '../analysis/modelDescription';
import { isUnresolvedValue, type ModuleObject } from '../analysis/interpreter/pyValues';
import type { SourceRange } from '../parsing/syntax';

/** `torch_geometric.nn.GCNConv() is not followed`: the reason a library class's call leaves. */
const UNREAD_CLASS = /^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\.([A-Z]\w*)\(\) is not followed$/;
const MAX_NAMED = 4;

export function unreadModulesNote(name: string, root: ModuleObject, range: SourceRange): AnalysisNote | undefined {
  const found: { path: string; library: string; className: string }[] = [];
  const modules: [string, ModuleObject][] = [['', root], ...root.namedModules()];
  for (const [path, module] of modules) {
    for (const [attribute, value] of module.attrs) {
      const match = isUnresolvedValue(value) ? UNREAD_CLASS.exec(value.reason) : null;
      if (!match || match[1]!.split('.')[0] === 'torch') continue;
      found.push({ path: path ? `${path}.${attribute}` : attribute, library: match[1]!.split('.')[0]!, className: `${match[1]}.${match[2]}` });
    }
  }
  if (found.length === 0) return undefined;
  const named = found.slice(0, MAX_NAMED).map((item) => `${item.path} (${item.className})`).join(', ');
  const more = found.length > MAX_NAMED ? ` and ${found.length - MAX_NAMED} more` : '';
  const libraries = [...new Set(found.map((item) => item.library))].join(', ');
  return {
    severity: 'warning',
    message: `${name}: ${named}${more} ${found.length === 1 ? 'is an object' : 'are objects'} of ${libraries}, which the analysis does not read: if ${found.length === 1 ? 'it is a module, its' : 'they are modules, their'} parameters and activations are not counted (the estimate is low by them; \`--dry-run\` runs them).`,
    range,
  };
}
