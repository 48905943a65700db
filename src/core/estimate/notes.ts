import type { AnalysisNote } from '../analysis/modelDescription';
import type { ModelEstimate } from './fileEstimate';
import { cudnnBenchmarkWarning } from '../dryRun/cudnnWorkspace';

/** A note as one line of text: `line 12: nn.FancyNewLayer is not understood ...` when it is about a line (1-based). */
export function noteText(note: AnalysisNote): string {
  return note.range ? `line ${note.range.startLine + 1}: ${note.message}` : note.message;
}

/** A model's notes as lines of text: the `warnings` of the --json output, the hover's and the CLI's warnings. */
export function warningsOf(model: Pick<ModelEstimate, 'notes'>): string[] {
  return model.notes.map(noteText);
}

/** The note a network with convolutions gets where the script turns cudnn.benchmark on; collocation reads it to warn the other jobs. */
export const CUDNN_BENCHMARK_NOTE = cudnnBenchmarkWarning('cudnn.benchmark is on', 'the estimate');

export function turnsOnCudnnBenchmark(model: Pick<ModelEstimate, 'notes'>): boolean {
  return model.notes.some((note) => note.message === CUDNN_BENCHMARK_NOTE);
}
