import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { FileEstimateJson } from '../../../src/core/estimate/estimateJson';
import type { LayerTable } from '../../../src/core/layerTable/layerTable';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

/** The built CLI on the transfer-learning fixtures that take standard architectures apart, against the tables PyTorch measured. */
describe('gpu-estimate on parts of standard architectures (the built CLI)', () => {
  for (const fixture of ['resnet50_children_feature_extractor', 'vgg16_features_backbone', 'resnet34_children_segmentation']) {
    it(`${fixture}.py: the parameters and activations PyTorch counts, and no note that a part was not followed`, () => {
      const result = spawnSync(process.execPath, [CLI, `test/fixtures/corpus/${fixture}.py`, '--json'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as FileEstimateJson;
      const expected = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'vectors', 'layer-tables', `${fixture}.model.json`), 'utf8')) as LayerTable;
      assert.deepEqual(
        report.models.map((m) => m.name),
        ['model'],
      );
      const [model] = report.models;
      assert.equal(model!.params, expected.totals.params);
      assert.deepEqual(model!.layerTable.totals, expected.totals);
      const notes = [...model!.warnings, ...model!.notes.map((note) => note.message)];
      assert.ok(!notes.some((note) => /not followed|not listed|not sized|declaration order/.test(note)), notes.join('\n'));
    });
  }
});
