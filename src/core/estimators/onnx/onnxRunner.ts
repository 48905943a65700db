/**
 * Runs the bundled ONNX estimators with onnxruntime-node. One session per family, created on
 * first use and kept; the model card is read with it. The execution provider is `auto` (CUDA
 * when its provider library is installed, else the CPU, said once in the log), `cuda` (tried,
 * CPU if it fails, with a warning) or `cpu`; every result says which one ran.
 */
import { readFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import type { ModelFamily } from '../family';
import { FEATURE_DEFINITION_VERSION } from '../../features/features';
import { cudaProviderInstalled, type ExecutionProviderChoice, type ExecutionProviderName } from './executionProvider';
import type { ModelCard } from './modelCard';

export type RunnerLog = (level: 'info' | 'warning', message: string) => void;

export interface RunnerOptions {
  /** The folder with `<family>.onnx` and `<family>.card.json` (the package's `models/`). */
  readonly modelsDir: string;
  readonly executionProvider: ExecutionProviderChoice;
  readonly log?: RunnerLog;
  /** Whether the CUDA provider library is installed; detected when left out (tests replace it). */
  readonly cudaInstalled?: () => boolean;
}

export interface LoadedModel {
  readonly family: ModelFamily;
  readonly card: ModelCard;
  readonly provider: ExecutionProviderName;
}

export interface RunResult {
  /** Each graph output, row-major: `outputs[name]` has `rows x columns` numbers. */
  readonly outputs: Readonly<Record<string, Float32Array>>;
  readonly columns: Readonly<Record<string, number>>;
  readonly provider: ExecutionProviderName;
}

interface Loaded extends LoadedModel {
  readonly session: InferenceSession;
}

type Ort = typeof import('onnxruntime-node');

/**
 * The graphs are small (a few hundred kilobytes, batches of one to a few hundred rows): one
 * thread runs them fastest and leaves the editor's other cores alone (measured: 0.43 ms p50 and
 * 0.74 ms p95 per row with one thread, 1.6 ms p95 with onnxruntime's default pool on 2 cores).
 */
const SESSION_OPTIONS = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' } as const;

export class OnnxRunner {
  private readonly sessions = new Map<ModelFamily, Promise<Loaded | null>>();
  private ort: Ort | undefined;
  /** Set once the CPU fallback has been logged (or CUDA has failed): later sessions go straight to the CPU, silently. */
  private onCpu = false;

  constructor(private readonly options: RunnerOptions) {}

  get executionProvider(): ExecutionProviderChoice {
    return this.options.executionProvider;
  }

  /** The family's model and card, loading them on first use; null when none is bundled. */
  model(family: ModelFamily): Promise<LoadedModel | null> {
    return this.load(family);
  }

  /** Runs the family's model on `rows` feature vectors (raw, in featureDefinition.json order). */
  async run(family: ModelFamily, rows: readonly (readonly number[])[]): Promise<RunResult | null> {
    const loaded = await this.load(family);
    if (!loaded || rows.length === 0) return null;
    const width = loaded.card.features.length;
    const data = new Float32Array(rows.length * width);
    rows.forEach((row, i) => {
      if (row.length !== width) throw new Error(`${family} model takes ${width} features, got ${row.length}`);
      data.set(row, i * width);
    });
    const ort = this.runtime();
    const results = await loaded.session.run({ [loaded.card.input.name]: new ort.Tensor('float32', data, [rows.length, width]) });
    const outputs: Record<string, Float32Array> = {};
    const columns: Record<string, number> = {};
    for (const [name, tensor] of Object.entries(results)) {
      outputs[name] = tensor.data as Float32Array;
      columns[name] = tensor.dims[1] ?? 1;
    }
    return { outputs, columns, provider: loaded.provider };
  }

  async dispose(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const pending of sessions) {
      const loaded = await pending.catch(() => null);
      await loaded?.session.release();
    }
  }

  private load(family: ModelFamily): Promise<Loaded | null> {
    let pending = this.sessions.get(family);
    if (!pending) {
      pending = this.open(family);
      // A failed load is not cached: the next call tries again.
      pending.catch(() => this.sessions.delete(family));
      this.sessions.set(family, pending);
    }
    return pending;
  }

  private async open(family: ModelFamily): Promise<Loaded | null> {
    const cardPath = path.join(this.options.modelsDir, `${family}.card.json`);
    if (!existsSync(cardPath)) return null;
    const card = JSON.parse(readFileSync(cardPath, 'utf8')) as ModelCard;
    if (card.featureDefinitionVersion !== FEATURE_DEFINITION_VERSION) {
      this.options.log?.('warning', `${cardPath} was trained on feature definition ${card.featureDefinitionVersion}, this build computes ${FEATURE_DEFINITION_VERSION}; ${family} estimates use the analytical model (retrain: npm run train:models)`);
      return null;
    }
    const modelBytes = readFileSync(path.join(path.dirname(cardPath), card.file));
    const { session, provider } = await this.createSession(modelBytes);
    return { family, card, session, provider };
  }

  private async createSession(model: Uint8Array): Promise<{ session: InferenceSession; provider: ExecutionProviderName }> {
    const ort = this.runtime();
    const choice = this.options.executionProvider;
    const log = this.options.log;
    const cudaInstalled = (this.options.cudaInstalled ?? cudaProviderInstalled)();
    if (!this.onCpu && (choice === 'cuda' || (choice === 'auto' && cudaInstalled))) {
      try {
        const session = await ort.InferenceSession.create(model, { ...SESSION_OPTIONS, executionProviders: ['cuda'] });
        return { session, provider: 'cuda' };
      } catch (error) {
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        log?.(choice === 'cuda' ? 'warning' : 'info', `CUDA execution provider unavailable (${reason}); the estimators run on the CPU`);
        this.onCpu = true;
      }
    } else if (choice === 'auto' && !this.onCpu) {
      log?.('info', 'CUDA execution provider not installed; the estimators run on the CPU');
      this.onCpu = true;
    }
    const session = await ort.InferenceSession.create(model, { ...SESSION_OPTIONS, executionProviders: ['cpu'] });
    return { session, provider: 'cpu' };
  }

  /**
   * onnxruntime-node is loaded on first use, so a session that never needs it never pays for it.
   * Its own logging is limited to fatal errors: a CUDA provider that cannot load would otherwise
   * print to stderr from native code; the runner reports that through `log` instead.
   */
  private runtime(): Ort {
    if (!this.ort) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      this.ort = require('onnxruntime-node') as Ort;
      this.ort.env.logLevel = 'fatal';
    }
    return this.ort;
  }
}
