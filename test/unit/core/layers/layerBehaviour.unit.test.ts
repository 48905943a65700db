import * as assert from 'node:assert/strict';
import type { Value } from '../../../../src/core/analysis/layerCall';
import { LayerArgs, LayerArgumentError } from '../../../../src/core/layers/layerArgs';
import { knownLayerTypes, layerSpec } from '../../../../src/core/layers/layerSpecs';
import type { LayerCategory, LayerSpec } from '../../../../src/core/layers/layerSpec';
import { BATCH, type LayerOutput, type TensorShape } from '../../../../src/core/layers/tensorShape';

const RANGE = { startLine: 0, startColumn: 0, endLine: 0, endColumn: 0 };

function layer(type: string, args: Value[] = [], kwargs: Record<string, Value> = {}): { spec: LayerSpec; args: LayerArgs } {
  const spec = layerSpec(type);
  assert.ok(spec, `${type} has a layer spec`);
  return { spec, args: new LayerArgs({ type, path: 'm', args, kwargs, range: RANGE }) };
}

function forward(type: string, args: Value[], inputs: TensorShape[], kwargs: Record<string, Value> = {}, call: Record<string, Value> = {}): LayerOutput {
  const l = layer(type, args, kwargs);
  return l.spec.forward(inputs, l.args, { kwargs: call });
}

function rejects(fn: () => unknown, message: string | RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof LayerArgumentError, `a LayerArgumentError, not ${String(error)}`);
    if (typeof message === 'string') assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

const nested = (type: string, args: Value[], kwargs: Record<string, Value> = {}): Value => ({ layer: { type, args, kwargs } });

describe('layer specs', () => {
  it('knows every layer type the analyzer is promised, sorted and once each', () => {
    const known = knownLayerTypes();
    assert.deepEqual(known, [...new Set(known)].sort());
    const promised = [
      'Linear', 'LazyLinear', 'Bilinear', 'Identity', 'Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d',
      'BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'LayerNorm', 'GroupNorm', 'InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d',
      'LocalResponseNorm', 'Embedding', 'EmbeddingBag', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout',
      'ReLU', 'ReLU6', 'LeakyReLU', 'PReLU', 'RReLU', 'ELU', 'SELU', 'CELU', 'GELU', 'SiLU', 'Mish', 'Sigmoid', 'Tanh', 'Softplus', 'Softsign',
      'Softshrink', 'Hardshrink', 'Tanhshrink', 'Threshold', 'Hardtanh', 'Hardsigmoid', 'Hardswish', 'LogSigmoid', 'Softmax', 'Softmin',
      'LogSoftmax', 'Softmax2d', 'GLU', 'MaxPool1d', 'MaxPool2d', 'MaxPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d', 'AdaptiveMaxPool1d',
      'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d', 'AdaptiveAvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'LPPool1d', 'LPPool2d',
      'Flatten', 'Unflatten', 'Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d', 'PixelShuffle', 'PixelUnshuffle', 'ZeroPad2d',
      'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d',
      'ReplicationPad2d', 'ReplicationPad3d', 'RNN', 'LSTM', 'GRU', 'RNNCell', 'LSTMCell', 'GRUCell', 'MultiheadAttention',
      'TransformerEncoderLayer', 'TransformerDecoderLayer', 'TransformerEncoder', 'TransformerDecoder', 'Transformer',
    ];
    assert.deepEqual(promised.filter((type) => !known.includes(type)), []);
    assert.equal(layerSpec('FancyNewLayer'), undefined);
  });

  it('says what autograd keeps for every layer type', () => {
    const categories: LayerCategory[] = ['linear', 'conv', 'norm', 'activation', 'dropout', 'pool', 'reshape', 'embedding', 'recurrent', 'attention', 'transformer', 'identity'];
    for (const type of knownLayerTypes()) {
      const spec = layerSpec(type)!;
      assert.ok(categories.includes(spec.category), type);
      assert.equal(typeof spec.savesInput, 'boolean', type);
      assert.equal(typeof spec.savesOutput, 'boolean', type);
      assert.ok((spec.extraBytesPerElement ?? 0) >= 0, type);
    }
    assert.equal(layerSpec('Linear')?.savesInput, true);
    assert.equal(layerSpec('ReLU')?.savesOutput, true);
    assert.equal(layerSpec('GELU')?.savesInput, true);
    assert.equal(layerSpec('Dropout')?.extraBytesPerElement, 1);
    assert.equal(layerSpec('MaxPool2d')?.extraBytesPerElement, 8);
    assert.equal(layerSpec('Conv2d')?.category, 'conv');
    assert.equal(layerSpec('ConvTranspose2d')?.category, 'conv');
  });

  it('explains a Linear that receives the wrong number of features', () => {
    rejects(() => forward('Linear', [20, 5], [[BATCH, 30]]), 'Linear expects 20 input features but receives 30 (input (B, 30))');
    rejects(() => forward('Linear', [20, 5], [[20, BATCH]]), 'Linear expects 20 input features but receives B (input (20, B))');
    rejects(() => forward('Linear', [20, 5], []), 'Linear expects 1 input but receives 0');
  });

  it('explains a Conv2d given a flat input or the wrong channels', () => {
    rejects(() => forward('Conv2d', [3, 32, 3], [[BATCH, 784]]), 'Conv2d expects a 3-D (C, H, W) or 4-D (N, C, H, W) input, got (B, 784)');
    rejects(() => forward('Conv2d', [3, 32, 3], [[BATCH, 1, 28, 28]]), 'Conv2d expects 3 input channels but receives 1 (input (B, 1, 28, 28))');
    rejects(() => forward('Conv2d', [3, 32, 3], [[BATCH, 3, BATCH, 28]]), /spatial size of the input \(B, 3, B, 28\) is the batch dimension/);
  });

  it('keeps batch multiples through reshapes and refuses to multiply two batch dimensions', () => {
    assert.deepEqual(forward('Flatten', [0], [[BATCH, 35, 4]]), [{ batch: 140 }]);
    assert.deepEqual(forward('Unflatten', [0, [-1, 35]], [[{ batch: 35 }, 4]]), [BATCH, 35, 4]);
    assert.deepEqual(forward('Linear', [4, 8], [[{ batch: 35 }, 4]]), [{ batch: 35 }, 8]);
    rejects(() => forward('Flatten', [0], [[BATCH, BATCH]]), /two batch-sized dimensions/);
    rejects(() => forward('Unflatten', [0, [5, 7]], [[BATCH, 4]]), /is the batch \(B\); unflatten it with a -1 size/);
    rejects(() => forward('Unflatten', [0, [-1, 5]], [[{ batch: 7 }, 4]]), /dimension 0 \(7B\) is not divisible by 5/);
  });

  it('sizes Lazy layers from their first input only', () => {
    const lazy = layer('LazyLinear', [16]);
    assert.equal(lazy.spec.params(lazy.args, [[BATCH, 12]]), 12 * 16 + 16);
    rejects(() => lazy.spec.params(lazy.args), 'LazyLinear takes in_features from its first input, which is not known');
    const conv = layer('LazyConv2d', [8, 3]);
    rejects(() => conv.spec.params(conv.args), /LazyConv2d takes in_channels from its first input/);
    const norm = layer('LazyBatchNorm2d');
    rejects(() => norm.spec.params(norm.args), /LazyBatchNorm2d takes num_features from its first input/);
  });

  it('follows need_weights and average_attn_weights of the forward call, defaulting where they are not constants', () => {
    const q: TensorShape = [BATCH, 7, 64];
    const kv: TensorShape = [BATCH, 9, 64];
    const mha = (call: Record<string, Value>) => forward('MultiheadAttention', [64, 4], [q, kv, kv], { batch_first: true }, call);
    assert.deepEqual(mha({}), [q, [BATCH, 7, 9]]);
    assert.deepEqual(mha({ need_weights: false }), [q, null]);
    assert.deepEqual(mha({ need_weights: true, average_attn_weights: false }), [q, [BATCH, 4, 7, 9]]);
    assert.deepEqual(mha({ need_weights: { unresolved: 'flag', reason: 'not a constant' } }), [q, [BATCH, 7, 9]]);
    rejects(() => forward('MultiheadAttention', [64, 4], [q]), 'MultiheadAttention expects 3 inputs but receives 1');
  });

  it("counts the score matrices PyTorch 2 keeps: MultiheadAttention's when need_weights is left True, heads x L x S per call", () => {
    const eager = (type: string, args: Value[], inputs: TensorShape[], kwargs: Record<string, Value> = {}, call: Record<string, Value> = {}) => {
      const l = layer(type, args, kwargs);
      return l.spec.eagerAttention?.(inputs, l.args, { kwargs: call });
    };
    const q: TensorShape = [BATCH, 7, 64];
    const kv: TensorShape = [BATCH, 9, 64];
    // need_weights left out: PyTorch's default (True) computes softmax(q k^T) eagerly.
    assert.deepEqual(eager('MultiheadAttention', [64, 4], [q, kv, kv], { batch_first: true }), { elements: 4 * 7 * 9, dropout: false });
    assert.deepEqual(eager('MultiheadAttention', [64, 4], [q, kv, kv], { batch_first: true, dropout: 0.1 }, { need_weights: true }), { elements: 4 * 7 * 9, dropout: true });
    // need_weights=False: scaled_dot_product_attention, no matrix kept.
    assert.equal(eager('MultiheadAttention', [64, 4], [q, kv, kv], { batch_first: true, dropout: 0.1 }, { need_weights: false }), undefined);
    // A value the analyzer could not read counts as the default.
    assert.deepEqual(eager('MultiheadAttention', [64, 4], [q, kv, kv], { batch_first: true }, { need_weights: { unresolved: 'flag', reason: 'not a constant' } }), { elements: 4 * 7 * 9, dropout: false });
    // Sequence-first, with bias_k / bias_v's extra key and dropout.
    assert.deepEqual(eager('MultiheadAttention', [64, 4], [[7, BATCH, 64], [9, BATCH, 64], [9, BATCH, 64]], { dropout: 0.1, add_bias_kv: true }), { elements: 4 * 7 * 10, dropout: true });
    // A length that is the batch is no figure.
    assert.equal(eager('MultiheadAttention', [64, 4], [q, [9, BATCH, 64], [9, BATCH, 64]], {}), undefined);
    // The Transformer layers call their attention with need_weights=False: fused on PyTorch 2.
    for (const type of ['TransformerEncoderLayer', 'TransformerDecoderLayer', 'TransformerEncoder', 'TransformerDecoder', 'Transformer']) {
      assert.ok(layerSpec(type) && !('eagerAttention' in layerSpec(type)!), type);
    }
    assert.equal(eager('Linear', [64, 4], [q]), undefined);
  });

  it('counts and runs nested layers of Transformer stacks, and explains the ones it cannot', () => {
    const encoderLayer = nested('TransformerEncoderLayer', [64, 4, 128]);
    const stack = layer('TransformerEncoder', [encoderLayer, 3], { norm: nested('LayerNorm', [64]) });
    const single = layer('TransformerEncoderLayer', [64, 4, 128]);
    assert.equal(stack.spec.params(stack.args), 3 * single.spec.params(single.args) + 128);
    assert.deepEqual(stack.spec.forward([[10, BATCH, 64]], stack.args, { kwargs: {} }), [10, BATCH, 64]);

    const unknown = layer('TransformerEncoder', [nested('MyBlock', [64]), 2]);
    rejects(() => unknown.spec.params(unknown.args), 'TransformerEncoder: `encoder_layer` is nn.MyBlock, which is not understood yet');
    const unresolved = layer('TransformerEncoder', [{ unresolved: 'block', reason: '`block` is built in a loop' }, 2]);
    rejects(() => unresolved.spec.params(unresolved.args), 'TransformerEncoder `encoder_layer`: `block` is built in a loop');
    const plain = layer('TransformerEncoder', [64, 2]);
    rejects(() => plain.spec.params(plain.args), 'TransformerEncoder `encoder_layer` should be a torch.nn layer');
    const missing = layer('TransformerDecoder', [], { num_layers: 2 });
    rejects(() => missing.spec.params(missing.args), 'TransformerDecoder needs `decoder_layer`');
  });

  it('returns LSTM state as (output, (h_n, c_n)) and GRU state as (output, h_n)', () => {
    assert.deepEqual(forward('LSTM', [10, 20, 2], [[BATCH, 5, 10]], { batch_first: true, bidirectional: true, proj_size: 4 }), [
      [BATCH, 5, 8],
      [
        [4, BATCH, 4],
        [4, BATCH, 20],
      ],
    ]);
    assert.deepEqual(forward('GRU', [10, 20], [[5, BATCH, 10]]), [[5, BATCH, 20], [1, BATCH, 20]]);
  });

  it('rejects transposed-convolution output sizes outside the stride range', () => {
    rejects(() => forward('ConvTranspose2d', [16, 16, 3], [[BATCH, 16, 12, 12]], { stride: 2, padding: 1 }, { output_size: [26, 26] }), /output_size 26 is outside the possible range 23 to 24/);
  });
});
