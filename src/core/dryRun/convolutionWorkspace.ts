/**
 * cuDNN's workspace for a convolution: memory the algorithm it picks asks for during the call,
 * taken from the caching allocator and given back to its cache after (so it raises the reserved
 * peak when no cached block is large enough). Without a GPU here, the size is a rule fitted on the
 * published A100 runs (scripts/dryRun/fitWorkspace.ts; the coefficients in cudnnWorkspace.ts): per
 * kind of convolution, a share of the call's input bytes plus a share of its output bytes. Both
 * terms because the algorithms with the largest workspaces (FFT, Winograd without fusion) hold a
 * transformed copy of the input and one of the output, each about as large as the tensor.
 */
import type { ConvolutionCall } from './dryRunTrace';

export type ConvolutionKind = 'spatial' | 'pointwise' | 'grouped';

/**
 * Workspace per input byte and per output byte, per kind, forward and backward alike (shares per
 * direction were tried: in cross-validation they gained little and changed from fold to fold).
 */
export type WorkspaceCoefficients = Readonly<Record<ConvolutionKind, { readonly input: number; readonly output: number }>>;

export function convolutionKind(call: ConvolutionCall): ConvolutionKind {
  if (call.groups > 1) return 'grouped';
  return call.kernel[0] === 1 && call.kernel[1] === 1 ? 'pointwise' : 'spatial';
}

export function inputBytes(call: ConvolutionCall): number {
  const [n, c, h, w] = call.input;
  return n * c * h * w * call.elementBytes;
}

/** The forward's output (the backward's incoming gradient): padding is not recorded, so "same" padding is assumed. */
export function outputBytes(call: ConvolutionCall): number {
  const [n, , h, w] = call.input;
  return n * call.outChannels * Math.ceil(h / call.stride[0]) * Math.ceil(w / call.stride[1]) * call.elementBytes;
}

export function workspaceWith(coefficients: WorkspaceCoefficients): (call: ConvolutionCall) => number {
  return (call) => {
    const share = coefficients[convolutionKind(call)];
    return inputBytes(call) * share.input + outputBytes(call) * share.output;
  };
}
