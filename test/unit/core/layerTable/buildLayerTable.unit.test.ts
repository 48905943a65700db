import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, fixture, tableOf } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';
import { replayTrainingStep } from '../../../../src/core/estimators/trainingStep';

// Parameter counts and shapes below were printed by PyTorch 1.13 for the same fixtures.
describe('buildLayerTable', () => {
  it('sizes a CIFAR CNN: shapes through conv, pooling and flatten, parameters as PyTorch counts them', async () => {
    const { table, inputShape } = await tableOf(fixture('cnn_cifar'));
    assert.deepEqual(inputShape?.value, [3, 32, 32]);
    assert.deepEqual(
      table.rows.map((r) => [r.type, r.outputShape]),
      [
        ['Conv2d', [32, 32, 32]],
        ['BatchNorm2d', [32, 32, 32]],
        ['ReLU', [32, 32, 32]],
        ['MaxPool2d', [32, 16, 16]],
        ['Conv2d', [64, 16, 16]],
        ['ReLU', [64, 16, 16]],
        ['MaxPool2d', [64, 8, 8]],
        ['Flatten', [4096]],
        ['Linear', [256]],
        ['ReLU', [256]],
        ['Dropout', [256]],
        ['Linear', [10]],
      ],
    );
    assert.equal(table.totals.params, 1070858);
    assert.equal(table.incomplete, false);
  });

  it('counts parameters of the module MLP, bias=False and nested Sequentials like PyTorch', async () => {
    assert.equal((await tableOf(fixture('module_mlp'))).table.totals.params, 795146);
    assert.equal((await tableOf(fixture('import_styles'))).table.totals.params, 365568);
    assert.equal((await tableOf(fixture('nested_sequential'))).table.totals.params, 2760);
  });

  it('sums activations per sample the way the reference data does (every layer output)', async () => {
    const { table } = await tableOf(fixture('import_styles'));
    assert.equal(table.totals.activations, 1024 + 1024 + 256 + 256);
  });

  it('infers the sample shape from a leading Linear when the script shows no input', async () => {
    const { table, inputShape } = await tableOf('import torch.nn as nn\nm = nn.Sequential(nn.Linear(20, 5), nn.Sigmoid())\n');
    assert.deepEqual(table.inputShape, [20]);
    assert.match(inputShape?.origin ?? '', /first layer/);
  });

  it('flags an unknown layer, leaves it unsized and resumes at the next Linear', async () => {
    const { table } = await tableOf(fixture('unknown_layer'));
    assert.equal(table.rows[1]?.type, 'FancyNewLayer');
    assert.equal(table.rows[1]?.params, null);
    assert.equal(table.rows[1]?.outputShape, null);
    assert.equal(table.incomplete, true);
    const first = (await estimate(fixture('unknown_layer'))).models[0];
    const warnings = first ? warningsOf(first) : [];
    assert.ok(warnings.some((w) => /FancyNewLayer is not understood/.test(w)), warnings.join('\n'));
  });

  it('gives each model the input it accepts: the example tensor, else what its first layer declares', async () => {
    const source = 'import torch\nimport torch.nn as nn\nx = torch.randn(8, 30)\na = nn.Sequential(nn.Linear(30, 5))\nb = nn.Sequential(nn.Linear(20, 5))\n';
    assert.deepEqual((await tableOf(source, 0)).table.inputShape, [30]);
    assert.deepEqual((await tableOf(source, 1)).table.inputShape, [20]);
  });

  it('reports a shape mismatch instead of inventing a shape', async () => {
    const { table, notes } = await tableOf('import torch\nimport torch.nn as nn\nx = torch.randn(8, 1, 28, 28)\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())\n');
    assert.equal(table.rows[0]?.outputShape, null);
    assert.ok(notes.some((n) => /3 input channels|expects|channels/.test(n.message)), notes.map((n) => n.message).join('\n'));
  });
});

describe('buildLayerTable: eager attention as PyTorch 2 runs it (rule 9)', () => {
  const script = (call: string) => `import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, flag=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(64, 4, dropout=0.1, batch_first=True)
        self.layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
        self.flag = flag

    def forward(self, x):
        h = ${call}
        return self.layer(x + h)

model = Block()
x = torch.randn(8, 10, 64)
`;
  const attention = async (call: string) => {
    const { table, notes } = await tableOf(script(call));
    return { rows: table.rows.filter((row) => row.eagerAttention).map((row) => [row.type, row.eagerAttention]), notes: notes.map((n) => n.message) };
  };

  it('counts a direct MultiheadAttention call that leaves need_weights out, and no Transformer layer', async () => {
    const { rows } = await attention('self.attn(x, x, x)[0]');
    assert.deepEqual(rows, [['MultiheadAttention', { elements: 4 * 10 * 10, dropout: true }]]);
  });

  it('reads need_weights from the call, by keyword or position', async () => {
    assert.deepEqual((await attention('self.attn(x, x, x, need_weights=True)[0]')).rows, [['MultiheadAttention', { elements: 400, dropout: true }]]);
    assert.deepEqual((await attention('self.attn(x, x, x, need_weights=False)[0]')).rows, []);
    assert.deepEqual((await attention('self.attn(x, x, x, None, False)[0]')).rows, []);
  });

  it('keeps the default where need_weights is not read, and says so', async () => {
    const { rows, notes } = await attention('self.attn(x, x, x, need_weights=self.flag and torch.cuda.is_available())[0]');
    assert.deepEqual(rows, [['MultiheadAttention', { elements: 400, dropout: true }]]);
    assert.ok(notes.some((note) => /attn: need_weights is not read; counted as True/.test(note)), notes.join('\n'));
  });
});

describe('layer table: a library model called by keyword, and its ModelOutput', () => {
  const probe = (call: string) =>
    [
      'import torch',
      'from torch import nn',
      'from transformers import CLIPVisionModel',
      'class Probe(nn.Module):',
      '    def __init__(self, backbone):',
      '        super().__init__()',
      '        self.backbone = backbone',
      '        self.head = nn.Linear(768, 10)',
      '    def forward(self, pixels):',
      `        return self.head(${call})`,
      'model = Probe(CLIPVisionModel.from_pretrained("openai/clip-vit-base-patch16"))',
      'out = model(torch.randn(4, 3, 224, 224))',
      '',
    ].join('\n');

  it('takes pixel_values= as the input of a transformers model, and its .pooler_output as the pooled tensor', async () => {
    const { table, inputShape } = await tableOf(probe('self.backbone(pixel_values=pixels).pooler_output'));
    assert.deepEqual(inputShape?.value, [3, 224, 224]);
    assert.deepEqual(table.rows.at(-1), { path: 'head', type: 'Linear', outputShape: [10], activations: 10, params: 7690, trainable: true });
    assert.equal(table.incomplete, false);
    assert.equal(table.measuredActivations?.[0]?.path, 'backbone');
  });

  it('gives the same table for the positional call', async () => {
    const keyword = await tableOf(probe('self.backbone(pixel_values=pixels).pooler_output'));
    const positional = await tableOf(probe('self.backbone(pixels).pooler_output'));
    assert.deepEqual(positional.table.rows, keyword.table.rows);
  });
});

describe('buildLayerTable: Transformer stacks keep every layer (rule 13)', () => {
  // The same model harness/tests/test_layer_table.py measures.
  const script = readFileSync(path.resolve(__dirname, '../../../../../test/fixtures/scripts/transformer_stacks.py'), 'utf8');

  it('gives each stack its number of layers (nn.Transformer the larger of its two), as harness/tests/test_layer_table.py measures', async () => {
    const { table } = await tableOf(script);
    assert.deepEqual(
      table.rows.map((row) => [row.path, row.type, row.stackedLayers]),
      [
        ['encoder', 'TransformerEncoder', 4],
        ['decoder', 'TransformerDecoder', 2],
        ['full', 'Transformer', 3],
        ['one', 'TransformerEncoderLayer', undefined],
      ],
    );
  });

  it('counts what one layer keeps that many times', async () => {
    const { table } = await tableOf(script);
    const one = { ...table, rows: table.rows.map(({ stackedLayers: _, ...row }) => row) };
    const saved = (t: typeof table) => replayTrainingStep({ table: t, batchSize: 8, optimizer: 'adam', precision: 'fp32' }).savedBytes;
    // Per sample, 640 output elements a stack: 66 bytes each for the encoder's 3 more layers, 91 for the decoder's 1, 157 for nn.Transformer's 2.
    assert.equal(saved(table) - saved(one), 8 * 640 * (3 * 66 + 1 * 91 + 2 * 157));
  });
});
