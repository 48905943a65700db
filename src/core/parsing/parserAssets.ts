import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ParserAssets } from './pythonParser';

/**
 * Where the build puts the parser's WebAssembly files inside the package: the runtime next to
 * the bundles in `dist/`, the pinned grammar in `grammars/` (see grammars/README.md).
 */
export function packagedParserAssets(packageRoot: string): ParserAssets {
  return {
    runtimeWasm: path.join(packageRoot, 'dist', 'web-tree-sitter.wasm'),
    grammarWasm: path.join(packageRoot, 'grammars', 'tree-sitter-python.wasm'),
  };
}

/** The nearest folder at or above `start` holding a package.json: the package the code runs from. */
export function findPackageRoot(start: string): string {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start);
  }
}
