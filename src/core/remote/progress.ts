/** The harness's stdout protocol: one JSON object per line, `event` says which. */
export interface HarnessEvent {
  /** 'start', 'config', 'end', 'error' or 'measurement'; others are passed over. */
  readonly event: string;
  readonly [key: string]: unknown;
}

export interface Progress {
  /** Configurations finished (including ones a resumed run skipped). */
  readonly done: number;
  readonly total: number | null;
  readonly etaSeconds: number | null;
  readonly ok: number;
  readonly oom: number;
  readonly failed: number;
  /** The last configuration's line, for the log. */
  readonly last: HarnessEvent | null;
  /** The harness's own error line (bad config, no device), if it printed one. */
  readonly error: string | null;
  readonly measurement: HarnessEvent | null;
  readonly ended: boolean;
}

export const NO_PROGRESS: Progress = { done: 0, total: null, etaSeconds: null, ok: 0, oom: 0, failed: 0, last: null, error: null, measurement: null, ended: false };

/** Splits complete lines off a chunk; returns the events and how many bytes they used. */
export function parseEvents(chunk: string): { events: HarnessEvent[]; consumedBytes: number } {
  const end = chunk.lastIndexOf('\n');
  if (end < 0) return { events: [], consumedBytes: 0 };
  const complete = chunk.slice(0, end + 1);
  const events: HarnessEvent[] = [];
  for (const line of complete.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && typeof (value as { event?: unknown }).event === 'string') events.push(value as HarnessEvent);
    } catch {
      // not a harness line (the protocol keeps stdout JSON-only; anything else is ignored)
    }
  }
  return { events, consumedBytes: Buffer.byteLength(complete, 'utf8') };
}

const number = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export function applyEvents(progress: Progress, events: readonly HarnessEvent[]): Progress {
  let next = progress;
  for (const event of events) {
    switch (event.event) {
      case 'start':
        next = { ...NO_PROGRESS, total: number(event.total), done: number(event.done) ?? 0 };
        break;
      case 'config': {
        const status = event.status;
        next = {
          ...next,
          done: number(event.done) ?? next.done + 1,
          total: number(event.total) ?? next.total,
          etaSeconds: number(event.etaSeconds),
          ok: next.ok + (status === 'ok' ? 1 : 0),
          oom: next.oom + (status === 'oom' ? 1 : 0),
          failed: next.failed + (status === 'error' || status === 'crashed' ? 1 : 0),
          last: event,
        };
        break;
      }
      case 'measurement':
        next = { ...next, measurement: event };
        break;
      case 'error':
        next = { ...next, error: typeof event.message === 'string' ? event.message : 'the harness reported an error' };
        break;
      case 'end':
        next = { ...next, ended: true, etaSeconds: 0 };
        break;
      default:
        break;
    }
  }
  return next;
}

/** "3 of 150 configurations, about 2 h 5 min left" */
export function describeProgress(progress: Progress): string {
  if (progress.total === null) return 'starting…';
  const eta = progress.etaSeconds === null ? '' : progress.etaSeconds > 0 ? `, about ${formatDuration(progress.etaSeconds)} left` : '';
  const oom = progress.oom ? `, ${progress.oom} OOM` : '';
  const failed = progress.failed ? `, ${progress.failed} failed` : '';
  return `${progress.done} of ${progress.total} configurations${oom}${failed}${eta}`;
}

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
