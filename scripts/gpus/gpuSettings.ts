/**
 * The `gpuEstimator.gpu` setting's choices in package.json and its row in the README's settings
 * table are generated from src/core/gpus/gpuProfiles.json, so that adding a GPU is one entry there
 * plus `npm run gpus:sync`. The build (esbuild.config.mjs) refuses to run while they disagree.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_GPU_ID, GPU_PROFILES, type GpuProfile } from '../../src/core/gpus/gpuProfiles';

const SETTING = 'gpuEstimator.gpu';

/** The generated files, as text. */
export interface GpuSettingsFiles {
  readonly 'package.json': string;
  readonly 'README.md': string;
}

/**
 * The label the Settings editor shows beside an id: NVIDIA's product name, which keeps "GeForce"
 * for consumer cards but not nvidia-smi's form factor ("-SXM4") or old "Tesla" prefix.
 */
export function settingDescription(profile: GpuProfile): string {
  return `${/\bGeForce\b/.test(profile.fullName) ? 'NVIDIA GeForce' : 'NVIDIA'} ${profile.name}`;
}

interface Manifest {
  readonly contributes?: { readonly configuration?: { readonly properties?: Record<string, Record<string, unknown>> } };
}

/** package.json with the setting's default, enum and enumDescriptions from `profiles`; the rest as it was, 2-space JSON. */
export function syncedManifest(manifest: string, profiles: readonly GpuProfile[]): string {
  const parsed = JSON.parse(manifest) as Manifest;
  const setting = parsed.contributes?.configuration?.properties?.[SETTING];
  if (!setting) throw new Error(`package.json: no ${SETTING} under contributes.configuration.properties`);
  setting.default = DEFAULT_GPU_ID;
  setting.enum = profiles.map((profile) => profile.id);
  setting.enumDescriptions = profiles.map(settingDescription);
  return `${JSON.stringify(parsed, null, 2)}\n`;
}

const README_ROW = /^\| `gpuEstimator\.gpu` \|.*$/gm;

/** The README with the setting's row of the settings table listing `profiles`. */
export function syncedReadme(readme: string, profiles: readonly GpuProfile[]): string {
  const rows = readme.match(README_ROW)?.length ?? 0;
  if (rows !== 1) throw new Error(`README.md: ${rows} settings-table rows for ${SETTING} (a line starting "| \`${SETTING}\` |"), expected 1`);
  const ids = profiles.map((profile) => `\`${profile.id}\``).join(', ');
  return readme.replace(README_ROW, () => `| \`${SETTING}\` | \`${DEFAULT_GPU_ID}\` | GPU to check against: ${ids} |`);
}

export function syncedGpuSettings(files: GpuSettingsFiles, profiles: readonly GpuProfile[]): GpuSettingsFiles {
  return { 'package.json': syncedManifest(files['package.json'], profiles), 'README.md': syncedReadme(files['README.md'], profiles) };
}

function changedFiles(before: GpuSettingsFiles, after: GpuSettingsFiles): (keyof GpuSettingsFiles)[] {
  return (Object.keys(before) as (keyof GpuSettingsFiles)[]).filter((name) => after[name] !== before[name]);
}

/** One line saying which files disagree with the profiles and what to run, or null when all agree. */
export function gpuSettingsDrift(files: GpuSettingsFiles, profiles: readonly GpuProfile[]): string | null {
  const stale = changedFiles(files, syncedGpuSettings(files, profiles));
  if (stale.length === 0) return null;
  return `${stale.join(' and ')}: the ${SETTING} choices disagree with src/core/gpus/gpuProfiles.json; run \`npm run gpus:sync\``;
}

export function readGpuSettingsFiles(root: string): GpuSettingsFiles {
  const read = (name: string): string => readFileSync(path.join(root, name), 'utf8');
  return { 'package.json': read('package.json'), 'README.md': read('README.md') };
}

/** For the build: the drift of the checkout at `root` from the profiles the code is built with. */
export function checkGpuSettings(root: string): string | null {
  return gpuSettingsDrift(readGpuSettingsFiles(root), GPU_PROFILES);
}

/** Rewrites the files at `root` that disagree with the profiles; returns their names. */
export function syncGpuSettings(root: string): string[] {
  const files = readGpuSettingsFiles(root);
  const synced = syncedGpuSettings(files, GPU_PROFILES);
  const changed = changedFiles(files, synced);
  for (const name of changed) writeFileSync(path.join(root, name), synced[name]);
  return changed;
}
