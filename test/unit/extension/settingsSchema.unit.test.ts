import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { GPU_PROFILES } from '../../../src/core/gpus/gpuProfiles';
import { SETTING_DEFAULTS } from '../../../src/extension/settingsSchema';
import { REPO_ROOT } from '../fixtures';

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
const properties: Record<string, { default: unknown; enum?: string[] }> = manifest.contributes.configuration.properties;

describe('settings declared in package.json', () => {
  it('are exactly the ones the extension reads, with the same defaults', () => {
    const declared = Object.fromEntries(Object.entries(properties).map(([key, schema]) => [key.replace(/^gpuEstimator\./, ''), schema.default]));
    assert.deepEqual(declared, { ...SETTING_DEFAULTS });
  });

  it('offer every GPU profile, and only those, for gpuEstimator.gpu', () => {
    assert.deepEqual(properties['gpuEstimator.gpu']?.enum, GPU_PROFILES.map((p) => p.id));
  });

  it('contribute the Estimate GPU memory command and activate on Python', () => {
    const command = manifest.contributes.commands.find((c: { command: string }) => c.command === 'gpuEstimator.estimateMemory');
    assert.equal(command?.title, 'Estimate GPU memory');
    assert.ok(manifest.activationEvents.includes('onLanguage:python'));
    assert.match(manifest.engines.vscode, /^\^1\.(9\d|100)\./);
  });
});
