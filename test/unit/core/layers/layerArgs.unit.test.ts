import * as assert from 'node:assert/strict';
import type { Value } from '../../../../src/core/analysis/layerCall';
import { LayerArgs, LayerArgumentError } from '../../../../src/core/layers/layerArgs';

const RANGE = { startLine: 0, startColumn: 0, endLine: 0, endColumn: 0 };

function argsOf(type: string, args: Value[], kwargs: Record<string, Value> = {}): LayerArgs {
  return new LayerArgs({ type, path: 'm', args, kwargs, range: RANGE });
}

function throwsMessage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof LayerArgumentError && pattern.test(error.message));
}

describe('LayerArgs', () => {
  it('binds arguments by position or keyword, the keyword winning, with defaults for the rest', () => {
    const args = argsOf('Conv2d', [3, 16, 3], { stride: 2, bias: false });
    assert.equal(args.type, 'Conv2d');
    assert.equal(args.int(0, 'in_channels'), 3);
    assert.equal(args.int(3, 'stride', 1), 2);
    assert.equal(args.int(5, 'dilation', 1), 1);
    assert.equal(args.bool(7, 'bias', true), false);
    assert.equal(argsOf('Linear', [4, 2], { in_features: 8 }).int(0, 'in_features'), 8);
    assert.equal(args.has(3, 'stride'), true);
    assert.equal(args.has(4, 'padding'), false);
  });

  it('treats None as "use the default" and says which argument is missing', () => {
    const args = argsOf('MaxPool2d', [2, null]);
    assert.equal(args.int(1, 'stride', 7), 7);
    assert.equal(args.optionalInt(1, 'stride'), undefined);
    assert.equal(args.has(1, 'stride'), false);
    throwsMessage(() => args.int(1, 'stride'), /MaxPool2d needs `stride`/);
  });

  it('reads ints strictly, and floats, strings and booleans', () => {
    const args = argsOf('X', [1.5, 'sum', 0.25, true]);
    throwsMessage(() => args.int(0, 'size'), /`size` should be an int, not 1.5/);
    assert.equal(args.float(0, 'size'), 1.5);
    assert.equal(args.string(1, 'mode', 'mean'), 'sum');
    assert.equal(args.string(9, 'missing', 'mean'), 'mean');
    throwsMessage(() => args.string(0, 'mode', 'mean'), /`mode` should be a string/);
    assert.equal(args.float(2, 'p', 0.5), 0.25);
    assert.equal(args.int(3, 'flag'), 1);
    throwsMessage(() => args.int(1, 'count'), /`count` is not a number/);
  });

  it('spreads an int over spatial dimensions and reads tuples with None entries', () => {
    const args = argsOf('AdaptiveAvgPool2d', [3, [null, 7], [2, 3, 4], [1.5, 2]]);
    assert.deepEqual(args.ints(0, 'kernel_size', 2), [3, 3]);
    assert.deepEqual(args.intsOrNone(1, 'output_size', 2), [undefined, 7]);
    throwsMessage(() => args.ints(1, 'output_size', 2), /should be an int or 2 ints/);
    throwsMessage(() => args.ints(2, 'kernel_size', 2), /should be an int or 2 ints/);
    assert.deepEqual(args.floats(3, 'scale_factor', 2), [1.5, 2]);
    assert.deepEqual(args.floats(0, 'scale_factor', 3), [3, 3, 3]);
    assert.equal(args.floats(9, 'scale_factor', 2), undefined);
    assert.deepEqual(args.shape(2, 'normalized_shape'), [2, 3, 4]);
    assert.deepEqual(args.shape(0, 'normalized_shape'), [3]);
  });

  it('explains an argument the analyzer could not resolve', () => {
    const hidden: Value = { unresolved: 'args.hidden', reason: '`args` comes from the command line' };
    const args = argsOf('Linear', [hidden, 10], { sizes: [4, hidden] });
    throwsMessage(() => args.int(0, 'in_features'), /Linear `in_features`: `args` comes from the command line/);
    throwsMessage(() => args.bool(0, 'in_features', true), /command line/);
    throwsMessage(() => args.shape(-1, 'sizes'), /`sizes`: `args` comes from the command line/);
    throwsMessage(() => args.ints(-1, 'sizes', 2), /command line/);
  });

  it('reads a nested layer construction as LayerArgs of its own', () => {
    const layer: Value = { layer: { type: 'TransformerEncoderLayer', args: [512, 8], kwargs: { batch_first: true } } };
    const args = argsOf('TransformerEncoder', [layer, 6], { norm: null });
    const inner = args.layer(0, 'encoder_layer');
    assert.equal(inner?.type, 'TransformerEncoderLayer');
    assert.equal(inner?.int(1, 'nhead'), 8);
    assert.equal(inner?.bool(6, 'batch_first', false), true);
    assert.equal(args.layer(2, 'norm'), undefined);
    throwsMessage(() => args.layer(1, 'num_layers'), /`num_layers` should be a torch.nn layer/);
  });
});
