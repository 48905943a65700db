/**
 * After a remote `train` run: what it trained (read from the downloaded cards and its output) and
 * installing its models into the user's models folder without replacing a file unasked. No vscode
 * here; src/extension/remoteCommands.ts asks the questions.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { MODEL_FAMILIES, type ModelFamily } from '../estimators/family';
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
  /** Files in the downloaded models/ that are not installed, with the reason ("cnn.onnx: a symbolic link, not a file"). */
  readonly refused: readonly string[];
  /** One paragraph for people: inputs, what came out, what did not. */
  readonly text: string;
}

/**
 * The largest model file installed. The bundled ONNX ensembles are about 0.3 MB each; 64 MiB
 * leaves room for ensembles some hundred times larger while a hostile host still cannot make
 * the install hash and copy an arbitrarily large file into the user's models folder.
 */
export const MAX_MODEL_BYTES = 64 * 1024 * 1024;
/** The largest card read: the bundled cards are under 30 KB; a card is parsed whole in memory. */
export const MAX_CARD_BYTES = 2 * 1024 * 1024;

interface Card {
  file?: unknown;
  training?: { data?: { path?: string; runs?: number; gpu?: string; what?: string }[]; runs?: { trainSuccessful?: number } };
}

/**
 * Reads a downloaded train run (`<directory>/models/`, `stdout.jsonl`) and says what it produced
 * from what. The folder came from the host, so nothing in it is trusted: only
 * `<family>.onnx` / `<family>.card.json` of a known family count, each a regular file (no link,
 * FIFO or device) inside models/ and under a size cap, and a card must name exactly its own
 * `<family>.onnx`; everything else is refused with a note instead of being installed.
 * `leftOnHost`: what the download skipped (DownloadResult.skipped), said in the text too.
 */
export function summarizeTraining(directory: string, record: RunRecord, leftOnHost: readonly string[] = []): TrainingSummary {
  const modelsDir = path.join(directory, 'models');
  const trained: TrainedFamily[] = [];
  const refused: string[] = [];
  const modelsStat = lstatOrNull(modelsDir);
  const inside = modelsStat?.isDirectory() ? path.join(realpathSync(directory), 'models') : null;
  if (modelsStat && !inside) refused.push('models: not a folder of its own (a link or a file)');
  if (inside) {
    const expected = new Set(MODEL_FAMILIES.flatMap((family) => [`${family}.onnx`, `${family}.card.json`]));
    for (const name of readdirSync(modelsDir).sort()) if (!expected.has(name)) refused.push(`${name}: not a model or card of a known family (${MODEL_FAMILIES.join(', ')})`);
    for (const family of MODEL_FAMILIES) {
      const found = readFamily(inside, family);
      if (typeof found === 'string') refused.push(found);
      else if (found) trained.push(found);
    }
  }
  const stdout = existsSync(path.join(directory, 'stdout.jsonl')) ? readFileSync(path.join(directory, 'stdout.jsonl'), 'utf8') : '';
  const notTrained = stdout.split('\n').filter((line) => /^[a-z]+: .*no ensemble/.test(line)).map((line) => line.trim());
  const used = record.training;
  const inputs = used
    ? `Trained on ${used.data}${used.reference.length ? ` and the GPUMemNet reference data (${used.reference.map((file) => path.basename(file)).join(', ')})` : ' only (no reference data: the GPUMemNet CSVs were not given)'}; families ${used.families.join(', ')}, ${used.steps} steps per member.`
    : 'Trained.';
  const produced = trained.length
    ? `Models: ${trained.map((t) => `${t.family} (${t.sources.map((s) => `${s.runs} runs from ${s.path}`).join(' + ') || 'sources not recorded'})`).join('; ')}.`
    : refused.length
      ? 'No model could be installed.'
      : 'No models came out: no family had enough successful GPU runs (CPU rows from --device cpu never count as GPU training data).';
  const missing = notTrained.length ? ` Not trained: ${notTrained.join('; ')}.` : '';
  const refusedText = refused.length ? ` Not installed from the download: ${refused.join('; ')}.` : '';
  const skippedText = leftOnHost.length ? ` Left on the host, not downloaded: ${leftOnHost.join('; ')}.` : '';
  return { trained, notTrained, refused, text: `${inputs} ${produced}${missing}${refusedText}${skippedText}` };
}

/** A family's model and card in `folder` (the downloaded models/, a real path); why not, or null when neither is there. */
function readFamily(folder: string, family: ModelFamily): TrainedFamily | string | null {
  const cardName = `${family}.card.json`;
  const onnxName = `${family}.onnx`;
  const card = path.join(folder, cardName);
  const onnx = path.join(folder, onnxName);
  if (!lstatOrNull(card)) return lstatOrNull(onnx) ? `${onnxName}: no ${cardName} beside it` : null;
  const problem = fileProblem(card, folder, MAX_CARD_BYTES) ?? fileProblem(onnx, folder, MAX_MODEL_BYTES);
  if (problem) return problem;
  let parsed: Card;
  try {
    parsed = JSON.parse(readFileSync(card, 'utf8')) as Card;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
  } catch (error) {
    return `${cardName}: not a model card (${error instanceof Error ? error.message : String(error)})`;
  }
  // The card is installed as it is, and the estimators load the model its "file" names, so a
  // card naming anything but its own model would point them at a file this install never checked.
  if (parsed.file !== onnxName) return `${cardName}: names ${JSON.stringify(parsed.file)?.slice(0, 80) ?? 'no file'} instead of ${onnxName}`;
  const data = Array.isArray(parsed.training?.data) ? parsed.training.data : [];
  return {
    family,
    onnx,
    card,
    sources: data.map((source) => ({ path: String(source?.path), runs: Number(source?.runs), gpu: String(source?.gpu), what: String(source?.what) })),
    trainSuccessful: typeof parsed.training?.runs?.trainSuccessful === 'number' ? parsed.training.runs.trainSuccessful : null,
  };
}

/** Why `file` is not a model file to install (missing, not a regular file, outside `folder`, too large); null when it is one. */
function fileProblem(file: string, folder: string, maxBytes: number): string | null {
  const name = path.basename(file);
  const stat = lstatOrNull(file);
  if (!stat) return `${name}: missing`;
  if (stat.isSymbolicLink()) return `${name}: a symbolic link, not a file`;
  if (!stat.isFile()) return `${name}: not a regular file`;
  if (path.dirname(realpathSync(file)) !== folder) return `${name}: resolves outside the downloaded models folder`;
  if (stat.size > maxBytes) return `${name}: ${stat.size} bytes, over the ${maxBytes}-byte limit`;
  return null;
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
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
