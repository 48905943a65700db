/**
 * cuDNN's workspace for a convolution: memory the algorithm it picks asks for during the call,
 * taken from the caching allocator and given back to its cache after (so it raises the reserved
 * peak when no cached block is large enough). Without a GPU here, the size is a rule fitted on the
 * published A100 runs (scripts/dryRun/fitWorkspace.ts; the coefficients in cudnnWorkspace.ts): a
 * share of the call's input bytes per kind of convolution, forward and backward apart.
 */
import type { ConvolutionCall } from './dryRunTrace';

export type ConvolutionKind = 'spatial' | 'pointwise' | 'grouped';

/** Workspace per input byte, per kind, forward and backward. */
export type WorkspaceCoefficients = Readonly<Record<ConvolutionKind, { readonly forward: number; readonly backward: number }>>;

export function convolutionKind(call: ConvolutionCall): ConvolutionKind {
  if (call.groups > 1) return 'grouped';
  return call.kernel[0] === 1 && call.kernel[1] === 1 ? 'pointwise' : 'spatial';
}

export function inputBytes(call: ConvolutionCall): number {
  const [n, c, h, w] = call.input;
  return n * c * h * w * call.elementBytes;
}

export function workspaceWith(coefficients: WorkspaceCoefficients): (call: ConvolutionCall) => number {
  return (call) => {
    const share = coefficients[convolutionKind(call)];
    return inputBytes(call) * (call.backward ? share.backward : share.forward);
  };
}
