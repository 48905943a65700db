import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { GPU_PROFILES, type GpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { gpuSettingsDrift, readGpuSettingsFiles, settingDescription, syncedGpuSettings, syncedManifest, syncedReadme } from '../../../../scripts/gpus/gpuSettings';
import { REPO_ROOT } from '../../fixtures';

const files = readGpuSettingsFiles(REPO_ROOT);

/** A made-up card, so that no real profile ever takes its id. */
const NEW_GPU: GpuProfile = { id: 'x900-96gb', name: 'X900 96GB', fullName: 'NVIDIA X900', architecture: 'Test', memoryMiB: 98304 };

/** gpuProfiles.json's profiles as a copy read from the file, with one more GPU as a contributor would add it. */
function profilesWithNewGpu(): GpuProfile[] {
  const data = JSON.parse(readFileSync(path.join(REPO_ROOT, 'src', 'core', 'gpus', 'gpuProfiles.json'), 'utf8')) as { profiles: GpuProfile[] };
  return [...data.profiles, NEW_GPU];
}

describe('GPU settings generated from gpuProfiles.json', () => {
  it('agree in package.json and the README with the profiles the code uses', () => {
    assert.equal(gpuSettingsDrift(files, GPU_PROFILES), null);
  });

  it('fail the check when a profile is added without `npm run gpus:sync`, and pass once synced', () => {
    const profiles = profilesWithNewGpu();
    assert.equal(
      gpuSettingsDrift(files, profiles),
      'package.json and README.md: the gpuEstimator.gpu choices disagree with src/core/gpus/gpuProfiles.json; run `npm run gpus:sync`',
    );
    assert.equal(gpuSettingsDrift(syncedGpuSettings(files, profiles), profiles), null);
  });

  it('add the new GPU to the enum, its descriptions and the README row, changing nothing else', () => {
    const synced = syncedGpuSettings(files, profilesWithNewGpu());
    const manifest = JSON.parse(synced['package.json']) as { contributes: { configuration: { properties: Record<string, { enum: string[]; enumDescriptions: string[] }> } } };
    const setting = manifest.contributes.configuration.properties['gpuEstimator.gpu']!;
    assert.equal(setting.enum.at(-1), NEW_GPU.id);
    assert.equal(setting.enumDescriptions.at(-1), 'NVIDIA X900 96GB');
    const added = (before: string, after: string): string[] => {
      const old = new Set(before.split('\n'));
      return after.split('\n').filter((line) => !old.has(line));
    };
    // The last entries gain a comma and the new ones follow them, indented as package.json is.
    const last = GPU_PROFILES.at(-1)!;
    assert.deepEqual(added(files['package.json'], synced['package.json']), [
      `            "${last.id}",`,
      `            "${NEW_GPU.id}"`,
      `            "${settingDescription(last)}",`,
      '            "NVIDIA X900 96GB"',
    ]);
    assert.equal(synced['package.json'].split('\n').length, files['package.json'].split('\n').length + 2);
    const readmeChanges = added(files['README.md'], synced['README.md']);
    assert.equal(readmeChanges.length, 1);
    const ids = [...GPU_PROFILES, NEW_GPU].map((p) => `\`${p.id}\``).join(', ');
    assert.equal(readmeChanges[0], `| \`gpuEstimator.gpu\` | \`a100-40gb\` | GPU to check against: ${ids} |`);
  });

  it('say what is missing when package.json has no gpu setting or the README no row for it', () => {
    assert.throws(() => syncedManifest('{"contributes": {}}', GPU_PROFILES), /^Error: package\.json: no gpuEstimator\.gpu under contributes\.configuration\.properties$/);
    assert.throws(() => syncedReadme('# GPU Estimator\n', GPU_PROFILES), /README\.md: 0 settings-table rows for gpuEstimator\.gpu/);
  });
});
