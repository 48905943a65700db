/**
 * The platforms the extension ships a .vsix for, and the onnxruntime files each one carries:
 * onnxruntime-node's npm package holds the native runtime of every platform (~290 MB), and a
 * .vsix needs only its own. darwin-x64 has no native runtime in onnxruntime-node 1.30, so its
 * .vsix carries onnxruntime-web's WebAssembly build instead (src/core/estimators/onnx/onnxRuntime.ts).
 */

/** Where the .vsix files, and the ignore files and README they are made with, land (.gitignore covers /build/). */
export const VSIX_DIR = 'build/vsix';

export const VSIX_TARGETS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64', 'win32-x64'] as const;
export type VsixTarget = (typeof VSIX_TARGETS)[number];

const NATIVE = 'node_modules/onnxruntime-node';
const WEB = 'node_modules/onnxruntime-web';

/**
 * The native binding's folder and the files in it that load. darwin/arm64 also holds
 * libonnxruntime.1.30.0.dylib, a byte-identical copy of libonnxruntime.1.dylib that nothing loads
 * (the binding and the library itself name @rpath/libonnxruntime.1.dylib): 44 MB left out.
 */
const NATIVE_BINARIES: Readonly<Record<Exclude<VsixTarget, 'darwin-x64'>, readonly string[]>> = {
  'linux-x64': ['onnxruntime_binding.node', 'libonnxruntime.so.1'],
  'linux-arm64': ['onnxruntime_binding.node', 'libonnxruntime.so.1'],
  'darwin-arm64': ['onnxruntime_binding.node', 'libonnxruntime.1.dylib'],
  'win32-x64': ['onnxruntime_binding.node', 'onnxruntime.dll', 'DirectML.dll', 'dxcompiler.dll', 'dxil.dll'],
};

/** onnxruntime-web's Node entry, the loader of its plain (no WebGPU, no JSEP) WebAssembly, and that WebAssembly. */
const WEB_FILES = ['package.json', 'dist/ort.node.min.js', 'dist/ort-wasm-simd-threaded.mjs', 'dist/ort-wasm-simd-threaded.wasm'];

export function isVsixTarget(text: string): text is VsixTarget {
  return (VSIX_TARGETS as readonly string[]).includes(text);
}

/** The folder of a target's native binding inside onnxruntime-node, `bin/napi-v6/linux/x64`; undefined for darwin-x64. */
export function nativeBindingFolder(target: VsixTarget): string | undefined {
  if (target === 'darwin-x64') return undefined;
  const [os, arch] = target.split('-');
  return `bin/napi-v6/${os}/${arch}`;
}

/** The repository paths of the onnxruntime files the target's .vsix carries (onnxruntime-common comes with every target). */
export function runtimeFiles(target: VsixTarget): string[] {
  const folder = nativeBindingFolder(target);
  if (!folder) return WEB_FILES.map((file) => `${WEB}/${file}`);
  const binaries = NATIVE_BINARIES[target as Exclude<VsixTarget, 'darwin-x64'>];
  return [`${NATIVE}/package.json`, `${NATIVE}/dist/*.js`, ...binaries.map((file) => `${NATIVE}/${folder}/${file}`)];
}

/**
 * The target's ignore file: the repository's .vscodeignore (an allowlist) and a `!` line for each
 * of the target's onnxruntime files.
 */
export function ignoreFileFor(vscodeignore: string, target: VsixTarget): string {
  const lines = runtimeFiles(target).map((file) => `!${file}`);
  return `${vscodeignore.trimEnd()}\n\n# ${target}: its onnxruntime (written by scripts/packaging/vsixTargets.ts).\n${lines.join('\n')}\n`;
}

export function vsixFileName(target: VsixTarget, version: string): string {
  return `gpu-estimator-${target}-${version}.vsix`;
}
