import { readFileSync, statSync } from 'node:fs';
import type { ProjectFiles } from '../core/project/projectFiles';

/** Imported files past this size are not read (the analysed script's own limit is larger; see readSource.ts). */
const MAX_READ_BYTES = 8 * 1024 * 1024;

/** The project's files on disk, for the CLI: regular files read as UTF-8; anything unreadable is absent. */
export const diskProjectFiles: ProjectFiles = {
  read(path: string): string | undefined {
    try {
      const stat = statSync(path);
      if (!stat.isFile() || stat.size > MAX_READ_BYTES) return undefined;
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
  exists(path: string): boolean {
    try {
      statSync(path);
      return true;
    } catch {
      return false;
    }
  },
};
