import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';

interface Expected {
  readonly file: string;
  readonly model: string;
  readonly library: string;
  readonly architecture?: string;
  readonly className: string;
  readonly params: number;
  readonly batchSize: number;
  readonly inputShape: readonly number[];
  readonly optimizer: string;
  readonly precision?: string;
}

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'catalog');
const manifest = JSON.parse(readFileSync(path.join(DIR, 'manifest.json'), 'utf8')) as { scripts: Expected[] };

describe('scripts that build standard architectures by name (test/fixtures/catalog)', () => {
  it('has at least ten scripts, of torchvision, timm and transformers', () => {
    assert.ok(manifest.scripts.length >= 10);
    assert.deepEqual(new Set(manifest.scripts.map((s) => s.library)), new Set(['torchvision', 'timm', 'transformers']));
  });

  for (const expected of manifest.scripts) {
    it(`${expected.file}: ${expected.library} ${expected.architecture ?? expected.className}, batch ${expected.batchSize}, input ${expected.inputShape.join('x')}`, async () => {
      const result = await estimate(readFileSync(path.join(DIR, expected.file), 'utf8'));
      const model = result.models.find((m) => m.name === expected.model);
      assert.ok(model, `no model named ${expected.model}; found ${result.models.map((m) => m.name).join(', ')}; warnings: ${result.warnings.join(' | ')}`);
      assert.equal(model.architecture?.library, expected.library, warningsOf(model).join(' | '));
      if (expected.architecture) assert.equal(model.architecture?.name, expected.architecture);
      assert.equal(model.architecture?.className, expected.className);
      assert.equal(model.params, expected.params);
      assert.equal(model.batchSize, expected.batchSize);
      assert.deepEqual(model.inputShape, expected.inputShape);
      assert.equal(model.optimizer, expected.optimizer);
      assert.equal(model.precision, expected.precision ?? 'fp32');
      assert.equal(model.layerTable.incomplete, false, warningsOf(model).join(' | '));
      assert.equal(result.models.filter((m) => m.architecture).length, 1, 'one catalog model per script');
    });
  }
});
