import * as assert from 'node:assert/strict';
import { CatalogInputError } from '../../../../../src/core/catalog/catalog';
import { torchvisionArchitecture, torchvisionModelNames, torchvisionName } from '../../../../../src/core/catalog/torchvision/torchvision';
import { checkAgainstVectors, expectArchitecture, expectMiss, loadVectors, vectorNames } from '../catalogVectors';

/**
 * The torchvision catalog against PyTorch: test/vectors/catalog/torchvision holds, per model, the
 * layer tables harness/layer_table.py measured for several inputs and options and the exact
 * parameter counts (scripts/catalog/generate_catalog.py); the catalog must reproduce them row
 * for row. Then the options: how torchvision 0.14's builders treat them, and the misses.
 */

const REQUIRED = [
  'resnet18', 'resnet34', 'resnet50', 'resnet101', 'resnet152', 'wide_resnet50_2', 'resnext50_32x4d',
  'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
  'mobilenet_v2', 'mobilenet_v3_small', 'mobilenet_v3_large',
  'efficientnet_b0', 'efficientnet_b1', 'efficientnet_b2', 'efficientnet_b3', 'efficientnet_b4', 'efficientnet_b5', 'efficientnet_b6', 'efficientnet_b7',
  'inception_v3', 'densenet121', 'densenet169', 'densenet201', 'googlenet', 'alexnet', 'squeezenet1_0', 'squeezenet1_1',
  'shufflenet_v2_x0_5', 'shufflenet_v2_x1_0', 'shufflenet_v2_x1_5', 'shufflenet_v2_x2_0',
  'convnext_tiny', 'convnext_small', 'convnext_base', 'vit_b_16', 'vit_b_32', 'vit_l_16', 'swin_t',
];

const tv = torchvisionArchitecture;

describe('torchvision catalog', () => {
  it('has every required model, and vectors for exactly the models it has', () => {
    const names = torchvisionModelNames();
    for (const name of REQUIRED) assert.ok(names.includes(name), `${name} is in the catalog`);
    assert.deepEqual(vectorNames('torchvision'), names);
  });

  describe('matches the layer tables PyTorch measures', () => {
    for (const name of vectorNames('torchvision')) {
      it(name, () => checkAgainstVectors(tv, loadVectors('torchvision', name)));
    }
  });

  describe('options', () => {
    it('num_classes changes the classifier and the parameter count', () => {
      const base = expectArchitecture(tv('resnet50', {}), 'resnet50');
      const ten = expectArchitecture(tv('resnet50', { num_classes: 10 }), 'resnet50(num_classes=10)');
      assert.equal(base.params - ten.params, 2048 * 990 + 990);
      const fc = ten.table([3, 224, 224]).rows.find((r) => r.path === 'fc');
      assert.deepEqual(fc?.outputShape, [10]);
    });

    it('aux_logits adds or removes the auxiliary classifiers of inception_v3 and googlenet', () => {
      for (const [name, aux] of [['inception_v3', 'AuxLogits.'], ['googlenet', 'aux1.']] as const) {
        const withAux = expectArchitecture(tv(name, {}), name).table([3, 299, 299]).rows;
        const without = expectArchitecture(tv(name, { aux_logits: false }), name).table([3, 299, 299]).rows;
        assert.ok(withAux.some((r) => r.path.startsWith(aux)), `${name} trains with its aux heads by default (torchvision 0.14, weights=None)`);
        assert.ok(!without.some((r) => r.path.startsWith(aux)), `${name}(aux_logits=False) has none`);
      }
    });

    it('weights fix num_classes to 1000 and raise otherwise, as torchvision does', () => {
      for (const weights of ['IMAGENET1K_V2', 'ResNet50_Weights.IMAGENET1K_V1', 'DEFAULT', 'models.ResNet50_Weights.DEFAULT']) {
        assert.equal(expectArchitecture(tv('resnet50', { weights }), weights).params, 25557032);
      }
      assert.equal(expectArchitecture(tv('resnet50', { weights: 'DEFAULT', num_classes: 1000 }), 'explicit 1000').params, 25557032);
      assert.match(expectMiss(tv('resnet50', { weights: 'DEFAULT', num_classes: 10 }), 'weights and 10 classes'), /The parameter 'num_classes' expected value 1000 but got 10 instead/);
      assert.match(expectMiss(tv('resnet50', { weights: 'IMAGENET1K_V9' }), 'unknown member'), /ResNet50_Weights has no IMAGENET1K_V9 \(it has IMAGENET1K_V1, IMAGENET1K_V2/);
      assert.match(expectMiss(tv('resnet50', { weights: 'ResNet18_Weights.DEFAULT' }), 'wrong enum'), /takes ResNet50_Weights, not ResNet18_Weights/);
      assert.equal(expectArchitecture(tv('resnet50', { weights: null }), 'weights=None').params, 25557032);
    });

    it('pretrained=True loads the legacy weights, with their fixed options', () => {
      assert.equal(expectArchitecture(tv('resnet18', { pretrained: true }), 'pretrained').params, 11689512);
      assert.match(expectMiss(tv('resnet18', { pretrained: true, num_classes: 10 }), 'pretrained, 10 classes'), /expected value 1000 but got 10/);
      assert.equal(expectArchitecture(tv('resnet18', { pretrained: false, num_classes: 10 }), 'not pretrained').params, 11181642);
      assert.match(expectMiss(tv('regnet_y_128gf', { pretrained: true }), 'no legacy weights'), /No weights available/);
    });

    it('weights choose the aux heads as torchvision 0.14 does: googlenet drops them, inception_v3 keeps them', () => {
      assert.equal(expectArchitecture(tv('googlenet', { weights: 'DEFAULT' }), 'googlenet weights').params, 6624904);
      assert.equal(expectArchitecture(tv('googlenet', { weights: 'DEFAULT', aux_logits: true }), 'googlenet weights, aux').params, 13004888);
      assert.equal(expectArchitecture(tv('inception_v3', { weights: 'DEFAULT' }), 'inception weights').params, 27161264);
      assert.match(expectMiss(tv('inception_v3', { weights: 'DEFAULT', aux_logits: false }), 'inception weights, no aux'), /'aux_logits' expected value True but got False/);
    });

    it("vit's image_size sizes the position embedding, and the model takes only that size", () => {
      const vit384 = expectArchitecture(tv('vit_b_16', { image_size: 384 }), 'vit 384');
      assert.equal(vit384.params, 86859496);
      assert.deepEqual(vit384.input.defaultShape, [3, 384, 384]);
      const pos = vit384.table([3, 384, 384]).rows.find((r) => r.type === 'Parameter' && r.path === 'encoder.pos_embedding');
      assert.equal(pos?.params, 577 * 768);
      assert.throws(() => vit384.table([3, 224, 224]), (e: Error) => e instanceof CatalogInputError && /built for 384x384 images \(image_size=384\)/.test(e.message));
      const swag = expectArchitecture(tv('vit_b_16', { weights: 'IMAGENET1K_SWAG_E2E_V1' }), 'vit swag');
      assert.equal(swag.params, 86859496, 'the SWAG end-to-end weights are for 384x384 images');
      assert.match(expectMiss(tv('vit_b_16', { weights: 'IMAGENET1K_SWAG_E2E_V1', image_size: 224 }), 'swag at 224'), /'image_size' expected value 384 but got 224/);
      assert.match(expectMiss(tv('vit_b_32', { image_size: 240 }), 'not whole patches'), /image_size=240 is not a multiple of 32/);
      assert.equal(expectArchitecture(tv('vit_b_32', { image_size: 256 }), 'whole patches').params, 88224232 + 768 * (64 - 49));
    });

    it('width_mult picks a mobilenet_v2 width the catalog has', () => {
      assert.equal(expectArchitecture(tv('mobilenet_v2', { width_mult: 0.5 }), '0.5').params, 1968680);
      assert.match(expectMiss(tv('mobilenet_v2', { width_mult: 0.6 }), '0.6'), /width_mult = 1, 0.35, 0.5, 0.75, 1.3, 1.4, not 0.6/);
    });

    it('accepts options that do not change the layer table', () => {
      for (const [name, options] of [
        ['alexnet', { dropout: 0.3 }],
        ['resnet50', { zero_init_residual: true, progress: false }],
        ['convnext_tiny', { stochastic_depth_prob: 0.2 }],
        ['vit_b_16', { dropout: 0.1, attention_dropout: 0.1 }],
        ['inception_v3', { init_weights: true, transform_input: true }],
        ['densenet121', { memory_efficient: true, drop_rate: 0.2 }],
      ] as const) {
        const base = expectArchitecture(tv(name, {}), name);
        assert.equal(expectArchitecture(tv(name, options), `${name} ${JSON.stringify(options)}`).params, base.params);
      }
    });

    it('accepts dropout where torchvision 0.14 refuses it but newer versions take it, with a note', () => {
      const architecture = expectArchitecture(tv('efficientnet_b0', { dropout: 0.3 }), 'efficientnet_b0(dropout=0.3)');
      const notes = architecture.table([3, 224, 224]).notes;
      assert.ok(notes.some((n) => /`dropout` itself and refuses it.*newer versions take it/.test(n)), notes.join('\n'));
    });

    it('misses an unknown option, naming it and what the builder takes', () => {
      const miss = expectMiss(tv('resnet50', { colour: 'blue' }), 'unknown option');
      assert.match(miss, /torchvision\.models\.resnet50 has no option `colour`/);
      assert.match(miss, /num_classes/);
    });

    it('misses options that change the architecture beyond what the catalog covers', () => {
      assert.match(expectMiss(tv('resnet50', { replace_stride_with_dilation: true }), 'dilation'), /cannot build it with replace_stride_with_dilation=True/);
      assert.match(expectMiss(tv('resnext50_32x4d', { groups: 4 }), 'groups'), /refuses/);
      assert.match(expectMiss(tv('resnet50', { num_classes: 0 }), 'zero classes'), /positive int/);
      assert.equal(expectArchitecture(tv('resnet50', { groups: 1 }), 'groups at its default').params, 25557032);
    });
  });

  describe('names', () => {
    it('takes the torchvision.models. prefix', () => {
      assert.equal(torchvisionName('torchvision.models.resnet50'), 'resnet50');
      assert.equal(torchvisionName('models.vgg16'), 'vgg16');
    });

    it('misses an unknown name and suggests the closest', () => {
      assert.match(expectMiss(tv('resnet5', {}), 'resnet5'), /no model "resnet5"; did you mean resnet50/);
      assert.match(expectMiss(tv('vit_b16', {}), 'vit_b16'), /did you mean vit_b_16/);
      assert.match(expectMiss(tv('EfficientNetB0', {}), 'EfficientNetB0'), /did you mean efficientnet_b0/);
      assert.match(expectMiss(tv('totally_unknown', {}), 'nothing close'), /no model "totally_unknown"/);
    });
  });

  describe('inputs', () => {
    it('refuses an image too small for the model, saying the smallest it takes', () => {
      const vgg = expectArchitecture(tv('vgg16', {}), 'vgg16');
      assert.throws(
        () => vgg.table([3, 16, 16]),
        (e: Error) => e instanceof CatalogInputError && /vgg16 cannot take a 3x16x16 input/.test(e.message) && /smallest square image vgg16 takes is 32x32/.test(e.message),
      );
    });

    it('refuses the wrong number of channels and inputs that are not images', () => {
      const resnet = expectArchitecture(tv('resnet18', {}), 'resnet18');
      assert.throws(() => resnet.table([1, 224, 224]), (e: Error) => e instanceof CatalogInputError && /expects 3 input channels but receives 1/.test(e.message));
      assert.throws(() => resnet.table([224, 224]), (e: Error) => e instanceof CatalogInputError && /takes images \(channels, height, width\)/.test(e.message));
      assert.throws(() => resnet.table([3, 0, 224]), CatalogInputError);
    });

    it('follows any image size: a ResNet on 1x1 images, Swin on sizes that are no multiple of its windows', () => {
      expectArchitecture(tv('resnet18', {}), 'resnet18').table([3, 1, 1]);
      const rows = expectArchitecture(tv('swin_t', {}), 'swin_t').table([3, 100, 60]).rows;
      assert.deepEqual(rows.find((r) => r.path === 'head')?.outputShape, [1000]);
    });

    it('gives the default input shape of the weights it is trained with', () => {
      assert.deepEqual(expectArchitecture(tv('inception_v3', {}), 'inception').input, { kind: 'image', defaultShape: [3, 299, 299] });
      assert.deepEqual(expectArchitecture(tv('efficientnet_b7', {}), 'b7').input.defaultShape, [3, 600, 600]);
      assert.equal(expectArchitecture(tv('resnet50', {}), 'resnet50').className, 'ResNet');
      assert.match(expectArchitecture(tv('resnet50', {}), 'resnet50').source, /^torchvision 0\.14/);
    });
  });
});
