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

export interface RemoteListing {
  /** Regular files to fetch, relative to the run directory, `/`-separated, sorted. */
  readonly files: string[];
  /** Entries left on the host, each with the reason ("out/data: a symbolic link"). */
  readonly skipped: string[];
}

/** One path segment as the harness writes them; anything else from the host is not fetched. */
const SAFE_SEGMENT = /^[A-Za-z0-9_+=@,-][A-Za-z0-9._+=@,-]*$/;

/**
 * Reads LIST_RESULTS' output. The host is not trusted: a path is fetched only when it is relative,
 * starts with one of the `wanted` names, and is made of plain segments (no `..`, no leading dot,
 * no spaces, quotes, glob or control characters), so it can neither leave the local destination
 * nor be read by scp as more than one file.
 */
export function parseListing(stdout: string, wanted: readonly string[]): RemoteListing {
  const files = new Set<string>();
  const skipped: string[] = [];
  for (const entry of stdout.split('\0')) {
    if (!entry) continue;
    const kind = entry[0];
    const name = entry.slice(1);
    const segments = name.split('/');
    const shown = JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);
    if (!wanted.includes(segments[0]!) || !segments.every((segment) => SAFE_SEGMENT.test(segment)) || name.length > 1024) skipped.push(`${shown}: not a plain relative path in the run folder`);
    else if (kind === 'f') files.add(name);
    else if (kind === 'l') skipped.push(`${name}: a symbolic link`);
    else skipped.push(`${name}: not a regular file`);
  }
  return { files: [...files].sort(), skipped: skipped.sort() };
}

/**
 * Groups files by folder (scp puts every source into one destination folder) into batches whose
 * remote paths stay under `maxChars` together: Windows limits a command line to 32,767 characters,
 * and a collect run holds one script per configuration.
 */
export function fetchBatches(files: readonly string[], remotePrefixChars: number, maxChars = 24_000): { folder: string; files: string[] }[] {
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    const folder = path.posix.dirname(file);
    const listed = byFolder.get(folder);
    if (listed) listed.push(file);
    else byFolder.set(folder, [file]);
  }
  const batches: { folder: string; files: string[] }[] = [];
  for (const [folder, inFolder] of byFolder) {
    let chars = Infinity;
    for (const file of inFolder) {
      const cost = remotePrefixChars + file.length + 1;
      if (chars + cost > maxChars) {
        batches.push({ folder, files: [] });
        chars = 0;
      }
      batches[batches.length - 1]!.files.push(file);
      chars += cost;
    }
  }
  return batches;
}
