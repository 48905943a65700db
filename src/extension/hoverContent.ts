import * as vscode from 'vscode';
import { formatCount, formatMiB } from '../core/format/units';
import { describeArchitecture, describeAssumption, describeBreakdown, describeEstimate, describeLearned, describeMethod, describeVerdict } from '../core/report/describe';
import type { FileEstimate, ModelEstimate } from '../core/report/fileEstimate';

/** The hover for one model: estimate first, then what it rests on. */
export function hoverMarkdown(estimate: FileEstimate, model: ModelEstimate): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  const architecture = describeArchitecture(model);
  md.appendMarkdown(`**GPU Estimator** · \`${model.name}\` · ${architecture ? `${escape(architecture)} · ` : ''}${model.family.toUpperCase()} · ${formatCount(model.params)} parameters\n\n`);
  md.appendMarkdown(`Estimated peak GPU memory: **${describeEstimate(model)}** (${describeMethod(model)})`);
  md.appendMarkdown(` — ${describeVerdict(model, estimate.gpu.name)} (${formatMiB(estimate.gpu.memoryMiB)})`);
  if (model.maxBatchSize !== null) md.appendMarkdown(`; largest batch that fits: ${model.maxBatchSize}`);
  md.appendMarkdown('\n\n');
  if (model.horusMiB !== null) md.appendMarkdown(`Horus formula: ${formatMiB(model.horusMiB)}\n\n`);
  const breakdown = describeBreakdown(model);
  if (breakdown) md.appendMarkdown(`Breakdown: ${breakdown}\n\n`);
  md.appendMarkdown(`${escape(describeLearned(model))}\n\n`);
  md.appendMarkdown('Assumptions:\n');
  for (const assumption of model.assumptions) md.appendMarkdown(`- ${escape(describeAssumption(assumption))}\n`);
  for (const warning of model.warnings) md.appendMarkdown(`\n$(warning) ${escape(warning)}\n`);
  md.supportThemeIcons = true;
  return md;
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`);
}
