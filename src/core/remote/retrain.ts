/**
 * After a remote `train` run: what it trained (read from the downloaded cards and its output) and
 * installing its models into the user's models folder without replacing a file unasked. No vscode
 * here; src/extension/remoteCommands.ts asks the questions.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { RunRecord } from './remoteRun';

export interface TrainedFamily {
  readonly family: string;
  readonly onnx: string;
  readonly card: string;
  /** The card's training data: what each source was and how many runs it gave. */
  readonly sources: readonly { readonly path: string; readonly runs: number; readonly gpu: string; readonly what: string }[];
  /** Successful training runs of this family (the card's training.runs.trainSuccessful). */
  readonly trainSuccessful: number | null;
}

export interface TrainingSummary {
  readonly trained: readonly TrainedFamily[];
  /** Families the pipeline left to the analytical model, with its reason ("mlp: 0 successful runs (< 200); ..."). */
  readonly notTrained: readonly string[];
  /** One paragraph for people: inputs, what came out, what did not. */
  readonly text: string;
}

/** Reads a downloaded train run (`<directory>/models/`, `stdout.jsonl`) and says what it produced from what. */
export function summarizeTraining(directory: string, record: RunRecord): TrainingSummary {
  const modelsDir = path.join(directory, 'models');
  const trained: TrainedFamily[] = [];
  for (const file of existsSync(modelsDir) ? readdirSync(modelsDir).sort() : []) {
    const match = /^([a-z]+)\.card\.json$/.exec(file);
    if (!match) continue;
    const card = JSON.parse(readFileSync(path.join(modelsDir, file), 'utf8')) as {
      file?: string;
      training?: { data?: { path?: string; runs?: number; gpu?: string; what?: string }[]; runs?: { trainSuccessful?: number } };
    };
    const onnx = path.join(modelsDir, card.file ?? `${match[1]}.onnx`);
    if (!existsSync(onnx)) continue;
    trained.push({
      family: match[1]!,
      onnx,
      card: path.join(modelsDir, file),
      sources: (card.training?.data ?? []).map((source) => ({ path: String(source.path), runs: Number(source.runs), gpu: String(source.gpu), what: String(source.what) })),
      trainSuccessful: typeof card.training?.runs?.trainSuccessful === 'number' ? card.training.runs.trainSuccessful : null,
    });
  }
  const stdout = existsSync(path.join(directory, 'stdout.jsonl')) ? readFileSync(path.join(directory, 'stdout.jsonl'), 'utf8') : '';
  const notTrained = stdout.split('\n').filter((line) => /^[a-z]+: .*no ensemble/.test(line)).map((line) => line.trim());
  const used = record.training;
  const inputs = used
    ? `Trained on ${used.data}${used.reference.length ? ` and the GPUMemNet reference data (${used.reference.map((file) => path.basename(file)).join(', ')})` : ' only (no reference data: the GPUMemNet CSVs were not given)'}; families ${used.families.join(', ')}, ${used.steps} steps per member.`
    : 'Trained.';
  const produced = trained.length
    ? `Models: ${trained.map((t) => `${t.family} (${t.sources.map((s) => `${s.runs} runs from ${s.path}`).join(' + ') || 'sources not recorded'})`).join('; ')}.`
    : 'No models came out: no family had enough successful GPU runs (CPU rows from --device cpu never count as GPU training data).';
  const missing = notTrained.length ? ` Not trained: ${notTrained.join('; ')}.` : '';
  return { trained, notTrained, text: `${inputs} ${produced}${missing}` };
}

export interface InstallResult {
  /** Files written to the models folder (file names). */
  readonly installed: string[];
  /** Files already there with the same bytes. */
  readonly unchanged: string[];
  /** Files that differ from what is there and were left alone because replacing them was declined. */
  readonly declined: string[];
}

/**
 * Copies each trained family's `<family>.onnx` and card into `modelsFolder`. A file already there
 * with other bytes is replaced only when `confirmReplace` (asked once, with every such file) says
 * yes; otherwise that family is left alone entirely (its model and card stay a matching pair).
 */
export async function installModels(trained: readonly TrainedFamily[], modelsFolder: string, confirmReplace: (files: string[]) => Promise<boolean>): Promise<InstallResult> {
  const result: InstallResult = { installed: [], unchanged: [], declined: [] };
  const plan = trained.map((family) => ({
    family,
    files: [family.onnx, family.card].map((from) => {
      const to = path.join(modelsFolder, path.basename(from));
      return { from, to, state: !existsSync(to) ? 'new' : digest(from) === digest(to) ? 'same' : 'differs' };
    }),
  }));
  const differing = plan.flatMap((p) => p.files.filter((f) => f.state === 'differs').map((f) => f.to));
  const replace = differing.length ? await confirmReplace(differing) : true;
  mkdirSync(modelsFolder, { recursive: true });
  for (const { files } of plan) {
    const conflicts = files.some((f) => f.state === 'differs');
    for (const file of files) {
      if (conflicts && !replace) {
        if (file.state === 'differs') result.declined.push(path.basename(file.to));
        else if (file.state === 'same') result.unchanged.push(path.basename(file.to));
        continue;
      }
      if (file.state === 'same') result.unchanged.push(path.basename(file.to));
      else {
        copyFileSync(file.from, file.to);
        result.installed.push(path.basename(file.to));
      }
    }
  }
  return result;
}

function digest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
