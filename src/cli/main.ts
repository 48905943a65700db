import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { estimateJson } from '../core/estimate/estimateJson';
import { EstimationPipeline, type ProjectRequest } from '../core/estimate/pipeline';
import { DEFAULT_GPU_ID, GPU_PROFILES, findGpuProfile } from '../core/gpus/gpuProfiles';
import { formatMiB } from '../core/format/units';
import { findPackageRoot, packagedParserAssets } from '../core/parsing/parserAssets';
import { createPythonParser } from '../core/parsing/pythonParser';
import { USAGE, UsageError, parseCliArguments } from './arguments';
import { collocationOutput } from './collocationOutput';
import { diskProjectFiles } from './diskProjectFiles';
import { dryRunJson, dryRunLines } from './dryRunOutput';
import { runDryRun } from '../core/dryRun/dryRunProcess';
import { dryRunSpecFor, modelFedByLoader } from '../core/dryRun/dryRunSpec';
import { humanOutput } from './humanOutput';
import { slurmOutput } from './slurmOutput';
import { InputError, readPythonSource } from './readSource';

declare const PACKAGE_VERSION: string;

export const EXIT_OK = 0;
export const EXIT_BAD_INPUT = 2;
export const EXIT_OOM = 3;
/** The reader of the output went away early (`| head -1`): 128 + SIGPIPE, what a shell reports for any command a closed pipe stops. */
export const EXIT_OUTPUT_CLOSED = 141;

/** The `gpu-estimate` command. Returns the exit code; writes only through the given streams. */
export async function main(argv: readonly string[], stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Promise<number> {
  const fail = (message: string): number => {
    stderr.write(`gpu-estimate: ${message}\n`);
    return EXIT_BAD_INPUT;
  };
  let args;
  try {
    args = parseCliArguments(argv);
  } catch (error) {
    if (error instanceof UsageError) return fail(`${error.message} (see --help)`);
    throw error;
  }
  if (args.help) {
    stdout.write(`${USAGE}\n`);
    return EXIT_OK;
  }
  if (args.version) {
    stdout.write(`${typeof PACKAGE_VERSION === 'string' ? PACKAGE_VERSION : 'development'}\n`);
    return EXIT_OK;
  }
  if (args.listGpus) {
    for (const gpu of GPU_PROFILES) stdout.write(`${gpu.id.padEnd(14)} ${gpu.name.padEnd(15)} ${formatMiB(gpu.memoryMiB)}\n`);
    return EXIT_OK;
  }
  if (args.command === 'estimate' && !args.file) return fail('no file given (usage: gpu-estimate FILE.py [--gpu ID] [--batch-size N] [--json] [--fail-on-oom])');
  const gpu = findGpuProfile(args.gpu ?? DEFAULT_GPU_ID);
  if (!gpu) return fail(`unknown GPU "${args.gpu}"; known: ${GPU_PROFILES.map((p) => p.id).join(', ')}`);
  const unknownType = args.gpuTypes?.find((t) => !findGpuProfile(t.gpu));
  if (unknownType) return fail(`--gpu-types: unknown GPU profile "${unknownType.gpu}" for ${unknownType.type}; known: ${GPU_PROFILES.map((p) => p.id).join(', ')}`);
  const clusterTypes = args.gpuTypes?.map(({ type, gpu: id }) => ({ type, profile: findGpuProfile(id)! }));

  if (args.root !== undefined && !isFolder(args.root)) return fail(`--root: no folder ${args.root}`);
  const projectRoot = args.root === undefined ? {} : { root: path.resolve(args.root) };
  const sources: { file: string; source: string; project: ProjectRequest }[] = [];
  for (const file of args.command === 'estimate' ? [args.file!] : args.files) {
    try {
      // Each script's imports of its project's own modules are read from the disk.
      sources.push({ file, source: await readPythonSource(file), project: { files: diskProjectFiles, path: path.resolve(file), ...projectRoot } });
    } catch (error) {
      if (error instanceof InputError) return fail(error.message);
      throw error;
    }
  }
  if (args.models !== undefined && !existsSync(args.models)) return fail(`--models: no folder ${args.models}`);
  const root = findPackageRoot(__dirname);
  const parser = await createPythonParser(packagedParserAssets(root));
  const safetyMargin = args.safetyMarginPercent / 100;
  const userModels = args.models === undefined ? {} : { userModelsDir: path.resolve(args.models) };
  // The learned step runs the bundled ONNX ensembles (the JSON says which execution provider ran them).
  const pipeline = new EstimationPipeline(
    parser,
    { modelsDir: path.join(root, 'models'), ...userModels, executionProvider: args.executionProvider, log: (level, message) => level === 'warning' && stderr.write(`gpu-estimate: ${message}\n`) },
    (level, message) => level === 'error' && stderr.write(`gpu-estimate: ${message}\n`),
  );
  try {
    if (args.command === 'colocate') {
      const collocation = await pipeline.colocate(sources, { gpu, safetyMargin, assume: args.assume });
      stdout.write(args.json ? `${JSON.stringify(collocation, null, 2)}\n` : `${collocationOutput(collocation)}\n`);
      return args.failOnOom && collocation.fits === false ? EXIT_OOM : EXIT_OK;
    }
    const estimate = await pipeline.estimate({ ...sources[0]!, options: { gpu, batchSize: args.batchSize, safetyMargin, assume: args.assume, scriptArguments: args.scriptArguments, ...(args.gpus === undefined ? {} : { gpus: args.gpus }) } });
    if (args.slurm) {
      const types = clusterTypes ?? GPU_PROFILES.map((profile) => ({ type: profile.id, profile }));
      const placement = pipeline.place(estimate, types.map((t) => t.profile), safetyMargin);
      const { text, status } = slurmOutput(placement, types.map((t) => ({ type: t.type, gpuName: t.profile.name, memoryMiB: t.profile.memoryMiB })));
      stdout.write(`${text}\n`);
      return args.failOnOom && status === 'oom' ? EXIT_OOM : EXIT_OK;
    }
    const dryRun = args.dryRun
      ? await runDryRun({
          script: path.resolve(args.file!),
          harnessParent: root,
          python: args.python,
          spec: dryRunSpecFor(modelFedByLoader(estimate), {
            argv: args.scriptArguments,
            ...(estimate.dataShape ? { dataShape: estimate.dataShape } : {}),
            assume: args.assume,
            ...(args.batchSize === undefined ? {} : { batchSize: args.batchSize }),
            ...(estimate.project ? { root: estimate.project.root } : args.root === undefined ? {} : { root: path.resolve(args.root) }),
          }),
          gpuMemoryMiB: estimate.gpu.memoryMiB,
          steps: args.dryRunSteps,
          timeoutMs: args.dryRunTimeoutSeconds * 1000,
        })
      : undefined;
    if (args.json) {
      const json = estimateJson(estimate);
      const models = dryRun ? json.models.map((model) => ({ ...model, dryRun: dryRunJson(dryRun, model.memory.estimateMiB, estimate.gpu) })) : json.models;
      stdout.write(`${JSON.stringify({ ...json, models }, null, 2)}\n`);
    } else stdout.write(`${[humanOutput(estimate, { dryRun: dryRun !== undefined }), ...(dryRun ? dryRunLines(dryRun, estimate) : [])].join('\n')}\n`);
    return args.failOnOom && (estimate.models.some((model) => model.fits === false) || estimate.process?.fits === false) ? EXIT_OOM : EXIT_OK;
  } finally {
    await pipeline.dispose();
  }
}

function isFolder(folder: string): boolean {
  try {
    return statSync(folder).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Ends the process quietly when the reader of `stream` has gone (EPIPE): Node ignores SIGPIPE, so
 * without this the failed write becomes an unhandled 'error' event and a stack trace.
 */
export function exitWhenReaderCloses(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT_OUTPUT_CLOSED);
  });
}

if (require.main === module) {
  exitWhenReaderCloses(process.stdout);
  exitWhenReaderCloses(process.stderr);
  main(process.argv.slice(2), process.stdout, process.stderr).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`gpu-estimate: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
      if (process.env.GPU_ESTIMATE_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
      process.exitCode = 1;
    },
  );
}
