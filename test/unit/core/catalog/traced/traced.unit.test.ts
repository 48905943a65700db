import * as assert from 'node:assert/strict';
import { TORCHVISION_BLOBS, TORCHVISION_INDEX } from '../../../../../src/core/catalog/data/torchvision';
import { closestNames, editDistance } from '../../../../../src/core/catalog/closestNames';
import { callFunction, callMethod, knownFunctions, knownMethods } from '../../../../../src/core/catalog/traced/ops';
import { decodeBlob, evaluateSymbolic, type DataValue, type TracedBlob } from '../../../../../src/core/catalog/traced/tracedData';
import { tensorVal, type Val } from '../../../../../src/core/catalog/traced/values';
import { layerSpec } from '../../../../../src/core/layers/layerSpecs';
import { BATCH } from '../../../../../src/core/layers/tensorShape';

/** Every target and layer type the generated data uses must be one the evaluator knows. */

const ALL: [string, TracedBlob][] = [
  ...Object.entries(TORCHVISION_BLOBS).map(([name, text]): [string, TracedBlob] => [`torchvision ${name}`, decodeBlob(text)]),
];

function refsIn(value: DataValue): number[] {
  if (Array.isArray(value)) return (value as DataValue[]).flatMap(refsIn);
  if (typeof value === 'object' && value !== null && 'r' in value) return [value.r];
  if (typeof value === 'object' && value !== null && 'slice' in value) return ((value as unknown as { slice: DataValue[] }).slice).flatMap(refsIn);
  return [];
}

describe('traced catalog data', () => {
  it('has a blob for every index entry, with the index variants in order', () => {
    for (const [index, blobs] of [[TORCHVISION_INDEX, TORCHVISION_BLOBS]] as const) {
      assert.deepEqual(Object.keys(index).sort(), Object.keys(blobs).sort());
      for (const [name, entry] of Object.entries(index)) {
        assert.deepEqual(decodeBlob(blobs[name]!).variants.map((v) => v.when), entry.variants, name);
      }
    }
  });

  it('uses only functions, methods and layer types the evaluator knows', () => {
    const functions = new Set(knownFunctions());
    const methods = new Set(knownMethods());
    const unknown = new Set<string>();
    for (const [name, blob] of ALL) {
      for (const variant of blob.variants) {
        for (const [, type] of variant.modules) if (!layerSpec(type)) unknown.add(`${name}: layer ${type}`);
        for (const node of variant.graph) {
          if (node[0] === 'f' && !functions.has(node[1])) unknown.add(`${name}: function ${node[1]}`);
          if (node[0] === 'c' && !methods.has(node[1])) unknown.add(`${name}: method ${node[1]}`);
        }
      }
    }
    assert.deepEqual([...unknown].sort(), []);
  });

  it('refers only to earlier nodes and existing modules', () => {
    for (const [name, blob] of ALL) {
      for (const variant of blob.variants) {
        variant.graph.forEach((node, i) => {
          const args = node[0] === 'p' ? [] : node[0] === 'g' ? node[2] : [node[2], Object.values(node[3])];
          for (const ref of refsIn(args)) assert.ok(ref < i, `${name} node ${i} refers to node ${ref}`);
          if (node[0] === 'm') assert.ok(node[1] < variant.modules.length, `${name} node ${i} calls module ${node[1]}`);
        });
      }
    }
  });
});

describe('traced ops', () => {
  const x = tensorVal([BATCH, 64, 56, 56]);
  const fn = (target: string, args: Val[], kwargs: Record<string, Val> = {}) => callFunction(target, args, kwargs);
  const method = (target: string, args: Val[], kwargs: Record<string, Val> = {}) => callMethod(target, args, kwargs);

  it('reads sizes with the batch marked, and does arithmetic on them', () => {
    const size = method('size', [x]) as Val[];
    assert.deepEqual(size[0], { kind: 'batch', dim: { batch: 1 } });
    assert.equal(fn('operator.floordiv', [size[1]!, 4]), 16);
    assert.deepEqual(fn('operator.mul', [size[0], 3]), { kind: 'batch', dim: { batch: 3 } });
    assert.equal(fn('operator.eq', [224, 224]), true);
    assert.deepEqual(method('view', [x, size[0], 4, 16, 56, 56]), tensorVal([BATCH, 4, 16, 56, 56]));
    assert.deepEqual(method('reshape', [x, size[0], -1]), tensorVal([BATCH, 64 * 56 * 56]));
  });

  it('indexes, chunks, expands and reduces', () => {
    const tokens = tensorVal([BATCH, 197, 768]);
    const slice = (start: Val, stop: Val, step: Val): Val => ({ kind: 'slice', start, stop, step });
    assert.deepEqual(fn('operator.getitem', [tokens, [slice(null, null, null), 0]]), tensorVal([BATCH, 768]));
    assert.deepEqual(fn('operator.getitem', [tensorVal([BATCH, 7, 9, 8]), [{ kind: 'opaque', what: '...' }, slice(0, null, 2), slice(1, null, 2), slice(null, null, null)]]), tensorVal([BATCH, 4, 4, 8]));
    const halves = method('chunk', [x, 2], { dim: 1 }) as Val[];
    assert.deepEqual(halves, [tensorVal([BATCH, 32, 56, 56]), tensorVal([BATCH, 32, 56, 56])]);
    assert.deepEqual(method('expand', [tensorVal([1, 1, 768]), { kind: 'batch', dim: { batch: 1 } }, -1, -1]), tensorVal([BATCH, 1, 768]));
    assert.deepEqual(method('mean', [x, [2, 3]]), tensorVal([BATCH, 64]));
    assert.deepEqual(fn('torch.cat', [[x, x], 1]), tensorVal([BATCH, 128, 56, 56]));
    assert.deepEqual(fn('torch.flatten', [tensorVal([BATCH, 512, 1, 1]), 1]), tensorVal([BATCH, 512]));
  });

  it('pools through the layer specs', () => {
    assert.deepEqual(fn('torch.nn.functional.max_pool2d', [tensorVal([BATCH, 64, 147, 147])], { kernel_size: 3, stride: 2 }), tensorVal([BATCH, 64, 73, 73]));
    assert.deepEqual(fn('torch.nn.functional.avg_pool2d', [tensorVal([BATCH, 768, 17, 17])], { kernel_size: 5, stride: 3 }), tensorVal([BATCH, 768, 5, 5]));
    assert.deepEqual(fn('torch.nn.functional.adaptive_avg_pool2d', [x, [1, 1]]), tensorVal([BATCH, 64, 1, 1]));
  });

  it("follows Swin's wrapped functions", () => {
    assert.deepEqual(fn('torchvision.models.swin_transformer._patch_merging_pad', [tensorVal([BATCH, 25, 15, 96])]), tensorVal([BATCH, 13, 8, 384]));
    assert.deepEqual(fn('torchvision.models.swin_transformer._get_relative_position_bias', [tensorVal([169, 3]), tensorVal([2401]), [7, 7]]), tensorVal([1, 3, 49, 49]));
  });

  it('evaluates symbolic numbers', () => {
    assert.equal(evaluateSymbolic({ $: 'num_classes' }, { num_classes: 10 }), 10);
    assert.equal(evaluateSymbolic({ $: 'image_size', div: 16, pow: 2, add: 1 }, { image_size: 384 }), 577);
  });
});

describe('closest names', () => {
  it('measures edit distance', () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
  });

  it('prefers spelling variants, then prefixes, then near misses', () => {
    const known = ['resnet18', 'resnet50', 'resnet101', 'vit_b_16', 'efficientnet_b0', 'efficientnet_b1'];
    assert.deepEqual(closestNames('ResNet-50', known), ['resnet50']);
    assert.deepEqual(closestNames('resnet', known), ['resnet18', 'resnet50', 'resnet101']);
    assert.deepEqual(closestNames('efficentnet_b0', known)[0], 'efficientnet_b0');
    assert.deepEqual(closestNames('bert', known), []);
  });
});
