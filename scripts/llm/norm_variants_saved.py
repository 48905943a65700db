"""What autograd keeps for the norms and the logit soft-capping of Gemma-2, OLMo, OLMo-2, Qwen3 and GPT-NeoX (docs/fine-tuning.md, savedActivations.ts).

Each piece is written as transformers 5.18 writes it (Gemma2RMSNorm, OlmoLayerNorm, Olmo2RMSNorm,
Gemma2ForCausalLM's final_logit_softcapping, GPTNeoXLayer's parallel residual), run in bf16 on the
CPU on an input that requires a gradient, with torch.autograd.graph.saved_tensors_hooks recording
every tensor saved for the backward; storages are counted once (by data_ptr). The figures are bytes
per token (per logit for the soft-capping), next to what savedActivations.ts / fineTuning.ts count.
Run with the generator's torch 2.13: /work/venvs/hf/bin/python scripts/llm/norm_variants_saved.py (Debian's
torch 1.13 also keeps pow(2)'s fp32 output in the RMS norms, a tensor torch 2 no longer saves).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN, TOKENS = 64, 16
torch.manual_seed(0)


def saved_bytes(fn, x):
    """Bytes of the distinct storages saved for the backward while `fn(x)` runs, the input itself left out."""
    saved = {}

    def pack(t):
        if t.data_ptr() != x.data_ptr():
            saved[t.data_ptr()] = t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return sum(saved.values())


class Gemma2RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        h = x.float()
        output = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (output * (1.0 + self.weight.float())).type_as(x)


class LlamaStyleRMSNorm(nn.Module):
    """Olmo2RMSNorm (LlamaRMSNorm's computation): upcast, normalize, cast back, then the weight."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * h.to(x.dtype)


def olmo_layer_norm(x):
    return F.layer_norm(x.to(torch.float32), (HIDDEN,), None, None, eps=1e-5).to(x.dtype)


def per_token(total):
    return total / TOKENS


x = torch.randn(1, TOKENS, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
for trainable in (False, True):
    gemma = Gemma2RMSNorm(HIDDEN).to(torch.bfloat16).requires_grad_(trainable)
    olmo2 = LlamaStyleRMSNorm(HIDDEN).to(torch.bfloat16).requires_grad_(trainable)
    what = "trained weight" if trainable else "frozen weight"
    print(f"Gemma2RMSNorm, {what}: {per_token(saved_bytes(gemma, x)):.0f} B/token "
          f"(counted: {4 * HIDDEN + (4 * HIDDEN if trainable else 0)} = the fp32 copy{' + the fp32 normalized tensor' if trainable else ''}; rsqrt's 4 B not counted)")
    print(f"Olmo2RMSNorm (q_norm, k_norm), {what}: {per_token(saved_bytes(olmo2, x)):.0f} B/token "
          f"(counted: {4 * HIDDEN + (2 * HIDDEN if trainable else 0)})")
# Qwen3's q_norm and k_norm: the same computation over each head (a view of the projection as heads x head_dim).
HEAD_DIM = 16
for trainable in (False, True):
    per_head = LlamaStyleRMSNorm(HEAD_DIM).to(torch.bfloat16).requires_grad_(trainable)
    what = "trained weight" if trainable else "frozen weight"
    print(f"Qwen3RMSNorm over heads of {HEAD_DIM} (q_norm, k_norm), {what}: "
          f"{per_token(saved_bytes(lambda t: per_head(t.view(1, TOKENS, HIDDEN // HEAD_DIM, HEAD_DIM)), x)):.0f} B/token "
          f"(counted: {4 * HIDDEN + (2 * HIDDEN if trainable else 0)}, as OLMo-2's over the whole width)")
print(f"OlmoLayerNorm (no weight): {per_token(saved_bytes(olmo_layer_norm, x)):.0f} B/token (counted: {4 * HIDDEN}, the fp32 copy)")

VOCAB = 256
logits = torch.randn(1, TOKENS, VOCAB, dtype=torch.bfloat16, requires_grad=True)
capped = saved_bytes(lambda t: torch.tanh(t / 30.0) * 30.0, logits)
print(f"final_logit_softcapping: {capped / (TOKENS * VOCAB):.0f} B per logit (counted: 2, tanh's bf16 output)")

# GPTNeoXLayer with use_parallel_residual: input_layernorm and post_attention_layernorm both read the layer's input.
ln_1, ln_2 = nn.LayerNorm(HIDDEN).to(torch.bfloat16), nn.LayerNorm(HIDDEN).to(torch.bfloat16)
inputs = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: (inputs.append(t.data_ptr()), t)[1], lambda t: t):
    ln_1(x) + ln_2(x)
of_input = [p for p in inputs if p == x.data_ptr()]
print(f"GPT-NeoX parallel residual: the layer input saved {len(of_input)} times in {len(set(of_input))} storage (counted once)")
