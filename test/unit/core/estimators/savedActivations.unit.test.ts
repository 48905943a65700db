import * as assert from 'node:assert/strict';
import { crossAttentionBytes, savedBytesPerTokenLayer, type LayerActivationOptions, type LayerShape } from '../../../../src/core/estimators/savedActivations';

/** Llama-3.2-3B's layer: 24 heads of 128, 8 key-value heads, a 8192 SwiGLU, RMSNorm. */
const llama: LayerShape = { hidden: 3072, heads: 24, kvHeads: 8, headDim: 128, intermediate: 8192, gatedMlp: true, dropout: false, rmsNorm: true };
/** BERT-large's layer: 16 heads of 64, a 4096 GELU MLP, LayerNorm, dropout 0.1. */
const bert: LayerShape = { hidden: 1024, heads: 16, kvHeads: 16, headDim: 64, intermediate: 4096, gatedMlp: false, dropout: true };

const bf16 = (over: Partial<LayerActivationOptions> = {}): LayerActivationOptions => ({
  computeBytes: 2,
  residualBytes: 2,
  autocast: false,
  full: false,
  adapted: new Set<string>(),
  adapterBytes: 4,
  attention: 'sdpa',
  seq: 768,
  ...over,
});

describe('saved activations', () => {
  it('keeps no input of a frozen linear, and a trainable one\'s once however many linears read it', () => {
    const frozen = savedBytesPerTokenLayer(llama, bf16());
    const full = savedBytesPerTokenLayer(llama, bf16({ full: true }));
    // Full fine-tuning adds the two norms' normalized copies and outputs (4 x 2h), o_proj's input (2q) and down_proj's input (2i).
    assert.equal(full - frozen, 4 * 2 * 3072 + 2 * 3072 + 2 * 8192);
  });

  it("keeps what transformers' tanh-formula GELUs keep: gelu_new three tensors more (fp32 under autocast), gelu_fast six; F.gelu and torch.compile none", () => {
    // GPT-2 medium's layer: 16 heads of 64, a 4096 GELU MLP (gelu_new), LayerNorm, dropout 0.1.
    const gpt2: LayerShape = { ...bert, tanhGelu: 'new' };
    const i = 4096;
    const plain = (shape: LayerShape, o: LayerActivationOptions) => savedBytesPerTokenLayer(shape, o);
    // Without autocast pow keeps x, tanh its output, the last product 0.5 * x and (1 + tanh): 3 x i more in the dtype.
    assert.equal(plain(gpt2, bf16({ full: true })) - plain(bert, bf16({ full: true })), 3 * 2 * i);
    assert.equal(plain(gpt2, bf16({ full: true, computeBytes: 4, residualBytes: 4 })) - plain(bert, bf16({ full: true, computeBytes: 4, residualBytes: 4 })), 3 * 4 * i);
    // Under autocast over fp32 weights: pow's fp32 copy of x, tanh's and (1 + tanh)'s fp32 outputs and the bf16 0.5 * x (14 bytes) where fc1's bf16 output (2) was counted.
    const autocast = bf16({ full: true, autocast: true, residualBytes: 4 });
    assert.equal(plain(gpt2, autocast) - plain(bert, autocast), 12 * i);
    // T5 v1.1's gated-gelu: the product keeps the activation's output, fp32 under autocast: 2 bytes more.
    const t5 = { ...llama, rmsNorm: true, gatedMlp: true };
    assert.equal(plain({ ...t5, tanhGelu: 'new' }, autocast) - plain(t5, autocast), 14 * 8192);
    assert.equal(plain({ ...bert, tanhGelu: 'fast' }, autocast) - plain(bert, autocast), 6 * 2 * i);
    assert.equal(plain(gpt2, bf16({ full: true, compiled: true })), plain(bert, bf16({ full: true, compiled: true })));
  });

  it('keeps a parallel block\'s shared input once: one norm input, and behind one norm one input for attention and MLP (Falcon)', () => {
    // Falcon-7B's layer: 71 heads of 64, one key-value head, a 4h GELU MLP, LayerNorm. Checked against torch 1.13's
    // saved_tensors_hooks on a tiny block of this structure: ln_attn and ln_mlp save the same layer input (one
    // storage); behind one norm, the fused qkv and the MLP's first linear save the same normalized tensor.
    const falcon: LayerShape = { hidden: 4544, heads: 71, kvHeads: 1, headDim: 64, intermediate: 18176, gatedMlp: false, dropout: false, fusedQkv: true };
    const full = bf16({ full: true });
    const sequential = savedBytesPerTokenLayer(falcon, full);
    // One norm input fewer, and one linear input fewer behind the single norm.
    assert.equal(sequential - savedBytesPerTokenLayer({ ...falcon, parallelNorms: 2 }, full), 2 * 4544);
    assert.equal(sequential - savedBytesPerTokenLayer({ ...falcon, parallelNorms: 1 }, full), 2 * 2 * 4544);
    // PEFT's fp32 copies stay one per adapted module (query_key_value and dense_h_to_4h), parallel or not.
    const adapted = bf16({ adapted: new Set(['qkv_proj', 'up_proj']) });
    assert.equal(savedBytesPerTokenLayer({ ...falcon, parallelNorms: 1 }, adapted) - savedBytesPerTokenLayer({ ...falcon, parallelNorms: 1 }, bf16()), 2 * 4 * 4544);
  });

  it("keeps Gemma-2's two more norms' fp32 copies (and, trained, their fp32 normalized tensors), OLMo-2's query and key norms', and nothing normalized for OLMo's weightless norms", () => {
    // Checked with saved_tensors_hooks in torch 2.13 (scripts/llm/norm_variants_saved.py): Gemma2RMSNorm keeps its fp32 input,
    // and with a trained weight the fp32 normalized tensor; Olmo2RMSNorm its fp32 input and, trained, a bf16 normalized copy.
    const gemma2: LayerShape = { hidden: 3584, heads: 16, kvHeads: 8, headDim: 256, intermediate: 14336, gatedMlp: true, dropout: false, rmsNorm: true };
    const extra = { ...gemma2, postNorms: 'extra' as const, normWeightFp32: true };
    assert.equal(savedBytesPerTokenLayer(extra, bf16()) - savedBytesPerTokenLayer(gemma2, bf16()), 2 * 4 * 3584);
    // Trained: four fp32 normalized tensors instead of two bf16 copies, and the two more norms' inputs.
    assert.equal(savedBytesPerTokenLayer(extra, bf16({ full: true })) - savedBytesPerTokenLayer(gemma2, bf16({ full: true })), 2 * 4 * 3584 + 4 * 4 * 3584 - 2 * 2 * 3584);
    const olmo2: LayerShape = { ...llama, kvHeads: 24, postNorms: 'instead', qkNorms: true };
    // Two norms a layer as Llama's (after the blocks instead of before), plus q_norm and k_norm over q and k's widths (24 heads of 128 each).
    assert.equal(savedBytesPerTokenLayer(olmo2, bf16()) - savedBytesPerTokenLayer({ ...llama, kvHeads: 24 }, bf16()), 4 * (3072 + 3072));
    const olmo: LayerShape = { ...llama, parameterFreeNorms: true };
    assert.equal(savedBytesPerTokenLayer(llama, bf16({ full: true })) - savedBytesPerTokenLayer(olmo, bf16({ full: true })), 2 * 2 * 3072);
  });

  it("keeps Phi-3's fused gate_up_proj output as Llama keeps gate's and up's, and PEFT's fp32 copy once for the one module", () => {
    const phi3: LayerShape = { ...llama, fusedQkv: true, fusedGateUp: true };
    assert.equal(savedBytesPerTokenLayer(phi3, bf16()), savedBytesPerTokenLayer({ ...llama, fusedQkv: true }, bf16()));
    assert.equal(savedBytesPerTokenLayer(phi3, bf16({ adapted: new Set(['gate_up_proj']) })) - savedBytesPerTokenLayer(phi3, bf16()), 4 * 3072);
    assert.equal(savedBytesPerTokenLayer({ ...llama, fusedQkv: true }, bf16({ adapted: new Set(['gate_proj', 'up_proj']) })) - savedBytesPerTokenLayer(phi3, bf16()), 2 * 4 * 3072);
  });

  it("keeps PEFT's fp32 copy for a fused query_key_value it adapts (BLOOM, Falcon), which is one module", () => {
    const bloom: LayerShape = { hidden: 4096, heads: 32, kvHeads: 32, headDim: 128, intermediate: 16384, gatedMlp: false, dropout: false, fusedQkv: true };
    assert.equal(savedBytesPerTokenLayer(bloom, bf16({ adapted: new Set(['qkv_proj']) })) - savedBytesPerTokenLayer(bloom, bf16()), 4 * 4096);
  });

  it('keeps PEFT\'s fp32 cast of the input once per adapted module, torchtune\'s bf16 input once for all', () => {
    const frozen = savedBytesPerTokenLayer(llama, bf16());
    const peft = savedBytesPerTokenLayer(llama, bf16({ adapted: new Set(['q_proj', 'v_proj']) }));
    assert.equal(peft - frozen, 2 * 4 * 3072);
    const torchtune = savedBytesPerTokenLayer(llama, bf16({ adapted: new Set(['q_proj', 'v_proj']), adapterBytes: 2 }));
    assert.equal(torchtune - frozen, 2 * 3072);
    // lora_dropout: each adapted module keeps dropout's fp32 output and its 1-byte mask.
    const dropout = savedBytesPerTokenLayer(llama, bf16({ adapted: new Set(['q_proj', 'v_proj']), adapterDropout: true }));
    assert.equal(dropout - frozen, 2 * 5 * 3072);
  });

  it("keeps autocast's 16-bit cast of PEFT's fp32 copy per adapted module over bf16 weights (not the fp32 copy)", () => {
    const adapted = new Set(['q_proj', 'v_proj']);
    const frozen = savedBytesPerTokenLayer(llama, bf16({ autocast: true }));
    assert.equal(savedBytesPerTokenLayer(llama, bf16({ adapted, autocast: true })) - frozen, 2 * 2 * 3072);
    // torchtune's bf16 adapter shares the bf16 input under autocast too.
    assert.equal(savedBytesPerTokenLayer(llama, bf16({ adapted, autocast: true, adapterBytes: 2 })) - frozen, 2 * 3072);
  });

  it('counts SDPA\'s grouped keys and values expanded to every head, flash-attention\'s as they are', () => {
    const sdpa = savedBytesPerTokenLayer(llama, bf16());
    const flash = savedBytesPerTokenLayer(llama, bf16({ attention: 'flash' }));
    assert.equal(sdpa - flash, 2 * 2 * (3072 - 1024));
  });

  it('keeps eager attention\'s probabilities: softmax\'s fp32 output, dropout\'s mask and fp32 output (BERT in fp32)', () => {
    const options = bf16({ computeBytes: 4, residualBytes: 4, full: true, attention: 'eager', seq: 512 });
    const at512 = savedBytesPerTokenLayer(bert, options);
    const at256 = savedBytesPerTokenLayer(bert, { ...options, seq: 256 });
    assert.equal(at512 - at256, 16 * 256 * 9);
  });

  it('gives each linear its own 16-bit cast of an fp32 input under autocast', () => {
    const plain = savedBytesPerTokenLayer(bert, bf16({ full: true, residualBytes: 2 }));
    const autocast = savedBytesPerTokenLayer(bert, bf16({ full: true, residualBytes: 4, autocast: true }));
    // q, k, v and fc1 each keep a 2-byte copy (4 x 2h instead of 2 x 2h shared); the norms keep fp32 inputs (2 x 4h instead of 2 x 2h).
    assert.equal(autocast - plain, (4 * 2 - 2 * 2) * 1024 + 2 * (4 - 2) * 1024);
  });

  it('keeps less under torch.compile, more with DoRA', () => {
    const adapted = new Set(['q_proj', 'v_proj']);
    const eager = savedBytesPerTokenLayer(llama, bf16({ adapted }));
    assert.ok(savedBytesPerTokenLayer(llama, bf16({ adapted, compiled: true })) < eager);
    // DoRA keeps the base output and the adapter's output in fp32 per adapted module: 8 bytes x (q + kv).
    assert.equal(savedBytesPerTokenLayer(llama, bf16({ adapted, dora: true })) - eager, 8 * (3072 + 1024));
  });

  it("keeps IA3's scaled outputs (k, v) and its feedforward module's input (down_proj's)", () => {
    const frozen = savedBytesPerTokenLayer(llama, bf16());
    const ia3 = savedBytesPerTokenLayer(llama, bf16({ scaled: { outputs: new Set(['k_proj', 'v_proj']), inputs: new Set(['down_proj']) } }));
    assert.equal(ia3 - frozen, 2 * (1024 + 1024) + 2 * 8192);
  });

  it('counts a cross-attention per target token over the source and per source token for its keys and values', () => {
    const t5: LayerShape = { hidden: 2048, heads: 32, kvHeads: 32, headDim: 64, intermediate: 5120, gatedMlp: true, dropout: true, rmsNorm: true };
    const options = bf16({ computeBytes: 4, residualBytes: 4, attention: 'eager', adapted: new Set(['q_proj', 'v_proj']) });
    const short = crossAttentionBytes(t5, options, 64);
    const long = crossAttentionBytes(t5, options, 128);
    assert.equal(long.perTarget - short.perTarget, 32 * 64 * 9);
    // Keys and values (2 x 4q) and v's input, which the fp32 adapter shares with the fp32 encoder output.
    assert.equal(short.perSource, 2 * 4 * 2048 + 4 * 2048);
  });
});
