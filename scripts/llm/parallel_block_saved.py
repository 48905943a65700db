"""What autograd keeps for a Falcon-style parallel block (docs/fine-tuning.md, savedActivations.ts).

A tiny block of the same structure (LayerNorm, fused query_key_value with one key-value head, dense,
a 4h GELU MLP; attention and MLP side by side, behind one shared norm or two), fully trainable, in
fp32 on the CPU. torch.autograd.graph.saved_tensors_hooks records every tensor saved for the
backward; activations saved more than once share one storage, so they are grouped by data_ptr.
Run with Debian's torch: /usr/bin/python3 scripts/llm/parallel_block_saved.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN, HEADS, TOKENS = 64, 4, 16
HEAD = HIDDEN // HEADS


class ParallelBlock(nn.Module):
    def __init__(self, two_norms: bool):
        super().__init__()
        self.ln_attn = nn.LayerNorm(HIDDEN)
        self.ln_mlp = nn.LayerNorm(HIDDEN) if two_norms else None
        self.query_key_value = nn.Linear(HIDDEN, HIDDEN + 2 * HEAD, bias=False)
        self.dense = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.dense_h_to_4h = nn.Linear(HIDDEN, 4 * HIDDEN, bias=False)
        self.dense_4h_to_h = nn.Linear(4 * HIDDEN, HIDDEN, bias=False)

    def forward(self, x):
        attn_in = self.ln_attn(x)
        mlp_in = self.ln_mlp(x) if self.ln_mlp is not None else attn_in
        q, k, v = self.query_key_value(attn_in).split([HIDDEN, HEAD, HEAD], -1)
        q = q.view(1, TOKENS, HEADS, HEAD).transpose(1, 2)
        k = k.view(1, TOKENS, 1, HEAD).transpose(1, 2).expand(1, HEADS, TOKENS, HEAD)
        v = v.view(1, TOKENS, 1, HEAD).transpose(1, 2).expand(1, HEADS, TOKENS, HEAD)
        attention = torch.softmax(q @ k.transpose(-1, -2) / HEAD**0.5, -1) @ v
        attention = self.dense(attention.transpose(1, 2).reshape(1, TOKENS, HIDDEN))
        return x + attention + self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(mlp_in)))


def saved_counts(two_norms: bool):
    """How often, and in how many storages, the layer input and the norms' outputs are saved for the backward."""
    torch.manual_seed(0)
    block = ParallelBlock(two_norms)
    x = torch.randn(1, TOKENS, HIDDEN, requires_grad=True)
    norm_outputs = set()
    for norm in (block.ln_attn, block.ln_mlp):
        if norm is not None:
            norm.register_forward_hook(lambda module, inputs, output: norm_outputs.add(output.data_ptr()))
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: (saved.append(t.data_ptr()), t)[1], lambda t: t):
        block(x)
    of_input = [ptr for ptr in saved if ptr == x.data_ptr()]
    of_norms = [ptr for ptr in saved if ptr in norm_outputs]
    return (len(of_input), len(set(of_input))), (len(of_norms), len(set(of_norms)))


for two_norms in (False, True):
    (input_saves, input_storages), (norm_saves, norm_storages) = saved_counts(two_norms)
    print(
        f"{'two norms' if two_norms else 'one norm'}: the layer input saved {input_saves} time(s) in {input_storages} storage(s); "
        f"the norms' outputs (the linears' inputs) saved {norm_saves} time(s) in {norm_storages} storage(s)"
    )
