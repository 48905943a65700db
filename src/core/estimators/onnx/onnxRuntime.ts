/**
 * Which onnxruntime runs the estimators. onnxruntime-node's native runtime where the package
 * carries a binding for this platform; else onnxruntime-web, whose WebAssembly CPU backend runs in
 * Node (onnxruntime-node 1.30 has no darwin-x64 binding, so Intel Macs get this one). Both are
 * onnxruntime-common underneath: the same sessions, tensors and results, so the runner does not
 * care which it got beyond the execution provider it asks for.
 */
import type * as OrtNode from 'onnxruntime-node';

export type Ort = typeof OrtNode;

export interface OnnxRuntime {
  readonly ort: Ort;
  /** `native`: onnxruntime-node (CPU, or CUDA when installed). `wasm`: onnxruntime-web in Node, CPU only. */
  readonly kind: 'native' | 'wasm';
  /** Why the native runtime did not load (first line), when `kind` is `wasm`. */
  readonly nativeProblem?: string;
}

export type RuntimePackage = 'onnxruntime-node' | 'onnxruntime-web';
export type RuntimeRequire = (name: RuntimePackage) => unknown;

// Literal requires, so the bundler keeps both as run-time requires of the shipped node_modules.
/* eslint-disable @typescript-eslint/no-require-imports */
const requireRuntime: RuntimeRequire = (name) => (name === 'onnxruntime-node' ? require('onnxruntime-node') : require('onnxruntime-web'));
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Loads the native runtime, else the WebAssembly one; throws with both reasons when neither loads.
 * Either one logs only fatal errors: a CUDA provider that cannot load would otherwise print from
 * native code; the runner reports that through its own log instead.
 */
export function loadOnnxRuntime(load: RuntimeRequire = requireRuntime): OnnxRuntime {
  let nativeProblem: string;
  try {
    const ort = load('onnxruntime-node') as Ort;
    ort.env.logLevel = 'fatal';
    return { ort, kind: 'native' };
  } catch (error) {
    nativeProblem = firstLine(error);
  }
  try {
    const ort = load('onnxruntime-web') as Ort;
    ort.env.logLevel = 'fatal';
    // One thread, as the native sessions use: the graphs are small, and more threads would start workers.
    ort.env.wasm.numThreads = 1;
    return { ort, kind: 'wasm', nativeProblem };
  } catch (error) {
    throw new Error(`onnxruntime does not load on ${process.platform}-${process.arch}: neither its native runtime (${nativeProblem}) nor its WebAssembly one (${firstLine(error)})`);
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
