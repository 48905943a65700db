/**
 * What the harness's dry run (harness/dry_run.py) prints: the script's GPU storages, born and
 * freed in order, with the phase of each birth. Read as untrusted text: the script is the user's
 * and its output shares the stream, so anything malformed is an error, never an exception.
 */
import type { AllocatorEvent } from '../allocator/cachingAllocator';

export const DRY_RUN_PHASES = ['setup', 'forward', 'backward', 'optimizer'] as const;
export type DryRunPhase = (typeof DRY_RUN_PHASES)[number];

/** One birth or death, in order; `phase` is where an allocation happened. */
export type DryRunEvent = (AllocatorEvent & { readonly kind: 'alloc'; readonly phase: DryRunPhase }) | (AllocatorEvent & { readonly kind: 'free' });

/** A 2-d convolution the script ran on the GPU: where in the trace, and its shapes (for cuDNN's workspace). */
export interface ConvolutionCall {
  /** The index of the event before which it ran (its outputs are the allocations from there). */
  readonly at: number;
  readonly phase: DryRunPhase;
  readonly backward: boolean;
  /** Input N, C, H, W. */
  readonly input: readonly [number, number, number, number];
  readonly outChannels: number;
  readonly kernel: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly groups: number;
  readonly elementBytes: number;
}

export interface DryRunTrace {
  readonly ok: boolean;
  /** Batches the training loop took before the run stopped. */
  readonly steps: number;
  readonly events: readonly DryRunEvent[];
  readonly convolutions: readonly ConvolutionCall[];
  /** Whether a convolution ran: cuDNN is then loaded, and the CUDA context is larger. */
  readonly cudnn: boolean;
  /** `torch.backends.cudnn.benchmark` as the script left it (set by the script, or by Lightning's `Trainer(benchmark=True)`). */
  readonly cudnnBenchmark: boolean;
  readonly seconds: number;
  readonly torchVersion: string | undefined;
  /** Why the script could not run to its training step, in the harness's words. */
  readonly error: string | undefined;
  readonly notes: readonly string[];
}

/** A trace larger than this is refused (a 7B model's three steps hold far fewer events). */
export const MAX_EVENTS = 5_000_000;
/** No single tensor of a GPU is larger than this (1 TiB). */
const MAX_TENSOR_BYTES = 2 ** 40;

export class DryRunOutputError extends Error {}

/** The last line of `stdout` that parses as the harness's JSON object, checked field by field. */
export function parseDryRunOutput(stdout: string): DryRunTrace {
  const line = stdout.trimEnd().split('\n').reverse().find((text) => text.startsWith('{'));
  if (line === undefined) throw new DryRunOutputError('the dry run printed no result');
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new DryRunOutputError('the dry run printed a result that is not JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DryRunOutputError('the dry run printed a result that is not an object');
  const record = raw as Record<string, unknown>;
  const events = parseEvents(record.events);
  return {
    ok: record.ok === true,
    steps: wholeNumber(record.steps) ?? 0,
    events,
    convolutions: parseConvolutions(record.convolutions, events.length),
    cudnn: record.cudnn === true,
    cudnnBenchmark: record.cudnnBenchmark === true,
    seconds: typeof record.seconds === 'number' && Number.isFinite(record.seconds) && record.seconds >= 0 ? record.seconds : 0,
    torchVersion: shortText(record.torch),
    error: shortText(record.error),
    notes: Array.isArray(record.notes) ? record.notes.map(shortText).filter((n): n is string => n !== undefined).slice(0, 20) : [],
  };
}

function parseEvents(value: unknown): DryRunEvent[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new DryRunOutputError('the dry run trace is not a list');
  if (value.length > MAX_EVENTS) throw new DryRunOutputError(`the dry run trace has more than ${MAX_EVENTS} events`);
  const live = new Set<number>();
  return value.map((entry: unknown, index): DryRunEvent => {
    const bad = (why: string) => new DryRunOutputError(`dry run trace, event ${index + 1}: ${why}`);
    if (!Array.isArray(entry)) throw bad('not a list');
    const id: unknown = (entry as unknown[])[0];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id === 0) throw bad('no tensor id');
    if (id < 0) {
      if (entry.length !== 1 || !live.delete(-id)) throw bad(`frees tensor ${-id}, which is not alive`);
      return { kind: 'free', id: -id };
    }
    const [, bytes, phase] = entry as unknown[];
    if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_TENSOR_BYTES) throw bad('no size in bytes');
    if (typeof phase !== 'number' || !Number.isInteger(phase) || phase < 0 || phase >= DRY_RUN_PHASES.length) throw bad('no phase');
    if (live.has(id)) throw bad(`allocates tensor ${id} twice`);
    live.add(id);
    return { kind: 'alloc', id, bytes, phase: DRY_RUN_PHASES[phase]! };
  });
}

/** Convolution records that do not make sense are left out: they only add workspace. */
function parseConvolutions(value: unknown, events: number): ConvolutionCall[] {
  if (!Array.isArray(value)) return [];
  const out: ConvolutionCall[] = [];
  for (const entry of value.slice(0, MAX_EVENTS)) {
    if (!Array.isArray(entry) || entry.length !== 14 || !entry.every((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) continue;
    const [at, phase, backward, n, c, h, w, o, kh, kw, sh, sw, groups, element] = entry as number[];
    if (at! > events || phase! >= DRY_RUN_PHASES.length || groups! < 1 || element! < 1 || element! > 8 || sh! < 1 || sw! < 1) continue;
    // A shape no GPU could hold is not a convolution the script ran: no workspace for it.
    if (n! * Math.max(c!, o!) * h! * w! * element! > MAX_TENSOR_BYTES) continue;
    out.push({ at: at!, phase: DRY_RUN_PHASES[phase!]!, backward: backward === 1, input: [n!, c!, h!, w!], outChannels: o!, kernel: [kh!, kw!], stride: [sh!, sw!], groups: groups!, elementBytes: element! });
  }
  return out;
}

function wholeNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Text from the harness, cut to a line's length and stripped of control characters. */
function shortText(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return clean.length > 400 ? `${clean.slice(0, 399)}…` : clean;
}
