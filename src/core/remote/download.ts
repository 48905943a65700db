import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';

export interface MergeResult {
  /** Files new in the destination (relative paths). */
  readonly added: string[];
  /** Files already there with the same bytes. */
  readonly unchanged: string[];
  /** Files already there with other bytes: the new copy got another name, [wanted, written]. */
  readonly kept: [string, string][];
}

/**
 * Moves every file under `source` into `destination` without replacing anything: a file that
 * exists with the same bytes is left alone, one that exists with other bytes stays and the new
 * copy is written beside it as `name.2.ext` (then .3, ...).
 */
export function mergeWithoutOverwriting(source: string, destination: string): MergeResult {
  const result: MergeResult = { added: [], unchanged: [], kept: [] };
  for (const relative of listFiles(source)) {
    const from = path.join(source, relative);
    const to = path.join(destination, relative);
    mkdirSync(path.dirname(to), { recursive: true });
    if (!existsSync(to)) {
      renameSync(from, to);
      result.added.push(relative);
    } else if (digest(from) === digest(to)) {
      result.unchanged.push(relative);
    } else {
      const free = freeName(to);
      renameSync(from, free);
      result.kept.push([relative, path.relative(destination, free)]);
    }
  }
  return result;
}

function listFiles(root: string, prefix = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(root, relative));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
}

function digest(file: string): string {
  return statSync(file).size + ':' + createHash('sha256').update(readFileSync(file)).digest('hex');
}

function freeName(file: string): string {
  const ext = path.extname(file);
  const base = file.slice(0, file.length - ext.length);
  for (let n = 2; ; n++) {
    const candidate = `${base}.${n}${ext}`;
    if (!existsSync(candidate)) return candidate;
  }
}
