import { formatCount, formatMiB } from '../format/units';
import { describeArchitecture, describeAssumption, describeBreakdown, describeEstimate, describeLearned, describeMethod, describeVerdict } from './describe';
import type { FileEstimate, ModelEstimate } from './fileEstimate';

/**
 * The hover for one model, as Markdown with theme icons: estimate first, then what it rests on.
 * No `vscode` import, so the bench times the same text the editor shows.
 */
export function hoverText(estimate: FileEstimate, model: ModelEstimate): string {
  const parts: string[] = [];
  const architecture = describeArchitecture(model);
  parts.push(`**GPU Estimator** · \`${model.name}\` · ${architecture ? `${escape(architecture)} · ` : ''}${model.family.toUpperCase()} · ${formatCount(model.params)} parameters\n\n`);
  parts.push(`Estimated peak GPU memory: **${describeEstimate(model)}** (${describeMethod(model)})`);
  parts.push(` — ${describeVerdict(model, estimate.gpu.name)} (${formatMiB(estimate.gpu.memoryMiB)})`);
  if (model.maxBatchSize !== null) parts.push(`; largest batch that fits: ${model.maxBatchSize}`);
  parts.push('\n\n');
  if (model.horusMiB !== null) parts.push(`Horus formula: ${formatMiB(model.horusMiB)}\n\n`);
  const breakdown = describeBreakdown(model);
  if (breakdown) parts.push(`Breakdown: ${breakdown}\n\n`);
  parts.push(`${escape(describeLearned(model))}\n\n`);
  parts.push('Assumptions:\n');
  for (const assumption of model.assumptions) parts.push(`- ${escape(describeAssumption(assumption))}\n`);
  for (const warning of model.warnings) parts.push(`\n$(warning) ${escape(warning)}\n`);
  return parts.join('');
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`);
}

/**
 * The model a hover at a line is about: the one built on that line, else the one named by the word
 * under the pointer, else the first whose estimate rests on a value read from that line (the batch
 * size, the input shape, the optimizer, the precision).
 */
export function modelForHover(estimate: FileEstimate, line: number, word: string): ModelEstimate | undefined {
  return (
    estimate.models.find((model) => model.line === line) ??
    estimate.models.find((model) => model.name === word) ??
    estimate.models.find((model) => model.assumptions.some((assumption) => assumption.line === line))
  );
}
