"""What eager attention keeps for backward, measured by autograd, beside the harness's layer table.

For a few small attention models it writes test/vectors/eager-attention.json: per case the
harness's layer table (docs/layer-table.md; rule 9 gives an nn.MultiheadAttention row an
`eagerAttention` figure when PyTorch 2 runs that call eagerly), the bytes of the distinct storages
autograd saves that are score matrices (batch x heads x L x S), measured on the torch this script
runs (1.13 on our CPU harness), and `pytorch2`, how PyTorch >= 2 runs the case's attention:

- "eager": nn.MultiheadAttention called directly with need_weights left True (its default) or a
  hand-written softmax(q k^T) -> dropout -> @ v. F.multi_head_attention_forward's eager branch is
  the same code in 1.13 and 2.x, so the bytes measured here are PyTorch 2's, and the table must
  account for exactly them.
- "fused": nn.MultiheadAttention called with need_weights=False, and the nn.Transformer* layers,
  which call it so. PyTorch 2 runs scaled_dot_product_attention there, whose fused kernels keep no
  score matrix; 1.13 still runs the eager branch, so the bytes measured here (> 0) are what 1.13
  keeps and PyTorch 2 does not, and the table shows none. That PyTorch 2 keeps none is read from
  its source (F.multi_head_attention_forward), not measured: this machine has no PyTorch 2 or GPU.

Dropout runs as CUDA's fused kernel does (`native_dropout`, a 1-byte mask) rather than the CPU's
float noise tensor, so the bytes are a GPU's.

harness/tests/test_eager_attention.py checks that the vectors are current and agree with the
bytes-per-element rule; test/unit/core/estimators/eagerAttention.unit.test.ts checks that the
TypeScript replay gives the same bytes for the same tables.

    /usr/bin/python3 scripts/generate_eager_attention_vectors.py [--check]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.layer_table import layer_table  # noqa: E402

OUT = ROOT / "test" / "vectors" / "eager-attention.json"
BATCH = 3
D_MODEL, HEADS, FEEDFORWARD = 32, 4, 64


class CausalSelfAttention(nn.Module):
    """The attention of a GPT-2-like block, written out as such projects write it."""

    def __init__(self, d_model: int, heads: int, block: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)
        self.resid_drop = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class GptBlock(nn.Module):
    def __init__(self, d_model: int = D_MODEL, heads: int = HEADS, block: int = 16, dropout: float = 0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, block, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class AttendToMemory(nn.Module):
    """A pre-norm block around nn.MultiheadAttention called directly, as scripts write it; the
    query (12 positions) attends to a memory of 20. need_weights=None leaves it out of the call."""

    def __init__(self, dropout: float, need_weights: Optional[bool]):
        super().__init__()
        self.norm = nn.LayerNorm(D_MODEL)
        self.attn = nn.MultiheadAttention(D_MODEL, HEADS, dropout=dropout, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        if self.need_weights is None:
            attended, _ = self.attn(h, memory, memory)
        else:
            attended, _ = self.attn(h, memory, memory, need_weights=self.need_weights)
        return x + attended


def _encoder(dropout: float) -> nn.Module:
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FEEDFORWARD, dropout=dropout, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2)


def _randn(*shape: int) -> Callable[[int], Tuple[torch.Tensor, ...]]:
    return lambda batch: (torch.randn(batch, *shape),)


def _query_and_memory(batch: int) -> Tuple[torch.Tensor, ...]:
    return torch.randn(batch, 12, D_MODEL), torch.randn(batch, 20, D_MODEL)


#: name -> (model factory, input factory, the (L, S) of its score matrices, how PyTorch 2 runs its attention)
CASES: Dict[str, Tuple[Callable[[], nn.Module], Callable[[int], Tuple[torch.Tensor, ...]], List[Tuple[int, int]], str]] = {
    "mha_default": (lambda: AttendToMemory(0.1, None), _query_and_memory, [(12, 20)], "eager"),
    "mha_need_weights_true_no_dropout": (lambda: AttendToMemory(0.0, True), _query_and_memory, [(12, 20)], "eager"),
    "mha_need_weights_false": (lambda: AttendToMemory(0.1, False), _query_and_memory, [(12, 20)], "fused"),
    "transformer_encoder": (lambda: _encoder(0.1), _randn(16, D_MODEL), [(16, 16)], "fused"),
    "transformer_decoder_layer": (
        lambda: nn.TransformerDecoderLayer(D_MODEL, HEADS, FEEDFORWARD, dropout=0.1, batch_first=True),
        _query_and_memory,
        [(12, 12), (12, 20)],
        "fused",
    ),
    "gpt_block": (GptBlock, _randn(16, D_MODEL), [(16, 16)], "eager"),
}


def _cuda_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> torch.Tensor:
    """F.dropout as CUDA runs it in training: the fused kernel, which keeps a 1-byte mask."""
    if not training or p == 0.0 or inplace:
        return _CPU_DROPOUT(input, p, training, inplace)
    return torch.native_dropout(input, p, True)[0]


_CPU_DROPOUT = F.dropout


@contextlib.contextmanager
def cuda_dropout() -> Iterator[None]:
    # F.multi_head_attention_forward and nn.Dropout both look `dropout` up in torch.nn.functional.
    F.dropout = _cuda_dropout  # type: ignore[assignment]
    try:
        yield
    finally:
        F.dropout = _CPU_DROPOUT  # type: ignore[assignment]


def attention_saved_bytes(model: nn.Module, inputs: Sequence[torch.Tensor], heads: int, matrices: Sequence[Tuple[int, int]]) -> int:
    """Bytes of the distinct storages autograd saves in one forward whose tensors are score
    matrices: a trailing (L, S) of one of `matrices` and batch x heads x L x S elements."""
    batch = inputs[0].shape[0]
    saved: Dict[int, int] = {}
    keep: List[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.dim() >= 3 and tuple(tensor.shape[-2:]) in matrices and tensor.numel() == batch * heads * tensor.shape[-2] * tensor.shape[-1]:
            keep.append(tensor)  # alive until the end, so no address is reused
            saved[tensor.storage().data_ptr()] = tensor.storage().nbytes()
        return tensor

    torch.manual_seed(0)
    with cuda_dropout(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(*inputs)
    del output
    return sum(saved.values())


def generate() -> Dict[str, Any]:
    cases = []
    for name, (build, make_input, matrices, pytorch2) in CASES.items():
        torch.manual_seed(0)
        model = build().train()
        table = layer_table(model, make_input, name)
        measured = attention_saved_bytes(model, make_input(BATCH), HEADS, matrices)
        cases.append({"name": name, "batch": BATCH, "precision": "fp32", "pytorch2": pytorch2, "layerTable": table, "measuredAttentionBytes": measured})
    return {"generatedBy": {"torch": torch.__version__, "script": "scripts/generate_eager_attention_vectors.py"}, "cases": cases}


def render(vectors: Dict[str, Any]) -> str:
    return json.dumps(vectors, indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the stored vectors are stale")
    args = parser.parse_args()
    text = render(generate())
    if args.check:
        stale = not OUT.exists() or OUT.read_text(encoding="utf-8") != text
        print(f"{OUT.relative_to(ROOT)} is {'stale' if stale else 'current'}")
        return 1 if stale else 0
    OUT.write_text(text, encoding="utf-8")
    for case in json.loads(text)["cases"]:
        print(f"{case['name']:34} torch {torch.__version__} keeps {case['measuredAttentionBytes']:>6} bytes of score matrices at batch {case['batch']}; PyTorch 2: {case['pytorch2']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
