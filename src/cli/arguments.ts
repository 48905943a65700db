import { parseArgs } from 'node:util';
import { EXECUTION_PROVIDER_CHOICES, type ExecutionProviderChoice } from '../core/estimators/onnx/executionProvider';
import { MAX_ASSUMED, parseAssignment } from '../core/analysis/config/assumedValues';
import type { AssumedValue } from '../core/analysis/config/configSources';

export interface CliArguments {
  /** `estimate` one script (the default), or `colocate` several on one GPU. */
  readonly command: 'estimate' | 'colocate';
  readonly file?: string;
  /** colocate: the scripts, two or more. */
  readonly files: readonly string[];
  readonly gpu?: string;
  readonly batchSize?: number;
  /** --gpus N: the GPUs a data-parallel or sharded fine-tuning job runs on, over the count its launch command or config says. */
  readonly gpus?: number;
  readonly json: boolean;
  readonly failOnOom: boolean;
  readonly safetyMarginPercent: number;
  readonly executionProvider: ExecutionProviderChoice;
  /** --models DIR: a folder of the user's own models, tried before the bundled ones. */
  readonly models?: string;
  /** --root DIR: the project root the script's imports are resolved from (default: found from the file upward). */
  readonly root?: string;
  /** --set NAME=VALUE, repeated: values assumed in place of what the script reads under NAME (argparse, environment, config files, constants, sizes from the data). */
  readonly assume: Readonly<Record<string, AssumedValue>>;
  /** The words after `--`: the arguments the script is run with (`-- fit --config configs/cifar.yaml`), as its sys.argv[1:]. */
  readonly scriptArguments: readonly string[];
  /** --slurm: print the resources to request from SLURM instead of the report. */
  readonly slurm: boolean;
  /** --gpu-types: the cluster's GRES GPU type names and the profile each is (`t4=t4-16gb`); default every profile under its own id. */
  readonly gpuTypes?: readonly { readonly type: string; readonly gpu: string }[];
  /** --dry-run: also run the script's own training step on the CPU (harness/dry_run.py) and replay its allocations. */
  readonly dryRun: boolean;
  /** --python PATH: the interpreter (with torch) the dry run uses; default python3. */
  readonly python: string;
  /** --steps N: training steps the dry run takes (default 3). */
  readonly dryRunSteps: number;
  /** --timeout S: seconds the dry run may take (default 120). */
  readonly dryRunTimeoutSeconds: number;
  readonly listGpus: boolean;
  readonly help: boolean;
  readonly version: boolean;
}

export class UsageError extends Error {}

export const USAGE = `Usage: gpu-estimate FILE.py [--gpu ID] [--batch-size N] [--gpus N] [--set NAME=VALUE ...] [--json] [--fail-on-oom] [-- SCRIPT ARGS...]
                    [--dry-run [--python PATH] [--steps N] [--timeout S]]
       gpu-estimate colocate A.py B.py [C.py ...] [--gpu ID] [--json] [--fail-on-oom]

Estimates the peak GPU memory of the PyTorch training script FILE.py without running it;
colocate: whether the scripts' training jobs fit on one GPU together, each in its own process.

Options:
  --gpu ID              GPU profile to check against (default a100-40gb; see --list-gpus)
  --batch-size N        use this batch size instead of the one in the script
  --gpus N              GPUs a DDP, FSDP or DeepSpeed fine-tuning job runs on, instead of
                        the count its launch command or accelerate config gives; the
                        estimate is then per GPU (several GPUs and no strategy: DDP)
  --set NAME=VALUE      assume VALUE for what the script reads under NAME: an argparse
                        option (batch_size), an environment variable (BATCH_SIZE), a
                        config file key (model.n_layer or n_layer), a top-level constant,
                        a dataclass field or a size from the data (ntokens); repeatable
  -- SCRIPT ARGS...     the arguments the script is run with (python FILE.py SCRIPT ARGS...):
                        its sys.argv, argparse options, HfArgumentParser's dataclasses
                        (--model_name_or_path ...), LightningCLI's --config; default none
  --safety-margin PCT   warn when within PCT percent of the GPU's memory (default 10)
  --json                print one JSON object instead of a table
  --fail-on-oom         exit with 3 when a model (colocate: the jobs together) is estimated
                        not to fit the GPU
  --execution-provider auto|cuda|cpu
                        where the learned estimators run (default auto: CUDA when
                        onnxruntime's CUDA provider is installed, else the CPU)
  --models DIR          use <family>.onnx and <family>.card.json from DIR (your own
                        trained models) where present and valid, else the bundled ones
  --root DIR            the project root for the script's imports of its own modules
                        (default: the nearest folder upward with .git, pyproject.toml,
                        setup.py or setup.cfg, else the script's folder)
  --slurm               print the SLURM resources to request (#SBATCH --gres=gpu:TYPE:1,
                        the smallest GPU type the job fits) and a line for scripts
  --gpu-types LIST      with --slurm: the cluster's GPU types as TYPE=PROFILE pairs
                        (t4=t4-16gb,a100=a100-40gb); default every profile, by its id
  --dry-run             also run the script's model and training step on the CPU
                        (PyTorch's meta device: no GPU, no data, no network, nothing
                        written outside a temporary folder) and replay its allocations
                        through the caching allocator: a second, independent figure.
                        --batch-size replaces the loader's batch (and the constant or
                        argparse option the script reads its batch size from); --set
                        values become environment variables and replace argparse
                        options, literal top-level constants and dataclass defaults
                        (not config-file keys); -- SCRIPT ARGS are its sys.argv
  --python PATH         the Python (with torch) the dry run uses (default python3)
  --steps N             training steps the dry run takes (default 3)
  --timeout S           seconds the dry run may take before it is stopped (default 120)
  --list-gpus           print the known GPU profiles
  -h, --help            print this help
  -v, --version         print the version

Exit codes: 0 done, 2 bad input, 3 does not fit (only with --fail-on-oom),
141 the reader of the output closed it early (e.g. | head -1).`;

/** More GPUs than this in one data-parallel job is beyond what is estimated per GPU here. */
export const MAX_GPUS = 4096;

/** More scripts than this on one GPU is not a collocation question anyone asks. */
export const MAX_COLOCATED = 16;

export function parseCliArguments(argv: readonly string[]): CliArguments {
  // A script named `colocate` is still reachable as ./colocate.py; the word alone is the command.
  const command = argv[0] === 'colocate' ? 'colocate' : 'estimate';
  // Everything after the first `--` is the script's own command line, not ours.
  const separator = argv.indexOf('--');
  const scriptArguments = separator >= 0 ? argv.slice(separator + 1) : [];
  if (separator >= 0) argv = argv.slice(0, separator);
  if (scriptArguments.length > MAX_ASSUMED) throw new UsageError(`at most ${MAX_ASSUMED} script arguments after --, got ${scriptArguments.length}`);
  if (command === 'colocate' && scriptArguments.length > 0) throw new UsageError('script arguments after -- apply to one script, not to colocate');
  let parsed;
  try {
    parsed = parseArgs({
      args: command === 'colocate' ? argv.slice(1) : [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        gpu: { type: 'string' },
        'batch-size': { type: 'string' },
        gpus: { type: 'string' },
        'safety-margin': { type: 'string' },
        'execution-provider': { type: 'string' },
        models: { type: 'string' },
        root: { type: 'string' },
        'gpu-types': { type: 'string' },
        set: { type: 'string', multiple: true },
        slurm: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        python: { type: 'string' },
        steps: { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean', default: false },
        'fail-on-oom': { type: 'boolean', default: false },
        'list-gpus': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (error) {
    // node:util's messages can add a hint on further lines; the first says what is wrong.
    throw new UsageError((error instanceof Error ? error.message : String(error)).split('\n')[0]);
  }
  const { values, positionals } = parsed;
  if (command === 'colocate') {
    if (positionals.length < 2) throw new UsageError(`colocate needs two or more scripts, got ${positionals.length}`);
    if (positionals.length > MAX_COLOCATED) throw new UsageError(`colocate takes at most ${MAX_COLOCATED} scripts, got ${positionals.length}`);
    if (values['batch-size'] !== undefined) throw new UsageError('--batch-size does not apply to colocate: each script keeps its own');
    if (values.gpus !== undefined) throw new UsageError('--gpus does not apply to colocate: the scripts share one GPU');
    if (values.slurm) throw new UsageError('--slurm applies to one script, not to colocate');
  } else if (positionals.length > 1) throw new UsageError(`expected one file, got ${positionals.length}: ${positionals.join(' ')} (several scripts on one GPU: gpu-estimate colocate ...)`);
  if (values['gpu-types'] !== undefined && !values.slurm) throw new UsageError('--gpu-types applies only with --slurm');
  for (const flag of ['python', 'steps', 'timeout'] as const) {
    if (values[flag] !== undefined && !values['dry-run']) throw new UsageError(`--${flag} applies only with --dry-run`);
  }
  if (values['dry-run'] && command === 'colocate') throw new UsageError('--dry-run applies to one script, not to colocate');
  return {
    command,
    file: command === 'estimate' ? positionals[0] : undefined,
    files: positionals,
    gpu: values.gpu,
    batchSize: values['batch-size'] === undefined ? undefined : positiveInteger('--batch-size', values['batch-size']),
    ...(values.gpus === undefined ? {} : { gpus: boundedInteger('--gpus', values.gpus, 1, MAX_GPUS) }),
    json: values.json ?? false,
    failOnOom: values['fail-on-oom'] ?? false,
    safetyMarginPercent: values['safety-margin'] === undefined ? 10 : percentage(values['safety-margin']),
    executionProvider: executionProvider(values['execution-provider']),
    ...(values.models === undefined ? {} : { models: modelsDir(values.models) }),
    ...(values.root === undefined ? {} : { root: folderArgument('--root', values.root) }),
    assume: assumedValues(values.set ?? []),
    scriptArguments,
    slurm: values.slurm ?? false,
    ...(values['gpu-types'] === undefined ? {} : { gpuTypes: gpuTypes(values['gpu-types']) }),
    dryRun: values['dry-run'] ?? false,
    python: values.python ?? 'python3',
    dryRunSteps: values.steps === undefined ? 3 : boundedInteger('--steps', values.steps, 1, 100),
    dryRunTimeoutSeconds: values.timeout === undefined ? 120 : boundedInteger('--timeout', values.timeout, 1, 3600),
    listGpus: values['list-gpus'] ?? false,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}

/** Plain decimal digits, nothing else: no sign, blanks, hex, exponent or separators. */
const DECIMAL_INTEGER = /^[0-9]+$/;
const DECIMAL_NUMBER = /^[0-9]+(\.[0-9]+)?$/;

function boundedInteger(flag: string, text: string, low: number, high: number): number {
  if (!DECIMAL_INTEGER.test(text) || Number(text) < low || Number(text) > high) throw new UsageError(`${flag} needs a whole number from ${low} to ${high}, got "${text}"`);
  return Number(text);
}

function positiveInteger(flag: string, text: string): number {
  if (!DECIMAL_INTEGER.test(text) || BigInt(text) < 1n) throw new UsageError(`${flag} needs a positive whole number in plain decimal digits, got "${text}"`);
  // Past 2**53 - 1 a JavaScript number is no longer exact, so the estimate would be for another batch size.
  if (BigInt(text) > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${flag} ${text} is beyond what can be estimated (at most ${Number.MAX_SAFE_INTEGER})`);
  return Number(text);
}

function percentage(text: string): number {
  const value = Number(text);
  if (!DECIMAL_NUMBER.test(text) || value >= 100) throw new UsageError(`--safety-margin needs a percentage from 0 to below 100 in plain decimal digits, got "${text}"`);
  return value;
}

function modelsDir(text: string): string {
  return folderArgument('--models', text);
}

function folderArgument(flag: string, text: string): string {
  if (!text.trim()) throw new UsageError(`${flag} needs a folder`);
  return text;
}

function assumedValues(assignments: readonly string[]): Record<string, AssumedValue> {
  if (assignments.length > MAX_ASSUMED) throw new UsageError(`--set at most ${MAX_ASSUMED} times, got ${assignments.length}`);
  const values: Record<string, AssumedValue> = {};
  for (const text of assignments) {
    const parsed = parseAssignment(text);
    if (typeof parsed === 'string') throw new UsageError(parsed);
    values[parsed.name] = parsed.value;
  }
  return values;
}

/** A GRES type name as slurm.conf writes one: letters, digits, `_`, `-` and `.`. */
const GRES_TYPE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function gpuTypes(text: string): { type: string; gpu: string }[] {
  const pairs = text.split(',').map((pair) => pair.trim());
  return pairs.map((pair) => {
    const [type, gpu, extra] = pair.split('=');
    if (extra !== undefined || !type || !gpu || !GRES_TYPE.test(type)) throw new UsageError(`--gpu-types needs TYPE=PROFILE pairs separated by commas (t4=t4-16gb,a100=a100-40gb), got "${pair}"`);
    return { type, gpu: gpu.trim() };
  });
}

function executionProvider(text: string | undefined): ExecutionProviderChoice {
  if (text === undefined) return 'auto';
  const choice = EXECUTION_PROVIDER_CHOICES.find((c) => c === text);
  if (!choice) throw new UsageError(`--execution-provider needs one of ${EXECUTION_PROVIDER_CHOICES.join(', ')}, got "${text}"`);
  return choice;
}
