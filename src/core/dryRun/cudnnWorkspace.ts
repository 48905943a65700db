import { workspaceWith, type WorkspaceCoefficients } from './convolutionWorkspace';

/** No workspace: the replay of live tensors and the allocator's cache alone. */
export const NO_WORKSPACE: WorkspaceCoefficients = { spatial: { forward: 0, backward: 0 }, pointwise: { forward: 0, backward: 0 }, grouped: { forward: 0, backward: 0 } };

/**
 * Fitted by scripts/dryRun/fitWorkspace.ts (2026-11-26, `--runs all --every 3`: 211 traced A100
 * runs of 131 models, timm and GPUMemNet's CNNs): a spatial convolution's workspace is its input's
 * size, a 1x1 or grouped one's a quarter of it. In 2-fold cross-validation with each model on one
 * side, it takes the runs under-estimated by more than 10% from 9.0% to 6.6%, for a median error of
 * 4.3% instead of 3.6%; spatial 1 was chosen in both folds. One rule for every GPU: only A100
 * measurements exist to fit it on.
 */
export const FITTED_WORKSPACE: WorkspaceCoefficients = { spatial: { forward: 1, backward: 1 }, pointwise: { forward: 0.25, backward: 0.25 }, grouped: { forward: 0.25, backward: 0.25 } };

export const CUDNN_WORKSPACE = workspaceWith(FITTED_WORKSPACE);
