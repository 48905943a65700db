import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimateSource, type EstimateOptions } from '../../src/core/estimateSource';
import { defaultGpuProfile } from '../../src/core/gpus/gpuProfiles';
import { findPackageRoot, packagedParserAssets } from '../../src/core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../../src/core/parsing/pythonParser';
import type { FileEstimate } from '../../src/core/report/fileEstimate';

/** The repository root, found from the compiled test's location. */
export const REPO_ROOT = findPackageRoot(__dirname);

/** A training script from test/fixtures/scripts, by file name without `.py`. */
export function fixture(name: string): string {
  return readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'scripts', `${name}.py`), 'utf8');
}

let parser: Promise<PythonParser> | undefined;

/** The real tree-sitter parser with the pinned grammar, as the extension and the CLI load it. */
export function realParser(): Promise<PythonParser> {
  parser ??= createPythonParser(packagedParserAssets(REPO_ROOT));
  return parser;
}

export async function estimate(source: string, options: Partial<EstimateOptions> = {}): Promise<FileEstimate> {
  return estimateSource('test.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1, ...options });
}
