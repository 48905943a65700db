/**
 * The files of the project a script belongs to, as the analysis reads them. The core never touches
 * a file system: the CLI reads the disk (node:fs), the extension open documents first and then the
 * disk, the tests an in-memory map. Paths are absolute and '/'-separated (a Windows path keeps its
 * drive: `C:/work/train.py`), so the core joins them with string operations alone.
 */
export interface ProjectFiles {
  /** The text of a file, or undefined when there is no such file (or it cannot be read). */
  read(path: string): string | undefined;
  /** Whether a file or folder exists: `.git` is either, and a namespace package is a folder. */
  exists(path: string): boolean;
}

/** What a script's project is: where its files are and where its imports start. */
export interface ProjectSource {
  readonly files: ProjectFiles;
  /** The analysed file's own path. */
  readonly path: string;
  /** The project's root folder: given (`--root`) or found from the file upward (findProjectRoot). */
  readonly root: string;
}

/** Files or folders that mark a project's root, as Python tooling and git see it. */
export const ROOT_MARKERS = ['.git', 'pyproject.toml', 'setup.py', 'setup.cfg'] as const;

/** `\` to `/`, repeated and trailing separators removed, `.` and `..` segments folded. */
export function normalizePath(path: string): string {
  const slashed = path.replace(/\\/g, '/');
  const rooted = slashed.startsWith('/');
  // `C:/work`: a drive is a root too, and `..` never climbs above it.
  const absolute = rooted || /^[A-Za-z]:(\/|$)/.test(slashed);
  const parts: string[] = [];
  for (const part of slashed.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..' && !/^[A-Za-z]:$/.test(parts[parts.length - 1]!)) parts.pop();
    else if (part !== '..' || !absolute) parts.push(part);
  }
  const joined = parts.join('/');
  return rooted ? `/${joined}` : joined || '.';
}

export function joinPath(...parts: string[]): string {
  return normalizePath(parts.filter((part) => part !== '').join('/'));
}

export function dirnameOf(path: string): string {
  const normalized = normalizePath(path);
  const slash = normalized.lastIndexOf('/');
  if (slash < 0) return '.';
  return slash === 0 ? '/' : normalized.slice(0, slash);
}

/** Whether `path` is `folder` or inside it. */
export function isInside(path: string, folder: string): boolean {
  const p = normalizePath(path);
  const f = normalizePath(folder);
  return p === f || p.startsWith(f.endsWith('/') ? f : `${f}/`);
}

/** `path` relative to `folder` when inside it, else `path` itself. */
export function relativeTo(path: string, folder: string): string {
  const p = normalizePath(path);
  const f = normalizePath(folder);
  return isInside(p, f) && p !== f ? p.slice(f.endsWith('/') ? f.length : f.length + 1) : p;
}

/**
 * The project root of a file: the nearest folder upward holding a root marker (ROOT_MARKERS),
 * else the file's own folder. A script outside any project still resolves its neighbours.
 */
export function findProjectRoot(file: string, files: ProjectFiles): string {
  const own = dirnameOf(file);
  for (let dir = own; ; ) {
    if (ROOT_MARKERS.some((marker) => files.exists(joinPath(dir, marker)))) return dir;
    const up = dirnameOf(dir);
    if (up === dir || up === '.') return own;
    dir = up;
  }
}

/** A project held in memory (tests, the bench): path to text; folders exist where a file is below them. */
export class MemoryProjectFiles implements ProjectFiles {
  private readonly texts = new Map<string, string>();
  private readonly folders = new Set<string>();

  constructor(entries: Iterable<[string, string]> = []) {
    for (const [path, text] of entries) this.set(path, text);
  }

  set(path: string, text: string): void {
    const normalized = normalizePath(path);
    this.texts.set(normalized, text);
    for (let dir = dirnameOf(normalized); !this.folders.has(dir); dir = dirnameOf(dir)) {
      this.folders.add(dir);
      if (dirnameOf(dir) === dir) break;
    }
  }

  read(path: string): string | undefined {
    return this.texts.get(normalizePath(path));
  }

  exists(path: string): boolean {
    const normalized = normalizePath(path);
    return this.texts.has(normalized) || this.folders.has(normalized);
  }
}
