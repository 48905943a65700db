// The syntax of Hydra's defaults-list entries and command-line overrides (configSources.ts composes with them).
import { kindOf, type DictValue, type PyValue } from '../interpreter/pyValues';

/** A defaults-list selection: `[optional|override] group[/sub][@package]`. */
export const HYDRA_DEFAULT = /^(?:(optional)\s+|override\s+)?(\/?[A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)*)(?:@([A-Za-z0-9_.]+))?$/;

/** Hydra's command-line overrides (`model=large`, `+experiment=fast`, `trainer.max_epochs=5`, `~key`), as written. */
export function hydraOverrides(words: readonly string[]): { sign: string; key: string; text?: string }[] {
  const overrides: { sign: string; key: string; text?: string }[] = [];
  for (const word of words) {
    const match = /^(\+{0,2}|~)([A-Za-z_][\w]*(?:[./][A-Za-z_][\w]*)*)(?:@[\w.]+)?(?:=(.*))?$/.exec(word);
    if (match && (match[3] !== undefined || match[1] === '~')) overrides.push({ sign: match[1]!, key: match[2]!, ...(match[3] !== undefined ? { text: match[3] } : {}) });
  }
  return overrides;
}

/** The group a defaults-list entry selects (`optional model@net: small` -> model), or undefined. */
export function selectionGroup(item: PyValue): string | undefined {
  const entry = kindOf(item) === 'dict' ? [...(item as DictValue).entries][0] : undefined;
  return entry && HYDRA_DEFAULT.exec(entry[0].trim())?.[2]?.replace(/^\//, '');
}

/** A defaults-list entry with the option the command line selects for its group instead. */
export function withSelection(item: PyValue, selected: ReadonlyMap<string, string | null>): PyValue {
  const group = selectionGroup(item);
  if (group === undefined || !selected.has(group)) return item;
  const [written] = [...(item as DictValue).entries][0]!;
  return { kind: 'dict', entries: new Map([[written, selected.get(group)!]]) };
}
