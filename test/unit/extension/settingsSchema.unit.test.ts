import * as assert from 'node:assert/strict';
import { GPU_PROFILES } from '../../../src/core/gpus/gpuProfiles';
import { SETTING_DEFAULTS } from '../../../src/extension/settingsSchema';
import { readManifest } from '../fixtures';

const manifest = readManifest();
const properties = manifest.contributes.configuration.properties;

describe('settings declared in package.json', () => {
  it('are exactly the ones the extension reads, with the same defaults', () => {
    const declared = Object.fromEntries(Object.entries(properties).map(([key, schema]) => [key.replace(/^gpuEstimator\./, ''), schema.default]));
    assert.deepEqual(declared, { ...SETTING_DEFAULTS });
  });

  it('offer every GPU profile, and only those, for gpuEstimator.gpu', () => {
    assert.deepEqual(properties['gpuEstimator.gpu']?.enum, GPU_PROFILES.map((p) => p.id));
  });

  it('contribute the Estimate GPU memory command and activate on Python', () => {
    const command = manifest.contributes.commands.find((c) => c.command === 'gpuEstimator.estimateMemory');
    assert.equal(command?.title, 'Estimate GPU memory');
    assert.ok(manifest.activationEvents.includes('onLanguage:python'));
    assert.match(manifest.engines.vscode, /^\^1\.(9\d|100)\./);
  });
});
