import * as vscode from 'vscode';
import type { DryRunSettings } from './settings';

/** The part of the Python extension's API (ms-python.python) this uses. */
interface PythonExtensionApi {
  readonly environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { readonly path: string } | undefined;
  };
}

/**
 * The interpreter a dry run of `resource` uses: gpuEstimator.dryRun.python when set, else the one
 * selected in the Python extension for that file, else `python3` on the PATH. Says where it came
 * from, for the messages.
 */
export async function dryRunInterpreter(settings: DryRunSettings, resource: vscode.Uri): Promise<{ path: string; source: string }> {
  if (settings.python) return { path: settings.python, source: 'the gpuEstimator.dryRun.python setting' };
  try {
    const python = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (python) {
      const api = python.isActive ? python.exports : await python.activate();
      const selected = api?.environments?.getActiveEnvironmentPath(resource)?.path;
      if (selected) return { path: selected, source: 'the interpreter selected in the Python extension' };
    }
  } catch {
    // An extension that fails to activate or an older API: fall back to the PATH.
  }
  return { path: 'python3', source: 'python3 on the PATH (select an interpreter in the Python extension or set gpuEstimator.dryRun.python)' };
}
