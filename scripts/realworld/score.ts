/**
 * Scores the CLI's JSON for one project against the corpus's truths, per expected model: found,
 * parameters within 1%, batch size, optimizer, precision, an estimate given.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { CorpusProject, ExpectedModel } from './corpus';
import type { CliRun } from './runCli';

/** The parts of `gpu-estimate --json`'s models the report reads. */
export interface CliModel {
  readonly name: string;
  readonly classFile?: string;
  readonly classLine: number | null;
  readonly params: number;
  readonly batchSize: number | null;
  readonly optimizer: string;
  readonly precision: string;
  readonly memory?: { readonly estimateMiB: number | null } | null;
  readonly assumptions?: readonly { readonly name: string; readonly origin: string }[];
}

export const PARAMS_TOLERANCE = 0.01;

export interface ModelScore {
  readonly project: string;
  readonly expected: ExpectedModel;
  readonly truthParams: number;
  /** The CLI's model scored for this one: by its name, else by its class (file and line). */
  readonly got?: CliModel;
  readonly foundBy?: 'name' | 'class';
  readonly found: boolean;
  readonly paramsRight: boolean;
  readonly batchRight: boolean;
  /** The optimizer kind matches and was read from the source (not the analyzer's Adam default). */
  readonly optimizerRight: boolean;
  readonly optimizerDefaulted: boolean;
  readonly precisionRight: boolean;
  readonly estimateGiven: boolean;
}

/** Whether the line `classLine` of `classFile` (relative to the project) declares `class <className>`. */
function declaresClass(projectDir: string, model: CliModel, className: string): boolean {
  if (!model.classFile || !model.classLine) return false;
  const file = path.isAbsolute(model.classFile) ? model.classFile : path.join(projectDir, model.classFile);
  if (!existsSync(file)) return false;
  const line = readFileSync(file, 'utf8').split('\n')[model.classLine - 1] ?? '';
  return new RegExp(`^\\s*class\\s+${className}\\b`).test(line);
}

/** Whether the analysis says it stopped at its time budget: then the result depends on the machine's load. */
export function budgetHit(run: CliRun): boolean {
  const json = run.json as { warnings?: unknown[]; models?: { warnings?: unknown[] }[] } | undefined;
  const warnings = [...(json?.warnings ?? []), ...(json?.models ?? []).flatMap((m) => m.warnings ?? [])];
  return warnings.some((w) => typeof w === 'string' && /out of time/i.test(w));
}

export function cliModels(run: CliRun): CliModel[] {
  const json = run.json as { models?: CliModel[] } | undefined;
  return run.outcome === 'done' && Array.isArray(json?.models) ? json.models : [];
}

export function scoreProject(project: CorpusProject, projectDir: string, truths: ReadonlyMap<string, number> | undefined, run: CliRun): ModelScore[] {
  const models = cliModels(run);
  const taken = new Set<CliModel>();
  const byName = project.models.map((expected) => {
    const got = models.find((m) => m.name === expected.name);
    if (got) taken.add(got);
    return got;
  });
  return project.models.map((expected, i) => {
    let got = byName[i];
    let foundBy: ModelScore['foundBy'] = got ? 'name' : undefined;
    if (!got) {
      got = models.find((m) => !taken.has(m) && declaresClass(projectDir, m, expected.className));
      if (got) {
        taken.add(got);
        foundBy = 'class';
      }
    }
    const truthParams = truths?.get(expected.name) ?? NaN;
    const optimizerDefaulted = !!got && !(got.assumptions ?? []).some((a) => a.name === 'optimizer');
    return {
      project: project.project,
      expected,
      truthParams,
      got,
      foundBy,
      found: !!got,
      paramsRight: !!got && Number.isFinite(truthParams) && Math.abs(got.params - truthParams) <= PARAMS_TOLERANCE * truthParams,
      batchRight: !!got && got.batchSize === expected.batchSize,
      optimizerRight: !!got && !optimizerDefaulted && got.optimizer === expected.optimizer,
      optimizerDefaulted,
      precisionRight: !!got && got.precision === expected.precision,
      estimateGiven: !!got && typeof got.memory?.estimateMiB === 'number' && got.memory.estimateMiB > 0,
    };
  });
}
