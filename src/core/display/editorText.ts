import { formatMiB } from '../format/units';
import { comparisonReadings, describeEstimate, describeMethod, describeProcess, describeVerdict } from './describe';
import type { FileEstimate, ModelEstimate } from '../estimate/fileEstimate';
import { describeRemedy, fittingRemedies } from './fineTuningText';

/**
 * The short texts the editor shows beside the hover: the CodeLens title above a model, the
 * status bar tooltip, and the Problems-panel entries for OOM risk. No `vscode` import, so
 * they are unit-tested with real estimates.
 */

/** `6-8 GiB`, `512-900 MiB`, `0.5-1.2 GiB`: both ends in the unit of the larger one. */
export function formatRangeMiB(lowMiB: number, highMiB: number): string {
  if (highMiB < 1024) return `${Math.round(lowMiB)}-${Math.round(highMiB)} MiB`;
  const gib = (mib: number) => {
    const value = mib / 1024;
    return value < 100 ? String(Number(value.toFixed(1))) : String(Math.round(value));
  };
  return `${gib(lowMiB)}-${gib(highMiB)} GiB`;
}

/**
 * `~7.9 GiB on A100 40GB (6-8 GiB, 87%) | Horus 21.0 GiB | SMACT high`: the estimate, the
 * ensemble's most probable memory bin with its probability (else the range), the comparison
 * estimators' figures (Horus) and the utilization classes. Parts without a value are left out; an estimate from the
 * analytical model says so.
 */
export function codeLensTitle(model: ModelEstimate, gpuName: string): string {
  const { memory } = model;
  const parts: string[] = [];
  if (memory.estimateMiB === null) parts.push(`No estimate for ${gpuName}`);
  else {
    const details: string[] = [];
    // A bare point (no range or bin) is named, so it is not read as the calibrated kind.
    const chosen = model.estimates.find((reading) => reading.role === 'estimate');
    if (chosen && chosen.lowMiB === null && !memory.bin) details.push(chosen.short);
    if (memory.bin) details.push(`${formatRangeMiB(memory.bin.lowMiB, memory.bin.highMiB)}, ${Math.round(memory.bin.probability * 100)}%`);
    else if (memory.lowMiB !== null && memory.highMiB !== null) details.push(formatRangeMiB(memory.lowMiB, memory.highMiB));
    const icon = model.risk === 'oom' || model.risk === 'tight' ? '$(warning) ' : '';
    parts.push(`${icon}~${formatMiB(memory.estimateMiB)} on ${gpuName}${details.length ? ` (${details.join(', ')})` : ''}`);
  }
  for (const reading of comparisonReadings(model)) parts.push(`${reading.short} ${formatMiB(reading.estimateMiB)}`);
  const utilization = (['smact', 'smocc', 'drama'] as const).filter((k) => model.utilization[k] !== null).map((k) => `${k.toUpperCase()} ${model.utilization[k]}`);
  if (utilization.length) parts.push(utilization.join(', '));
  return parts.join(' | ');
}

/** The status bar tooltip (Markdown): model, estimate, range, GPU, verdict. Names are code spans. */
export function statusTooltipMarkdown(estimate: FileEstimate, model: ModelEstimate): string {
  const { memory } = model;
  const others = estimate.models.length > 1 ? ` (the largest of ${estimate.models.length} models)` : '';
  const lines = [`**GPU Estimator**: \`${model.name.replace(/`/g, "'")}\`${others}, line ${model.line}`, ''];
  lines.push(`- Estimate: ${describeEstimate(model)} (${describeMethod(model)})`);
  if (memory.lowMiB !== null && memory.highMiB !== null) lines.push(`- Range: ${formatRangeMiB(memory.lowMiB, memory.highMiB)}`);
  if (memory.bin) lines.push(`- Memory bin: ${formatRangeMiB(memory.bin.lowMiB, memory.bin.highMiB)} (p ${memory.bin.probability.toFixed(2)})`);
  for (const reading of comparisonReadings(model)) lines.push(`- ${reading.label}: ${formatMiB(reading.estimateMiB)}`);
  lines.push(`- GPU: ${estimate.gpu.name} (${formatMiB(estimate.gpu.memoryMiB)})`);
  lines.push(`- Verdict: ${describeVerdict(model, estimate.gpu.name)}${model.maxBatchSize === null ? '' : `; largest batch that fits: ${model.maxBatchSize}`}`);
  if (estimate.process) lines.push(`- Whole script (the figure shown): ${describeProcess(estimate.process, estimate.gpu.name)}`);
  lines.push('', 'Click for the full report.');
  return lines.join('\n');
}

export interface RiskProblem {
  /** 1-based line: the batch size's assumption line, else the model's line. */
  readonly line: number;
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

/** The line a model's batch size is read from in the script, else the model's own. */
function batchLine(model: ModelEstimate): number {
  const batch = model.assumptions.find((a) => a.name === 'batchSize');
  return (batch?.file === undefined ? batch?.line : undefined) ?? model.line;
}

/**
 * One problem per model at OOM risk ('oom': error, 'tight': warning), on the line its batch size
 * comes from; and one for the script's models together where they are at more risk than any alone.
 */
export function riskProblems(estimate: FileEstimate): RiskProblem[] {
  const problems: RiskProblem[] = [];
  for (const model of estimate.models) {
    if (model.risk !== 'oom' && model.risk !== 'tight') continue;
    const batch = model.assumptions.find((a) => a.name === 'batchSize');
    const fits = model.maxBatchSize === null ? '' : model.maxBatchSize > 0 ? `; the largest batch that fits is ${model.maxBatchSize}` : '; no batch size fits';
    // A fine-tune: the change with the smallest estimate that makes it fit (the hover lists more).
    const remedy = model.fineTuning ? fittingRemedies(model.fineTuning, model.risk)[0] : undefined;
    problems.push({
      line: batchLine(model),
      severity: model.risk === 'oom' ? 'error' : 'warning',
      message: `${model.name}: ${describeEstimate(model)} with batch size ${batch?.value ?? model.batchSize ?? '?'}: ${describeVerdict(model, estimate.gpu.name)}${fits}${remedy ? `; fits with ${describeRemedy(remedy)}` : ''}`,
    });
  }
  // Each model fits alone, or less tightly than all of them together: the process is the problem.
  const process = estimate.process;
  const severity = { fits: 0, tight: 1, oom: 2 } as const;
  if (process && process.risk !== 'fits' && estimate.models.every((model) => model.risk === null || severity[model.risk] < severity[process.risk])) {
    const largest = estimate.models.filter((model) => process.models.includes(model.name)).sort((a, b) => (b.memory.estimateMiB ?? 0) - (a.memory.estimateMiB ?? 0))[0]!;
    problems.push({ line: batchLine(largest), severity: process.risk === 'oom' ? 'error' : 'warning', message: `The script's models together: ${describeProcess(process, estimate.gpu.name)}` });
  }
  return problems;
}
