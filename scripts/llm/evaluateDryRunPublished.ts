/**
 * npm run evaluate:llm-dry-run: the CPU dry run (harness/dry_run.py with transformers and PEFT)
 * against the published fine-tuning measurements whose training code is transformers' and PEFT's
 * (../shared/data/published-llm/measurements.csv): the single-GPU guide's BERT-large runs (Trainer,
 * V100, the driver's figure) and PEFT's MetaMathQA method comparison (Llama-3.2-3B in bf16, a plain
 * loop, the allocator's reserved peak). Each row becomes the arguments of scripts/llm/finetune_step.py;
 * the model is built from the catalog's config on the meta device. The figure compared is the one
 * the row measured: nvidia-smi's (the dry run's prediction), reserved, or allocated. Nothing is fitted.
 *
 *   node out/scripts/llm/evaluateDryRunPublished.js [--python PATH] [--csv FILE] [--rows]
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { findCheckpoint } from '../../src/core/catalog/hf/checkpoints';
import { runDryRun } from '../../src/core/dryRun/dryRunProcess';
import type { DryRunFigure } from '../../src/core/dryRun/dryRunReplay';
import { median } from '../evaluation/statistics';
import { measureKind, parseCsv, type MeasureKind, type Row } from './evaluateFineTuning';

const REPO = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(REPO, 'scripts', 'llm', 'finetune_step.py');
const GIB = 1024;

interface Job {
  readonly row: Row;
  readonly label: string;
  readonly argv: string[];
  readonly model: string;
  readonly classification: boolean;
  readonly seq: number;
  /** The MetaMathQA rows' 99th percentile of reserved memory over training steps, from the notes. */
  readonly trainStepsGiB?: number;
}

const METHODS: Readonly<Record<string, string>> = {
  LoRA: 'lora', 'LoRA+DoRA': 'dora', 'LoRA-FA': 'lora', LOHA: 'loha', LOKR: 'lokr', IA3: 'ia3', VERA: 'vera', OFT: 'oft', ADALORA: 'adalora', LN_TUNING: 'ln_tuning', PROMPT_TUNING: 'prompt_tuning', PREFIX_TUNING: 'prefix_tuning', full: 'full',
};

/** The row as finetune_step.py's arguments, or why it is left out. */
function jobOf(row: Row): Job | string {
  const batch = Number.parseInt(row.batch_per_gpu ?? '', 10);
  const seq = Number.parseInt(row.seq_len ?? '', 10);
  if (row.num_gpus !== '1' || !Number.isFinite(batch) || !Number.isFinite(seq)) return 'not one GPU with a published batch and sequence';
  const source = row.source ?? '';
  if (source.startsWith('HF transformers docs')) {
    const optimizer = row.optimizer ?? '';
    const optim = /adafactor/i.test(optimizer) ? 'adafactor' : /8bit/i.test(optimizer) ? 'adamw_bnb_8bit' : 'adamw_torch';
    // Measured with transformers 4.2x, whose BERT ran eager attention (SDPA came in 4.36): its attention matrices were kept.
    const argv = ['--model', 'bert-large-uncased', '--classification', '--attn', 'eager', '--batch', String(batch), '--seq', String(seq), '--precision', /fp16/i.test(row.precision ?? '') ? 'fp16-amp' : 'fp32', '--optim', optim, ...(row.grad_ckpt === 'on' ? ['--gradient-checkpointing'] : [])];
    return { row, label: `BERT-large b${batch} ${row.precision} ckpt ${row.grad_ckpt} ${optim}`, argv, model: 'bert-large-uncased', classification: true, seq };
  }
  if (source.includes('MetaMathQA')) {
    const method = METHODS[row.method ?? ''];
    if (!method) return `method ${row.method} not in the PEFT of the pinned venv (0.15.2)`;
    const targets = /targets ([\w,]*);/.exec(row.notes ?? '')?.[1] ?? '';
    const trainSteps = /99th pct of reserved during train steps = ([\d.]+) GiB/.exec(row.notes ?? '')?.[1];
    const argv = ['--model', 'meta-llama/Llama-3.2-3B', '--method', method, '--rank', row.lora_rank || '8', ...(targets ? ['--targets', targets] : []), '--batch', String(batch), '--seq', String(seq), '--precision', 'bf16', '--loop'];
    return { row, label: `Llama-3.2-3B ${row.method}${row.lora_rank ? ` r${row.lora_rank}` : ''}`, argv, model: 'meta-llama/Llama-3.2-3B', classification: false, seq, ...(trainSteps ? { trainStepsGiB: Number(trainSteps) } : {}) };
  }
  return 'training code not transformers/PEFT (torchtune recipes)';
}

function figureOf(kind: MeasureKind, figure: DryRunFigure): number {
  return kind === 'allocated' ? figure.peakAllocatedMiB : kind === 'reserved' ? figure.peakReservedMiB : figure.predictedMiB;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { python: { type: 'string', default: path.join(REPO, 'build', 'venvs', 'torch2', 'bin', 'python') }, csv: { type: 'string', default: path.join(REPO, '..', 'shared', 'data', 'published-llm', 'measurements.csv') }, rows: { type: 'boolean', default: false } } });
  const rows = parseCsv(readFileSync(values.csv, 'utf8'));
  const results: { job: Job; kind: MeasureKind; error: number; trainStepsError?: number; figure: DryRunFigure }[] = [];
  const skipped = new Map<string, number>();
  for (const row of rows) {
    const job = jobOf(row);
    if (typeof job === 'string') {
      skipped.set(job, (skipped.get(job) ?? 0) + 1);
      continue;
    }
    const checkpoint = findCheckpoint(job.model)!;
    const result = await runDryRun({
      script: SCRIPT,
      harnessParent: REPO,
      python: values.python,
      spec: { tensors: [{ shape: [job.seq], dtype: 'int64' }, { shape: job.classification ? [] : [job.seq], dtype: 'int64' }], argv: job.argv, hubConfigs: { [job.model]: { model_type: checkpoint.modelType, ...checkpoint.config } } },
      steps: 3,
      memoryMiB: 16000,
      timeoutMs: 600_000,
    });
    if (!result.ok) {
      console.log(`${job.label}: no dry run (${result.error.slice(0, 160)})`);
      skipped.set('dry run failed', (skipped.get('dry run failed') ?? 0) + 1);
      continue;
    }
    const kind = measureKind(row.measure_kind ?? '');
    const measuredMiB = Number(row.measured_gb) * GIB;
    const estimate = figureOf(kind, result.figure);
    const trainStepsError = job.trainStepsGiB === undefined ? undefined : (result.figure.peakReservedMiB - job.trainStepsGiB * GIB) / (job.trainStepsGiB * GIB);
    results.push({ job, kind, error: (estimate - measuredMiB) / measuredMiB, figure: result.figure, ...(trainStepsError === undefined ? {} : { trainStepsError }) });
    if (values.rows) console.log(`${job.label} (${kind}): measured ${(measuredMiB / GIB).toFixed(2)} GiB, dry run ${(estimate / GIB).toFixed(2)} GiB (${(((estimate - measuredMiB) / measuredMiB) * 100).toFixed(1)}%)${trainStepsError === undefined ? '' : `; train steps' 99th pct ${job.trainStepsGiB} GiB (${(trainStepsError * 100).toFixed(1)}%)`}, ${result.figure.seconds.toFixed(1)} s`);
  }
  const summary = (errors: readonly number[]) => `${errors.length} | ${(median(errors.map(Math.abs)) * 100).toFixed(1)}% | ${errors.filter((e) => e < -0.1).length}/${errors.length} | ${errors.filter((e) => e < 0).length}/${errors.length}`;
  console.log('\nsource | rows | median abs. error | under by >10% | under');
  console.log('--- | ---: | ---: | ---: | ---:');
  for (const source of [...new Set(results.map((r) => r.job.row.source))]) {
    const subset = results.filter((r) => r.job.row.source === source);
    console.log(`${source!.slice(0, 60)} (${subset[0]!.kind}) | ${summary(subset.map((r) => r.error))}`);
    const steps = subset.filter((r) => r.trainStepsError !== undefined).map((r) => r.trainStepsError!);
    if (steps.length) console.log(`${source!.slice(0, 60)}: against the 99th percentile of reserved over training steps | ${summary(steps)}`);
  }
  console.log(`all | ${summary(results.map((r) => r.error))}`);
  console.log(`left out: ${[...skipped].map(([why, n]) => `${n} ${why}`).join('; ')}`);
  const seconds = results.map((r) => r.figure.seconds).sort((a, b) => a - b);
  console.log(`dry run time per row: median ${seconds[Math.floor(seconds.length / 2)]?.toFixed(1)} s, max ${seconds[seconds.length - 1]?.toFixed(1)} s`);
}

void main();
