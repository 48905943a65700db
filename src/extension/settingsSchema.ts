import type { ExecutionProviderChoice } from '../core/estimators/onnx/executionProvider';
import { DEFAULT_GPU_ID } from '../core/gpus/gpuProfiles';

/**
 * Every `gpuEstimator.*` setting and its default. package.json's `contributes.configuration`
 * must declare exactly these (a unit test checks), and `settings.ts` reads them through here.
 */
export interface SettingValues {
  readonly gpu: string;
  readonly safetyMarginPercent: number;
  /** GPUs a DDP, FSDP or DeepSpeed fine-tuning job runs on; 0: the count its launch command or config gives (else 1). The CLI's --gpus. */
  readonly gpuCount: number;
  readonly 'hover.enabled': boolean;
  readonly 'statusBar.enabled': boolean;
  readonly 'codeLens.enabled': boolean;
  readonly 'diagnostics.enabled': boolean;
  readonly executionProvider: ExecutionProviderChoice;
  readonly modelsFolder: string;
  /** Values assumed by name in place of what scripts read (argparse, environment, config files, sizes from the data); `--set` in the CLI. */
  readonly assume: Readonly<Record<string, unknown>>;
  readonly 'remote.host': string;
  readonly 'remote.sshConfigFile': string;
  readonly 'remote.python': string;
  readonly 'remote.workDir': string;
  readonly 'remote.device': 'cuda' | 'cpu';
  readonly 'remote.measureSteps': number;
  readonly 'remote.scheduler': 'none' | 'slurm';
  readonly 'remote.sbatchArgs': readonly string[];
  /** The Python (with torch) "Dry-run on CPU" uses; empty: the Python extension's selected interpreter, else python3. */
  readonly 'dryRun.python': string;
  readonly 'dryRun.steps': number;
  readonly 'dryRun.timeoutSeconds': number;
}

export const SETTING_DEFAULTS: SettingValues = {
  gpu: DEFAULT_GPU_ID,
  safetyMarginPercent: 10,
  gpuCount: 0,
  'hover.enabled': true,
  'statusBar.enabled': true,
  'codeLens.enabled': true,
  'diagnostics.enabled': false,
  executionProvider: 'auto',
  modelsFolder: '',
  assume: {},
  'remote.host': '',
  'remote.sshConfigFile': '',
  'remote.python': 'python3',
  'remote.workDir': '~/.gpu-estimator',
  'remote.device': 'cuda',
  'remote.measureSteps': 20,
  'remote.scheduler': 'none',
  'remote.sbatchArgs': [],
  'dryRun.python': '',
  'dryRun.steps': 3,
  'dryRun.timeoutSeconds': 120,
};

export type SettingKey = keyof SettingValues;
