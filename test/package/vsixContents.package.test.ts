/**
 * The .vsix files `npm run package` built (build/vsix/, run by `npm run test:package`): what each
 * one carries, read from the zip itself.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ModelCard } from '../../src/core/estimators/onnx/modelCard';
import { OnnxRunner, type RunnerLog } from '../../src/core/estimators/onnx/onnxRunner';
import { loadOnnxRuntime } from '../../src/core/estimators/onnx/onnxRuntime';
import { markdownImages, showableImage } from '../../scripts/packaging/packagedReadme';
import { nativeBindingFolder, runtimeFiles, VSIX_DIR, VSIX_TARGETS, vsixFileName, type VsixTarget } from '../../scripts/packaging/vsixTargets';
import { REPO_ROOT } from '../unit/fixtures';
import { ZipFile } from './zipEntries';

const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The harness's Python files, tests left out: what the remote commands upload. */
function harnessPython(dir = 'harness'): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'tests' || entry.name === '__pycache__' ? [] : harnessPython(file);
    return entry.name.endsWith('.py') ? [file] : [];
  });
}

/** Every entry the target's runtime patterns match, e.g. `node_modules/onnxruntime-node/dist/*.js`. */
function matchesRuntime(target: VsixTarget, name: string): boolean {
  return runtimeFiles(target).some((pattern) => new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace('*', '[^/]*')}$`).test(name));
}

const ALWAYS = [
  'package.json',
  'LICENSE.txt',
  'readme.md',
  'dist/extension.js',
  'dist/web-tree-sitter.wasm',
  'dist/webview/report.js',
  'dist/webview/report.css',
  'media/report.css',
  'grammars/tree-sitter-python.wasm',
  'grammars/tree-sitter-python.json',
  'models/mlp.onnx',
  'models/mlp.card.json',
  'models/cnn.onnx',
  'models/cnn.card.json',
  'harness/configs/default.yaml',
  'harness/configs/cpu-smoke.yaml',
  'src/core/features/featureDefinition.json',
  'src/core/features/analyticalModel.json',
  'node_modules/onnxruntime-common/package.json',
  'node_modules/onnxruntime-common/dist/cjs/index.js',
];

for (const target of VSIX_TARGETS) {
  describe(`the ${target} .vsix`, () => {
    const file = path.join(REPO_ROOT, VSIX_DIR, vsixFileName(target, version));
    let zip: ZipFile;
    let names: string[];
    before(function () {
      assert.ok(existsSync(file), `${file} (npm run package)`);
      zip = new ZipFile(file);
      names = zip.names.filter((name) => name.startsWith('extension/')).map((name) => name.slice('extension/'.length));
    });

    it('says its platform in its manifest', () => {
      assert.match(zip.read('extension.vsixmanifest').toString('utf8'), new RegExp(`TargetPlatform="${target}"`));
    });

    it('carries the bundle, the grammar, the models, the harness and the feature definition', () => {
      for (const wanted of [...ALWAYS, ...harnessPython()]) assert.ok(names.includes(wanted), `${wanted} is missing`);
    });

    it("leaves out the harness's tests, Python caches, and onnxruntime's source maps and type declarations", () => {
      assert.deepEqual(names.filter((name) => /(^|\/)tests\//.test(name) || /__pycache__|\.pyc$/.test(name)), []);
      assert.deepEqual(names.filter((name) => name.startsWith('node_modules/') && /\.map$|\.d\.ts$/.test(name)), []);
      assert.deepEqual(names.filter((name) => name.startsWith('media/screenshots/')), [], 'the screenshots are inside the README');
    });

    it('carries only its own onnxruntime', () => {
      const runtime = names.filter((name) => /^node_modules\/onnxruntime-(node|web)\//.test(name));
      assert.deepEqual(runtime.filter((name) => !matchesRuntime(target, name)), [], 'files of another platform or not needed');
      const folder = nativeBindingFolder(target);
      if (folder) {
        const binaries = runtime.filter((name) => name.includes('/bin/')).sort();
        assert.deepEqual(binaries, runtimeFiles(target).filter((name) => name.includes('/bin/')).sort());
        assert.ok(binaries.every((name) => name.startsWith(`node_modules/onnxruntime-node/${folder}/`)));
      } else {
        assert.deepEqual(runtime.sort(), runtimeFiles(target).sort(), "onnxruntime-web's Node entry and plain WebAssembly, no native runtime");
      }
    });

    it('has one README, whose images all show in VS Code (embedded, none relative)', () => {
      assert.deepEqual(names.filter((name) => /^readme/i.test(name)), ['readme.md']);
      const images = markdownImages(zip.read('extension/readme.md').toString('utf8'));
      assert.ok(images.length >= 6, `${images.length} images`);
      assert.deepEqual(images.filter((source) => !showableImage(source)), []);
    });
  });
}

describe("the darwin-x64 .vsix's WebAssembly runtime, unpacked", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-vsix-'));
    const zip = new ZipFile(path.join(REPO_ROOT, VSIX_DIR, vsixFileName('darwin-x64', version)));
    for (const name of zip.names.filter((entry) => entry.startsWith('extension/') && !entry.endsWith('/'))) {
      const target = path.join(dir, name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, zip.read(name));
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the packaged models with only the package's files and gives each card's self-test outputs", async () => {
    const extension = path.join(dir, 'extension');
    const lines: string[] = [];
    const log: RunnerLog = (level, message) => lines.push(`${level}: ${message}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fromPackage = (name: string): unknown => require(require.resolve(name, { paths: [extension] }));
    const runner = new OnnxRunner({ modelsDir: path.join(extension, 'models'), executionProvider: 'auto', log, loadRuntime: () => loadOnnxRuntime(fromPackage) });
    try {
      for (const family of ['mlp', 'cnn'] as const) {
        const card = JSON.parse(readFileSync(path.join(extension, 'models', `${family}.card.json`), 'utf8')) as ModelCard;
        const result = (await runner.run(family, card.selfTest!.features))!;
        assert.equal(result.provider, 'wasm');
        for (const [name, expected] of Object.entries(card.selfTest!.outputs)) {
          expected.flat().forEach((value, i) => assert.ok(Math.abs(result.outputs[name]![i]! - value) <= 1e-4 * Math.max(1, Math.abs(value)), `${family} ${name}[${i}]: ${result.outputs[name]![i]}, torch ${value}`));
        }
      }
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /^info: onnxruntime-node's native runtime does not load .*Cannot find module 'onnxruntime-node'.*; the learned estimators run on onnxruntime-web's WebAssembly, on the CPU$/);
    } finally {
      await runner.dispose();
    }
  });
});
