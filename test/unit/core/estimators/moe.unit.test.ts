/**
 * Mixture-of-experts decoders in the fine-tuning estimator (src/core/estimators/moe.ts): the
 * parameters of Mixtral and Qwen-MoE against their published totals, PEFT's targets on the experts,
 * the sparse MoE block's saved bytes against the vectors PyTorch measured
 * (harness/tests/test_moe_saved_activations.py), and QLoRA on Mixtral-8x7B worked out by hand.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { findCheckpoint } from '../../../../src/core/catalog/hf/checkpoints';
import { isCatalogMiss } from '../../../../src/core/catalog/catalog';
import { transformersArchitecture } from '../../../../src/core/catalog/hf/transformers';
import { CUDA_CONTEXT_BYTES, FITTED_MARGIN, RESERVE_SHARE, loraParams, loraTargets, parameterTensors, repeats, type FineTuningJob, type TransformerShape } from '../../../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../../../src/core/estimators/shapeFromConfig';
import type { MoeShape } from '../../../../src/core/estimators/moe';
import { moeBlockBytesPerToken } from '../../../../src/core/estimators/moeActivations';
import { estimateSharded } from '../../../../src/core/estimators/sharding';
import type { LayerActivationOptions } from '../../../../src/core/estimators/savedActivations';
import { checkpointShape, estimate, REPO_ROOT } from '../../fixtures';

const shapeOf = (name: string): TransformerShape => checkpointShape(name);
const total = (shape: TransformerShape) => parameterTensors(shape).reduce((sum, t) => sum + t.rows * t.cols * repeats(shape, t), 0);
const mixtral = () => shapeOf('mistralai/Mixtral-8x7B-v0.1');

interface VectorCase {
  readonly id: string;
  readonly hidden: number;
  readonly shape: MoeShape;
  readonly options: { readonly computeBytes: 2 | 4; readonly full: boolean; readonly adapted: readonly string[] };
  readonly bytesPerToken: number;
}
const VECTORS = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'vectors', 'moe', 'sparse-moe-block.json'), 'utf8')) as { cases: VectorCase[] };

describe('mixture-of-experts fine-tuning (moe.ts)', () => {
  it('counts every expert: Mixtral-8x7B 46.7B, Mixtral-8x22B 141B, Qwen1.5-MoE-A2.7B 14.3B, Qwen3-30B-A3B 30.5B, Qwen3-235B-A22B 235B (the model cards), the catalog the same', () => {
    // Mixtral-8x7B per layer: attention 2 x 4096² + 2 x 4096 x 1024, router 8 x 4096, 8 experts of 3 x 4096 x 14336, two norms; embeddings and head 2 x 32000 x 4096; the final norm.
    const layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 8 * 4096 + 8 * 3 * 4096 * 14336 + 2 * 4096;
    assert.equal(total(mixtral()), 32 * layer + 2 * 32000 * 4096 + 4096);
    const published: Array<[string, number, number]> = [
      ['mistralai/Mixtral-8x7B-v0.1', 46_702_792_704, 46.7e9],
      ['mistral-community/Mixtral-8x22B-v0.1', 140_620_634_112, 141e9],
      ['Qwen/Qwen1.5-MoE-A2.7B-Chat', 14_315_784_192, 14.3e9],
      ['Qwen/Qwen3-30B-A3B', 30_532_122_624, 30.5e9],
      ['Qwen/Qwen3-235B-A22B', 235_093_634_560, 235e9],
    ];
    for (const [name, exact, card] of published) {
      assert.equal(total(shapeOf(name)), exact, name);
      // The model card's figure is rounded to its last digit.
      const unit = card >= 1e11 ? 1e9 : 1e8;
      assert.ok(Math.abs(exact - card) <= unit / 2, `${name}: ${exact} vs ${card}`);
      const architecture = transformersArchitecture({ className: 'AutoModelForCausalLM', checkpoint: name });
      if (isCatalogMiss(architecture)) assert.fail(architecture.miss);
      assert.equal(architecture.params, exact, `${name} in the catalog`);
    }
    // The aliases find the same shapes.
    assert.equal(findCheckpoint('mistralai/Mixtral-8x7B-Instruct-v0.1')?.name, 'mistralai/Mixtral-8x7B-v0.1');
    assert.equal(findCheckpoint('Qwen/Qwen1.5-MoE-A2.7B')?.name, 'Qwen/Qwen1.5-MoE-A2.7B-Chat');
  });

  it("puts LoRA on every expert's w1/w2/w3 (and the router under \"all-linear\", as PEFT's rule takes every nn.Linear but the head)", () => {
    const shape = mixtral();
    const experts = 8 * 16 * ((4096 + 14336) * 3);
    const attention = 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024));
    assert.equal(loraParams(shape, { method: 'lora', rank: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'w1', 'w2', 'w3'] }), 32 * (attention + experts));
    assert.equal(loraParams(shape, { method: 'lora', rank: 16, targetModules: 'all-linear' }), 32 * (attention + experts + 16 * (4096 + 8)));
    assert.deepEqual(loraTargets(shape, ['gate']).map((t) => t.name), ['router']);
    // Qwen-MoE: "gate_proj" is every routed expert's and the shared expert's, as PEFT matches names by their last part.
    const qwen = shapeOf('Qwen/Qwen1.5-MoE-A2.7B-Chat');
    assert.deepEqual(loraTargets(qwen, ['gate_proj']).map((t) => [t.rows, t.experts ?? 1]), [[1408, 60], [5632, 1]]);
  });

  it('keeps per token what PyTorch measured on the hand-built sparse MoE blocks (the shared vectors)', () => {
    assert.ok(VECTORS.cases.length >= 5);
    for (const c of VECTORS.cases) {
      const options: LayerActivationOptions = {
        computeBytes: c.options.computeBytes, residualBytes: c.options.computeBytes, autocast: false, full: c.options.full,
        adapted: new Set(c.options.adapted), adapterBytes: 4, attention: 'sdpa', seq: 16,
      };
      assert.equal(moeBlockBytesPerToken(c.hidden, c.shape, options), c.bytesPerToken, c.id);
    }
  });

  it("keeps topK dense MLPs' worth per token, not one per expert: Mixtral's frozen block is 2 x (a 14336 MLP's tensors + the expert's output and its weighted copy)", () => {
    const o: LayerActivationOptions = { computeBytes: 2, residualBytes: 2, autocast: false, full: false, adapted: new Set(), adapterBytes: 4, attention: 'sdpa', seq: 1024 };
    const block = moeBlockBytesPerToken(4096, mixtral().moe!, o);
    const denseMlp = 3 * 14336 * 2;
    assert.equal(block, 2 * (denseMlp + 2 * 4096 * 2 + 2 + 16) + 8 * 4 + 2 * 8 + 4 + 2 * 4);
    assert.ok(block < 3 * denseMlp);
  });

  it('shards the experts as any other parameters under ZeRO-3 (no expert parallelism)', () => {
    const job: FineTuningJob = { shape: mixtral(), batch: 1, seq: 1024, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: true };
    const one = estimateSharded(job, { kind: 'zero', stage: 3 }, 1);
    const eight = estimateSharded(job, { kind: 'zero', stage: 3 }, 8);
    assert.ok(Math.abs(eight.trainableWeights - one.trainableWeights / 8) < 1, `${eight.trainableWeights} vs ${one.trainableWeights / 8}`);
  });

  it("Qwen3-MoE: 128 experts of 768, top-8 renormalised, no shared expert, Qwen3's per-head query and key norms, the experts registered before the router", () => {
    const shape = shapeOf('Qwen/Qwen3-30B-A3B');
    assert.deepEqual(shape.moe, { experts: 128, topK: 8, expertIntermediate: 768, normTopK: true });
    assert.equal(shape.qkNorms, 'perHead');
    assert.equal(shape.headDim, 128);
    // Per layer: q and o 2048 x 4096, k and v 2048 x 512, two norms of 128, 128 experts of 3 x 2048 x 768, the router, two norms of 2048.
    const layer = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 128 * 3 * 2048 * 768 + 128 * 2048 + 2 * 2048;
    assert.equal(total(shape), 48 * layer + 2 * 151936 * 2048 + 2048);
    const architecture = transformersArchitecture({ className: 'Qwen3MoeForCausalLM', checkpoint: 'Qwen/Qwen3-30B-A3B' });
    if (isCatalogMiss(architecture)) assert.fail(architecture.miss);
    const paths = architecture.table([8]).rows.map((r) => r.path).filter((p) => p.startsWith('model.layers.0.'));
    assert.ok(paths.indexOf('model.layers.0.mlp.experts.gate_up_proj') < paths.indexOf('model.layers.0.mlp.gate.weight'), paths.join(' '));
    assert.ok(paths.includes('model.layers.0.self_attn.q_norm.weight') && !paths.some((p) => /shared_expert/.test(p)), paths.join(' '));
    // LoRA on the routed experts' projections (PEFT's names), none shared.
    assert.deepEqual(loraTargets(shape, ['gate_proj']).map((t) => [t.rows, t.experts ?? 1]), [[768, 128]]);
    const refused = shapeFromConfig('qwen3_moe', { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100, mlp_only_layers: [0] }, { kind: 'lm' });
    assert.equal(typeof refused, 'string');
    assert.match(refused as string, /dense/);
  });

  it('refuses a Qwen2-MoE layout with dense layers rather than miscount it', () => {
    const refused = shapeFromConfig('qwen2_moe', { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100, decoder_sparse_step: 2 }, { kind: 'lm' });
    assert.equal(typeof refused, 'string');
    assert.match(refused as string, /dense/);
  });
});

describe('QLoRA on Mixtral-8x7B (test/fixtures/llm/qlora_mixtral_sft.py), worked out by hand', () => {
  const GiB = 1024 ** 3;
  const h = 4096;
  const inter = 14336;
  const tokens = 2 * 1024;
  // 4-bit NF4 with double quantization: half a byte, an 8-bit absmax per 64 and an fp32 per 256 blocks.
  const fourBit = 0.5 + 1 / 64 + 4 / (64 * 256);
  const quantized = 32 * (2 * h * h + 2 * h * 1024 + 8 * h + 8 * 3 * h * inter);
  // prepare_model_for_kbit_training: embeddings, head and norms in fp32.
  const fp32 = 2 * 32000 * h + 32 * 2 * h + h;
  const adapter = 32 * 16 * (2 * (h + h) + 2 * (h + 1024) + 8 * 3 * (h + inter));
  const base = quantized * fourBit + fp32 * 4;
  // Per token of one layer, recomputed in the backward: the RMSNorms' fp32 inputs (2 x 4h), PEFT's dropout copies (bf16 under autocast + a
  // 1-byte mask) of q/k/v's fp32 input and o's bf16 input, SDPA's q, k, v expanded and its output (4 x 4096 x 2).
  const attention = 2 * 4 * h + 3 * 3 * h + 3 * h + 4 * h * 2;
  // The MoE block: softmax (8 fp32), top-2 indices, the renormalisation's sum and quotient; per slot (2) w1/w3's dropout copies, silu in and out
  // and w3's output, w2's dropout copy, the expert's output and the weighted one, the weight and the (row, slot) indices.
  const moeBlock = 8 * 4 + 2 * 8 + 4 + 2 * 4 + 2 * (2 * 3 * h + 3 * inter * 2 + 3 * inter + 2 * h * 2 + 2 + 16);
  const recomputed = (attention + moeBlock) * tokens;
  const checkpointed = 35 * h * 4 * tokens;
  const workspace = 2 * inter * 2 * tokens;
  const dequantized = 2 * h * inter * 2;
  const logits = tokens * 32000 * 12;
  const optimizer = adapter * (2 + 8 / 256);
  const working = recomputed + workspace + dequantized;
  const allocated = base + adapter * 4 + adapter * 4 + checkpointed + working + logits;
  const driver = allocated + RESERVE_SHARE * (checkpointed + working + logits) + optimizer + CUDA_CONTEXT_BYTES;
  const handMiB = (driver * (1 + FITTED_MARGIN)) / 1024 ** 2;

  it('is the hand figure: about 24 GiB of 4-bit experts, 0.9 GiB of fp32 adapter with its gradients, the paged 8-bit state, one layer recomputed', async () => {
    const [model] = (await estimate(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'qlora_mixtral_sft.py'), 'utf8'))).models;
    assert.ok(model);
    assert.equal(model.memory.method, 'fineTuning');
    assert.equal(model.params, 46_702_792_704);
    assert.ok(model.notes.some((n) => /Mixture of experts: 8 experts per layer, each token routed to 2/.test(n.message)), model.notes.map((n) => n.message).join(' | '));
    assert.ok(Math.abs(model.memory.estimateMiB! - handMiB) < 1, `${model.memory.estimateMiB} vs ${handMiB}`);
    assert.ok(base > 23 * GiB && base < 24 * GiB, String(base / GiB));
    // A dense model of the same 46.7B counted without its experts' routing would keep 8 MLPs per token; the recomputed layer holds 2.
    assert.ok(moeBlock < 2.5 * (3 * inter * 2 + 3 * inter + 3 * 2 * h));
  });
});
