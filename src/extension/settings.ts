import * as vscode from 'vscode';
import { DEFAULT_GPU_ID, defaultGpuProfile, findGpuProfile, type GpuProfile } from '../core/gpus/gpuProfiles';

export const SECTION = 'gpuEstimator';

/** Every setting the extension reads, typed. Keys match `contributes.configuration` in package.json. */
export interface Settings {
  readonly gpu: GpuProfile;
  /** 0..1 */
  readonly safetyMargin: number;
  readonly hoverEnabled: boolean;
  readonly statusBarEnabled: boolean;
}

/** The one place that reads `gpuEstimator.*`; invalid values fall back to the defaults. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const margin = config.get<number>('safetyMarginPercent', 10);
  return {
    gpu: findGpuProfile(config.get<string>('gpu', DEFAULT_GPU_ID)) ?? defaultGpuProfile(),
    safetyMargin: Number.isFinite(margin) ? Math.min(Math.max(margin, 0), 50) / 100 : 0.1,
    hoverEnabled: config.get<boolean>('hover.enabled', true),
    statusBarEnabled: config.get<boolean>('statusBar.enabled', true),
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
