import { dottedName, statementsOf, type SyntaxNode } from '../parsing/syntax';

/**
 * Maps local names to the fully qualified names they were imported as, so that `nn.Linear`,
 * `torch.nn.Linear` and a bare `Linear` all read as `torch.nn.Linear`.
 */
export class ImportTable {
  private readonly aliases = new Map<string, string>();
  /** Modules imported with `from M import *`, whose names arrive unqualified. */
  private readonly wildcards: string[] = [];

  static fromModule(root: SyntaxNode): ImportTable {
    const table = new ImportTable();
    for (const statement of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
      if (statement) table.add(statement);
    }
    return table;
  }

  /** Every qualified name an import binds (`model.GPT`, `torch.nn`, `.layers.Block`). */
  get qualifiedNames(): readonly string[] {
    return [...this.aliases.values()];
  }

  /** Modules imported with `from M import *`, in import order (relative ones keep their dots: `.resnet`). */
  get wildcardModules(): readonly string[] {
    return this.wildcards;
  }

  /** The qualified name for a dotted name as written, e.g. `nn.Linear` -> `torch.nn.Linear`. */
  qualify(written: string): string {
    const [head, ...rest] = written.split('.');
    const target = this.aliases.get(head ?? '');
    if (target !== undefined) return [target, ...rest].join('.');
    // Only torch.nn's star import is common enough in training scripts to matter.
    if (this.wildcards.includes('torch.nn')) return `torch.nn.${written}`;
    return written;
  }

  /**
   * The qualified name behind a bare name the script did not assign itself, or undefined when
   * no import binds it (`nn` -> `torch.nn`; with `from torch.nn import *`, `Linear` -> `torch.nn.Linear`).
   */
  resolve(name: string): string | undefined {
    const target = this.aliases.get(name);
    if (target !== undefined) return target;
    if (this.wildcards.includes('torch.nn') && /^[A-Z]/.test(name)) return `torch.nn.${name}`;
    if (this.wildcards.includes('torch.nn.functional')) return `torch.nn.functional.${name}`;
    return undefined;
  }

  private add(statement: SyntaxNode): void {
    if (statement.type === 'import_statement') {
      for (const item of statementsOf(statement)) this.addImported(item, '');
      return;
    }
    const moduleName = dottedName(statement.childForFieldName('module_name')) ?? statement.childForFieldName('module_name')?.text;
    if (!moduleName) return;
    if (statement.namedChildren.some((child) => child.type === 'wildcard_import')) {
      this.wildcards.push(moduleName);
    }
    // `from . import layers` names `.layers`, not `..layers`.
    const prefix = moduleName.endsWith('.') ? moduleName : `${moduleName}.`;
    for (const item of statement.childrenForFieldName('name')) {
      if (item) this.addImported(item, prefix);
    }
  }

  private addImported(item: SyntaxNode, prefix: string): void {
    if (item.type === 'dotted_name') {
      // `import torch.nn` binds `torch`, whose attributes already spell the full name;
      // `from torch import nn` binds `nn` to `torch.nn`.
      const bound = prefix ? item.text : (item.text.split('.')[0] ?? item.text);
      this.aliases.set(bound, `${prefix}${bound}`);
    } else if (item.type === 'aliased_import') {
      const name = item.childForFieldName('name')?.text;
      const alias = item.childForFieldName('alias')?.text;
      if (name && alias) this.aliases.set(alias, `${prefix}${name}`);
    }
  }
}
