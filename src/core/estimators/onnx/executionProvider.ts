/**
 * Which onnxruntime execution provider can run here. onnxruntime-node ships its CPU runtime;
 * the CUDA provider is a separate library its install script downloads (this project never runs
 * that script), so `auto` asks for CUDA only when that library sits beside the native binding.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

export type ExecutionProviderChoice = 'auto' | 'cuda' | 'cpu';
/** `wasm`: onnxruntime-web's WebAssembly backend on the CPU, where onnxruntime-node has no native runtime. */
export type ExecutionProviderName = 'cuda' | 'cpu' | 'wasm';

export const EXECUTION_PROVIDER_CHOICES: readonly ExecutionProviderChoice[] = ['auto', 'cuda', 'cpu'];

const CUDA_PROVIDER_LIBRARY: Readonly<Partial<Record<NodeJS.Platform, string>>> = {
  linux: 'libonnxruntime_providers_cuda.so',
  win32: 'onnxruntime_providers_cuda.dll',
};

/** The folder holding onnxruntime-node's native binding for this platform, or undefined. */
export function onnxBindingDir(): string | undefined {
  try {
    const root = path.dirname(require.resolve('onnxruntime-node/package.json'));
    return path.join(root, 'bin', 'napi-v6', process.platform, process.arch);
  } catch {
    return undefined;
  }
}

/** Whether the CUDA execution provider's library is installed beside the binding. */
export function cudaProviderInstalled(bindingDir: string | undefined = onnxBindingDir()): boolean {
  const library = CUDA_PROVIDER_LIBRARY[process.platform];
  return bindingDir !== undefined && library !== undefined && existsSync(path.join(bindingDir, library));
}
