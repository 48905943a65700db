/**
 * Gemma-3's multimodal models in the catalog (models/gemma3.ts, gemma3Schema.ts) and the fine-tuning
 * model: the published totals of gemma-3-4b, -12b and -27b from the module tree and from the
 * fine-tuning shape, the vision tower held but never run by a text batch, the configs refused.
 */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { CHECKPOINTS, findCheckpoint } from '../../../../../../src/core/catalog/hf/checkpoints';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';
import { estimateFineTuning, parameterTensors, repeats } from '../../../../../../src/core/estimators/fineTuning';
import { checkpointShape } from '../../../../fixtures';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

describe('transformers catalog: Gemma-3 4B to 27B (multimodal)', () => {
  it('counts the published totals from the module tree and from the fine-tuning shape: text model, SigLIP tower and projector', () => {
    const members = CHECKPOINTS.filter((c) => c.modelType === 'gemma3');
    assert.deepEqual(members.map((c) => c.name), ['google/gemma-3-4b-pt', 'google/gemma-3-12b-pt', 'google/gemma-3-27b-pt']);
    for (const checkpoint of members) {
      assert.equal(arch({ className: 'AutoModelForCausalLM', checkpoint: checkpoint.name }).params, checkpoint.published!.params, checkpoint.name);
      const shape = checkpointShape(checkpoint.name);
      assert.equal(parameterTensors(shape).reduce((sum, t) => sum + t.rows * t.cols * repeats(shape, t), 0), checkpoint.published!.params, checkpoint.name);
    }
    // SigLIP so400m at 896 px (27 layers of 1152, MLP 4304, 4096 patches of 14) and the 4B's projector (1152 x 2560 and a norm).
    const d = 1152;
    const tower = 3 * 14 * 14 * d + d + 4096 * d + 27 * (4 * d + 4 * (d * d + d) + 2 * d * 4304 + 4304 + d) + 2 * d;
    assert.equal(checkpointShape('google/gemma-3-4b-it').heldParams, tower + d * 2560 + d);
    assert.equal(findCheckpoint('google/gemma-3-27b-it')?.name, 'google/gemma-3-27b-pt');
  });

  it('runs the text model and the tied head on a text batch; the vision tower and the projector hold parameters and run nothing', () => {
    const model = arch({ className: 'AutoModelForCausalLM', checkpoint: 'google/gemma-3-4b-it' });
    assert.equal(model.className, 'Gemma3ForConditionalGeneration');
    const rows = model.table([16]).rows;
    const vision = rows.filter((r) => r.path.startsWith('model.vision_tower.') || r.path.startsWith('model.multi_modal_projector.'));
    assert.ok(vision.length > 27 * 6, String(vision.length));
    assert.ok(vision.every((r) => r.activations === 0), 'a vision row ran');
    const head = rows.find((r) => r.path === 'lm_head')!;
    // Tied to the text model's scaled embedding (the library's own module, not a layer): the weight is counted once, by the head.
    assert.equal(head.params, 262208 * 2560);
    assert.ok(!rows.some((r) => r.path.startsWith('model.language_model.embed_tokens')), 'the embedding counted twice');
    assert.equal(head.activations, 16 * 262208);
    assert.ok(rows.some((r) => r.path === 'model.language_model.layers.33.self_attn.q_norm.weight'));
  });

  it('trains only what a text batch reaches: the held tower gets no gradient and no optimizer state in a full fine-tune', () => {
    const shape = checkpointShape('google/gemma-3-4b-it');
    const held = shape.heldParams!;
    const estimate = estimateFineTuning({ shape, batch: 1, seq: 512, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: true });
    assert.equal(estimate.trainableParams, estimate.totalParams - held);
    assert.equal(estimate.gradients, estimate.trainableParams * 2);
    assert.equal(estimate.baseWeights, held * 2);
  });

  it("refuses a vision tower with SigLIP's pooling head, and a text config it cannot read", () => {
    const checkpoint = findCheckpoint('google/gemma-3-4b-pt')!;
    const vision = { ...(checkpoint.config.vision_config as unknown as Record<string, unknown>) };
    delete vision.vision_use_head;
    const headed = transformersArchitecture({ className: 'Gemma3ForConditionalGeneration', configClass: 'Gemma3Config', config: { ...checkpoint.config, vision_config: vision as never } });
    assert.ok(isCatalogMiss(headed) && /pooling head/.test(headed.miss), JSON.stringify(headed));
    const odd = transformersArchitecture({ className: 'Gemma3ForConditionalGeneration', configClass: 'Gemma3Config', config: { ...checkpoint.config, text_config: { hidden_size: 1000, num_attention_heads: 16 } as never } });
    assert.ok(isCatalogMiss(odd) && /multiple of num_attention_heads/.test(odd.miss), JSON.stringify(odd));
  });
});
