import { DEFAULT_GPU_ID } from '../core/gpus/gpuProfiles';

/**
 * Every `gpuEstimator.*` setting and its default. package.json's `contributes.configuration`
 * must declare exactly these (a unit test checks), and `settings.ts` reads them through here.
 */
export interface SettingValues {
  readonly gpu: string;
  readonly safetyMarginPercent: number;
  readonly 'hover.enabled': boolean;
  readonly 'statusBar.enabled': boolean;
}

export const SETTING_DEFAULTS: SettingValues = {
  gpu: DEFAULT_GPU_ID,
  safetyMarginPercent: 10,
  'hover.enabled': true,
  'statusBar.enabled': true,
};

export type SettingKey = keyof SettingValues;
