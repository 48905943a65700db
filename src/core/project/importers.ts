import { normalizePath } from './projectFiles';

/**
 * Which open scripts read which project files (each estimate lists the files its analysis read,
 * `FileEstimate.project.files`), so that a change to one file names the scripts whose estimates
 * are stale. Keys are the editor's document keys; paths are compared normalized.
 */
export class Importers {
  private readonly readBy = new Map<string, ReadonlySet<string>>();

  /** What the last estimate of `document` read; undefined when it was estimated without a project. */
  track(document: string, files: readonly string[] | undefined): void {
    if (files) this.readBy.set(document, new Set(files.map(normalizePath)));
    else this.readBy.delete(document);
  }

  forget(document: string): void {
    this.readBy.delete(document);
  }

  /** The documents that read `path` (other than the document that is that file). */
  of(path: string, self?: string): string[] {
    const normalized = normalizePath(path);
    return [...this.readBy].filter(([document, files]) => document !== self && files.has(normalized)).map(([document]) => document);
  }

  /** Every document estimated with its project: a file created or deleted can change how any of their imports resolve. */
  all(): string[] {
    return [...this.readBy.keys()];
  }
}
