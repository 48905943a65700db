import { workspaceWith, type WorkspaceCoefficients } from './convolutionWorkspace';

/** No workspace: what the dry run holds before the rule is fitted. */
export const NO_WORKSPACE: WorkspaceCoefficients = { spatial: { forward: 0, backward: 0 }, pointwise: { forward: 0, backward: 0 }, grouped: { forward: 0, backward: 0 } };

export const CUDNN_WORKSPACE = workspaceWith(NO_WORKSPACE);
