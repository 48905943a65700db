/**
 * npm run evaluate:llm: the fine-tuning estimator (src/core/estimators/fineTuning.ts) against the
 * published measurements in ../shared/data/published-llm/measurements.csv. Each row becomes a job
 * (model shape from the catalog, batch, sequence, method, rank, targets, quantization, checkpointing,
 * optimizer, precision); the estimate compared is the one the row's `measure_kind` measures: the
 * allocator's peak of live tensors, its reserved peak, or the driver's figure. Rows it cannot turn
 * into a job (several GPUs, no published sequence length or rank, a model the catalog does not
 * have) are counted and said why. Nothing here is fitted: the constants are the estimator's.
 *
 * node out/scripts/llm/evaluateFineTuning.js [CSV] [--rows]
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { findCheckpoint } from '../../src/core/catalog/hf/checkpoints';
import { parseCsv as parseCsvRows } from '../evaluation/referenceData';
import { isShardedRow, shardedTable } from './shardedRows';
import { estimateFineTuning, shapeFromConfig, type FineTuningAdapter, type FineTuningEstimate, type FineTuningJob, type OptimizerState } from '../../src/core/estimators/fineTuning';

const GiB = 1024 ** 3;

export type Row = Readonly<Record<string, string>>;
export type MeasureKind = 'allocated' | 'reserved' | 'driver' | 'unstated';

/** The CSV's records keyed by its header (RFC 4180, as the GPUMemNet sheets are read). */
export function parseCsv(text: string): Row[] {
  const [header, ...rows] = parseCsvRows(text);
  return header ? rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? '']))) : [];
}

/** What a row's `measure_kind` text says was measured. */
export function measureKind(text: string): MeasureKind {
  if (/NVML|nvidia-smi|screenshot/i.test(text)) return 'driver';
  if (/reserved/i.test(text)) return 'reserved';
  if (/max_memory_allocated|TorchTracemalloc|Active/i.test(text)) return 'allocated';
  return 'unstated';
}

/**
 * The hub id of the model a source names (the sources write `Llama-2-7B`, `Meta-Llama-3-8B-Instruct`,
 * `bert-large-uncased (AutoModelForSequenceClassification)`). Llama 3.1 8B has Llama 3 8B's shape
 * (its config.json differs in rope scaling and context length only), so the catalog's Llama 3 8B
 * config stands for it.
 */
const HUB_IDS: Readonly<Record<string, string>> = {
  'llama-2-7b': 'meta-llama/Llama-2-7b-hf',
  'llama-2-13b': 'meta-llama/Llama-2-13b-hf',
  'llama-2-70b': 'meta-llama/Llama-2-70b-hf',
  'llama-3.2-3b': 'meta-llama/Llama-3.2-3B',
  'llama-3.2-1b': 'meta-llama/Llama-3.2-1B',
  'llama-3.1-8b': 'meta-llama/Meta-Llama-3-8B',
  'meta-llama-3-8b-instruct': 'meta-llama/Meta-Llama-3-8B-Instruct',
};

function checkpointOf(model: string) {
  const name = model.replace(/\s*\(.*\)\s*$/, '').trim();
  const short = name.replace(/^[\w-]+\//, '').replace(/-hf$/i, '').toLowerCase();
  return findCheckpoint(name) ?? (HUB_IDS[short] ? findCheckpoint(HUB_IDS[short]) : undefined);
}

const firstInteger = (text: string | undefined): number | undefined => {
  const match = /^\s*(\d+)/.exec(text ?? '');
  return match ? Number(match[1]) : undefined;
};

/** LoRA's targets as the row's method and notes name them: `targets q_proj,v_proj`, `(q,v)`, `q,k,v,o + MLP`, `all linear`. */
export function targetsOf(method: string, notes: string): FineTuningAdapter['targetModules'] {
  const named = /targets ([\w,]+)/.exec(notes);
  if (named) return named[1]!.split(',');
  const text = `${method} ${notes}`;
  const withOutput = /\+ output/.test(text);
  if (/all[- ]linear/i.test(text)) return withOutput ? ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj', 'lm_head'] : 'all-linear';
  if (/q,\s*k,\s*v,\s*o \+ MLP/.test(text)) return ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
  if (/\bq,\s*k,\s*v\b/.test(text)) return ['q_proj', 'k_proj', 'v_proj'];
  if (/\bq,\s*v\b/.test(text)) return ['q_proj', 'v_proj'];
  return undefined;
}

export type Conversion = { job: FineTuningJob; kind: MeasureKind; group: string } | { skip: string; group: string };

/** A row as a job for the estimator, or why it cannot be one. `carried` holds techniques a source applies cumulatively. */
export function rowToJob(row: Row, carried: { chunkedLoss?: boolean } = {}): Conversion {
  const method = row.method ?? '';
  const notes = row.notes ?? '';
  const quant = row.quant ?? '';
  const group = /^full/i.test(method) ? 'full' : /qlora/i.test(method) || /nf4/i.test(quant) ? 'QLoRA' : /^LoRA/i.test(method) ? 'LoRA' : 'other PEFT';
  if (isShardedRow(row)) return { skip: 'several GPUs or sharding (issue 20, part 3)', group };
  const checkpoint = checkpointOf(row.model ?? '');
  if (!checkpoint) return { skip: `no architecture for ${row.model} in the catalog`, group };
  const batch = firstInteger(row.batch_per_gpu);
  const seq = firstInteger(row.seq_len);
  if (!batch) return { skip: 'batch size not published', group };
  if (!seq) return { skip: 'sequence length not published', group };
  const head = /SequenceClassification/.test(row.model ?? '') ? { kind: 'classifier' as const, labels: 2 } : { kind: 'lm' as const };
  const shape = shapeFromConfig(checkpoint.modelType, checkpoint.config, head);
  if (typeof shape === 'string') return { skip: shape, group };

  let adapter: FineTuningAdapter | undefined;
  const trainable = /trainable params (\d+)/.exec(notes);
  if (group === 'LoRA' || group === 'QLoRA') {
    const rank = firstInteger(row.lora_rank);
    const plainLora = /^(Q?LoRA)(\+DoRA)?( \(|$| all)/i.test(method);
    if (plainLora) {
      if (!rank) return { skip: 'LoRA rank not published', group };
      adapter = { method: 'lora', rank, targetModules: targetsOf(method, notes), dora: /DoRA/.test(method) };
    } else if (trainable) adapter = { method: 'other', trainableParams: Number(trainable[1]) };
    else return { skip: `adapter ${method} without a parameter count`, group };
  } else if (group === 'other PEFT') {
    if (!trainable) return { skip: `adapter ${method} without a parameter count`, group };
    adapter = { method: 'other', trainableParams: Number(trainable[1]) };
  }

  const precision = row.precision ?? '';
  const fp32 = /^fp32/.test(precision) || (precision === '' && group === 'full');
  const autocast = /mixed|AMP/.test(precision) && !/no AMP/.test(precision);
  const weightBits: FineTuningJob['weightBits'] = /nf4|4-?bit/i.test(quant) ? 4 : /int8|8-?bit/i.test(quant) ? 8 : fp32 || autocast ? 32 : 16;
  const optimizerText = row.optimizer ?? '';
  const optimizer: OptimizerState = /8bit/i.test(optimizerText) ? 'adamw-8bit' : /adafactor/i.test(optimizerText) ? 'adafactor' : 'adamw';
  const ckpt = row.grad_ckpt ?? '';
  if (/chunked/i.test(notes)) carried.chunkedLoss = true;
  if (!/cumulativ/i.test(notes)) delete carried.chunkedLoss;
  // A source that states its CUDA context (`includes CUDA context (~1.3GB)`) is compared with that context.
  const contextGB = Number(/CUDA context \(~([\d.]+)\s*GB\)/.exec(row.measure_kind ?? '')?.[1] ?? NaN) || undefined;
  const accumulation = firstInteger(/grad_accum[=\s]+(\d+)/.exec(notes)?.[1]);
  const job: FineTuningJob = {
    shape,
    batch,
    seq,
    ...(adapter ? { adapter } : {}),
    weightBits,
    doubleQuant: /nf4/i.test(quant),
    computeBytes: fp32 && !autocast ? 4 : 2,
    autocast,
    optimizer,
    paged: /paged/i.test(optimizerText),
    checkpointing: /^on/.test(ckpt),
    // Transformers before 4.36 had only eager attention; the sources of that era say so in their path.
    eagerAttention: /v4\.2x/.test(row.url_or_repo_path ?? ''),
    ...(accumulation ? { accumulation } : {}),
    optimizerInBackward: /optimizer_in_bwd|optimizer-in-backward/i.test(`${optimizerText} ${method}`),
    activationOffload: /offload/i.test(ckpt),
    ...(carried.chunkedLoss || /chunked/i.test(notes) ? { chunkedLoss: 8 } : {}),
    ...(contextGB ? { contextBytes: contextGB * 1e9 } : {}),
  };
  return { job, kind: measureKind(row.measure_kind ?? ''), group };
}

/** The estimate the measurement measured; an unstated kind is compared with the reserved peak (between allocated and the driver's). */
export function estimateFor(estimate: FineTuningEstimate, kind: MeasureKind): number {
  return kind === 'allocated' ? estimate.allocated : kind === 'driver' ? estimate.driver : estimate.reserved;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The source's short name: the text before its first parenthesis or comma. */
const sourceName = (source: string) => source.replace(/\s*[(,].*$/, '').replace(/^"|"$/g, '').slice(0, 48);

function main(): void {
  const args = process.argv.slice(2);
  const csv = args.find((a) => !a.startsWith('--')) ?? path.resolve(__dirname, '../../../../shared/data/published-llm/measurements.csv');
  if (!existsSync(csv)) {
    console.error(`No measurements at ${csv}`);
    process.exitCode = 1;
    return;
  }
  const rows = parseCsv(readFileSync(csv, 'utf8'));
  const groups = new Map<string, { rows: number; errors: number[]; under: number; skips: Map<string, number> }>();
  const carried = new Map<string, { chunkedLoss?: boolean }>();
  const details: string[] = [];
  const trainSteps: { error: number; under: boolean }[] = [];
  for (const row of rows) {
    const source = sourceName(row.source ?? '');
    const state = carried.get(source) ?? {};
    carried.set(source, state);
    const converted = rowToJob(row, state);
    const key = `${source} | ${converted.group}`;
    const group = groups.get(key) ?? { rows: 0, errors: [], under: 0, skips: new Map<string, number>() };
    groups.set(key, group);
    group.rows++;
    const measured = Number(row.measured_gb);
    if ('skip' in converted) {
      group.skips.set(converted.skip, (group.skips.get(converted.skip) ?? 0) + 1);
      continue;
    }
    if (!row.measured_gb || !Number.isFinite(measured)) {
      group.skips.set('out of memory, no figure', (group.skips.get('out of memory, no figure') ?? 0) + 1);
      continue;
    }
    const estimate = estimateFineTuning(converted.job);
    // The sources print GB as bytes / 2^30 (the README says which); the estimate is compared in the same unit.
    const predicted = estimateFor(estimate, converted.kind) / GiB;
    const error = (predicted - measured) / measured;
    group.errors.push(Math.abs(error));
    if (predicted < measured) group.under++;
    // The MetaMathQA runs also publish the 99th percentile of reserved memory over training steps (the whole run's peak includes evaluation with generation).
    const steps = /99th pct of reserved during train steps = ([\d.]+) GiB/.exec(row.notes ?? '');
    if (steps) trainSteps.push({ error: Math.abs(predicted - Number(steps[1])) / Number(steps[1]), under: predicted < Number(steps[1]) });
    details.push(`${key} | ${row.method} b${converted.job.batch} s${converted.job.seq} ${converted.kind}: measured ${measured.toFixed(2)}, estimated ${predicted.toFixed(2)} (${(error * 100).toFixed(1)}%)`);
  }
  const lines = ['source | method | rows | estimated | median abs. error | under the figure | not estimated', '--- | --- | ---: | ---: | ---: | ---: | ---'];
  const all = { rows: 0, errors: [] as number[], under: 0 };
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const [source, method] = key.split(' | ');
    const skips = [...group.skips].map(([why, n]) => `${n} ${why}`).join('; ');
    const n = group.errors.length;
    lines.push(`${source} | ${method} | ${group.rows} | ${n} | ${n ? `${(median(group.errors) * 100).toFixed(1)}%` : '-'} | ${n ? `${group.under}/${n}` : '-'} | ${skips || '-'}`);
    all.rows += group.rows;
    all.errors.push(...group.errors);
    all.under += group.under;
  }
  lines.push(`all | | ${all.rows} | ${all.errors.length} | ${(median(all.errors) * 100).toFixed(1)}% | ${all.under}/${all.errors.length} |`);
  if (trainSteps.length) lines.push(`\nMetaMathQA rows against the 99th percentile of reserved memory over training steps (published beside the whole run's peak): ${trainSteps.length} rows, median abs. error ${(median(trainSteps.map((t) => t.error)) * 100).toFixed(1)}%, under the figure ${trainSteps.filter((t) => t.under).length}/${trainSteps.length}`);
  console.log(lines.join('\n'));
  // The several-GPU rows (shardedRows.ts), per GPU, in a table of their own.
  console.log(`\nSeveral GPUs (DDP, FSDP, DeepSpeed ZeRO), per GPU:\n\n${shardedTable(rows, sourceName, details).join('\n')}`);
  if (args.includes('--rows')) console.log(`\n${details.join('\n')}`);
}

if (require.main === module) main();
