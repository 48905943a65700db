import { formatCount, formatMiB } from '../core/format/units';
import { describeArchitecture, describeAssumption, describeAssumptionValue, breakdownSource, describeBreakdown, describeEstimate, describeLearned, describeMethod, describeProcess, describeReadings, describeSharding } from '../core/display/describe';
import { describeLongestSequence, describeRemedies } from '../core/display/fineTuningText';
import { ESTIMATORS } from '../core/estimate/estimators';
import type { Assumption, FileEstimate, ModelEstimate } from '../core/estimate/fileEstimate';
import { warningsOf } from '../core/estimate/notes';
import { textTable } from './textTable';

/** The columns before and after the estimators' own: the estimate that counts, then one column per comparison estimator (Horus). */
const LEADING = ['model', 'line', 'family', 'params', 'batch', 'estimate'] as const;
const TRAILING = ['fits', 'max batch'] as const;

/** The comparison estimators' columns, as the first model names them (every model lists every registered estimator). */
function comparisonColumns(estimate: FileEstimate): { id: string; short: string }[] {
  return (estimate.models[0]?.estimates ?? []).filter((reading) => reading.role === 'comparison').map(({ estimator, short }) => ({ id: estimator, short }));
}

function row(model: ModelEstimate, comparisons: readonly { id: string }[]): string[] {
  const fits = model.fits === null ? '?' : model.risk === 'tight' ? 'tight' : model.fits ? 'yes' : 'NO';
  const figure = (id: string) => model.estimates.find((reading) => reading.estimator === id)?.estimateMiB ?? null;
  return [
    model.name,
    String(model.line),
    model.family.toUpperCase(),
    formatCount(model.params),
    model.batchSize === null ? '?' : String(model.batchSize),
    describeEstimate(model),
    ...comparisons.map(({ id }) => {
      const mib = figure(id);
      return mib === null ? '-' : formatMiB(mib);
    }),
    fits,
    model.maxBatchSize === null ? '-' : String(model.maxBatchSize),
  ];
}

/** The readable report `gpu-estimate` prints without --json; `dryRun`: the dry run's lines follow. */
export function humanOutput(estimate: FileEstimate, options: { dryRun?: boolean } = {}): string {
  const out: string[] = [`GPU memory estimate for ${estimate.file} on ${estimate.gpu.name} (${formatMiB(estimate.gpu.memoryMiB)})`, ''];
  for (const warning of estimate.warnings) out.push(`warning: ${warning}`);
  if (estimate.models.length === 0) {
    // A model from a library the reading does not know (diffusers' UNet2DModel) still runs in the dry run.
    out.push(options.dryRun ? 'No model to estimate statically.' : 'No model to estimate. `--dry-run` runs the script\'s own model and training step on the CPU (with your PyTorch) and gives a figure for models this reading does not know.');
    return out.join('\n');
  }
  const comparisons = comparisonColumns(estimate);
  out.push(textTable([...LEADING, ...comparisons.map((c) => c.short), ...TRAILING], estimate.models.map((model) => row(model, comparisons))), '');
  if (estimate.process) out.push(`whole script: ${describeProcess(estimate.process, estimate.gpu.name)}`, '');
  for (const model of estimate.models) {
    out.push(`${model.name}:`);
    const architecture = describeArchitecture(model);
    if (architecture) out.push(`  architecture: ${architecture}, ${model.architecture!.source}`);
    const breakdown = describeBreakdown(model);
    if (breakdown) out.push(`  breakdown (${breakdownSource(model)}${model.memory.sharding ? ', per GPU' : ''}): ${breakdown}`);
    const sharding = describeSharding(model);
    if (sharding) out.push(`  several GPUs: ${sharding}`);
    const configured = (a: (typeof model.assumptions)[number]) => a.name === 'config' || a.name === 'dataDerived';
    out.push(`  assumptions: ${model.assumptions.filter((a) => !configured(a)).map(describeAssumption).join('; ')}`);
    const read = model.assumptions.filter(configured);
    if (read.length) out.push(`  configuration read: ${describeConfiguration(read)}`);
    const method = describeMethod(model);
    out.push(`  ${model.memory.estimateMiB === null ? 'no estimate.' : `estimated by the ${method}.`} ${describeLearned(model)}`);
    if (model.memory.estimateMiB !== null) out.push(`  estimators: ${describeReadings(model)}`);
    if (model.fineTuning) {
      const remedies = describeRemedies(model.fineTuning, model.risk);
      out.push(`  ${describeLongestSequence(model.fineTuning)}`, ...(remedies ? [`  ${remedies}`] : []));
    }
    for (const warning of warningsOf(model)) out.push(`  warning: ${warning}`);
  }
  const footnotes = ESTIMATORS.flatMap((estimator) => (estimator.footnote && comparisons.some((c) => c.id === estimator.id) ? [estimator.footnote] : []));
  if (footnotes.length) out.push('', ...footnotes);
  return out.join('\n');
}

/** Values read from configuration, those of one config file together: `from configs/base.yaml: n_layer = 6 (line 5), ...; BATCH_SIZE = 1000 (...)`. */
function describeConfiguration(read: readonly Assumption[]): string {
  const parts: ({ text: string } | { file: string; values: string[] })[] = [];
  for (const assumption of read) {
    const file = assumption.origin === 'config file' && assumption.line !== null ? assumption.file : undefined;
    if (file === undefined) {
      parts.push({ text: describeAssumption(assumption) });
      continue;
    }
    const value = `${describeAssumptionValue(assumption)} (line ${assumption.line})`;
    const group = parts.find((part): part is { file: string; values: string[] } => 'file' in part && part.file === file);
    if (group) group.values.push(value);
    else parts.push({ file, values: [value] });
  }
  return parts.map((part) => ('text' in part ? part.text : `from ${part.file}: ${part.values.join(', ')}`)).join('; ');
}
