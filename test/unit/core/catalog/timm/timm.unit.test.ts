import * as assert from 'node:assert/strict';
import { timmArchitecture, timmModelNames, timmName } from '../../../../../src/core/catalog/timm/timm';
import { TIMM_MODELS } from '../../../../../src/core/catalog/timm/timmModels';
import { torchvisionArchitecture } from '../../../../../src/core/catalog/torchvision/torchvision';
import { checkAgainstVectors, expectArchitecture, expectMiss, loadVectors, vectorNames } from '../catalogVectors';

/**
 * The timm catalog: each timm name answers with an architecture whose parameter count is timm's
 * published one (to 0.1%, or to the rounding of timm's two-decimal figure), and Xception, built
 * from the published architecture, matches the layer tables PyTorch measures for it.
 */

const REQUIRED = [
  'resnet18', 'resnet34', 'resnet50', 'resnet101', 'resnet152', 'wide_resnet50_2', 'resnext50_32x4d',
  'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
  'mobilenetv2_100', 'mobilenetv3_small_100', 'mobilenetv3_large_100',
  'efficientnet_b0', 'efficientnet_b1', 'efficientnet_b2', 'efficientnet_b3', 'efficientnet_b4',
  'inception_v3', 'densenet121', 'densenet169', 'densenet201', 'convnext_tiny', 'convnext_small', 'convnext_base',
  'vit_base_patch16_224', 'vit_base_patch32_224', 'vit_large_patch16_224', 'swin_tiny_patch4_window7_224', 'xception',
];

/** timm's figures are in millions with two decimals: a count within half of the last digit matches. */
const ROUNDING = 5000;

describe('timm catalog', () => {
  it('has every required model', () => {
    const names = timmModelNames();
    for (const name of REQUIRED) assert.ok(names.includes(name), `${name} is in the timm catalog`);
  });

  describe("has timm's published parameter count", () => {
    for (const [name, model] of Object.entries(TIMM_MODELS)) {
      it(name, () => {
        const architecture = expectArchitecture(timmArchitecture(name, {}), name);
        const difference = Math.abs(architecture.params - model.published);
        const exact = !Number.isInteger(model.published / 1e4);
        if (exact) assert.equal(architecture.params, model.published);
        else assert.ok(difference <= Math.max(0.001 * model.published, ROUNDING), `${name}: ${architecture.params} vs timm's ${model.published} (${((100 * difference) / model.published).toFixed(3)}%)`);
        assert.equal(architecture.library, 'timm');
        assert.equal(architecture.className, model.className);
        assert.deepEqual(architecture.input.defaultShape, [3, model.input, model.input]);
      });
    }
  });

  describe('xception matches the layer tables PyTorch measures for the published architecture', () => {
    for (const name of vectorNames('timm')) {
      it(name, () => checkAgainstVectors(timmArchitecture, loadVectors('timm', name)));
    }
  });

  it('xception has exactly the 22,855,952 parameters timm publishes', () => {
    const xception = expectArchitecture(timmArchitecture('xception', {}), 'xception');
    assert.equal(xception.params, 22855952);
    assert.match(xception.source, /published architecture/);
    const rows = xception.table([3, 299, 299]).rows;
    assert.deepEqual(rows.slice(0, 3).map((r) => r.path), ['conv1', 'bn1', 'act1']);
    assert.deepEqual(rows[rows.length - 1]!.outputShape, [1000]);
  });

  it('answers a mapped model with the torchvision table, saying so', () => {
    const timm = expectArchitecture(timmArchitecture('resnet50', { num_classes: 10 }), 'timm resnet50');
    const tv = expectArchitecture(torchvisionArchitecture('resnet50', { num_classes: 10 }), 'tv resnet50');
    assert.equal(timm.params, tv.params);
    const table = timm.table([3, 224, 224]);
    assert.deepEqual(table.rows, tv.table([3, 224, 224]).rows);
    assert.match(table.notes[0]!, /timm's resnet50: the layer table is torchvision's resnet50's/);
    assert.match(timm.source, /torchvision .* resnet50/);
  });

  it("maps timm's inception_v3 to torchvision's without aux heads, and vit's img_size to image_size", () => {
    assert.equal(expectArchitecture(timmArchitecture('inception_v3', {}), 'inception').params, 23834568);
    const vit = expectArchitecture(timmArchitecture('vit_base_patch16_224', { img_size: 384 }), 'vit 384');
    assert.equal(vit.params, 86859496);
    assert.deepEqual(vit.input.defaultShape, [3, 384, 384]);
  });

  it('takes pretrained tags, the Hub prefix and the legacy_xception name', () => {
    assert.equal(timmName('resnet50.a1_in1k'), 'resnet50');
    assert.equal(timmName('timm/resnet50.tv_in1k'), 'resnet50');
    assert.equal(timmName('hf_hub:timm/convnext_tiny.fb_in1k'), 'convnext_tiny');
    assert.equal(timmName('legacy_xception'), 'xception');
    assert.equal(expectArchitecture(timmArchitecture('legacy_xception.tf_in1k', {}), 'legacy').params, 22855952);
  });

  it('accepts pretrained with any num_classes, and regularization options', () => {
    const architecture = expectArchitecture(timmArchitecture('efficientnet_b0', { pretrained: true, num_classes: 5, drop_rate: 0.2, drop_path_rate: 0.1 }), 'b0');
    assert.equal(architecture.params, expectArchitecture(torchvisionArchitecture('efficientnet_b0', { num_classes: 5 }), 'tv b0').params);
    assert.equal(expectArchitecture(timmArchitecture('xception', { num_classes: 10 }), 'xception 10').params, 22855952 - 2049 * 990);
  });

  it('misses what it does not cover, saying why', () => {
    assert.match(expectMiss(timmArchitecture('resnet50', { in_chans: 1 }), 'in_chans'), /only in_chans=3/);
    assert.match(expectMiss(timmArchitecture('resnet50', { num_classes: 0 }), 'no head'), /num_classes=0/);
    assert.match(expectMiss(timmArchitecture('resnet50', { features_only: true }), 'unknown option'), /does not know the option `features_only`/);
    assert.match(expectMiss(timmArchitecture('resnet51', {}), 'unknown name'), /no model "resnet51"; did you mean resnet50/);
    assert.match(expectMiss(timmArchitecture('tf_efficientnet_b0', {}), 'same-padding variant'), /did you mean efficientnet_b0/);
  });
});
