import * as vscode from 'vscode';
import { findGpuProfile, type GpuProfile } from '../core/gpus/gpuProfiles';
import { estimateJson, type FileEstimateJson } from '../core/estimate/estimateJson';
import type { FileEstimate } from '../core/estimate/fileEstimate';
import type { ReportedEstimate } from '../core/display/reportData';
import { withDryRunReading } from '../core/display/dryRunText';
import type { DryRunResults } from './dryRunResults';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import { pickGpu, pickModel } from './report/pickers';
import type { ReportPanel } from './report/reportPanel';
import type { SettingsStore } from './settings';

/**
 * Optional second argument of the command, for callers that already know what to show (CodeLens,
 * tests). Naming a model or a GPU is what tells them from the user: run from the palette, the
 * editor's context menu or its title bar (which pass the file's URI and at most an editor-group
 * object), the command also asks which GPU, the configured one first; given either, it does not.
 */
export interface EstimateCommandOptions {
  /** The model to report on; without it, a file with several models asks which. */
  readonly model?: string;
  /** A GPU profile id (`h100-80gb`); without it, the configured GPU. The report's "Change GPU…" picks another. */
  readonly gpu?: string;
}

/**
 * "Estimate GPU memory": estimates the given or active Python file, asks which model when there
 * are several and (run by the user) which GPU, opens the report, and returns the estimate of the
 * whole file (the same object as `gpu-estimate --json`) to callers such as tests; undefined when
 * there is nothing to estimate or the user dismisses a pick.
 */
export function estimateMemoryCommand(service: EstimationService, report: ReportPanel, errors: ErrorReporter, settings: SettingsStore, dryRuns?: DryRunResults) {
  return async (uri?: vscode.Uri, options?: EstimateCommandOptions): Promise<FileEstimateJson | undefined> => {
    const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python') {
      void vscode.window.showInformationMessage('GPU Estimator: open a Python training script to estimate its GPU memory.');
      return undefined;
    }
    try {
      const fromUser = typeof options?.model !== 'string' && typeof options?.gpu !== 'string';
      const configured = settings.settings.gpu;
      const gpu = (typeof options?.gpu === 'string' ? findGpuProfile(options.gpu) : undefined) ?? configured;
      let estimate = await service.estimate(document, gpu);
      let modelName = typeof options?.model === 'string' && estimate.models.some((m) => m.name === options.model) ? options.model : undefined;
      if (modelName === undefined && estimate.models.length > 1) {
        const picked = await pickModel(estimate);
        if (!picked) return undefined;
        modelName = picked.name;
      }
      if (fromUser) {
        const picked = await pickGpu(undefined, configured.id);
        if (!picked) return undefined;
        if (picked.id !== gpu.id) estimate = await service.estimate(document, picked);
      }
      const reported = async (full: FileEstimate): Promise<ReportedEstimate> => {
        const run = dryRuns?.get(document);
        const withDryRun = run ? withDryRunReading(full, run.result, run.version !== document.version) : full;
        const shown = modelName === undefined ? withDryRun : { ...withDryRun, models: withDryRun.models.filter((m) => m.name === modelName) };
        return { estimate: shown, outlooks: await service.outlook(shown) };
      };
      report.show(await reported(estimate), {
        documentUri: document.uri,
        configuredGpuId: settings.settings.gpu.id,
        safetyMargin: settings.settings.safetyMargin,
        reestimate: async (other: GpuProfile) => reported(await service.estimate(document, other)),
        errors,
      });
      return estimateJson(estimate);
    } catch (error) {
      errors.report('cannot estimate this file', error);
      return undefined;
    }
  };
}
