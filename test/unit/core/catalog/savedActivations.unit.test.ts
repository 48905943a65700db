import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../src/core/catalog/catalog';
import savedData from '../../../../src/core/catalog/data/timmSaved.json';
import torchvisionData from '../../../../src/core/catalog/data/torchvisionSaved.json';
import transformersData from '../../../../src/core/catalog/data/transformersSaved.json';
import torchvisionAttentionData from '../../../../src/core/catalog/data/torchvisionAttentionSaved.json';
import { transformersArchitecture, type TransformersRequest } from '../../../../src/core/catalog/hf/transformers';
import { CHECKPOINTS } from '../../../../src/core/catalog/hf/checkpoints';
import { SCHEMAS } from '../../../../src/core/catalog/hf/configs';
import { torchvisionArchitecture } from '../../../../src/core/catalog/torchvision/torchvision';
import { TIMM_VERSIONS } from '../../../../src/core/catalog/data/timmIndex';
import { timmArchitecture, timmModelNames, timmName } from '../../../../src/core/catalog/timm/timm';
import { measuredSavedActivations } from '../../../../src/core/catalog/savedActivations';
import { tableOf } from '../../fixtures';

/** The measured bytes per sample of `name` in a data file. */
function bytesOf(data: { models: object }, name: string): number {
  const entry = (data.models as Record<string, readonly number[] | undefined>)[name];
  if (entry?.[0] === undefined) throw new Error(`no measurement for ${name}`);
  return entry[0];
}

function bytesOfPeak(data: { models: object }, name: string): number | undefined {
  return (data.models as Record<string, readonly number[] | undefined>)[name]?.[3];
}

function architecture(name: string, options: Record<string, unknown> = {}): CatalogArchitecture {
  const found = timmArchitecture(name, options as never);
  if (isCatalogMiss(found)) throw new Error(found.miss);
  return found;
}

/**
 * What autograd saves in each timm model's forward (scripts/catalog/timm_saved.py, on the meta
 * device with fused attention): the figure the real-model estimator's replay holds for a timm model.
 */
describe('timm catalog: activations autograd saves (timmSaved.json)', () => {
  it('was measured with the catalog\'s timm', () => {
    assert.equal(savedData.versions.timm, TIMM_VERSIONS.timm);
  });

  it('has a figure, or the reason it has none, for every name the catalog resolves', () => {
    const models = savedData.models as Record<string, unknown>;
    const failed = savedData.failed as Record<string, string>;
    const without = timmModelNames()
      .map((name) => timmName(name)!.model)
      .filter((model) => !(model in models) && !(model in failed));
    assert.deepEqual([...new Set(without)], []);
  });

  it('gives a table its figure at the default input, and scales it by the pixels at another', () => {
    const resnet = architecture('resnet18', { num_classes: 10 });
    const atDefault = resnet.table([3, 224, 224]).savedActivations;
    assert.equal(atDefault?.bytesPerSample, bytesOf(savedData, 'resnet18'));
    assert.match(atDefault?.source ?? '', /timm 1\.0\.31 .*autograd/);
    assert.equal(resnet.table([3, 112, 112]).savedActivations?.bytesPerSample, bytesOf(savedData, 'resnet18') / 4);
    // Saved tensors per sample dwarf what the rows keep for timm's own layers (a ResNet-18 keeps ~21 MiB).
    assert.ok(atDefault && atDefault.bytesPerSample > 15 * 2 ** 20 && atDefault.bytesPerSample < 30 * 2 ** 20);
  });

  it("carries a frozen forward's peak where it was measured, scaled by the pixels too", () => {
    const dinov2 = measuredSavedActivations('transformers', 'facebook/dinov2-base:Dinov2Model', 224, 224);
    const entry = (transformersData.models as Record<string, readonly number[]>)['facebook/dinov2-base:Dinov2Model']!;
    assert.equal(dinov2?.forwardPeakBytesPerSample, entry[3]);
    // 257 tokens of 768: the residual stream, the MLP's hidden before and after the activation and more, not the whole model's.
    assert.ok(entry[3]! > 10 * 257 * 768 * 4 && entry[3]! < dinov2!.bytesPerSample / 10);
    assert.equal(measuredSavedActivations('transformers', 'facebook/dinov2-base:Dinov2Model', 448, 224)?.forwardPeakBytesPerSample, 2 * entry[3]!);
    assert.equal(measuredSavedActivations('torchvision', 'vit_b_16', 224, 224)?.forwardPeakBytesPerSample, bytesOfPeak(torchvisionAttentionData, 'vit_b_16'));
    // timm's and torchvision's models have theirs too (timm_saved.py, torchvision_saved.py).
    assert.equal(measuredSavedActivations('timm', 'resnet18', 224, 224)?.forwardPeakBytesPerSample, bytesOfPeak(savedData, 'resnet18'));
    assert.equal(measuredSavedActivations('torchvision', 'resnet50', 224, 224)?.forwardPeakBytesPerSample, bytesOfPeak(torchvisionData, 'resnet50'));
    // ResNet-18 without autograd: at its fullest a few of its 64 x 56 x 56 maps, not what training keeps.
    assert.ok(bytesOfPeak(savedData, 'resnet18')! > 3 * 64 * 56 * 56 * 4 && bytesOfPeak(savedData, 'resnet18')! < bytesOf(savedData, 'resnet18') / 2);
  });

  it('gives none for features_only (its outputs are not what was measured) or an unknown name', () => {
    assert.equal(architecture('resnet18', { features_only: true }).table([3, 224, 224]).savedActivations, undefined);
    assert.equal(measuredSavedActivations('timm', 'not_a_model', 224, 224), undefined);
    assert.equal(measuredSavedActivations('timm', '__proto__', 224, 224), undefined);
  });

  it('reaches the layer table a script builds, under the path of the model that holds it', async () => {
    const whole = await tableOf('import timm, torch\nmodel = timm.create_model("resnet18", num_classes=10)\nx = torch.randn(8, 3, 224, 224)\nout = model(x)\n');
    assert.deepEqual(whole.table.measuredActivations?.map((m) => [m.path, m.savedBytesPerSample]), [['', bytesOf(savedData, 'resnet18')]]);
    const wrapped = await tableOf(
      [
        'import timm, torch',
        'import torch.nn as nn',
        'class Net(nn.Module):',
        '    def __init__(self):',
        '        super().__init__()',
        '        self.backbone = timm.create_model("resnet18", num_classes=0)',
        '        self.head = nn.Linear(512, 10)',
        '    def forward(self, x):',
        '        return self.head(self.backbone(x))',
        'model = Net()',
        'out = model(torch.randn(8, 3, 160, 160))',
        '',
      ].join('\n'),
    );
    assert.deepEqual(wrapped.table.measuredActivations?.map((m) => m.path), ['backbone']);
    assert.equal(wrapped.table.measuredActivations?.[0]?.savedBytesPerSample, Math.round((bytesOf(savedData, 'resnet18') * 160 * 160) / (224 * 224)));
  });

  it('is absent from a model read from source', async () => {
    const plain = await tableOf('import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 4))\nout = model(torch.randn(2, 8))\n');
    assert.equal(plain.table.measuredActivations, undefined);
  });
});

describe('torchvision catalog: activations autograd saves (torchvisionSaved.json)', () => {
  it('gives resnet50 its figure at 224 and a quarter at 112', () => {
    const resnet = torchvisionArchitecture('resnet50', { num_classes: 10 });
    if (isCatalogMiss(resnet)) throw new Error(resnet.miss);
    assert.equal(resnet.table([3, 224, 224]).savedActivations?.bytesPerSample, bytesOf(torchvisionData, 'resnet50'));
    assert.match(resnet.table([3, 224, 224]).savedActivations?.source ?? '', /torchvision 0\.14\S* \(torch 1\.13\S*\), autograd/);
    assert.equal(resnet.table([3, 112, 112]).savedActivations?.bytesPerSample, bytesOf(torchvisionData, 'resnet50') / 4);
  });

  it('gives vit_b_16 the figure PyTorch 2 measured with its fused attention (torchvisionAttentionSaved.json), as timm\'s ViT-B/16 saves', () => {
    const vit = torchvisionArchitecture('vit_b_16', { num_classes: 10 });
    if (isCatalogMiss(vit)) throw new Error(vit.miss);
    const saved = vit.table([3, 224, 224]).savedActivations;
    assert.equal(saved?.bytesPerSample, bytesOf(torchvisionAttentionData, 'vit_b_16'));
    assert.equal(saved?.bytesPerSample, bytesOf(savedData, 'vit_base_patch16_224'));
    assert.match(saved?.source ?? '', /torchvision 0\.19\.1 \(torch 2\.4\.1\), autograd's saved tensors on the meta device with fused attention/);
    assert.deepEqual(Object.keys(torchvisionAttentionData.models).sort(), Object.keys(torchvisionData.failed).filter((name) => name.startsWith('vit_')).sort());
  });

  it('has none for swin (left out: the correction over-estimates it with the figure) or for another mobilenet_v2 width', () => {
    for (const [name, options] of [['swin_t', {}], ['mobilenet_v2', { width_mult: 0.5 }]] as const) {
      const architecture = torchvisionArchitecture(name, options);
      if (isCatalogMiss(architecture)) throw new Error(architecture.miss);
      assert.equal(architecture.table(architecture.input.defaultShape).savedActivations, undefined, name);
    }
    const base = torchvisionArchitecture('mobilenet_v2', {});
    if (isCatalogMiss(base)) throw new Error(base.miss);
    assert.ok(base.table([3, 224, 224]).savedActivations !== undefined);
  });
});

function transformers(request: TransformersRequest): CatalogArchitecture {
  const found = transformersArchitecture(request);
  if (isCatalogMiss(found)) throw new Error(found.miss);
  return found;
}

/**
 * What the transformers catalog's image models save (scripts/catalog/attention_saved.py with transformers
 * 4.51.3 on PyTorch 2.4.1, fused attention), per checkpoint and class.
 */
describe('transformers catalog: activations autograd saves (transformersSaved.json)', () => {
  const vit = 'google/vit-base-patch16-224-in21k';

  it('has a figure for every image class of every vit, swin, clip, convnext, resnet and dinov2 checkpoint (CLIPModel, which also takes text, aside)', () => {
    const imageClasses: Record<string, string[]> = {
      vit: ['ViTModel', 'ViTForImageClassification'],
      swin: ['SwinModel', 'SwinForImageClassification'],
      clip: ['CLIPVisionModel', 'CLIPVisionModelWithProjection', 'CLIPForImageClassification'],
      convnext: ['ConvNextModel', 'ConvNextForImageClassification'],
      resnet: ['ResNetModel', 'ResNetForImageClassification'],
      dinov2: ['Dinov2Model', 'Dinov2ForImageClassification'],
    };
    const expected = CHECKPOINTS.flatMap((c) => (imageClasses[c.modelType] ?? []).map((className) => `${c.name}:${className}`)).sort();
    assert.deepEqual(Object.keys(transformersData.models).sort(), expected);
    assert.ok(SCHEMAS.vit && SCHEMAS.swin && SCHEMAS.clip);
  });

  it("gives ViT-B its figure, a quarter more than its rows keep: the library's attention and functional code", () => {
    const table = transformers({ className: 'AutoModelForImageClassification', checkpoint: vit, options: { num_labels: 3 } }).table([3, 224, 224]);
    assert.equal(table.savedActivations?.bytesPerSample, bytesOf(transformersData, `${vit}:ViTForImageClassification`));
    assert.equal(table.savedActivations?.library, 'transformers');
    assert.match(table.savedActivations?.source ?? '', /transformers 4\.51\.3 \(torch 2\.4\.1\), autograd's saved tensors on the meta device with fused attention/);
    // 197 tokens x 768 through 12 layers: about 120 MiB per sample, where the rows keep about 96.
    assert.ok(table.savedActivations.bytesPerSample > 115 * 2 ** 20 && table.savedActivations.bytesPerSample < 125 * 2 ** 20);
  });

  it('gives none where the script changes what forward saves (a dropout rate, eager attention) or the model takes text', () => {
    const changes: Array<Record<string, number | string>> = [{ hidden_dropout_prob: 0.1 }, { attn_implementation: 'eager' }];
    for (const options of changes) {
      const table = transformers({ className: 'ViTForImageClassification', checkpoint: vit, options }).table([3, 224, 224]);
      assert.equal(table.savedActivations, undefined, JSON.stringify(options));
    }
    const withConfig = transformers({ className: 'ViTForImageClassification', checkpoint: vit, config: { num_hidden_layers: 6 } }).table([3, 224, 224]);
    assert.equal(withConfig.savedActivations, undefined);
    const clip = transformers({ className: 'CLIPModel', checkpoint: 'openai/clip-vit-base-patch32' });
    assert.equal(clip.table(clip.input.defaultShape).savedActivations, undefined);
    const bert = transformers({ className: 'BertModel', checkpoint: 'bert-base-uncased' });
    assert.equal(bert.table([128]).savedActivations, undefined);
  });
});
