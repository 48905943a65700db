import * as assert from 'node:assert/strict';
import { findPipeline, PIPELINES } from '../../../../../src/core/catalog/diffusers/pipelines';
import { transformersArchitecture } from '../../../../../src/core/catalog/hf/transformers';

describe('Stable Diffusion pipelines in the catalog (diffusers/pipelines.ts)', () => {
  it('finds a pipeline by its name or an older one, ignoring case and a trailing slash', () => {
    assert.equal(findPipeline('runwayml/stable-diffusion-v1-5')?.name, 'stable-diffusion-v1-5/stable-diffusion-v1-5');
    assert.equal(findPipeline('CompVis/Stable-Diffusion-v1-4/')?.name, 'stable-diffusion-v1-5/stable-diffusion-v1-5');
    assert.equal(findPipeline('stabilityai/stable-diffusion-2-1')?.components.unet?.params, 865910724);
    assert.equal(findPipeline('stabilityai/stable-diffusion-3-medium'), undefined);
  });

  it('gives every model component its class and the parameter count the test with the real library checks', () => {
    for (const pipeline of PIPELINES) {
      for (const name of ['unet', 'vae', 'text_encoder']) {
        const component = pipeline.components[name];
        assert.ok(component && component.params && component.params > 0, `${pipeline.name} ${name}`);
      }
      assert.equal(pipeline.components.tokenizer?.config.model_max_length, 77);
    }
  });

  it("says plainly that a text encoder loaded from a pipeline's subfolder is part of a diffusion pipeline, not an unknown checkpoint", () => {
    const found = transformersArchitecture({ className: 'CLIPTextModel', checkpoint: 'runwayml/stable-diffusion-v1-5' });
    assert.ok('miss' in found);
    assert.match(found.miss, /'runwayml\/stable-diffusion-v1-5' is a Stable Diffusion pipeline \(unet, vae, text_encoder, tokenizer, scheduler\)/);
    assert.match(found.miss, /--dry-run/);
  });
});
