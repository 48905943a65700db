/** Swin in the catalog: windows per stage, padding, the image sizes the library cannot run, the published counts. */
import * as assert from 'node:assert/strict';
import { CatalogInputError, isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

const TINY = 'microsoft/swin-tiny-patch4-window7-224';

describe('transformers catalog: Swin', () => {
  it("gives torchvision's published counts for swin-tiny, -small and -base with their 1000-label heads", () => {
    assert.equal(arch({ className: 'AutoModelForImageClassification', checkpoint: TINY }).params, 28_288_354);
    assert.equal(arch({ className: 'SwinForImageClassification', checkpoint: 'microsoft/swin-small-patch4-window7-224' }).params, 49_606_258);
    assert.equal(arch({ className: 'SwinForImageClassification', checkpoint: 'microsoft/swin-base-patch4-window7-224' }).params, 87_768_224);
  });

  it('attends within 7x7 windows: [windows, 49, width] per stage, one window at the last stage', () => {
    const rows = arch({ className: 'SwinModel', checkpoint: TINY }).table([3, 224, 224]).rows;
    const shape = (path: string) => rows.find((r) => r.path === path)!.outputShape;
    assert.deepEqual(shape('embeddings.patch_embeddings.projection'), [96, 56, 56]);
    assert.deepEqual(shape('encoder.layers.0.blocks.0.attention.q_proj'), [64, 49, 96]);
    assert.deepEqual(shape('encoder.layers.2.blocks.5.attention.o_proj'), [4, 49, 384]);
    assert.deepEqual(shape('encoder.layers.3.blocks.1.attention.v_proj'), [49, 768]);
    assert.deepEqual(shape('encoder.layers.0.downsample.reduction'), [784, 192]);
    assert.deepEqual(shape('pooler'), [768, 1]);
    // The first block's drop path has rate 0: an nn.Identity; the others are the library's SwinDropPath.
    assert.deepEqual(rows.filter((r) => r.type === 'Identity').map((r) => r.path), ['encoder.layers.0.blocks.0.drop_path']);
  });

  it('runs any image whose stages stay as large as the window, padding to whole windows', () => {
    const model = arch({ className: 'SwinForImageClassification', checkpoint: TINY, options: { num_labels: 10, ignore_mismatched_sizes: true } });
    const rows = model.table([3, 384, 384]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'swin.encoder.layers.0.blocks.0.attention.q_proj')!.outputShape, [196, 49, 96]);
    assert.deepEqual(rows.find((r) => r.path === 'swin.encoder.layers.3.blocks.0.attention.q_proj')!.outputShape, [4, 49, 768]);
    assert.deepEqual(rows[rows.length - 1]!.outputShape, [10]);
    // 200 pixels: a 50x50 patch grid, 8x8 windows once padded to 56; the last stage is 7x7.
    assert.deepEqual(model.table([3, 200, 200]).rows.find((r) => r.path === 'swin.encoder.layers.0.blocks.0.attention.k_proj')!.outputShape, [64, 49, 96]);
    assert.throws(() => model.table([3, 192, 192]), (e: unknown) => e instanceof CatalogInputError && /stage 3 a 6x6 grid, smaller than its 7x7 window/.test(e.message));
    assert.throws(() => model.table([1, 224, 224]), /3-channel images/);
  });

  it('checks absolute position embeddings against the image size, unless interpolated', () => {
    const request = { className: 'SwinModel', checkpoint: TINY, options: { use_absolute_embeddings: true } };
    const model = arch(request);
    assert.equal(model.params - arch({ className: 'SwinModel', checkpoint: TINY }).params, 56 * 56 * 96);
    assert.throws(() => model.table([3, 256, 256]), /interpolate_pos_encoding=True/);
    assert.ok(arch({ ...request, interpolatePosEncoding: true }).table([3, 256, 256]).rows.length > 0);
  });

  it('builds SwinModel without its pooler or with a mask token; refuses lists that do not match', () => {
    const plain = arch({ className: 'SwinModel', checkpoint: TINY });
    const masked = arch({ className: 'SwinModel', checkpoint: TINY, options: { add_pooling_layer: false, use_mask_token: true } });
    assert.equal(masked.params - plain.params, 96);
    assert.ok(!masked.table([3, 224, 224]).rows.some((r) => r.path === 'pooler'));
    const miss = transformersArchitecture({ className: 'SwinModel', configClass: 'SwinConfig', config: { depths: [2, 2], num_heads: [3, 6, 12] } as never });
    assert.ok(isCatalogMiss(miss) && /one per stage/.test(miss.miss));
    const mim = transformersArchitecture({ className: 'SwinForMaskedImageModeling', checkpoint: TINY });
    assert.ok(isCatalogMiss(mim) && /does not cover SwinForMaskedImageModeling/.test(mim.miss));
  });
});
