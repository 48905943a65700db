import * as assert from 'node:assert/strict';
import { einopsLayers } from '../../../../src/core/layers/einops';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Value } from '../../../../src/core/analysis/layerCall';
import { LayerArgs, LayerArgumentError } from '../../../../src/core/layers/layerArgs';
import { knownLayerTypes, layerSpec } from '../../../../src/core/layers/layerSpecs';
import type { LayerSpec } from '../../../../src/core/layers/layerSpec';
import { BATCH, formatShape, type Dim, type LayerOutput, type TensorShape } from '../../../../src/core/layers/tensorShape';
import { findPackageRoot } from '../../../../src/core/parsing/parserAssets';

/** One case of expected-layers.json, printed by real PyTorch (expected_layers.py). */
interface ExpectedCase {
  readonly type: string;
  readonly args: Value[];
  readonly kwargs: Record<string, Value>;
  readonly inputs: (JsonShape | { shape: JsonShape })[];
  readonly call?: Record<string, Value>;
  readonly error?: boolean;
  readonly message?: string;
  readonly params?: number;
  readonly output?: LayerOutput;
}

type JsonShape = (number | 'B' | { batch: number })[];

const EXPECTED_FILE = path.join(findPackageRoot(__dirname), 'test', 'unit', 'core', 'layers', 'expected-layers.json');
const expected = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8')) as { torch: string; cases: ExpectedCase[] };

function shapeOf(input: ExpectedCase['inputs'][number]): TensorShape {
  const dims = Array.isArray(input) ? input : input.shape;
  return dims.map((d): Dim => (d === 'B' ? BATCH : d));
}

function argsOf(c: { type: string; args: Value[]; kwargs: Record<string, Value> }): LayerArgs {
  return new LayerArgs({ type: c.type, path: 'layer', args: c.args, kwargs: c.kwargs, range: { startLine: 0, startColumn: 0, endLine: 0, endColumn: 0 } });
}

function specOf(type: string): LayerSpec {
  const spec = layerSpec(type);
  assert.ok(spec, `${type} has a layer spec`);
  return spec;
}

function describeCase(c: ExpectedCase): string {
  const args = [...c.args.map((a) => JSON.stringify(a)), ...Object.entries(c.kwargs).map(([k, v]) => `${k}=${JSON.stringify(v)}`)].join(', ');
  const call = c.call ? ` with ${JSON.stringify(c.call)}` : '';
  return `${c.type}(${args.length > 90 ? `${args.slice(0, 87)}...` : args}) on ${c.inputs.map((i) => formatShape(shapeOf(i))).join(', ')}${call}`;
}

describe(`layer specs against PyTorch ${expected.torch}`, () => {
  for (const c of expected.cases) {
    if (c.error) {
      it(`rejects ${describeCase(c)}`, () => {
        const spec = specOf(c.type);
        const inputs = c.inputs.map(shapeOf);
        const args = argsOf(c);
        assert.throws(
          () => {
            spec.params(args, inputs);
            spec.forward(inputs, args, { kwargs: c.call ?? {} });
          },
          (error: unknown) => {
            assert.ok(error instanceof LayerArgumentError, `a LayerArgumentError, not ${String(error)}`);
            if (c.message) assert.match(error.message, new RegExp(c.message));
            return true;
          },
        );
      });
    } else {
      it(`sizes ${describeCase(c)}`, () => {
        const spec = specOf(c.type);
        const inputs = c.inputs.map(shapeOf);
        const args = argsOf(c);
        assert.equal(spec.params(args, inputs), c.params, 'parameters');
        assert.deepEqual(spec.forward(inputs, args, { kwargs: c.call ?? {} }), c.output, 'output');
      });
    }
  }

  it('checks every layer type of the layer specs against PyTorch', () => {
    const checked = new Set(expected.cases.filter((c) => !c.error).map((c) => c.type));
    // einops' layers are not torch.nn's: einops.unit.test.ts checks them against einops.
    assert.deepEqual(knownLayerTypes().filter((type) => !checked.has(type) && !(type in einopsLayers)), []);
  });
});
