/** ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad, 1d/2d/3d. */
import type { LayerSpec } from './layerSpec';
import { expectRank, fail, inputAt, sizeOf, type LayerSpecGroup } from './shapes';
import { formatShape, type TensorShape } from './tensorShape';

type PadMode = 'constant' | 'reflect' | 'replicate' | 'circular';

const SPATIAL: Readonly<Record<number, string>> = { 1: 'L', 2: 'H, W', 3: 'D, H, W' };

/**
 * `padding` as (left, right, top, bottom, front, back), from the last dimension backwards; an int
 * pads every side alike.
 */
function pad(dims: number, mode: PadMode): LayerSpec {
  return {
    category: 'reshape',
    params: () => 0,
    forward(inputs, args): TensorShape {
      const input = inputAt(inputs, 0, args.type);
      if (mode === 'constant') {
        // F.pad in constant mode pads the last dimensions of an input of any rank.
        if (input.length < dims) fail(`${args.type} expects an input with at least ${dims} dimensions, got ${formatShape(input)}`);
      } else {
        expectRank(input, [dims + 1, dims + 2], args.type, `a ${dims + 1}-D (C, ${SPATIAL[dims]}) or ${dims + 2}-D (N, C, ${SPATIAL[dims]})`);
      }
      const sides = args.ints(0, 'padding', 2 * dims);
      const result = [...input];
      for (let k = 0; k < dims; k++) {
        const index = input.length - 1 - k;
        const before = sides[2 * k]!;
        const after = sides[2 * k + 1]!;
        if (before === 0 && after === 0) continue;
        const size = sizeOf(input[index], args.type, `dimension ${index}`, input);
        if (mode === 'reflect' && (before >= size || after >= size)) {
          fail(`${args.type}: padding (${before}, ${after}) should be smaller than the size ${size} of dimension ${index}`);
        }
        if (mode === 'circular' && (before > size || after > size)) {
          fail(`${args.type}: padding (${before}, ${after}) should be at most the size ${size} of dimension ${index}`);
        }
        const out = size + before + after;
        if (out < 0 || (mode !== 'constant' && out < 1)) fail(`${args.type}: padding (${before}, ${after}) leaves dimension ${index} of ${formatShape(input)} empty`);
        result[index] = out;
      }
      return result;
    },
    // Reflection and replication backward read the input; constant and circular padding only slice.
    savesInput: mode === 'reflect' || mode === 'replicate',
    savesOutput: false,
  };
}

export const paddingLayers: LayerSpecGroup = Object.fromEntries(
  [1, 2, 3].flatMap((dims) => [
    // ZeroPad{n}d(padding); ConstantPad{n}d(padding, value).
    [`ZeroPad${dims}d`, pad(dims, 'constant')],
    [`ConstantPad${dims}d`, pad(dims, 'constant')],
    // ReflectionPad{n}d(padding), ReplicationPad{n}d(padding), CircularPad{n}d(padding).
    [`ReflectionPad${dims}d`, pad(dims, 'reflect')],
    [`ReplicationPad${dims}d`, pad(dims, 'replicate')],
    [`CircularPad${dims}d`, pad(dims, 'circular')],
  ]),
);
