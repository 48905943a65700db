/**
 * Whether training jobs fit on one GPU together: each job is one script's process, so each pays its
 * own CUDA context, and the jobs' peaks add up. The verdict is taken as for one job (verdict.ts),
 * against the sum; each job's largest batch is searched with the others at their own batch sizes.
 * How much the jobs slow each other is a rule over their utilization classes, said to be one:
 * there are no measurements of co-located jobs to learn it from.
 */
import { RUNTIME_OVERHEAD_MIB } from '../estimators/analytical';
import { migMemoryMiB, type GpuProfile } from '../gpus/gpuProfiles';
import type { FileEstimate, Risk, UtilizationClass } from './fileEstimate';
import { CUDNN_BENCHMARK_EFFECT } from '../dryRun/cudnnWorkspace';
import { turnsOnCudnnBenchmark } from './notes';
import { processCurve, scriptPeakMiB } from './scriptProcess';
import { fits, largestFittingBatch, riskOf } from './verdict';

export interface CollocatedJob {
  readonly file: string;
  /** The models of the script counted in its process (all those with an estimate). */
  readonly models: readonly string[];
  /** The process's peak: its models' estimates with one CUDA context; null when none has an estimate. */
  readonly memoryMiB: number | null;
  /** The script's batch size (its largest model's); null when unknown. */
  readonly batchSize: number | null;
  /** Largest batch of this job with the others at their batch sizes; null without an estimate. */
  readonly maxBatchSizeTogether: number | null;
  /** Its SMACT class (how busy it keeps the SMs), where a trained ensemble gave one. */
  readonly smact: UtilizationClass | null;
  /** The smallest MIG profile of the GPU it fits alone; null when the GPU has no MIG or the job has no estimate. */
  readonly migProfile: { readonly name: string; readonly memoryMiB: number } | 'none' | null;
  /** Its share of the GPU for `torch.cuda.set_per_process_memory_fraction` (memoryCaps); null unless several jobs fit together. */
  readonly memoryCap: MemoryCap | null;
  readonly notes: readonly string[];
}

/**
 * A cap on one process's caching allocator: `fraction` of the GPU's memory, `mib` of it. PyTorch's
 * allocator keeps what it reserved until one of its own allocations fails, so beside other jobs it
 * grows into memory they have not taken yet and never gives it back to them; under the cap it frees
 * its cache at the cap instead, as on a GPU of that size, and a job that needs more than its cap
 * fails in its own process rather than in a neighbour's.
 */
export interface MemoryCap {
  readonly fraction: number;
  readonly mib: number;
}

export type InterferenceLevel = 'low' | 'medium' | 'high' | 'unknown';

export interface Collocation {
  readonly gpu: { readonly id: string; readonly name: string; readonly memoryMiB: number };
  readonly safetyMargin: number;
  readonly jobs: readonly CollocatedJob[];
  /** The jobs' peaks added up; null when some job has no estimate. */
  readonly totalMiB: number | null;
  readonly fits: boolean | null;
  readonly risk: Risk | null;
  /** How much the jobs are expected to slow each other, by a rule over their SMACT classes (never measured). */
  readonly interference: { readonly level: InterferenceLevel; readonly rule: string; readonly reason: string };
  readonly notes: readonly string[];
}

const SM_LOAD: Readonly<Record<UtilizationClass, number>> = { low: 0, medium: 1, high: 2 };

export const INTERFERENCE_RULE =
  'a rule, not a measurement: each job scores its SMACT class (low 0, medium 1, high 2); a total of 4 or more is high (the jobs compete for the SMs and each runs markedly slower), 2-3 medium, 0-1 low';

/** The collocation of jobs, each estimated on the same GPU. */
export function collocationOf(estimates: readonly FileEstimate[], gpu: GpuProfile, safetyMargin: number): Collocation {
  const shares = estimates.map((estimate) => {
    const share = jobShare(estimate);
    return { ...share, migProfile: migProfileFor(share.memoryMiB, gpu) };
  });
  const known = shares.every((share) => share.memoryMiB !== null);
  const totalMiB = known ? shares.reduce((sum, share) => sum + share.memoryMiB!, 0) : null;
  const caps = known && shares.length > 1 ? memoryCaps(shares.map((share) => ({ memoryMiB: share.memoryMiB!, contextMiB: share.contextMiB })), gpu.memoryMiB) : null;
  const jobs = shares.map((share, index) => {
    const others = shares.reduce((sum, other, j) => (j === index ? sum : sum + (other.memoryMiB ?? 0)), 0);
    const maxBatchSizeTogether = known && share.memoryAt ? largestFittingBatch(share.memoryAt, gpu.memoryMiB - others) : null;
    const { memoryAt: _memoryAt, contextMiB: _contextMiB, ...job } = share;
    return { ...job, maxBatchSizeTogether, memoryCap: caps?.[index] ?? null };
  });
  const notes: string[] = [];
  if (estimates.length > 1) {
    const grabbing = estimates.filter((estimate) => estimate.models.some(turnsOnCudnnBenchmark)).map((estimate) => estimate.file);
    if (grabbing.length) notes.push(`${grabbing.join(', ')} turn${grabbing.length === 1 ? 's' : ''} on cudnn.benchmark: ${CUDNN_BENCHMARK_EFFECT}, which can leave the other jobs too little; the total above is what the steps need. Turn it off for collocated jobs.`);
  }
  if (caps) notes.push(MEMORY_CAP_NOTE);
  if (!known) notes.push(`No verdict: ${shares.filter((share) => share.memoryMiB === null).map((share) => share.file).join(', ')} has no estimate (see its notes).`);
  return {
    gpu: { id: gpu.id, name: gpu.name, memoryMiB: gpu.memoryMiB },
    safetyMargin,
    jobs,
    totalMiB,
    fits: totalMiB === null ? null : fits(totalMiB, gpu.memoryMiB),
    risk: totalMiB === null ? null : riskOf(totalMiB, gpu.memoryMiB, safetyMargin),
    interference: interference(jobs),
    notes,
  };
}

type JobShare = Omit<CollocatedJob, 'maxBatchSizeTogether' | 'migProfile' | 'memoryCap'> & {
  readonly memoryAt: ((batchSize: number) => number) | null;
  /** The process's CUDA context: its models' largest (one process has one). */
  readonly contextMiB: number;
};

function jobShare(estimate: FileEstimate): JobShare {
  const estimated = estimate.models.filter((model) => model.memory.estimateMiB !== null);
  const notes: string[] = [...estimate.warnings];
  if (estimate.models.length === 0) notes.push('No model found in the script.');
  for (const model of estimate.models) if (model.memory.estimateMiB === null) notes.push(`${model.name}: no estimate (batch size or input shape unknown), left out.`);
  const trained = estimated.filter((model) => !model.inferenceOnly);
  const inference = estimated.filter((model) => model.inferenceOnly);
  if (trained.length > 1) notes.push(`${trained.length} models counted as trained in one process: their estimates added, with one CUDA context.`);
  if (inference.length > 0 && trained.length > 0) notes.push(`${inference.map((model) => model.name).join(', ')} run${inference.length === 1 ? 's' : ''} inference only (every call under torch.no_grad()): ${inference.length === 1 ? 'its weights are' : 'their weights are'} added to the trained ${trained.length === 1 ? "model's" : "models'"} peak.`);
  const memoryMiB = estimated.length ? scriptPeakMiB(estimated) : null;
  const largest = [...estimated].sort((a, b) => b.memory.estimateMiB! - a.memory.estimateMiB!)[0];
  const batchSize = largest?.batchSize ?? null;
  const scalable = estimated.length > 0 && estimated.every((model) => model.batchSize !== null && model.layerTable.rows.length > 0);
  const memoryAt = scalable ? processCurve(estimated) : null;
  const smact = estimated.length === 1 ? largest!.utilization.smact : maxClass(estimated.map((model) => model.utilization.smact));
  const contextMiB = Math.max(0, ...estimated.map((model) => model.memory.breakdown?.contextMiB ?? RUNTIME_OVERHEAD_MIB));
  return { file: estimate.file, models: estimated.map((model) => model.name), memoryMiB, batchSize, smact, notes, memoryAt, contextMiB };
}

export const MEMORY_CAP_NOTE =
  "Each process's PyTorch keeps the memory it has reserved until one of its own allocations fails, so a job grows its cache into memory the others have not taken yet and does not give it back to them. Cap each at its share: torch.cuda.set_per_process_memory_fraction(F) at the start of its script (F: the cap above); its cache then gives way at the cap, and a job that needs more stops in its own process instead of in a neighbour's.";

/**
 * Each job's cap (MemoryCap) when the jobs fit together: what its allocator reserves at its peak
 * (its estimate less its CUDA context, which the cap does not count) plus a share of what is left
 * on the GPU in proportion to its estimate. Fractions are rounded down to a thousandth, so that the
 * caps and the contexts never add up to more than the GPU. Null when the jobs do not fit.
 */
export function memoryCaps(jobs: readonly { readonly memoryMiB: number; readonly contextMiB: number }[], gpuMemoryMiB: number): MemoryCap[] | null {
  const total = jobs.reduce((sum, job) => sum + job.memoryMiB, 0);
  if (total <= 0 || total > gpuMemoryMiB) return null;
  const spare = gpuMemoryMiB - total;
  return jobs.map((job) => {
    const fraction = Math.floor((1000 * (Math.max(0, job.memoryMiB - job.contextMiB) + (spare * job.memoryMiB) / total)) / gpuMemoryMiB) / 1000;
    return { fraction, mib: Math.round(fraction * gpuMemoryMiB) };
  });
}

function migProfileFor(memoryMiB: number | null, gpu: GpuProfile): CollocatedJob['migProfile'] {
  if (memoryMiB === null || !gpu.mig?.length) return null;
  const profile = gpu.mig.find((candidate) => fits(memoryMiB, migMemoryMiB(gpu, candidate)));
  return profile ? { name: profile.name, memoryMiB: migMemoryMiB(gpu, profile) } : 'none';
}

function maxClass(classes: readonly (UtilizationClass | null)[]): UtilizationClass | null {
  if (classes.some((c) => c === null)) return null;
  return (classes as UtilizationClass[]).reduce((a, b) => (SM_LOAD[b] > SM_LOAD[a] ? b : a), 'low');
}

function interference(jobs: readonly CollocatedJob[]): Collocation['interference'] {
  const known = jobs.filter((job) => job.smact !== null);
  const score = known.reduce((sum, job) => sum + SM_LOAD[job.smact!], 0);
  const classes = jobs.map((job) => `${job.file} ${job.smact ?? 'unknown'}`).join(', ');
  if (jobs.length < 2) return { level: 'low', rule: INTERFERENCE_RULE, reason: 'one job alone' };
  if (score >= 4) return { level: 'high', rule: INTERFERENCE_RULE, reason: `SMACT ${classes}: score ${score}` };
  if (known.length < jobs.length) return { level: 'unknown', rule: INTERFERENCE_RULE, reason: `SMACT ${classes}: a job without a utilization class (no trained ensemble for its family)` };
  return { level: score >= 2 ? 'medium' : 'low', rule: INTERFERENCE_RULE, reason: `SMACT ${classes}: score ${score}` };
}

/** Where one job can run: its process peak against each GPU it could be given (a scheduler's choice). */
export interface Placement {
  readonly file: string;
  readonly models: readonly string[];
  readonly memoryMiB: number | null;
  readonly batchSize: number | null;
  /** Each GPU with the job's verdict on it, in the order given; empty without an estimate. */
  readonly gpus: readonly { readonly gpu: GpuProfile; readonly risk: Risk }[];
  readonly notes: readonly string[];
}

export function placementOf(estimate: FileEstimate, gpus: readonly GpuProfile[], safetyMargin: number): Placement {
  const { file, models, memoryMiB, batchSize, notes } = jobShare(estimate);
  return { file, models, memoryMiB, batchSize, gpus: memoryMiB === null ? [] : gpus.map((gpu) => ({ gpu, risk: riskOf(memoryMiB, gpu.memoryMiB, safetyMargin) })), notes };
}
