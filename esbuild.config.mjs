// Bundles the extension and the CLI, and puts the parser's WebAssembly where the code looks for it.
// Type checking is separate (`npm run typecheck`): esbuild strips types without checking them.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.dirname(new URL(import.meta.url).pathname);
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  // vscode is provided by the editor; onnxruntime-node (a native addon) and onnxruntime-web (its
  // WebAssembly fallback, which loads its .wasm beside itself) are loaded from node_modules.
  external: ['vscode', 'onnxruntime-node', 'onnxruntime-web'],
  define: { PACKAGE_VERSION: JSON.stringify(pkg.version) },
  // The ESM build of web-tree-sitter finds itself through import.meta.url, which a CommonJS
  // bundle does not have; its CommonJS build uses __dirname instead.
  alias: { 'web-tree-sitter': require.resolve('web-tree-sitter') },
  logLevel: 'warning',
};

function copyAssets() {
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  copyFileSync(require.resolve('web-tree-sitter/web-tree-sitter.wasm'), path.join(root, 'dist', 'web-tree-sitter.wasm'));

  const pin = JSON.parse(readFileSync(path.join(root, 'grammars', 'tree-sitter-python.json'), 'utf8'));
  const grammar = path.join(path.dirname(require.resolve('tree-sitter-python/package.json')), 'tree-sitter-python.wasm');
  const sha256 = createHash('sha256').update(readFileSync(grammar)).digest('hex');
  if (sha256 !== pin.sha256) {
    throw new Error(`tree-sitter-python.wasm (sha256 ${sha256}) differs from the pinned grammar ${pin.version} (${pin.sha256}); update grammars/tree-sitter-python.json deliberately`);
  }
  copyFileSync(grammar, path.join(root, 'grammars', 'tree-sitter-python.wasm'));
}

// package.json's gpuEstimator.gpu choices and the README's row for it are generated from
// src/core/gpus/gpuProfiles.json (scripts/gpus/gpuSettings.ts); a build must not ship them stale.
// The check is TypeScript, so esbuild bundles it here and it runs from memory.
async function checkGpuSettings() {
  const bundled = await build({ entryPoints: ['scripts/gpus/gpuSettings.ts'], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'warning' });
  const code = Buffer.from(bundled.outputFiles[0].contents).toString('base64');
  const { checkGpuSettings: drift } = await import(`data:text/javascript;base64,${code}`);
  return drift(root);
}

const gpuSettingsDrift = await checkGpuSettings();
if (gpuSettingsDrift) {
  console.error(gpuSettingsDrift);
  process.exit(1);
}
copyAssets();
await Promise.all([
  build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' }),
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } }),
  // The report view's script with uPlot (and uPlot's stylesheet, as dist/webview/report.css): loaded
  // by the webview from the extension, never from a CDN.
  build({ entryPoints: ['src/webview/report.ts'], outfile: 'dist/webview/report.js', bundle: true, platform: 'browser', target: 'es2022', format: 'iife', sourcemap: !production, minify: production, logLevel: 'warning' }),
]);
chmodSync(path.join(root, 'dist', 'cli.js'), 0o755);
