import { workspaceWith, type WorkspaceCoefficients } from './convolutionWorkspace';
import { formatMiB } from '../format/units';
import type { DryRunFigure } from './dryRunReplay';
import type { DryRunTrace } from './dryRunTrace';

/** No workspace: the replay of live tensors and the allocator's cache alone. */
export const NO_WORKSPACE: WorkspaceCoefficients = { spatial: { input: 0, output: 0 }, pointwise: { input: 0, output: 0 }, grouped: { input: 0, output: 0 } };

/**
 * Fitted by scripts/dryRun/fitWorkspace.ts (2026-11-26, `--every 2` of the evaluation's sample: 317 traced A100 runs of 169
 * models, timm and GPUMemNet's CNNs): a spatial convolution's workspace is its input's size plus
 * twice its output's, as an FFT or non-fused Winograd algorithm holds transformed copies of them;
 * 1x1 and grouped ones get none that raises the peak. In 2-fold cross-validation with each model on
 * one side, it takes the runs under-estimated by more than 10% from 9.5% to 4.7% for a median error
 * of 4.1% (4.1% without). One rule for every GPU: only A100 measurements exist to fit it on.
 */
export const FITTED_WORKSPACE: WorkspaceCoefficients = { ...NO_WORKSPACE, spatial: { input: 1, output: 2 } };

export const CUDNN_WORKSPACE = workspaceWith(FITTED_WORKSPACE);

/** Up to this batch, grouped convolutions were where the measured runs went far beyond the dry run. */
const SMALL_BATCH = 16;

/**
 * What the workspace rule cannot see, said where it applies. On the published A100 timm runs
 * (`npm run evaluate:dry-run -- --every 6` and `--every 20`, 2026-11-26, 155 runs of networks with
 * grouped or depthwise convolutions at batch <= 16) 9.0% took more than a quarter more than the dry
 * run (11.0% more than a tenth); every other kind of run at most 2.1% (6.3%): cuDNN picks, by
 * heuristics that need the GPU, algorithms whose workspace is several GB for some of those shapes,
 * and the allocator keeps it.
 */
export function cudnnCaveats(trace: DryRunTrace): string[] {
  const grouped = trace.convolutions.find((call) => call.groups > 1 && call.input[0] <= SMALL_BATCH);
  if (!grouped) return [];
  return [
    `Grouped or depthwise convolutions at batch ${grouped.input[0]}: on the measured A100 runs of such networks at batch ${SMALL_BATCH} or less, 9% took over a quarter more than the dry run says, when cuDNN chose an algorithm with a workspace of several GB; leave headroom.`,
  ];
}

/**
 * `cudnn.benchmark = True`: for each new convolution shape PyTorch times every algorithm cuDNN
 * offers, with a workspace as large as the largest of them that fits in the GPU's free memory, and
 * the caching allocator keeps that block reserved after. nvidia-smi then shows more than the step
 * needs, up to the whole card; the allocator gives it back when the step or another tensor needs it.
 */
export const CUDNN_BENCHMARK_EFFECT = "PyTorch tries every cuDNN algorithm for each new convolution shape, with workspaces up to the GPU's free memory, and keeps the largest reserved";

/** The warning for a script that turns cudnn.benchmark on, `subject` saying so and `figure` naming what nvidia-smi may exceed. */
export function cudnnBenchmarkWarning(subject: string, figure: string): string {
  return `${subject}: ${CUDNN_BENCHMARK_EFFECT}. nvidia-smi may show more than ${figure} (up to the whole GPU) though the step needs no more; on a shared GPU, leave it off.`;
}

export function benchmarkCaveats(trace: DryRunTrace): string[] {
  if (!trace.cudnnBenchmark || trace.convolutions.length === 0) return [];
  return [cudnnBenchmarkWarning('The script turns on cudnn.benchmark', 'this figure')];
}

/**
 * What the GPU's size did to the step (replayDryRun's `gpuMemoryMiB`): the tensors alone do not fit
 * (the run stops with an out-of-memory error), or they fit but cuDNN's first choice had no room for
 * its workspace, so PyTorch freed its cache and ran an algorithm that needs less: the step fits,
 * more slowly.
 */
export function capacityCaveats(figure: DryRunFigure, gpuMemoryMiB: number | undefined): string[] {
  const size = gpuMemoryMiB === undefined ? 'the GPU' : `the GPU's ${formatMiB(gpuMemoryMiB)}`;
  if (figure.outOfMemory) return [`Out of memory: the step's tensors alone do not fit in ${size} (with the CUDA context), even with the allocator's cache given back.`];
  if (figure.workspaceFallbacks === 0) return [];
  const calls = figure.workspaceFallbacks === 1 ? '1 convolution call' : `${figure.workspaceFallbacks} convolution calls`;
  return [`Near the limit of ${size}: in ${calls} of the step the workspace of cuDNN's fastest algorithm would not fit beside the tensors, so PyTorch runs one that needs less; the step fits but may be slower.`];
}
