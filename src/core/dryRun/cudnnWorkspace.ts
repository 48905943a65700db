import { workspaceWith, type WorkspaceCoefficients } from './convolutionWorkspace';

/** No workspace: the replay of live tensors and the allocator's cache alone. */
export const NO_WORKSPACE: WorkspaceCoefficients = { spatial: { input: 0, output: 0 }, pointwise: { input: 0, output: 0 }, grouped: { input: 0, output: 0 } };

/**
 * Fitted by scripts/dryRun/fitWorkspace.ts (2026-11-26, `--every 2`: 317 traced A100 runs of 169
 * models, timm and GPUMemNet's CNNs): a spatial convolution's workspace is its input's size plus
 * twice its output's, as an FFT or non-fused Winograd algorithm holds transformed copies of them;
 * 1x1 and grouped ones get none that raises the peak. In 2-fold cross-validation with each model on
 * one side, it takes the runs under-estimated by more than 10% from 9.5% to 4.7% for a median error
 * of 4.1% (4.1% without). One rule for every GPU: only A100 measurements exist to fit it on.
 */
export const FITTED_WORKSPACE: WorkspaceCoefficients = { ...NO_WORKSPACE, spatial: { input: 1, output: 2 } };

export const CUDNN_WORKSPACE = workspaceWith(FITTED_WORKSPACE);
