/** ConvNeXt, ResNet and DINOv2 in the catalog: the published counts, each stage's grid, the rows the library's own modules make or not; DeiT as ViT. */
import * as assert from 'node:assert/strict';
import { CatalogInputError, isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

const CONVNEXT = 'facebook/convnext-tiny-224';
const RESNET = 'microsoft/resnet-50';

describe('transformers catalog: ConvNeXt', () => {
  it("gives torchvision's published counts for convnext-tiny to -large with their 1000-label heads", () => {
    assert.equal(arch({ className: 'AutoModelForImageClassification', checkpoint: CONVNEXT }).params, 28_589_128);
    assert.equal(arch({ className: 'ConvNextForImageClassification', checkpoint: 'facebook/convnext-small-224' }).params, 50_223_688);
    assert.equal(arch({ className: 'ConvNextForImageClassification', checkpoint: 'facebook/convnext-base-224' }).params, 88_591_464);
    assert.equal(arch({ className: 'ConvNextForImageClassification', checkpoint: 'facebook/convnext-large-224' }).params, 197_767_336);
  });

  it('runs a 56x56 grid down to 7x7; its layer norms and layer scales are Parameter rows, not calls', () => {
    const rows = arch({ className: 'ConvNextModel', checkpoint: CONVNEXT }).table([3, 224, 224]).rows;
    const shape = (path: string) => rows.find((r) => r.path === path)!.outputShape;
    assert.deepEqual(shape('embeddings.patch_embeddings'), [96, 56, 56]);
    assert.deepEqual(shape('encoder.stages.0.layers.0.dwconv'), [96, 56, 56]);
    assert.deepEqual(shape('encoder.stages.0.layers.0.pwconv1'), [56, 56, 384]);
    assert.deepEqual(shape('encoder.stages.3.downsampling_layer.1'), [768, 7, 7]);
    assert.deepEqual(shape('layernorm'), [768]);
    assert.equal(rows.find((r) => r.path === 'encoder.stages.0.layers.0.layer_scale_parameter')!.type, 'Parameter');
    assert.equal(rows.find((r) => r.path === 'encoder.stages.1.downsampling_layer.0.weight')!.type, 'Parameter');
    assert.equal(rows.filter((r) => r.type === 'Identity').length, 18);
    assert.ok(!rows.some((r) => r.path === 'encoder.stages.0.downsampling_layer.1'));
  });

  it('takes a new label count, and refuses images too small for its stages', () => {
    const model = arch({ className: 'ConvNextForImageClassification', checkpoint: CONVNEXT, options: { num_labels: 10, ignore_mismatched_sizes: true } });
    assert.equal(model.params, 28_589_128 - 769 * 1000 + 769 * 10);
    const rows = model.table([3, 160, 192]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'convnext.encoder.stages.2.layers.0.dwconv')!.outputShape, [384, 10, 12]);
    assert.deepEqual(rows[rows.length - 1]!.outputShape, [10]);
    assert.throws(() => model.table([3, 24, 24]), (e: unknown) => e instanceof CatalogInputError && /at least 32x32/.test(e.message));
  });

  it('drops the Identity rows with a drop-path rate and the layer scales with layer_scale_init_value=0; refuses stage lists that differ', () => {
    const plain = arch({ className: 'ConvNextModel', checkpoint: CONVNEXT });
    const changed = arch({ className: 'ConvNextModel', checkpoint: CONVNEXT, options: { drop_path_rate: 0.1, layer_scale_init_value: 0 } });
    assert.equal(plain.params - changed.params, 3 * 96 + 3 * 192 + 9 * 384 + 3 * 768);
    assert.equal(changed.table([3, 224, 224]).rows.filter((r) => r.type === 'Identity').length, 1);
    const miss = transformersArchitecture({ className: 'ConvNextModel', configClass: 'ConvNextConfig', config: { depths: [2, 2], hidden_sizes: [8, 16, 32] } as never });
    assert.ok(isCatalogMiss(miss) && /one of each per stage/.test(miss.miss));
  });
});

describe('transformers catalog: ResNet', () => {
  it("gives torchvision's published counts for resnet-18 to -152 with their 1000-label heads", () => {
    const counts: Array<[string, number]> = [
      ['microsoft/resnet-18', 11_689_512], ['microsoft/resnet-34', 21_797_672], [RESNET, 25_557_032],
      ['microsoft/resnet-101', 44_549_160], ['microsoft/resnet-152', 60_192_808],
    ];
    for (const [checkpoint, params] of counts) assert.equal(arch({ className: 'AutoModelForImageClassification', checkpoint }).params, params, checkpoint);
  });

  it('halves the grid at the stem, the pool and each later stage; projects the shortcut where the shape changes', () => {
    const rows = arch({ className: 'ResNetForImageClassification', checkpoint: RESNET }).table([3, 224, 224]).rows;
    const shape = (path: string) => rows.find((r) => r.path === path)!.outputShape;
    assert.deepEqual(shape('resnet.embedder.embedder.convolution'), [64, 112, 112]);
    assert.deepEqual(shape('resnet.embedder.pooler'), [64, 56, 56]);
    assert.deepEqual(shape('resnet.encoder.stages.0.layers.0.shortcut.convolution'), [256, 56, 56]);
    assert.deepEqual(shape('resnet.encoder.stages.1.layers.0.layer.1.convolution'), [128, 28, 28]);
    assert.deepEqual(shape('resnet.encoder.stages.3.layers.2.activation'), [2048, 7, 7]);
    assert.deepEqual(shape('resnet.encoder.stages.0.layers.1.shortcut'), [256, 56, 56]);
    assert.deepEqual(shape('resnet.pooler'), [2048, 1, 1]);
    assert.deepEqual(shape('classifier.0'), [2048]);
    assert.equal(rows.filter((r) => r.type === 'Conv2d').length, 53);
    assert.equal(rows.filter((r) => r.type === 'BatchNorm2d').length, 53);
  });

  it('runs odd sizes with basic layers, and refuses a bottleneck too narrow for its inner convolutions', () => {
    const rows = arch({ className: 'ResNetModel', checkpoint: 'microsoft/resnet-18' }).table([3, 75, 61]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'encoder.stages.3.layers.1.layer.1.convolution')!.outputShape, [512, 3, 2]);
    const miss = transformersArchitecture({ className: 'ResNetModel', configClass: 'ResNetConfig', config: { hidden_sizes: [2, 8], depths: [1, 1] } as never });
    assert.ok(isCatalogMiss(miss) && /no channels/.test(miss.miss));
  });
});

describe('transformers catalog: DeiT checkpoints without distillation', () => {
  it('builds them as the ViT they are (ViTForImageClassification)', () => {
    const tiny = arch({ className: 'AutoModelForImageClassification', checkpoint: 'facebook/deit-tiny-patch16-224' });
    assert.equal(tiny.params, 5_717_416);
    assert.equal(arch({ className: 'AutoModelForImageClassification', checkpoint: 'facebook/deit-base-patch16-224' }).params, 86_567_656);
    const large = arch({ className: 'ViTModel', checkpoint: 'facebook/deit-base-patch16-384' }).table([3, 384, 384]).rows;
    assert.deepEqual(large.find((r) => r.path === 'layers.0.attention.q_proj')!.outputShape, [577, 768]);
  });
});

describe('transformers catalog: DINOv2', () => {
  it("counts the library's parameters for dinov2-small to -giant (SwiGLU), its position table sized by image_size 518", () => {
    const counts: Array<[string, number]> = [
      ['facebook/dinov2-small', 22_056_576], ['facebook/dinov2-base', 86_580_480], ['facebook/dinov2-large', 304_368_640], ['facebook/dinov2-giant', 1_136_480_768],
    ];
    for (const [checkpoint, params] of counts) assert.equal(arch({ className: 'AutoModel', checkpoint }).params, params, checkpoint);
  });

  it('runs any image size on the interpolated table; the classifier reads the class token and the patch mean side by side', () => {
    const model = arch({ className: 'AutoModelForImageClassification', checkpoint: 'facebook/dinov2-base', options: { num_labels: 10 } });
    assert.equal(model.params, 86_580_480 + 2 * 768 * 10 + 10);
    const rows = model.table([3, 224, 224]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'dinov2.encoder.layer.0.attention.q_proj')!.outputShape, [257, 768]);
    assert.equal(rows.filter((r) => r.path === 'dinov2.encoder.layer.11.drop_path').length, 2);
    assert.equal(rows.find((r) => r.path === 'dinov2.encoder.layer.0.layer_scale1.lambda1')!.type, 'Parameter');
    assert.deepEqual(rows[rows.length - 1]!.outputShape, [10]);
    assert.deepEqual(model.table([3, 518, 392]).rows.find((r) => r.path === 'dinov2.layernorm')!.outputShape, [37 * 28 + 1, 768]);
    assert.throws(() => model.table([3, 10, 10]), (e: unknown) => e instanceof CatalogInputError && /smaller than one 14-pixel patch/.test(e.message));
  });

  it("builds giant's SwiGLU MLP: gate, up and down projections two thirds as wide", () => {
    const rows = arch({ className: 'Dinov2Model', checkpoint: 'facebook/dinov2-giant' }).table([3, 224, 224]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'encoder.layer.0.mlp.gate_proj')!.outputShape, [257, 4096]);
    assert.deepEqual(rows.find((r) => r.path === 'encoder.layer.0.mlp.down_proj')!.outputShape, [257, 1536]);
  });
});
