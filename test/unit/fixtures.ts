import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeSource } from '../../src/core/analysis/analyzeSource';
import type { TrainingSetup } from '../../src/core/analysis/modelDescription';
import type { EstimateOptions } from '../../src/core/estimate/estimateTree';
import { estimateSource } from '../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../src/core/gpus/gpuProfiles';
import { findPackageRoot, packagedParserAssets } from '../../src/core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../../src/core/parsing/pythonParser';
import { buildLayerTable, type LayerTableResult } from '../../src/core/layerTable/buildLayerTable';
import type { FileEstimate, ModelEstimate } from '../../src/core/estimate/fileEstimate';
import { findCheckpoint } from '../../src/core/catalog/hf/checkpoints';
import type { TransformerShape } from '../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../src/core/estimators/shapeFromConfig';

/** The repository root, found from the compiled test's location. */
export const REPO_ROOT = findPackageRoot(__dirname);

/** The parts of package.json the tests check. */
export interface Manifest {
  readonly engines: { readonly vscode: string };
  readonly activationEvents: readonly string[];
  readonly capabilities: { readonly untrustedWorkspaces: { readonly supported: string; readonly restrictedConfigurations: readonly string[] } };
  readonly contributes: {
    readonly commands: readonly { readonly command: string; readonly title: string; readonly enablement?: string }[];
    readonly configuration: { readonly properties: Readonly<Record<string, { readonly default: unknown; readonly enum?: string[] }>> };
  };
}

export function readManifest(): Manifest {
  return JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
}

/** A training script from test/fixtures/scripts, by file name without `.py`. */
export function fixture(name: string): string {
  return readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'scripts', `${name}.py`), 'utf8');
}

/**
 * A CNN of the shape GPUMemNet's generator builds (convolution blocks, a global pool, one linear
 * head, batch 32), so the trained CNN ensemble is its estimate; the examples are real networks
 * (pooling, batch 256), which the real-model estimator estimates.
 */
export const ENSEMBLE_CNN_SCRIPT = 'test/fixtures/learned/cnn_plain_cifar10.py';

export function ensembleCnnSource(): string {
  return readFileSync(path.join(REPO_ROOT, ENSEMBLE_CNN_SCRIPT), 'utf8');
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

/** What the analysis reads of the training set-up of `source` (the analyzer alone, no estimate). */
export async function setupOf(source: string): Promise<TrainingSetup> {
  const tree = (await realParser()).parse(source);
  try {
    return analyzeSource(tree, source).setup;
  } finally {
    tree.delete();
  }
}

/** The layer table of the `index`-th model `source` builds (the analyzer alone, no estimate). */
export async function tableOf(source: string, index = 0): Promise<LayerTableResult> {
  const tree = (await realParser()).parse(source);
  try {
    const analysis = analyzeSource(tree, source);
    const model = analysis.models[index];
    if (!model) throw new Error(`no model ${index} in the source`);
    return buildLayerTable(model, analysis.setup, analysis.context);
  } finally {
    tree.delete();
  }
}

/** The Horus formula's figure for a model, as the estimate lists it among its estimators (the JSON's `horusMiB`). */
export function horusMiB(model: ModelEstimate): number | null {
  return model.estimates.find((reading) => reading.estimator === 'horus')?.estimateMiB ?? null;
}

/** The fine-tuning model's shape of a catalog checkpoint, failing the test when the catalog lacks it or the shape is declined. */
export function checkpointShape(name: string, head: TransformerShape['head'] = { kind: 'lm' }): TransformerShape {
  const checkpoint = findCheckpoint(name);
  if (!checkpoint) throw new Error(`no catalog checkpoint ${name}`);
  const shape = shapeFromConfig(checkpoint.modelType, checkpoint.config, head);
  if (typeof shape === 'string') throw new Error(`${name}: ${shape}`);
  return shape;
}
