/**
 * What the labeller dry-runs: training jobs of architectures with no GPU measurement, each a
 * script and its arguments. Language models of our own (scripts/labeller/sources: a GPT-2-like
 * decoder, a BERT-like encoder, nn.TransformerEncoder and LSTM language models) over sizes,
 * sequence lengths and batch sizes; torchvision classifiers that timm does not have; and the
 * realworld corpus's projects (test/fixtures/realworld) at their own batch size, half and double.
 */
import * as path from 'node:path';
import { corpusDir, loadCorpus, scriptArgumentsOf } from '../realworld/corpus';

export interface LabelSource {
  /** Unique, and the cache's file name. */
  readonly key: string;
  /** The architecture at one configuration: no model is on both sides of a cross-validation split (its batch sizes and sequence lengths go together). */
  readonly model: string;
  /** Leave-one-family-out: the source script (or the realworld project). */
  readonly family: string;
  /** The row's group in the tables. */
  readonly group: string;
  readonly script: string;
  readonly argv: readonly string[];
  /** The project root the script runs from (realworld projects). */
  readonly root?: string;
  /** Replaces the script's batch size, in the static analysis and the dry run alike. */
  readonly batchSize?: number;
}

const grid = <T>(...axes: T[][]): T[][] => axes.reduce<T[][]>((rows, axis) => rows.flatMap((row) => axis.map((value) => [...row, value])), [[]]);

function languageModels(sources: string): LabelSource[] {
  const out: LabelSource[] = [];
  const add = (family: string, group: string, file: string, size: string, argv: string[], sequence: number, batch: number) =>
    out.push({ key: `${family}-${size}-seq${sequence}-b${batch}`, model: `labeller/${family}-${size}`, family: `labeller-${family}`, group, script: path.join(sources, file), argv });
  for (const [[layers, heads, width], block, batch] of grid<number[] | number>([[4, 4, 256], [6, 6, 384], [12, 12, 768], [24, 16, 1024]], [128, 256, 512], [4, 8, 16, 32]) as [number[], number, number][]) {
    add('gpt', 'GPT-2-like decoder', 'gpt_decoder.py', `L${layers}-E${width}`, ['--n-layer', `${layers}`, '--n-head', `${heads}`, '--n-embd', `${width}`, '--block-size', `${block}`, '--batch-size', `${batch}`], block, batch);
  }
  for (const [[layers, heads, hidden], sequence, batch] of grid<number[] | number>([[4, 4, 256], [6, 8, 512], [12, 12, 768]], [128, 256, 512], [8, 16, 32]) as [number[], number, number][]) {
    add('bert', 'BERT-like encoder', 'bert_encoder.py', `L${layers}-H${hidden}`, ['--layers', `${layers}`, '--heads', `${heads}`, '--hidden', `${hidden}`, '--seq-len', `${sequence}`, '--batch-size', `${batch}`], sequence, batch);
  }
  for (const [[layers, heads, width, ffn], sequence, batch] of grid<number[] | number>([[2, 2, 200, 200], [6, 8, 512, 2048], [12, 12, 768, 3072]], [64, 128, 256], [8, 16, 32]) as [number[], number, number][]) {
    add('transformer-encoder', 'nn.TransformerEncoder LM', 'transformer_lm.py', `L${layers}-E${width}`, ['--nlayers', `${layers}`, '--nhead', `${heads}`, '--emsize', `${width}`, '--nhid', `${ffn}`, '--bptt', `${sequence}`, '--batch-size', `${batch}`], sequence, batch);
  }
  for (const [[layers, width, tied], sequence, batch] of grid<number[] | number>([[2, 200, 0], [2, 650, 1], [3, 1500, 0]], [35, 70, 140], [20, 40, 80]) as [number[], number, number][]) {
    add('lstm', 'LSTM LM', 'lstm_lm.py', `L${layers}-H${width}${tied ? '-tied' : ''}`, ['--nlayers', `${layers}`, '--emsize', `${width}`, '--nhid', `${width}`, '--bptt', `${sequence}`, '--batch-size', `${batch}`, ...(tied ? ['--tied'] : [])], sequence, batch);
  }
  return out;
}

/** torchvision 0.14 classifiers without a timm counterpart (the timm runs measured the rest). Segmentation and video models are not in the static analysis's catalog, so they give no row. */
const TORCHVISION_ONLY = ['alexnet', 'squeezenet1_0', 'squeezenet1_1', 'googlenet', 'shufflenet_v2_x0_5', 'shufflenet_v2_x1_0', 'mnasnet0_5', 'mnasnet1_0'];

function torchvisionModels(sources: string): LabelSource[] {
  return grid<string | number>(TORCHVISION_ONLY, [32, 64, 128, 256]).map(([name, batch]) => ({
    key: `torchvision-${name}-b${batch}`,
    model: `labeller/torchvision-${name}`,
    family: 'labeller-torchvision',
    group: 'torchvision classifiers',
    script: path.join(sources, 'torchvision_step.py'),
    argv: ['classification', String(name), '224', '--batch-size', String(batch), '--num-classes', '1000'],
  }));
}

/** Each realworld project at its own batch size (undefined), half and double. */
function realworldProjects(root: string): LabelSource[] {
  const corpus = loadCorpus(corpusDir(root));
  return corpus.projects.flatMap((project) =>
    (['own', 0.5, 2] as const).map((scale) => {
      const own = project.models[0]!.batchSize;
      const batchSize = scale === 'own' ? undefined : Math.max(1, Math.round(own * scale));
      return {
        key: `realworld-${project.project}-${scale === 'own' ? 'own' : `b${batchSize}`}`,
        model: `realworld/${project.project}`,
        family: `realworld-${project.project}`,
        group: 'realworld corpus',
        script: path.join(corpus.dir, project.project, project.entry),
        argv: scriptArgumentsOf(project.command, project.entry),
        root: path.join(corpus.dir, project.project),
        ...(batchSize === undefined ? {} : { batchSize }),
      };
    }),
  );
}

export function labelSources(root: string): LabelSource[] {
  const sources = path.join(root, 'scripts', 'labeller', 'sources');
  return [...languageModels(sources), ...torchvisionModels(sources), ...realworldProjects(root)];
}
