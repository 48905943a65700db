import { formatCount, formatMiB } from '../format/units';
import {
  describeArchitecture,
  describeAssumptionValue,
  describeBin,
  comparisonReadings,
  breakdownSource, describeBreakdown, describeSharding,
  describeEstimate,
  describeMethod,
  describeProcess,
  describeNoEnsemble,
  describeRange,
  describeUtilization,
  describeVerdict,
} from './describe';
import type { FileEstimate, ModelEstimate } from '../estimate/fileEstimate';
import { warningsOf } from '../estimate/notes';
import { joinPath } from '../project/projectFiles';
import { fineTuningLines } from './fineTuningText';

const VERDICT_ICONS = { fits: '$(pass)', tight: '$(warning)', oom: '$(error)' } as const;

/**
 * The hover for one model, as Markdown with theme icons: estimate first, then what it rests on.
 * Given the document's URI, every line it names links there (`file:///…/train.py#L12`, which VS
 * Code opens at that line); given `uriOf` too, a line of another project file (the module that
 * defines the model's class) links into that file. No `vscode` import, so the bench times the
 * same text the editor shows.
 */
export function hoverText(estimate: FileEstimate, model: ModelEstimate, documentUri?: string, uriOf?: (path: string) => string): string {
  const line = (n: number, label = `line ${n}`) => (documentUri ? `[${label}](${lineLink(documentUri, n)})` : label);
  const lineOf = (file: string | undefined, n: number): string => {
    if (file === undefined) return line(n);
    const label = `${escape(file)} line ${n}`;
    return uriOf && estimate.project ? `[${label}](${lineLink(uriOf(joinPath(estimate.project.root, file)), n)})` : label;
  };
  const parts: string[] = [];
  const architecture = describeArchitecture(model);
  const classPlace = model.classFile !== undefined && model.classLine !== null ? ` · class in ${lineOf(model.classFile, model.classLine)}` : '';
  parts.push(`**GPU Estimator** · \`${model.name}\` (${line(model.line)})${classPlace} · ${architecture ? `${escape(architecture)} · ` : ''}${model.family.toUpperCase()} · ${formatCount(model.params)} parameters\n\n`);
  parts.push(`Estimated peak GPU memory: **${describeEstimate(model)}** (${describeMethod(model)})`);
  for (const reading of comparisonReadings(model)) parts.push(` · ${reading.label}: ${formatMiB(reading.estimateMiB)}`);
  parts.push('\n\n');
  const range = describeRange(model);
  const bin = model.memory.method === 'ensemble' ? ` · memory ${describeBin(model)}` : '';
  parts.push(range ? `Range ${range}${bin}\n\n` : `Memory bin and utilization: ${escape(describeNoEnsemble(model))}\n\n`);
  parts.push(`${model.risk ? `${VERDICT_ICONS[model.risk]} ` : ''}${escape(describeVerdict(model, estimate.gpu.name))} (${formatMiB(estimate.gpu.memoryMiB)})`);
  if (model.maxBatchSize !== null) parts.push(`; largest batch that fits: ${model.maxBatchSize}`);
  parts.push('\n\n');
  const process = estimate.process;
  if (process?.models.includes(model.name)) parts.push(`${process.risk ? `${VERDICT_ICONS[process.risk]} ` : ''}Whole script: ${escape(describeProcess(process, estimate.gpu.name))}\n\n`);
  if (model.fineTuning) parts.push(fineTuningLines(model.fineTuning, model.risk).map((text) => `${escape(text)}\n\n`).join(''));
  parts.push(`Utilization: ${describeUtilization(model)}\n\n`);
  const breakdown = describeBreakdown(model);
  if (breakdown) parts.push(`Breakdown (${breakdownSource(model)}${model.memory.sharding ? ', per GPU' : ''}): ${breakdown}\n\n`);
  const sharding = describeSharding(model);
  if (sharding) parts.push(`Several GPUs: ${escape(sharding)}\n\n`);
  parts.push('Assumptions:\n');
  for (const assumption of model.assumptions) {
    parts.push(`- ${escape(describeAssumptionValue(assumption))} (${escape(assumption.origin)}${assumption.line === null ? '' : `, ${lineOf(assumption.file, assumption.line)}`})\n`);
  }
  for (const loop of model.trainingLoops) parts.push(`- training loop: ${line(loop.startLine, `lines ${loop.startLine}-${loop.endLine}`)}\n`);
  // Notes about a line start `line 12: ` (notes.ts): that line links too.
  for (const warning of [...warningsOf(model), ...estimate.warnings]) {
    const at = /^line (\d+): /.exec(warning);
    parts.push(`\n$(warning) ${at ? `${line(Number(at[1]))}: ${escape(warning.slice(at[0].length))}` : escape(warning)}\n`);
  }
  return parts.join('');
}

/** `text` shown as itself in Markdown. */
export function escapeMarkdown(text: string): string {
  return escape(text);
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`);
}

/** A Markdown link target to a line: characters that would end the link are percent-encoded. */
function lineLink(documentUri: string, line: number): string {
  return `${documentUri.replace(/[\s()<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)}#L${line}`;
}

/**
 * The model a hover at a line is about: the one built on that line, else the one named by the word
 * under the pointer, else the one whose class is defined on that line, else the first whose
 * estimate rests on a value read from that line (the batch size, the input shape, the optimizer,
 * the precision), else the one trained by the loop the line is in.
 */
export function modelForHover(estimate: FileEstimate, line: number, word: string): ModelEstimate | undefined {
  const { models } = estimate;
  return (
    models.find((model) => model.line === line) ??
    models.find((model) => model.name === word) ??
    models.find((model) => model.classLine === line && model.classFile === undefined) ??
    models.find((model) => model.assumptions.some((assumption) => assumption.line === line && assumption.file === undefined)) ??
    models.find((model) => model.trainingLoops.some((loop) => loop.startLine <= line && line <= loop.endLine))
  );
}
