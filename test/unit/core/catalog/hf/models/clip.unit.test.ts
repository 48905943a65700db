/** CLIP in the catalog: the towers from one config, CLIPModel's text beside the image, the published counts. */
import * as assert from 'node:assert/strict';
import { CatalogInputError, isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

const B32 = 'openai/clip-vit-base-patch32';

describe('transformers catalog: CLIP', () => {
  it("gives KerasHub's published counts less the position ids it keeps as a weight", () => {
    assert.equal(arch({ className: 'CLIPModel', checkpoint: B32 }).params, 151_277_363 - 50);
    assert.equal(arch({ className: 'AutoModel', checkpoint: 'openai/clip-vit-large-patch14' }).params, 427_616_770 - 257);
  });

  it('builds each tower from its part of the checkpoint, with its own input', () => {
    const text = arch({ className: 'CLIPTextModel', checkpoint: B32 });
    const vision = arch({ className: 'CLIPVisionModel', checkpoint: B32 });
    const both = arch({ className: 'CLIPModel', checkpoint: B32 });
    // CLIPModel: both towers, two 512-wide projections without bias, and logit_scale.
    assert.equal(both.params, text.params + vision.params + 512 * 512 + 768 * 512 + 1);
    assert.deepEqual(text.input, { kind: 'tokens', defaultShape: [77] });
    assert.deepEqual(vision.input, { kind: 'image', defaultShape: [3, 224, 224] });
    assert.deepEqual(text.table([20]).rows.find((r) => r.path === 'embeddings.position_embedding')!.outputShape, [1, 20, 512]);
    assert.throws(() => text.table([78]), (e: unknown) => e instanceof CatalogInputError && /at most 77 tokens/.test(e.message));
    const projected = arch({ className: 'CLIPVisionModelWithProjection', checkpoint: B32 }).table([3, 224, 224]).rows;
    assert.deepEqual(projected[projected.length - 1], { path: 'visual_projection', type: 'Linear', outputShape: [512], activations: 512, params: 768 * 512, trainable: true });
  });

  it('runs CLIPModel on textLength tokens beside the image, 77 (and a note) when not given', () => {
    const rows = (request: Partial<TransformersRequest>) => {
      const table = arch({ className: 'CLIPModel', checkpoint: B32, ...request }).table([3, 224, 224]);
      return [table.rows.find((r) => r.path === 'text_model.final_layer_norm')!.outputShape, table.notes.some((n) => /taken as 77 tokens/.test(n))];
    };
    assert.deepEqual(rows({ textLength: 16 }), [[16, 512], false]);
    assert.deepEqual(rows({}), [[77, 512], true]);
    assert.throws(() => arch({ className: 'CLIPModel', checkpoint: B32, textLength: 100 }).table([3, 224, 224]), /at most 77 text tokens/);
  });

  it('takes the image size of the vision config, or any size with interpolate_pos_encoding', () => {
    const vision = arch({ className: 'CLIPVisionModel', checkpoint: B32 });
    assert.deepEqual(vision.table([3, 224, 224]).rows.find((r) => r.path === 'pre_layrnorm')!.outputShape, [50, 768]);
    assert.throws(() => vision.table([3, 336, 336]), /takes 224x224 images/);
    const rows = arch({ className: 'CLIPVisionModel', checkpoint: B32, interpolatePosEncoding: true }).table([3, 320, 256]).rows;
    assert.deepEqual(rows.find((r) => r.path === 'pre_layrnorm')!.outputShape, [81, 768]);
    // Interpolated positions read the table: an uncalled row at the end.
    assert.deepEqual(rows[rows.length - 1]!.path, 'embeddings.position_embedding');
  });

  it('resolves a CLIPConfig with text and vision dicts over the defaults, and refuses what it does not know', () => {
    const model = arch({
      className: 'CLIPForImageClassification',
      configClass: 'CLIPConfig',
      config: { vision_config: { hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, intermediate_size: 128, image_size: 64, patch_size: 16 } } as never,
      options: { num_labels: 5 },
    });
    assert.deepEqual(model.input.defaultShape, [3, 64, 64]);
    assert.deepEqual(model.table([3, 64, 64]).rows.at(-1)!.outputShape, [5]);
    const miss = transformersArchitecture({ className: 'CLIPModel', configClass: 'CLIPConfig', config: { text_config: { hidden_size: 100 } } as never });
    assert.ok(isCatalogMiss(miss) && /hidden_size must be a multiple of num_attention_heads/.test(miss.miss));
    const unknown = transformersArchitecture({ className: 'CLIPModel', configClass: 'CLIPConfig', config: { vision_config: { patches: 3 } } as never });
    assert.ok(isCatalogMiss(unknown) && /vision_config has no option 'patches'/.test(unknown.miss));
    const zeroShot = arch({ className: 'AutoModelForZeroShotImageClassification', checkpoint: B32 });
    assert.equal(zeroShot.className, 'CLIPModel');
  });
});
