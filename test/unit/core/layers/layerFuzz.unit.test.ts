import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '../../../../src/core/analysis/layerCall';
import { LayerArgs, LayerArgumentError } from '../../../../src/core/layers/layerArgs';
import { knownLayerTypes, layerSpec } from '../../../../src/core/layers/layerSpecs';
import { BATCH, isBatchDim, outputTensors, type Dim, type LayerOutput, type TensorShape } from '../../../../src/core/layers/tensorShape';

const RANGE = { startLine: 0, startColumn: 0, endLine: 0, endColumn: 0 };

/** Keyword names the layer specs read, so that random keywords often matter. */
const NAMES = [
  'bias', 'stride', 'padding', 'dilation', 'groups', 'output_padding', 'batch_first', 'bidirectional', 'proj_size', 'num_layers',
  'kdim', 'vdim', 'output_size', 'scale_factor', 'size', 'mode', 'affine', 'track_running_stats', 'dim', 'start_dim', 'end_dim',
  'return_indices', 'ceil_mode', 'include_last_offset', 'elementwise_affine', 'norm', 'num_parameters', 'dim_feedforward',
  'custom_encoder', 'custom_decoder', 'nonlinearity', 'output_ratio', 'unflattened_size', 'add_bias_kv', 'add_zero_attn',
  'align_corners', 'encoder_layer', 'num_encoder_layers', 'num_decoder_layers', 'kernel_size', 'num_groups', 'num_channels',
];

const scalar: fc.Arbitrary<Value> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -3, max: 70 }) },
  { weight: 1, arbitrary: fc.constantFrom(0.5, 1.5, 2.5, 1e9, -0.5) },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom('same', 'valid', 'sum', 'max', 'mean', 'bilinear', 'nearest', 'linear', 'tanh', 'relu', 'gelu', 'bogus') },
  { weight: 1, arbitrary: fc.constant({ unresolved: 'x', reason: 'not a constant' }) },
);

const value: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { weight: 6, arbitrary: scalar },
    { weight: 2, arbitrary: fc.array(fc.oneof(fc.integer({ min: -2, max: 20 }), fc.constant(null), fc.constant(-1)), { maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc.record({
        layer: fc.record({
          type: fc.constantFrom('TransformerEncoderLayer', 'TransformerDecoderLayer', 'LayerNorm', 'Linear', 'TransformerEncoder', 'Nope'),
          args: fc.array(tie('value'), { maxLength: 3 }),
          kwargs: fc.constant({}),
        }),
      }),
    },
  ),
})).value;

const dim: fc.Arbitrary<Dim> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 2, arbitrary: fc.constant(BATCH) },
  { weight: 1, arbitrary: fc.constant({ batch: 2 }) },
);

const shape: fc.Arbitrary<TensorShape> = fc.array(dim, { maxLength: 5 });

const caseArbitrary = fc.record({
  type: fc.constantFrom(...knownLayerTypes()),
  args: fc.array(value, { maxLength: 5 }),
  kwargs: fc.dictionary(fc.constantFrom(...NAMES), value, { maxKeys: 3 }),
  inputs: fc.array(shape, { maxLength: 3 }),
  call: fc.dictionary(fc.constantFrom('need_weights', 'average_attn_weights', 'output_size'), value, { maxKeys: 2 }),
});

function isCount(n: number): boolean {
  return Number.isInteger(n) && n >= 0;
}

function checkOutput(output: LayerOutput): void {
  for (const tensor of outputTensors(output)) {
    for (const d of tensor) assert.ok(isBatchDim(d) ? isCount(d.batch) && d.batch > 0 : isCount(d), `dimension ${JSON.stringify(d)} in ${JSON.stringify(output)}`);
  }
}

/** Runs a call, letting LayerArgumentError through as "the layer cannot be sized". */
function attempt(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof LayerArgumentError)) throw error;
  }
}

describe('layer specs on arbitrary arguments and inputs', () => {
  it('sizes or explains every call, never throwing anything but LayerArgumentError, never inventing impossible sizes', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const spec = layerSpec(c.type)!;
        const args = new LayerArgs({ type: c.type, path: 'm', args: c.args, kwargs: c.kwargs, range: RANGE });
        attempt(() => assert.ok(isCount(spec.params(args, c.inputs)), 'parameters are a count'));
        attempt(() => checkOutput(spec.forward(c.inputs, args, { kwargs: c.call })));
      }),
      { seed: 20240611, numRuns: 10000 },
    );
  });

  it('sizes arbitrary well-typed convolutions and poolings without inventing impossible sizes', () => {
    const spatial = fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 2, maxLength: 2 });
    fc.assert(
      fc.property(
        fc.constantFrom('Conv2d', 'ConvTranspose2d', 'MaxPool2d', 'AvgPool2d'),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: -1, max: 9 }),
        fc.integer({ min: -1, max: 4 }),
        fc.integer({ min: -1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        spatial,
        (type, channels, kernel, stride, padding, dilation, sizes) => {
          const pool = type.endsWith('Pool2d');
          const args = pool ? [kernel, stride, padding] : [channels, 4, kernel, stride, padding];
          const kwargs: Record<string, Value> = pool || dilation === 0 ? {} : { dilation };
          const l = new LayerArgs({ type, path: 'm', args, kwargs, range: RANGE });
          attempt(() => checkOutput(layerSpec(type)!.forward([[BATCH, channels, ...sizes]], l, { kwargs: {} })));
        },
      ),
      { seed: 7, numRuns: 5000 },
    );
  });
});
