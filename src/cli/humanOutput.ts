import { formatCount, formatMiB } from '../core/format/units';
import { describeArchitecture, describeAssumption, describeBreakdown, describeEstimate, describeLearned, describeMethod } from '../core/display/describe';
import type { FileEstimate, ModelEstimate } from '../core/estimate/fileEstimate';

const COLUMNS = ['model', 'line', 'family', 'params', 'batch', 'estimate', 'Horus', 'fits', 'max batch'] as const;

function row(model: ModelEstimate): string[] {
  const fits = model.fits === null ? '?' : model.risk === 'tight' ? 'tight' : model.fits ? 'yes' : 'NO';
  return [
    model.name,
    String(model.line),
    model.family.toUpperCase(),
    formatCount(model.params),
    model.batchSize === null ? '?' : String(model.batchSize),
    describeEstimate(model),
    model.horusMiB === null ? '-' : formatMiB(model.horusMiB),
    fits,
    model.maxBatchSize === null ? '-' : String(model.maxBatchSize),
  ];
}

function table(header: readonly string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The readable report `gpu-estimate` prints without --json. */
export function humanOutput(estimate: FileEstimate): string {
  const out: string[] = [`GPU memory estimate for ${estimate.file} on ${estimate.gpu.name} (${formatMiB(estimate.gpu.memoryMiB)})`, ''];
  for (const warning of estimate.warnings) out.push(`warning: ${warning}`);
  if (estimate.models.length === 0) {
    out.push('No model to estimate.');
    return out.join('\n');
  }
  out.push(table(COLUMNS, estimate.models.map(row)), '');
  for (const model of estimate.models) {
    out.push(`${model.name}:`);
    const architecture = describeArchitecture(model);
    if (architecture) out.push(`  architecture: ${architecture}, ${model.architecture!.source}`);
    const breakdown = describeBreakdown(model);
    if (breakdown) out.push(`  breakdown (analytical model): ${breakdown}`);
    out.push(`  assumptions: ${model.assumptions.map(describeAssumption).join('; ')}`);
    out.push(`  estimated by the ${describeMethod(model)}. ${describeLearned(model)}`);
    for (const warning of model.warnings) out.push(`  warning: ${warning}`);
  }
  out.push('', 'Horus: the published formula 4 B x (batch x activations + params + batch x params) + 800 MiB, for comparison.');
  return out.join('\n');
}
