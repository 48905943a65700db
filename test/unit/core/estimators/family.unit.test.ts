import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { findArchitecture } from '../../../../src/core/catalog/lookup';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../src/core/catalog/catalog';
import { modelFamily } from '../../../../src/core/estimators/family';
import type { LayerTable } from '../../../../src/core/layerTable/layerTable';
import { estimate, REPO_ROOT } from '../../fixtures';

function catalogTable(architecture: CatalogArchitecture | { miss: string }): LayerTable {
  if (isCatalogMiss(architecture)) throw new Error(architecture.miss);
  const { rows, inputShape } = architecture.table(architecture.input.defaultShape);
  return { schemaVersion: 1, model: architecture.name, inputShape, rows, totals: { params: 0, trainableParams: 0, activations: 0 }, incomplete: false };
}

async function corpusFamily(file: string): Promise<string> {
  const result = await estimate(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'corpus', file), 'utf8'));
  return result.models[0]!.family;
}

describe('modelFamily', () => {
  it('calls attention written out of Linear layers a Transformer, and convolutional or recurrent models what they are', async () => {
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'transformers', className: 'BertForSequenceClassification', checkpoint: 'bert-base-uncased', options: {} }))), 'transformer');
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'transformers', className: 'ViTForImageClassification', checkpoint: 'google/vit-base-patch16-224', options: {} }))), 'transformer');
    // GPT-2's projections are transformers' Conv1D, a weight and a bias (Parameter rows) each, not Linear layers.
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'transformers', className: 'GPT2LMHeadModel', checkpoint: 'gpt2-medium', options: {} }))), 'transformer');
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'torchvision', name: 'vit_b_16', options: {} }))), 'transformer');
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'torchvision', name: 'convnext_tiny', options: {} }))), 'cnn');
    assert.equal(modelFamily(catalogTable(findArchitecture({ library: 'torchvision', name: 'resnet18', options: {} }))), 'cnn');
    assert.equal(await corpusFamily('gpt_mini.py'), 'transformer');
    assert.equal(await corpusFamily('nanogpt_shakespeare_char.py'), 'transformer');
    assert.equal(await corpusFamily('lstm_text_classifier.py'), 'mlp');
    assert.equal(await corpusFamily('mlp_fashion_argparse.py'), 'mlp');
  });
});
