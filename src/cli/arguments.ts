import { parseArgs } from 'node:util';
import { EXECUTION_PROVIDER_CHOICES, type ExecutionProviderChoice } from '../core/estimators/onnx/executionProvider';

export interface CliArguments {
  readonly file?: string;
  readonly gpu?: string;
  readonly batchSize?: number;
  readonly json: boolean;
  readonly failOnOom: boolean;
  readonly safetyMarginPercent: number;
  readonly executionProvider: ExecutionProviderChoice;
  /** --models DIR: a folder of the user's own models, tried before the bundled ones. */
  readonly models?: string;
  /** --root DIR: the project root the script's imports are resolved from (default: found from the file upward). */
  readonly root?: string;
  readonly listGpus: boolean;
  readonly help: boolean;
  readonly version: boolean;
}

export class UsageError extends Error {}

export const USAGE = `Usage: gpu-estimate FILE.py [--gpu ID] [--batch-size N] [--json] [--fail-on-oom]

Estimates the peak GPU memory of the PyTorch training script FILE.py without running it.

Options:
  --gpu ID              GPU profile to check against (default a100-40gb; see --list-gpus)
  --batch-size N        use this batch size instead of the one in the script
  --safety-margin PCT   warn when within PCT percent of the GPU's memory (default 10)
  --json                print one JSON object instead of a table
  --fail-on-oom         exit with 3 when a model is estimated not to fit the GPU
  --execution-provider auto|cuda|cpu
                        where the learned estimators run (default auto: CUDA when
                        onnxruntime's CUDA provider is installed, else the CPU)
  --models DIR          use <family>.onnx and <family>.card.json from DIR (your own
                        trained models) where present and valid, else the bundled ones
  --root DIR            the project root for the script's imports of its own modules
                        (default: the nearest folder upward with .git, pyproject.toml,
                        setup.py or setup.cfg, else the script's folder)
  --list-gpus           print the known GPU profiles
  -h, --help            print this help
  -v, --version         print the version

Exit codes: 0 done, 2 bad input, 3 does not fit (only with --fail-on-oom),
141 the reader of the output closed it early (e.g. | head -1).`;

export function parseCliArguments(argv: readonly string[]): CliArguments {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        gpu: { type: 'string' },
        'batch-size': { type: 'string' },
        'safety-margin': { type: 'string' },
        'execution-provider': { type: 'string' },
        models: { type: 'string' },
        root: { type: 'string' },
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
  if (positionals.length > 1) throw new UsageError(`expected one file, got ${positionals.length}: ${positionals.join(' ')}`);
  return {
    file: positionals[0],
    gpu: values.gpu,
    batchSize: values['batch-size'] === undefined ? undefined : positiveInteger('--batch-size', values['batch-size']),
    json: values.json ?? false,
    failOnOom: values['fail-on-oom'] ?? false,
    safetyMarginPercent: values['safety-margin'] === undefined ? 10 : percentage(values['safety-margin']),
    executionProvider: executionProvider(values['execution-provider']),
    ...(values.models === undefined ? {} : { models: modelsDir(values.models) }),
    ...(values.root === undefined ? {} : { root: folderArgument('--root', values.root) }),
    listGpus: values['list-gpus'] ?? false,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}

/** Plain decimal digits, nothing else: no sign, blanks, hex, exponent or separators. */
const DECIMAL_INTEGER = /^[0-9]+$/;
const DECIMAL_NUMBER = /^[0-9]+(\.[0-9]+)?$/;

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

function executionProvider(text: string | undefined): ExecutionProviderChoice {
  if (text === undefined) return 'auto';
  const choice = EXECUTION_PROVIDER_CHOICES.find((c) => c === text);
  if (!choice) throw new UsageError(`--execution-provider needs one of ${EXECUTION_PROVIDER_CHOICES.join(', ')}, got "${text}"`);
  return choice;
}
