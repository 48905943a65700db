import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../src/core/catalog/catalog';
import { torchvisionArchitecture } from '../../../../../src/core/catalog/torchvision/torchvision';
import { estimate } from '../../../fixtures';

/** Parameter counts torchvision 0.14 gives (sum(p.numel()), and of those with requires_grad). */
const detection = (name: string, options: Record<string, number | string | boolean | null>): CatalogArchitecture => {
  const found = torchvisionArchitecture(`detection.${name}`, options);
  assert.ok(!isCatalogMiss(found), JSON.stringify(found));
  return found;
};

describe('torchvision detection builders', () => {
  it('count the parameters torchvision counts, with the backbone trained (frozen batch norms and stages) or not', () => {
    const untrained = detection('fasterrcnn_mobilenet_v3_large_fpn', { weights: null, weights_backbone: null, num_classes: 2 });
    assert.equal(untrained.params, 18_954_629);
    const rows = untrained.table([3, 480, 640]).rows;
    assert.equal(rows.reduce((sum, row) => sum + (row.params ?? 0), 0), 18_954_629);
    assert.ok(rows.every((row) => row.trainable));
    assert.deepEqual(rows.find((row) => row.path === 'roi_heads.box_predictor.bbox_pred')?.outputShape, [512, 8]);
    const trained = detection('fasterrcnn_mobilenet_v3_large_fpn', { num_classes: 2 });
    assert.equal(trained.params, 18_930_229);
    const trainable = trained.table([3, 480, 640]).rows.filter((row) => row.trainable).reduce((sum, row) => sum + (row.params ?? 0), 0);
    assert.equal(trainable, 18_871_333);
    assert.equal(detection('fasterrcnn_mobilenet_v3_large_fpn', { weights: 'DEFAULT' }).params, 19_386_354);
  });

  it('say what they cannot build', () => {
    const fixed = torchvisionArchitecture('detection.fasterrcnn_mobilenet_v3_large_fpn', { weights: 'DEFAULT', num_classes: 2 });
    assert.match(isCatalogMiss(fixed) ? fixed.miss : '', /expected value 91 but got 2/);
    const option = torchvisionArchitecture('detection.fasterrcnn_mobilenet_v3_large_fpn', { min_size: 600 });
    assert.match(isCatalogMiss(option) ? option.miss : '', /min_size=600/);
    const unknown = torchvisionArchitecture('detection.fasterrcnn_mobilenet_v3_fpn', {});
    assert.match(isCatalogMiss(unknown) ? unknown.miss : '', /fasterrcnn_mobilenet_v3_large_fpn/);
  });

  it('are found in a script that builds one', async () => {
    const result = await estimate(`import torch
from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn
model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
loader = torch.utils.data.DataLoader(range(100), batch_size=4)
`);
    const model = result.models[0];
    assert.equal(model?.params, 18_954_629);
    assert.equal(model?.batchSize, 4);
  });
});
