/** Linear, LazyLinear, Bilinear and Identity. */
import type { LayerArgs } from './layerArgs';
import type { LayerSpec } from './layerSpec';
import { fail, formatDim, inputAt, passThrough, sameDim, withLast, type LayerSpecGroup } from './shapes';
import { formatShape, isBatchDim, type TensorShape } from './tensorShape';

/** The last dimension of the input, checked against the features the layer expects. */
export function checkFeatures(input: TensorShape, expected: number, layer: string, what = 'input features'): void {
  const last = input[input.length - 1];
  if (last === undefined) fail(`${layer} needs an input with at least one dimension`);
  if (isBatchDim(last) || last !== expected) {
    fail(`${layer} expects ${expected} ${what} but receives ${formatDim(last)} (input ${formatShape(input)})`);
  }
}

/** The size of the last dimension, which must not be the batch. */
function lastSize(input: TensorShape, layer: string): number {
  const last = input[input.length - 1];
  if (last === undefined) fail(`${layer} needs an input with at least one dimension`);
  if (isBatchDim(last)) fail(`${layer}: the last dimension of the input ${formatShape(input)} is the batch dimension`);
  return last;
}

// Linear(in_features, out_features, bias=True): y = x W^T + b over the last dimension.
const linear: LayerSpec = {
  category: 'linear',
  params(args) {
    const outFeatures = args.count(1, 'out_features');
    return args.count(0, 'in_features') * outFeatures + (args.bool(2, 'bias', true) ? outFeatures : 0);
  },
  forward(inputs, args) {
    const input = inputAt(inputs, 0, args.type);
    checkFeatures(input, args.count(0, 'in_features'), args.type);
    return withLast(input, args.count(1, 'out_features'));
  },
  savesInput: true,
  savesOutput: false,
};

// LazyLinear(out_features, bias=True): in_features comes from the first input.
const lazyLinear: LayerSpec = {
  category: 'linear',
  params(args: LayerArgs, inputs?: readonly TensorShape[]) {
    const input = inputs?.[0];
    if (!input) fail(`${args.type} takes in_features from its first input, which is not known`);
    const outFeatures = args.count(0, 'out_features');
    return lastSize(input, args.type) * outFeatures + (args.bool(1, 'bias', true) ? outFeatures : 0);
  },
  forward(inputs, args) {
    const input = inputAt(inputs, 0, args.type);
    lastSize(input, args.type);
    return withLast(input, args.count(0, 'out_features'));
  },
  savesInput: true,
  savesOutput: false,
};

// Bilinear(in1_features, in2_features, out_features, bias=True): y = x1^T A x2 + b, two inputs
// with the same leading dimensions.
const bilinear: LayerSpec = {
  category: 'linear',
  params(args) {
    const outFeatures = args.count(2, 'out_features');
    return args.count(0, 'in1_features') * args.count(1, 'in2_features') * outFeatures + (args.bool(3, 'bias', true) ? outFeatures : 0);
  },
  forward(inputs, args) {
    const first = inputAt(inputs, 0, args.type, 2);
    const second = inputAt(inputs, 1, args.type, 2);
    checkFeatures(first, args.count(0, 'in1_features'), args.type, 'features in its first input');
    checkFeatures(second, args.count(1, 'in2_features'), args.type, 'features in its second input');
    const lead = first.slice(0, -1);
    if (lead.length !== second.length - 1 || !lead.every((d, i) => sameDim(d, second[i]))) {
      fail(`${args.type}: the inputs ${formatShape(first)} and ${formatShape(second)} differ before the last dimension`);
    }
    return withLast(first, args.count(2, 'out_features'));
  },
  // Backward needs both inputs; the second one is not this spec's "input" in the layer table.
  savesInput: true,
  savesOutput: false,
};

export const linearLayers: LayerSpecGroup = {
  Linear: linear,
  LazyLinear: lazyLinear,
  Bilinear: bilinear,
  Identity: passThrough({ category: 'identity', savesInput: false, savesOutput: false }),
};
