/**
 * Every activation in torch.nn (torch/nn/modules/activation.py; MultiheadAttention, also defined
 * there, is in attention.ts). All keep the input's shape except GLU, which halves `dim`.
 */
import type { LayerSpec } from './layerSpec';
import { divideDim, expectRank, fail, inputAt, normalizeDim, passThrough, replaceDim, sizeOf, type LayerSpecGroup } from './shapes';
import { formatShape, type TensorShape } from './tensorShape';

/** Activations whose backward is computed from their output. */
const OUTPUT_SAVING = ['ReLU', 'ReLU6', 'Sigmoid', 'Tanh', 'ELU', 'Softmax', 'LogSoftmax', 'Softmin', 'Softmax2d', 'Hardtanh'];
/** Activations whose backward is computed from their input. */
const INPUT_SAVING = [
  'LeakyReLU', 'SELU', 'CELU', 'GELU', 'SiLU', 'Mish', 'Softplus', 'Softsign', 'Hardswish', 'Hardsigmoid',
  'LogSigmoid', 'Tanhshrink', 'Softshrink', 'Hardshrink', 'Threshold', 'RReLU',
];

/** Softmax(dim=None), Softmin(dim=None), LogSoftmax(dim=None): a given dim must exist. */
const DIM_CHECKED = new Set(['Softmax', 'Softmin', 'LogSoftmax']);

function elementwise(type: string, savesInput: boolean): LayerSpec {
  const spec = passThrough({ category: 'activation', savesInput, savesOutput: !savesInput });
  if (DIM_CHECKED.has(type)) {
    return {
      ...spec,
      forward(inputs, args) {
        const input = inputAt(inputs, 0, args.type);
        const dim = args.optionalInt(0, 'dim');
        if (dim !== undefined) normalizeDim(dim, input.length, args.type);
        return input;
      },
    };
  }
  if (type === 'Softmax2d') {
    return {
      ...spec,
      forward(inputs, args) {
        const input = inputAt(inputs, 0, args.type);
        expectRank(input, [3, 4], args.type, 'a 3-D (C, H, W) or 4-D (N, C, H, W)');
        return input;
      },
    };
  }
  return spec;
}

// PReLU(num_parameters=1, init=0.25): one slope, or one per channel (dimension 1).
const prelu: LayerSpec = {
  category: 'activation',
  params: (args) => args.positive(0, 'num_parameters', 1),
  forward(inputs, args) {
    const input = inputAt(inputs, 0, args.type);
    const count = args.positive(0, 'num_parameters', 1);
    if (count !== 1) {
      // An input of fewer than 2 dimensions has no channel dimension: one channel.
      const channels = input.length >= 2 ? sizeOf(input[1], args.type, 'channel dimension', input) : 1;
      if (channels !== count) fail(`${args.type} has ${count} parameters but the input ${formatShape(input)} has ${channels} channel${channels === 1 ? '' : 's'}`);
    }
    return input;
  },
  savesInput: true,
  savesOutput: false,
};

// GLU(dim=-1): splits `dim` in halves a and b and returns a * sigmoid(b).
const glu: LayerSpec = {
  category: 'activation',
  params: () => 0,
  forward(inputs, args): TensorShape {
    const input = inputAt(inputs, 0, args.type);
    if (input.length === 0) fail(`${args.type} needs an input with at least one dimension`);
    const dim = normalizeDim(args.int(0, 'dim', -1), input.length, args.type);
    return replaceDim(input, dim, divideDim(input[dim]!, 2, args.type, `the size of dimension ${dim}`));
  },
  savesInput: true,
  savesOutput: false,
};

export const activationLayers: LayerSpecGroup = {
  ...Object.fromEntries(OUTPUT_SAVING.map((type) => [type, elementwise(type, false)])),
  ...Object.fromEntries(INPUT_SAVING.map((type) => [type, elementwise(type, true)])),
  PReLU: prelu,
  GLU: glu,
};
