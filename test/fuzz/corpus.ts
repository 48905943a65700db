import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';

export interface CorpusFile {
  readonly name: string;
  readonly text: string;
}

/** Folders of real training scripts the fuzzer mutates, relative to the repository root. */
export const CORPUS_DIRS = ['test/fixtures/scripts', 'test/fixtures/corpus', 'examples'] as const;

function pythonFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.sort().flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return pythonFiles(full);
    return entry.endsWith('.py') ? [full] : [];
  });
}

/** Every `.py` file of the corpus folders that exist, in a stable order (the same files give the same run). */
export function loadCorpus(root: string): CorpusFile[] {
  return CORPUS_DIRS.flatMap((dir) =>
    pythonFiles(path.join(root, dir)).map((file) => ({ name: path.relative(root, file), text: readFileSync(file, 'utf8') })),
  );
}
