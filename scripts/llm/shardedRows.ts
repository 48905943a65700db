/**
 * The several-GPU rows of ../shared/data/published-llm/measurements.csv (DDP, FSDP, DeepSpeed
 * ZeRO; issue 20 part 3) against the per-GPU estimate (src/core/estimators/sharding.ts). Each row
 * is read as a single-GPU job by evaluateFineTuning.ts's rowToJob (its method without the strategy
 * words), and its strategy and GPU count from the method and the notes. The table is printed after
 * the single-GPU one by `npm run evaluate:llm`; nothing here is fitted (the estimate carries the
 * margin fitted on the single-GPU rows, as the estimator states it).
 */
import { FITTED_MARGIN } from '../../src/core/estimators/fineTuning';
import { estimateSharded, describePlan, type ShardingPlan } from '../../src/core/estimators/sharding';
import { median } from '../evaluation/statistics';
import { estimateFor, rowToJob, type Conversion, type Row } from './evaluateFineTuning';
import { gpuCount, isUnread, measuredGiB, type Reading } from './rowFields';

const GiB = 1024 ** 3;

/** Whether a row runs on several GPUs (`8`, `8 (FSDP)`, `8x A100`) or with a sharding strategy (the rows the single-GPU table leaves out). */
export function isShardedRow(row: Row): boolean {
  const gpus = gpuCount(row.num_gpus, row.gpu);
  return (typeof gpus === 'number' && gpus > 1) || /DeepSpeed|FSDP|\bZeRO\b|offload \(params/i.test(`${row.method ?? ''} ${row.num_gpus ?? ''}`);
}

/**
 * The strategy a row's method, GPU count and notes name: `+ DeepSpeed ZeRO-3 (no offload)`, `ZeRO stage 2`,
 * `zero3`, `ds_z3`, `ZeRO-Offload` (stage 2, optimizer on the CPU), `ZeRO-Infinity` (stage 3, both
 * offloaded), `+ FSDP full shard + CPU param offload`, `8 (FSDP)`, `fsdp_cpu_offload=True`,
 * `offload_optimizer: cpu`, `SHARD_GRAD_OP`, `HYBRID_SHARD`, `NO_SHARD`; DDP where none is named.
 * DeepSpeed without a stage is unread (its default, stage 0, is rarely what was run).
 */
export function planOfRow(row: Row): Reading<ShardingPlan> {
  const text = `${row.method ?? ''} ${row.num_gpus ?? ''} ${row.optimizer ?? ''} ${row.notes ?? ''}`;
  const named = /zero[-_ ]?(?:stage[-_ ]?)?(\d)|deepspeed[-_ ]?(?:stage[-_ ]?|z)(\d)|\bds[-_ ]?z(\d)/i.exec(text);
  const infinity = /zero[-_ ]?infinity/i.test(text);
  const stageNamed = named ? Number(named[1] ?? named[2] ?? named[3]) : infinity ? 3 : /zero[-_ ]?offload/i.test(text) ? 2 : undefined;
  if (stageNamed === undefined && /deepspeed/i.test(text)) return { unread: `"${row.method}": DeepSpeed without a ZeRO stage` };
  // "CPU offload (params+optimizer)", "CPU param offload", fsdp_cpu_offload=True, offload_optimizer: cpu; "(no offload)" says none.
  const offload = (infinity || /zero[-_ ]?offload|CPU (param )?offload|cpu_offload\s*[=:]\s*true|offload_(param|optimizer)\w*\s*[=:]\s*"?(true|cpu|nvme)/i.test(text)) && !/no (CPU )?offload/i.test(text);
  // The parameters too: "params+optimizer", "param offload", offload_param: cpu, ZeRO-Infinity.
  const offloadParams = offload && (infinity || /params\+optimizer|param(eter)?s? offload|offload[_ ]param\w*\s*[=:]\s*"?(true|cpu|nvme)/i.test(text));
  if (stageNamed !== undefined) {
    const stage = Math.min(3, stageNamed) as ShardingPlan['stage'];
    return { kind: 'zero', stage, ...(offload ? { offloadOptimizer: true } : {}), ...(offloadParams && stage === 3 ? { offloadParams: true } : {}), overlapComm: stage === 3 };
  }
  if (/FSDP|shard/i.test(text)) {
    // FSDP's CPUOffload moves parameters, gradients and the step to the host.
    const stage = /no_shard/i.test(text) ? 0 : /shard_grad_op/i.test(text) ? 2 : 3;
    return { kind: 'fsdp', stage, ...(/hybrid_shard/i.test(text) ? { hybrid: true } : {}), ...(offload ? { offloadOptimizer: true, offloadParams: true } : {}) };
  }
  return { kind: 'ddp', stage: 0 };
}

/** The row's method without the strategy words (`+ DeepSpeed ...`, `with FSDP`, `(FSDP)`, `(ZeRO-3)`, `(DDP)`), so rowToJob reads the adapter and precision as on one GPU. */
export function singleGpuMethod(method: string): string {
  return method
    .replace(/\s*(\+|\bwith\b|\bw\/)\s*(DeepSpeed|FSDP|ZeRO|DDP).*$/i, '')
    .replace(/\s*\([^)]*(FSDP|DeepSpeed|ZeRO|DDP)[^)]*\)/i, '')
    .trim();
}

export type ShardedConversion = { conversion: Conversion; plan: ShardingPlan; gpus: number };

export function shardedRowToJob(row: Row): ShardedConversion {
  const single: Row = { ...row, method: singleGpuMethod(row.method ?? ''), num_gpus: '1', gpu: '' };
  const read = rowToJob(single);
  const plan = planOfRow(row);
  const gpus = gpuCount(row.num_gpus, row.gpu);
  // A strategy or GPU count that cannot be read skips the row as its other fields would.
  const unread = [plan, gpus].find(isUnread);
  const conversion: Conversion = unread && !('skip' in read) ? { skip: unread.unread, group: read.group } : read;
  return { conversion, plan: plan && !isUnread(plan) ? plan : { kind: 'ddp', stage: 0 }, gpus: typeof gpus === 'number' ? Math.max(1, gpus) : 1 };
}

/** The several-GPU table: per source and strategy, rows estimated, median absolute error, rows under the figure, and why the others were not estimated. */
export function shardedTable(rows: readonly Row[], sourceName: (source: string) => string, details: string[]): string[] {
  const groups = new Map<string, { rows: number; errors: number[]; under: number; documented: number; skips: Map<string, number> }>();
  for (const row of rows.filter(isShardedRow)) {
    const { conversion, plan, gpus } = shardedRowToJob(row);
    const key = `${sourceName(row.source ?? '')} | ${conversion.group}, ${describePlan(plan)}`;
    const group = groups.get(key) ?? { rows: 0, errors: [], under: 0, documented: 0, skips: new Map<string, number>() };
    groups.set(key, group);
    group.rows++;
    const figure = measuredGiB(row);
    const measured = typeof figure === 'number' ? figure : NaN;
    const skip = 'skip' in conversion ? conversion.skip : !Number.isFinite(measured) ? 'out of memory, no figure' : undefined;
    if (skip !== undefined || 'skip' in conversion) {
      group.skips.set(skip!, (group.skips.get(skip!) ?? 0) + 1);
      continue;
    }
    const estimate = estimateSharded(conversion.job, plan, gpus);
    // The figure the estimator states: with the margin fitted on the single-GPU rows (not refitted here: these rows are out of its sample).
    const predicted = (estimateFor(estimate, conversion.kind) * (1 + FITTED_MARGIN)) / GiB;
    const error = (predicted - measured) / measured;
    group.errors.push(Math.abs(error));
    if (predicted < measured) group.under++;
    if (conversion.documented) group.documented++;
    details.push(`${key} | ${row.model} ${row.method} b${conversion.job.batch} s${conversion.job.seq} on ${gpus} ${conversion.kind}${conversion.documented ? ' (documented default)' : ''}: measured ${measured.toFixed(2)}, estimated ${predicted.toFixed(2)} (${(error * 100).toFixed(1)}%)`);
  }
  const lines = ['source | method, strategy | rows | estimated | with a documented default | median abs. error | under the figure | not estimated', '--- | --- | ---: | ---: | ---: | ---: | ---: | ---'];
  const all = { rows: 0, errors: [] as number[], under: 0, documented: 0 };
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const [source, method] = key.split(' | ');
    const n = group.errors.length;
    const skips = [...group.skips].map(([why, count]) => `${count} ${why}`).join('; ');
    lines.push(`${source} | ${method} | ${group.rows} | ${n} | ${group.documented} | ${n ? `${(median(group.errors) * 100).toFixed(1)}%` : '-'} | ${n ? `${group.under}/${n}` : '-'} | ${skips || '-'}`);
    all.rows += group.rows;
    all.errors.push(...group.errors);
    all.under += group.under;
    all.documented += group.documented;
  }
  lines.push(`all several-GPU rows | | ${all.rows} | ${all.errors.length} | ${all.documented} | ${all.errors.length ? `${(median(all.errors) * 100).toFixed(1)}%` : '-'} | ${all.under}/${all.errors.length} |`);
  return lines;
}
