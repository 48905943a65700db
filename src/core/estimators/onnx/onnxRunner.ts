/**
 * Runs the bundled ONNX estimators with onnxruntime-node. One session per family, created on
 * first use and kept; the model card is read with it. The execution provider is `auto` (CUDA
 * when its provider library is installed, else the CPU, said once in the log), `cuda` (tried,
 * CPU if it fails, with a warning) or `cpu`; every result says which one ran. Where
 * onnxruntime-node has no native runtime the estimators run on onnxruntime-web's WebAssembly
 * (`wasm`), and where neither loads the learned estimators are off (said once) and the analytical
 * model's estimates stand.
 */
import { readFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import type { ModelFamily } from '../family';
import { FEATURE_DEFINITION_VERSION, FEATURE_NAMES } from '../../features/features';
import { cudaProviderInstalled, type ExecutionProviderChoice, type ExecutionProviderName } from './executionProvider';
import type { ModelCard } from './modelCard';
import { loadOnnxRuntime, type OnnxRuntime } from './onnxRuntime';

export type RunnerLog = (level: 'info' | 'warning', message: string) => void;

export interface RunnerOptions {
  /** The folder with `<family>.onnx` and `<family>.card.json` (the package's `models/`). */
  readonly modelsDir: string;
  /**
   * A user's models folder (setting `gpuEstimator.modelsFolder`, CLI `--models`): a family whose
   * card is there runs from there; one that is missing there, or fails validation (another feature
   * definition, wrong features, a graph without the card's input or outputs), runs from `modelsDir`
   * (the latter with one warning).
   */
  readonly userModelsDir?: string;
  readonly executionProvider: ExecutionProviderChoice;
  readonly log?: RunnerLog;
  /** Whether the CUDA provider library is installed; detected when left out (tests replace it). */
  readonly cudaInstalled?: () => boolean;
  /** Loads onnxruntime (native, else WebAssembly); tests replace it to force a path. */
  readonly loadRuntime?: () => OnnxRuntime;
}

export interface LoadedModel {
  readonly family: ModelFamily;
  readonly card: ModelCard;
  readonly provider: ExecutionProviderName;
  /** The ONNX file that runs: `models/<file>` for a bundled model, the absolute path for a user's. */
  readonly modelPath: string;
  readonly source: 'bundled' | 'user';
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

/**
 * The graphs are small (a few hundred kilobytes, batches of one to a few hundred rows): one
 * thread runs them fastest and leaves the editor's other cores alone (measured: 0.43 ms p50 and
 * 0.74 ms p95 per row with one thread, 1.6 ms p95 with onnxruntime's default pool on 2 cores).
 */
const SESSION_OPTIONS = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' } as const;

export class OnnxRunner {
  private readonly sessions = new Map<ModelFamily, Promise<Loaded | null>>();
  /** The runtime once loaded, or null once it failed to (both said once in the log). */
  private loadedRuntime: OnnxRuntime | null | undefined;
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
    const { ort } = this.runtime()!;
    const results = await loaded.session.run({ [loaded.card.input.name]: new ort.Tensor('float32', data, [rows.length, width]) });
    const outputs: Record<string, Float32Array> = {};
    const columns: Record<string, number> = {};
    for (const [name, tensor] of Object.entries(results)) {
      outputs[name] = tensor.data as Float32Array;
      columns[name] = tensor.dims[1] ?? 1;
    }
    return { outputs, columns, provider: loaded.provider };
  }

  /**
   * Releases every session. One that fails to release is logged and the others are still released:
   * this never rejects, as the extension starts it and does not wait for it.
   */
  async dispose(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const pending of sessions) {
      const loaded = await pending.catch(() => null);
      await loaded?.session.release().catch((error: unknown) => this.options.log?.('warning', `could not release the ${loaded.family} model's session: ${error instanceof Error ? error.message : String(error)}`));
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
    const runtime = this.runtime();
    if (!runtime) return null;
    const userDir = this.options.userModelsDir;
    if (userDir && path.resolve(userDir) !== path.resolve(this.options.modelsDir) && existsSync(path.join(userDir, `${family}.card.json`))) {
      const cardPath = path.join(path.resolve(userDir), `${family}.card.json`);
      try {
        const card = readCard(cardPath, family);
        const modelPath = path.join(path.dirname(cardPath), card.file);
        const { session, provider } = await this.createSession(runtime, readFileSync(modelPath));
        const problem = graphMismatch(session, card) ?? (await this.probe(session, card));
        if (!problem) return { family, card, session, provider, modelPath, source: 'user' };
        await session.release();
        throw new Error(problem);
      } catch (error) {
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        this.options.log?.('warning', `Your ${family} model in ${userDir} cannot be used (${reason}); the bundled ${family} model runs instead.`);
      }
    }
    const cardPath = path.join(this.options.modelsDir, `${family}.card.json`);
    if (!existsSync(cardPath)) return null;
    const card = JSON.parse(readFileSync(cardPath, 'utf8')) as ModelCard;
    if (card.featureDefinitionVersion !== FEATURE_DEFINITION_VERSION) {
      this.options.log?.('warning', `${cardPath} was trained on feature definition ${card.featureDefinitionVersion}, this build computes ${FEATURE_DEFINITION_VERSION}; ${family} estimates use the analytical model (retrain: npm run train:models)`);
      return null;
    }
    const modelBytes = readFileSync(path.join(path.dirname(cardPath), card.file));
    const { session, provider } = await this.createSession(runtime, modelBytes);
    return { family, card, session, provider, modelPath: `models/${card.file}`, source: 'bundled' };
  }

  /** Runs one row (each feature at its training minimum) and checks the memory output's shape; null when it is right. */
  private async probe(session: InferenceSession, card: ModelCard): Promise<string | null> {
    const { ort } = this.runtime()!;
    const width = card.features.length;
    try {
      const results = await session.run({ [card.input.name]: new ort.Tensor('float32', Float32Array.from(card.features.map((feature) => feature.min)), [1, width]) });
      const memory = results[card.outputs.memory.name];
      if (!memory || memory.dims.length !== 2 || memory.dims[0] !== 1 || memory.dims[1] !== 3) return `its ${card.outputs.memory.name} output has shape [${memory?.dims.join(', ') ?? ''}], expected [1, 3]`;
      if (![...(memory.data as Float32Array)].every(Number.isFinite)) return `its ${card.outputs.memory.name} output is not finite`;
      return null;
    } catch (error) {
      return `a test row of ${width} features fails: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    }
  }

  private async createSession({ ort, kind }: OnnxRuntime, model: Uint8Array): Promise<{ session: InferenceSession; provider: ExecutionProviderName }> {
    const choice = this.options.executionProvider;
    const log = this.options.log;
    if (kind === 'wasm') {
      if (choice === 'cuda' && !this.onCpu) log?.('warning', 'CUDA execution provider unavailable (onnxruntime-node has no native runtime here); the estimators run on WebAssembly on the CPU');
      this.onCpu = true;
      const session = await ort.InferenceSession.create(model, { ...SESSION_OPTIONS, executionProviders: ['wasm'] });
      return { session, provider: 'wasm' };
    }
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
   * onnxruntime is loaded on first use, so a session that never needs it never pays for it; once,
   * whether it loads or not, and what came of it is said once.
   */
  private runtime(): OnnxRuntime | null {
    if (this.loadedRuntime === undefined) {
      const log = this.options.log;
      try {
        this.loadedRuntime = (this.options.loadRuntime ?? loadOnnxRuntime)();
        if (this.loadedRuntime.kind === 'wasm') log?.('info', `onnxruntime-node's native runtime does not load on ${process.platform}-${process.arch} (${this.loadedRuntime.nativeProblem}); the learned estimators run on onnxruntime-web's WebAssembly, on the CPU`);
      } catch (error) {
        this.loadedRuntime = null;
        log?.('warning', `The learned estimators are unavailable: ${error instanceof Error ? error.message : String(error)}. Estimates use the analytical model.`);
      }
    }
    return this.loadedRuntime;
  }
}

/** A user's model card, checked against what this build computes; throws with the reason. */
function readCard(cardPath: string, family: ModelFamily): ModelCard {
  let card: ModelCard;
  try {
    card = JSON.parse(readFileSync(cardPath, 'utf8')) as ModelCard;
  } catch (error) {
    throw new Error(`${path.basename(cardPath)} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!card || typeof card !== 'object') throw new Error(`${path.basename(cardPath)} is not a model card`);
  if (card.family !== family) throw new Error(`${path.basename(cardPath)} is for family "${String(card.family)}", not ${family}`);
  if (card.featureDefinitionVersion !== FEATURE_DEFINITION_VERSION) throw new Error(`it was trained on feature definition ${String(card.featureDefinitionVersion)}, this build computes ${FEATURE_DEFINITION_VERSION}`);
  if (typeof card.file !== 'string' || !card.file || card.file.includes('/') || card.file.includes('\\') || !card.file.endsWith('.onnx')) throw new Error(`the card's "file" must name an .onnx file beside it, got ${JSON.stringify(card.file)}`);
  const names = Array.isArray(card.features) ? (card.features as readonly ({ readonly name?: unknown } | null)[]).map((feature) => feature?.name) : [];
  if (names.length !== FEATURE_NAMES.length) throw new Error(`the card lists ${names.length} features, this build computes ${FEATURE_NAMES.length}`);
  const differs = names.findIndex((name, i) => name !== FEATURE_NAMES[i]);
  if (differs >= 0) throw new Error(`the card's feature ${differs} is ${String(names[differs])}, this build computes ${FEATURE_NAMES[differs]}`);
  if (typeof card.input?.name !== 'string' || typeof card.outputs?.memory?.name !== 'string' || !Array.isArray(card.outputs.bins) || !card.outputs.utilization) throw new Error('the card lacks its input or outputs');
  return card;
}

/** What the graph lacks of the card's input and outputs, in words; null when it has all of them. */
function graphMismatch(session: InferenceSession, card: ModelCard): string | null {
  if (!session.inputNames.includes(card.input.name)) return `the graph has no input "${card.input.name}" (it has ${session.inputNames.join(', ')})`;
  const utilization = card.outputs.utilization;
  const wanted = [card.outputs.memory.name, ...card.outputs.bins.map((bins) => bins.name), utilization.smact, utilization.smocc, utilization.drama].filter((name): name is string => typeof name === 'string');
  const missing = wanted.filter((name) => !session.outputNames.includes(name));
  return missing.length ? `the graph has no output ${missing.join(', ')}` : null;
}
