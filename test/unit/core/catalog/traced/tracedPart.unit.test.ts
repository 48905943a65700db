import * as assert from 'node:assert/strict';
import { CatalogPartError, isCatalogMiss, type CatalogArchitecture } from '../../../../../src/core/catalog/catalog';
import { torchvisionArchitecture, torchvisionModelNames } from '../../../../../src/core/catalog/torchvision/torchvision';
import type { LayerRow } from '../../../../../src/core/layerTable/layerTable';

function architecture(name: string): CatalogArchitecture {
  const built = torchvisionArchitecture(name, {});
  if (isCatalogMiss(built)) throw new Error(built.miss);
  return built;
}

const under = (row: LayerRow, path: string) => row.path.startsWith(`${path}.`);
const callRows = (rows: readonly LayerRow[]) => rows.filter((row) => row.type !== 'Parameter' && row.outputShape !== null);

describe('parts of traced torchvision models run alone (tracedPart.ts)', () => {
  it('lists named_children() in PyTorch order, containers and layers alike', () => {
    assert.deepEqual(architecture('resnet50').childNames?.(''), ['conv1', 'bn1', 'relu', 'maxpool', 'layer1', 'layer2', 'layer3', 'layer4', 'avgpool', 'fc']);
    assert.deepEqual(architecture('resnet50').childNames?.('layer1'), ['0', '1', '2']);
    assert.deepEqual(architecture('resnet50').childNames?.('layer2.0'), ['conv1', 'bn1', 'conv2', 'bn2', 'conv3', 'bn3', 'relu', 'downsample']);
    // Modules with no layer module inside (torchvision's Permute, LayerNorm2d) are children too.
    assert.deepEqual(architecture('swin_t').childNames?.(''), ['features', 'norm', 'permute', 'avgpool', 'flatten', 'head']);
    assert.deepEqual(architecture('convnext_tiny').childNames?.('features.0'), ['0', '1']);
  });

  // The strongest check there is without PyTorch: each top-level part, run alone on the input the
  // whole model gives it, yields exactly the whole model's rows under it; and the parts' and the
  // top-level layers' parameters add up to the model's.
  for (const name of torchvisionModelNames()) {
    it(`${name}: every top-level part alone gives the model's own rows, and the parameters add up`, () => {
      const model = architecture(name);
      const full = model.table(model.input.defaultShape);
      let params = full.rows.filter((row) => row.type === 'Parameter' && !row.path.includes('.')).reduce((n, row) => n + (row.params ?? 0), 0);
      for (const child of model.childNames?.('') ?? []) {
        const index = full.rows.findIndex((row) => row.outputShape !== null && under(row, child));
        if (index < 0) {
          params += full.rows.filter((row) => row.path === child || under(row, child)).reduce((n, row) => n + (row.params ?? 0), 0);
          continue;
        }
        // Inception's auxiliary head pools its input before its first layer: it takes Mixed_6e's 17x17 map.
        const input = name === 'inception_v3' && child === 'AuxLogits' ? [768, 17, 17] : full.rowInputs![index]!;
        const part = model.partTable!(child, input);
        const own = full.rows.filter((row) => under(row, child)).map((row) => ({ ...row, path: row.path.slice(child.length + 1) }));
        assert.deepEqual(callRows(part.rows), callRows(own), `${name}.${child}`);
        params += part.rows.reduce((n, row) => n + (row.params ?? 0), 0);
      }
      assert.equal(params, model.params);
    });
  }

  it("gives a part's output as its forward returns it: a ShuffleNet stage ends in a concatenation and a channel shuffle, not in its last layer", () => {
    const model = architecture('shufflenet_v2_x1_0');
    const stage = model.partTable!('stage4', [232, 14, 14]);
    assert.deepEqual(stage.output, [464, 7, 7]);
    assert.deepEqual(callRows(stage.rows).at(-1)!.outputShape, [232, 7, 7]);
    assert.deepEqual(architecture('vgg16').partTable!('features', [3, 160, 96]).output, [512, 5, 3]);
  });

  it('sizes a part on inputs the whole model never gives it, and refuses what does not fit', () => {
    const resnet = architecture('resnet50');
    assert.deepEqual(resnet.partTable!('layer3', [512, 40, 24]).output, [1024, 20, 12]);
    assert.throws(() => resnet.partTable!('layer3', [256, 40, 24]), /layer3\.0\.conv1|channels|Conv2d/);
    assert.throws(() => resnet.partTable!('layer9', [512, 40, 24]), CatalogPartError);
  });
});
