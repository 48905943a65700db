/**
 * The real-projects corpus of issue 18 (test/fixtures/realworld/): its manifest (per project the
 * entry script and, per trained model, the variable, class and the truths as the project runs with
 * its defaults) and truths.json (the parameter counts scripts/realworld/generate_truths.py gets from
 * PyTorch). checkCorpus finds what makes the corpus unusable: a missing file, a model without a
 * truth, a truth outside the analyzer's vocabulary.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

export const OPTIMIZER_KINDS = ['sgd', 'sgd-momentum', 'adam', 'adamw', 'rmsprop', 'adagrad', 'other'] as const;
export const PRECISIONS = ['fp32', 'fp16-mixed', 'bf16-mixed', 'fp16', 'bf16'] as const;
export const TRUTH_SOURCES = ['pytorch', 'formula'] as const;

export interface ExpectedModel {
  /** The variable that holds the model in the entry's run (`model`, `net`, `netG`). */
  readonly name: string;
  readonly className: string;
  readonly batchSize: number;
  readonly optimizer: string;
  readonly optimizerClass: string;
  readonly precision: string;
  /** Where the batch size, optimizer and precision come from in the project. */
  readonly why: string;
  readonly truth: { readonly source: string; readonly build: string; readonly how?: string };
}

export interface CorpusProject {
  readonly project: string;
  readonly kind: readonly string[];
  /** The script, relative to the project's folder. */
  readonly entry: string;
  readonly command: string;
  readonly sysPath?: readonly string[];
  readonly models: readonly ExpectedModel[];
  readonly notes?: string;
}

export interface Corpus {
  readonly dir: string;
  readonly projects: readonly CorpusProject[];
  /** truths.json: project -> model name -> parameter count. */
  readonly params: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/**
 * The words the manifest's command passes to the entry script (`python main.py fit --config c.yaml`:
 * fit, --config, c.yaml), read from the last `&&` part that names the entry; plain
 * whitespace-separated words (the corpus quotes nothing). None when the command does not name it.
 */
export function scriptArgumentsOf(command: string, entry: string): string[] {
  const parts = command.split('&&').map((part) => part.trim().split(/\s+/));
  for (const words of parts.reverse()) {
    const at = words.findIndex((word) => word === entry || word.endsWith(`/${entry}`));
    if (at >= 0) return words.slice(at + 1);
  }
  return [];
}

export const corpusDir = (root: string) => path.join(root, 'test', 'fixtures', 'realworld');

interface TruthsFile {
  readonly projects: Record<string, Record<string, { readonly params: number; readonly className: string; readonly source: string }>>;
}

export function loadCorpus(dir: string): Corpus {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { projects: CorpusProject[] };
  const truths = JSON.parse(readFileSync(path.join(dir, 'truths.json'), 'utf8')) as TruthsFile;
  const params = new Map<string, Map<string, number>>();
  for (const [project, models] of Object.entries(truths.projects)) {
    params.set(project, new Map(Object.entries(models).map(([name, truth]) => [name, truth.params])));
  }
  return { dir, projects: manifest.projects, params };
}

const isPositiveInteger = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value > 0;
const nonEmpty = (value: unknown) => typeof value === 'string' && value.trim().length > 0;

/** Everything wrong with the corpus; empty when every project can be run and scored. */
export function checkCorpus(corpus: Corpus): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const project of corpus.projects) {
    const where = project.project;
    if (seen.has(where)) problems.push(`${where}: listed twice`);
    seen.add(where);
    const folder = path.join(corpus.dir, where);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      problems.push(`${where}: no folder ${folder}`);
      continue;
    }
    if (!nonEmpty(project.entry) || !existsSync(path.join(folder, project.entry))) problems.push(`${where}: the entry ${project.entry} does not exist`);
    if (!nonEmpty(project.command)) problems.push(`${where}: no command`);
    if (!Array.isArray(project.kind) || project.kind.length === 0) problems.push(`${where}: no kind`);
    for (const extra of project.sysPath ?? []) {
      if (!existsSync(path.join(folder, extra))) problems.push(`${where}: the sysPath folder ${extra} does not exist`);
    }
    if (!Array.isArray(project.models) || project.models.length === 0) problems.push(`${where}: no models`);
    const names = new Set<string>();
    for (const model of project.models ?? []) {
      const at = `${where} / ${model.name}`;
      if (!nonEmpty(model.name) || names.has(model.name)) problems.push(`${at}: the model's name is empty or repeated`);
      names.add(model.name);
      if (!nonEmpty(model.className)) problems.push(`${at}: no className`);
      if (!isPositiveInteger(model.batchSize)) problems.push(`${at}: batchSize ${String(model.batchSize)} is not a positive integer`);
      if (!(OPTIMIZER_KINDS as readonly string[]).includes(model.optimizer)) problems.push(`${at}: optimizer ${model.optimizer} is not one of ${OPTIMIZER_KINDS.join(', ')}`);
      if (!nonEmpty(model.optimizerClass)) problems.push(`${at}: no optimizerClass`);
      if (!(PRECISIONS as readonly string[]).includes(model.precision)) problems.push(`${at}: precision ${model.precision} is not one of ${PRECISIONS.join(', ')}`);
      if (!nonEmpty(model.why)) problems.push(`${at}: no why`);
      if (!model.truth || !(TRUTH_SOURCES as readonly string[]).includes(model.truth.source) || !nonEmpty(model.truth.build)) problems.push(`${at}: the truth has no source or build`);
      else if (model.truth.source === 'formula' && !nonEmpty(model.truth.how)) problems.push(`${at}: a formula truth must say how it is derived`);
      const params = corpus.params.get(where)?.get(model.name);
      if (!isPositiveInteger(params)) problems.push(`${at}: truths.json has no parameter count (run scripts/realworld/generate_truths.py)`);
    }
  }
  for (const project of corpus.params.keys()) {
    if (!seen.has(project)) problems.push(`${project}: in truths.json but not in the manifest`);
  }
  return problems;
}
