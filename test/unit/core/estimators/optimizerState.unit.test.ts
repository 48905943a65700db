import * as assert from 'node:assert/strict';
import { optimizerBytes, trainerOptimizer, type OptimizerState } from '../../../../src/core/estimators/optimizerState';

const matrix = { rows: 4096, cols: 4096 };
const n = 4096 * 4096;

describe('optimizerState', () => {
  it('counts each layout of state for one tensor, quantized ones with their blockwise scales and small tensors in 32 bits', () => {
    const cases: Array<[OptimizerState, number]> = [
      ['adamw', 2 * n * 2],
      ['adamw-8bit', 2 * n * (1 + 4 / 256)],
      ['adamw-4bit', 2 * n * (0.5 + 4 / 128)],
      ['ademamix', 3 * n * 2],
      ['ademamix-8bit', 3 * n * (1 + 4 / 256)],
      ['adafactor', 4 * (4096 + 4096)],
      ['momentum', n * 2],
      ['momentum-8bit', n * (1 + 4 / 256)],
      ['sgd', 0],
    ];
    for (const [state, bytes] of cases) assert.equal(optimizerBytes(state, matrix, 2), bytes, state);
    // A norm's 4096 weights: quantized optimizers keep them in 32 bits; Adafactor keeps a vector's full second moment.
    assert.equal(optimizerBytes('adamw-8bit', { rows: 4095, cols: 1 }, 2), 2 * 4 * 4095);
    assert.equal(optimizerBytes('momentum-8bit', { rows: 100, cols: 1 }, 2), 4 * 100);
    assert.equal(optimizerBytes('adafactor', { rows: 100, cols: 1 }, 2), 4 * 100);
  });

  it("reads the Trainer's optim names (transformers' OptimizerNames) and library optimizers' class names as the state they keep", () => {
    const cases: Array<[string, OptimizerState, boolean, boolean]> = [
      ['adamw_torch', 'adamw', false, false],
      ['adamw_torch_fused', 'adamw', false, false],
      ['paged_adamw_32bit', 'adamw', false, true],
      ['adamw_8bit', 'adamw-8bit', false, false],
      ['paged_adamw_8bit', 'adamw-8bit', false, true],
      ['adamw_torch_8bit', 'adamw-8bit', false, false],
      ['adamw_torch_4bit', 'adamw-4bit', false, false],
      ['adafactor', 'adafactor', false, false],
      ['ademamix', 'ademamix', false, false],
      ['paged_ademamix_8bit', 'ademamix-8bit', false, true],
      ['grokadamw', 'ademamix', false, false],
      ['lion_32bit', 'momentum', false, false],
      ['paged_lion_8bit', 'momentum-8bit', false, true],
      ['rmsprop_bnb_8bit', 'momentum-8bit', false, false],
      ['rmsprop', 'momentum', false, false],
      ['adagrad', 'momentum', false, false],
      ['schedule_free_sgd', 'momentum', false, false],
      ['schedule_free_adamw', 'adamw', false, false],
      ['sgd', 'sgd', false, false],
      ['lomo', 'sgd', true, false],
      ['adalomo', 'adafactor', true, false],
      ['galore_adamw_8bit_layerwise', 'adamw-8bit', true, false],
      ['galore_adafactor', 'adafactor', false, false],
      ['something_new', 'adamw', false, false],
      // Library optimizers by class name (libraryOptimizers.ts).
      ['AdamW8bit', 'adamw-8bit', false, false],
      ['PagedLion8bit', 'momentum-8bit', false, true],
      ['AdamW4bit', 'adamw-4bit', false, false],
      ['AdamWFp8', 'adamw-8bit', false, false],
      ['SGD8bit', 'momentum-8bit', false, false],
      ['Adafactor', 'adafactor', false, false],
      ['Lion', 'momentum', false, false],
      ['FusedAdam', 'adamw', false, false],
    ];
    for (const [name, state, inBackward, paged] of cases) {
      const { step: _, ...layout } = trainerOptimizer(name);
      assert.deepEqual(layout, { state, inBackward, paged }, name);
    }
  });

  it('knows how each steps: fused (no temporary), foreach (one state), per tensor (adamw_hf)', () => {
    for (const name of ['adamw_torch_fused', 'adamw_apex_fused', 'paged_adamw_32bit', 'adamw_bnb_8bit', 'FusedAdam', 'PagedAdamW']) assert.equal(trainerOptimizer(name).step, 'fused', name);
    for (const name of ['adamw_torch', 'AdamW', 'schedule_free_adamw', 'something_new']) assert.equal(trainerOptimizer(name).step, 'foreach', name);
    assert.equal(trainerOptimizer('adamw_hf').step, 'per-tensor');
  });
});
