import * as vscode from 'vscode';
import { EXECUTION_PROVIDER_CHOICES, type ExecutionProviderChoice } from '../core/estimators/onnx/executionProvider';
import { defaultGpuProfile, findGpuProfile, type GpuProfile } from '../core/gpus/gpuProfiles';
import { SETTING_DEFAULTS, type SettingKey, type SettingValues } from './settingsSchema';
import { assumedValuesFrom } from '../core/analysis/config/assumedValues';
import type { AssumedValue } from '../core/analysis/config/configSources';

export const SECTION = 'gpuEstimator';

/** Every setting the extension reads, typed. Keys match `contributes.configuration` in package.json. */
export interface Settings {
  readonly gpu: GpuProfile;
  /** 0..1 */
  readonly safetyMargin: number;
  /** gpuEstimator.gpuCount: GPUs of a data-parallel fine-tuning job, 0 for the count the script's launch gives. */
  readonly gpuCount: number;
  readonly hoverEnabled: boolean;
  readonly statusBarEnabled: boolean;
  readonly codeLensEnabled: boolean;
  /** Problems-panel entries on the batch-size line for OOM risk (off by default). */
  readonly diagnosticsEnabled: boolean;
  /** Where the learned estimators run: auto (CUDA when installed, else CPU), cuda, cpu. */
  readonly executionProvider: ExecutionProviderChoice;
  /** The user's models folder (gpuEstimator.modelsFolder), as written; empty: the bundled models only. */
  readonly modelsFolder: string;
  /** gpuEstimator.assume: values assumed by name in place of what the script reads (the CLI's --set). */
  readonly assume: Readonly<Record<string, AssumedValue>>;
  /** Entries of gpuEstimator.assume that were left out, and why (for the log). */
  readonly assumeProblems: readonly string[];
  readonly remote: RemoteSettings;
  readonly dryRun: DryRunSettings;
}

/** `gpuEstimator.dryRun.*`: the CPU dry run of the script's training step. */
export interface DryRunSettings {
  /** As written; empty: the Python extension's selected interpreter, else python3. */
  readonly python: string;
  readonly steps: number;
  readonly timeoutSeconds: number;
}

/** `gpuEstimator.remote.*`: where and how the remote commands run the harness. */
export interface RemoteSettings {
  /** An ssh host or ~/.ssh/config alias; empty: pick one each time. */
  readonly host: string;
  /** An ssh config file instead of ~/.ssh/config; empty: ssh's default. */
  readonly sshConfigFile: string;
  readonly python: string;
  readonly workDir: string;
  readonly device: 'cuda' | 'cpu';
  readonly measureSteps: number;
  /** `slurm`: the host is a SLURM login host; collection goes to a job array submitted there. */
  readonly scheduler: 'none' | 'slurm';
  /** sbatch options for that array (`--gres=gpu:a100:1`, `--partition=gpu`). */
  readonly sbatchArgs: readonly string[];
}

/** The one place that reads `gpuEstimator.*`; invalid values fall back to the defaults. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const get = <K extends SettingKey>(key: K): SettingValues[K] => config.get(key, SETTING_DEFAULTS[key]);
  const margin = Number(get('safetyMarginPercent'));
  const assumed = assumedValuesFrom(get('assume'));
  return {
    gpu: findGpuProfile(String(get('gpu'))) ?? defaultGpuProfile(),
    safetyMargin: Number.isFinite(margin) ? Math.min(Math.max(margin, 0), 50) / 100 : SETTING_DEFAULTS.safetyMarginPercent / 100,
    gpuCount: gpuCountOf(get('gpuCount')),
    hoverEnabled: get('hover.enabled') !== false,
    statusBarEnabled: get('statusBar.enabled') !== false,
    codeLensEnabled: get('codeLens.enabled') !== false,
    diagnosticsEnabled: get('diagnostics.enabled') === true,
    executionProvider: EXECUTION_PROVIDER_CHOICES.find((choice) => choice === get('executionProvider')) ?? SETTING_DEFAULTS.executionProvider,
    modelsFolder: String(get('modelsFolder') ?? '').trim(),
    assume: assumed.values,
    assumeProblems: assumed.problems,
    remote: {
      host: String(get('remote.host') ?? '').trim(),
      sshConfigFile: String(get('remote.sshConfigFile') ?? '').trim(),
      python: String(get('remote.python') || SETTING_DEFAULTS['remote.python']).trim(),
      workDir: String(get('remote.workDir') || SETTING_DEFAULTS['remote.workDir']).trim(),
      device: get('remote.device') === 'cpu' ? 'cpu' : 'cuda',
      measureSteps: Math.max(1, Math.round(Number(get('remote.measureSteps')) || SETTING_DEFAULTS['remote.measureSteps'])),
      scheduler: get('remote.scheduler') === 'slurm' ? 'slurm' : 'none',
      sbatchArgs: (Array.isArray(get('remote.sbatchArgs')) ? get('remote.sbatchArgs') : []).filter((arg): arg is string => typeof arg === 'string' && arg.trim() !== '').map((arg) => arg.trim()),
    },
    dryRun: {
      python: String(get('dryRun.python') ?? '').trim(),
      steps: Math.min(100, Math.max(1, Math.round(Number(get('dryRun.steps')) || SETTING_DEFAULTS['dryRun.steps']))),
      timeoutSeconds: Math.min(3600, Math.max(5, Math.round(Number(get('dryRun.timeoutSeconds')) || SETTING_DEFAULTS['dryRun.timeoutSeconds']))),
    },
  };
}

/** Keeps the current settings and tells listeners when any `gpuEstimator.*` value changes. */
export class SettingsStore implements vscode.Disposable {
  private current = readSettings();
  private readonly changed = new vscode.EventEmitter<Settings>();
  private readonly subscription: vscode.Disposable;
  readonly onDidChange = this.changed.event;

  constructor() {
    this.subscription = vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) return;
      this.current = readSettings();
      this.changed.fire(this.current);
    });
  }

  get settings(): Settings {
    return this.current;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** A whole number of GPUs from 0 (read from the script) to 4096; anything else is 0. */
function gpuCountOf(value: unknown): number {
  const count = Number(value);
  return Number.isInteger(count) && count >= 0 && count <= 4096 ? count : 0;
}
