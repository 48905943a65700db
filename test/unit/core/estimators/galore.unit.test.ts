import * as assert from 'node:assert/strict';
import { estimateFineTuning, galoreTargets, type FineTuningJob } from '../../../../src/core/estimators/fineTuning';
import { galoreRefreshBytes, galoreStateBytes, galoreTargeted, layerModulePaths } from '../../../../src/core/estimators/galore';
import { shapeFromConfig } from '../../../../src/core/estimators/shapeFromConfig';
import { checkpointShape } from '../../fixtures';

/** A full bf16 fine-tune of Llama-2-7B, batch 4 of 1024 tokens, AdamW, checkpointing. */
const full = (over: Partial<FineTuningJob> = {}): FineTuningJob => ({
  shape: checkpointShape('meta-llama/Llama-2-7b-hf'),
  batch: 4,
  seq: 1024,
  weightBits: 16,
  computeBytes: 2,
  optimizer: 'adamw',
  checkpointing: true,
  ...over,
});
const names = (targets: Parameters<typeof galoreTargets>[1]) => galoreTargets(checkpointShape('meta-llama/Llama-2-7b-hf'), targets).map((t) => t.name);

describe('GaLore', () => {
  it("keeps AdamW's two states over the projected gradient (rank x the larger side) and the projection (rank x the smaller side; fp32: the whole factor)", () => {
    // Llama-2-7B's up projection, 11008 x 4096, in bf16 at rank 128: 2 x 11008 x 128 x 2 B + 128 x 4096 x 2 B.
    assert.equal(galoreStateBytes(11008, 4096, 128, 'adamw', 2), 5_636_096 + 1_048_576);
    // Against a full AdamW state of 2 x 11008 x 4096 x 2 B: about a twenty-seventh.
    assert.ok(galoreStateBytes(11008, 4096, 128, 'adamw', 2) * 26 < 2 * 11008 * 4096 * 2);
    // 8-bit AdamW: a byte a state element and an fp32 scale per 256; Adafactor: a row and a column of fp32 second moments.
    assert.equal(galoreStateBytes(11008, 4096, 128, 'adamw-8bit', 2), 2 * 1_409_024 + (8 * 1_409_024) / 256 + 1_048_576);
    assert.equal(galoreStateBytes(11008, 4096, 128, 'adafactor', 2), 4 * (11008 + 128) + 1_048_576);
    // fp32 weights: GaLore-torch's projection is a slice of the SVD's factor that keeps the whole square factor (4096 x 4096) alive.
    assert.equal(galoreStateBytes(11008, 4096, 128, 'adamw', 4), 2 * 11008 * 128 * 4 + 4096 * 4096 * 4);
    // A rank above the matrix's smaller side is that side.
    assert.equal(galoreStateBytes(8, 16, 128, 'adamw', 4), 2 * 16 * 8 * 4 + 8 * 8 * 4);
  });

  it("refreshes the projection with a reduced SVD in fp32: the gradient's copy, U and Vh", () => {
    assert.equal(galoreRefreshBytes(11008, 4096), 4 * (11008 * 4096 + 4096 * (11008 + 4096)));
  });

  it("matches module paths as transformers' check_target_module_exists does: keys within the path, whole-path regular expressions, all-linear", () => {
    assert.deepEqual(names(['attn', 'mlp']), ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
    assert.deepEqual(names(['attn']), ['q_proj', 'k_proj', 'v_proj', 'o_proj']);
    assert.deepEqual(names([String.raw`.*.mlp.*`]), ['gate_proj', 'up_proj', 'down_proj']);
    assert.deepEqual(names(String.raw`.*self_attn\.(q|v)_proj`), ['q_proj', 'v_proj']);
    assert.deepEqual(names(['q_proj', 'down_proj']), ['q_proj', 'down_proj']);
    assert.deepEqual(names('all-linear'), ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
    // Not a regular expression: nothing matched, never a throw.
    assert.deepEqual(names('(attn'), []);
    assert.deepEqual(names(['embed_tokens']), []);
    // BERT's names: attention.self.query, intermediate.dense.
    assert.ok(galoreTargeted(layerModulePaths('q_proj', ['query']), ['attention']));
    assert.ok(galoreTargeted(layerModulePaths('up_proj', ['intermediate.dense']), ['intermediate']));
    assert.ok(!galoreTargeted(layerModulePaths('up_proj', ['intermediate.dense']), ['attention']));
  });

  it("projects the layers' matrices and keeps a full state for the embeddings, the head and the norms", () => {
    const adamw = estimateFineTuning(full());
    const galore = estimateFineTuning(full({ galore: { rank: 128, targets: ['attn', 'mlp'] } }));
    // Per layer: q, k, v, o (4096 x 4096) and gate, up, down (11008 x 4096) projected; the norms' 8192 in full; 32 layers.
    const square = galoreStateBytes(4096, 4096, 128, 'adamw', 2);
    const wide = galoreStateBytes(11008, 4096, 128, 'adamw', 2);
    const layers = 32 * (4 * square + 3 * wide + 2 * 8192 * 2);
    // The embeddings and the head (32000 x 4096 each) and the final norm, AdamW in bf16.
    const rest = 2 * (2 * 32000 * 4096 * 2) + 2 * 4096 * 2;
    assert.equal(galore.optimizerState, layers + rest);
    assert.equal(galore.gradients, adamw.gradients);
    assert.equal(galore.trainableWeights, adamw.trainableWeights);
    assert.ok(adamw.reserved - galore.reserved > 20 * 1024 ** 3, `${adamw.reserved} vs ${galore.reserved}`);
    // One parameter at a time: the refresh of the largest projected matrix, not foreach AdamW's copy of every parameter.
    assert.equal(galore.stepTemporary, galoreRefreshBytes(11008, 4096));
  });

  it("matches what GaLore-torch's AdamW keeps in a dry run of the Trainer (harness/tests/test_dry_run_hub.py's test vector)", () => {
    // SMALL_LLAMA and GALORE_SMALL_LLAMA_STATE there: two layers, grouped keys and values, an untied head, fp32, rank 16 over ["attn", "mlp"].
    const shape = shapeFromConfig('llama', { vocab_size: 1024, hidden_size: 256, intermediate_size: 688, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 512, tie_word_embeddings: false }, { kind: 'lm' });
    if (typeof shape === 'string') assert.fail(shape);
    const estimate = estimateFineTuning({ shape, batch: 2, seq: 64, weightBits: 32, computeBytes: 4, optimizer: 'adamw', checkpointing: false, galore: { rank: 16, targets: ['attn', 'mlp'] } });
    assert.equal(estimate.optimizerState, 7_878_656);
  });

  it('frees each gradient in the backward when layerwise, and keeps every state full when nothing matches', () => {
    const galore = estimateFineTuning(full({ galore: { rank: 128, targets: 'all-linear' } }));
    const layerwise = estimateFineTuning(full({ galore: { rank: 128, targets: 'all-linear' }, optimizerInBackward: true }));
    // The step's peak holds every gradient with the refresh; layerwise, the peak is the forward's, without them.
    const persistent = galore.baseWeights + galore.trainableWeights + galore.optimizerState;
    assert.equal(galore.allocated, persistent + galore.gradients + galore.stepTemporary);
    assert.ok(layerwise.allocated < persistent + galore.stepTemporary + galore.stepWorking, `${layerwise.allocated}`);
    assert.ok(galore.allocated - layerwise.allocated > 0.7 * galore.gradients, `${layerwise.allocated} vs ${galore.allocated}`);
    const unmatched = estimateFineTuning(full({ galore: { rank: 128, targets: ['vision_tower'] } }));
    assert.equal(unmatched.optimizerState, estimateFineTuning(full()).optimizerState);
    assert.ok(unmatched.notes.some((n) => /match no linear layer/.test(n)));
  });
});
