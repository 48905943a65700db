import * as vscode from 'vscode';
import { formatMiB } from '../../core/format/units';
import { GPU_PROFILES, type GpuProfile } from '../../core/gpus/gpuProfiles';
import { describeEstimate } from '../../core/display/describe';
import type { FileEstimate, ModelEstimate } from '../../core/estimate/fileEstimate';

/** Which model to report on, when the file has several; undefined when the user dismisses the pick. */
export async function pickModel(estimate: FileEstimate): Promise<ModelEstimate | undefined> {
  const items = estimate.models.map((model) => ({ label: model.name, description: `line ${model.line}`, detail: `${describeEstimate(model)} · ${model.family.toUpperCase()}`, model }));
  const picked = await vscode.window.showQuickPick(items, { title: 'GPU Estimator: which model?', placeHolder: 'The file defines several models; pick the one to report on', matchOnDescription: true });
  return picked?.model;
}

/**
 * Which GPU to estimate for: the one the report shows now (none before it opens) first, then the
 * configured one. Undefined when the user dismisses the pick.
 */
export async function pickGpu(currentId: string | undefined, configuredId: string): Promise<GpuProfile | undefined> {
  const rank = (gpu: GpuProfile) => (gpu.id === currentId ? 2 : gpu.id === configuredId ? 1 : 0);
  const ordered = [...GPU_PROFILES].sort((a, b) => rank(b) - rank(a));
  const items = ordered.map((gpu) => ({
    label: gpu.name,
    description: [formatMiB(gpu.memoryMiB), gpu.architecture, gpu.id === currentId ? 'shown now' : '', gpu.id === configuredId ? 'configured (gpuEstimator.gpu)' : ''].filter(Boolean).join(' · '),
    gpu,
  }));
  const placeHolder = `The report is ${currentId === undefined ? 'drawn' : 'redrawn'} for the GPU you pick; the gpuEstimator.gpu setting is unchanged`;
  const picked = await vscode.window.showQuickPick(items, { title: 'GPU Estimator: estimate for which GPU?', placeHolder, matchOnDescription: true });
  return picked?.gpu;
}
