"""The sparse mixture-of-experts block of transformers 4 (MixtralSparseMoeBlock, and Qwen2-MoE's with
its shared expert), written out here by hand from its forward, measured with PyTorch's saved-tensor
hooks (harness/saved_activations.py) against the bytes per token the fine-tuning estimator counts
for it (src/core/estimators/moeActivations.ts). Both sides read test/vectors/moe/sparse-moe-block.json:
test/unit/core/estimators/moe.unit.test.ts checks the TypeScript figure is the stored one, this
test that PyTorch keeps that figure."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness import saved_activations as sa

VECTORS = Path(__file__).resolve().parents[2] / "test" / "vectors" / "moe" / "sparse-moe-block.json"
SEQ = 16
DTYPES = {2: torch.bfloat16, 4: torch.float32}


class _LoraLinear(nn.Module):
    """PEFT's LoRA Linear as it runs: the frozen base, and the input cast to the fp32 adapter's dtype
    through A (rank wide) and B, added in fp32 and cast back."""

    def __init__(self, base: nn.Linear, rank: int) -> None:
        super().__init__()
        self.base = base
        self.lora_a = nn.Linear(base.in_features, rank, bias=False)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base(x)
        # Without PEFT's `* scaling`, whose 0-dim float64 the product keeps (8 bytes a call, not a token's worth).
        return (result + self.lora_b(self.lora_a(x.to(self.lora_a.weight.dtype)))).to(result.dtype)


class _Expert(nn.Module):
    """One expert: down(silu(gate(x)) * up(x)) (Mixtral's w2(silu(w1) * w3))."""

    def __init__(self, hidden: int, inner: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class _SparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, experts: int, top_k: int, inner: int, norm_top_k: bool, shared: Optional[int]) -> None:
        super().__init__()
        self.top_k = top_k
        self.norm_top_k = norm_top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(_Expert(hidden, inner) for _ in range(experts))
        self.shared_expert = _Expert(hidden, shared) if shared else None
        self.shared_expert_gate = nn.Linear(hidden, 1, bias=False) if shared else None

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = hidden_states.shape
        x = hidden_states.view(-1, hidden)
        router_logits = self.gate(x)
        weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        weights, chosen = torch.topk(weights, self.top_k, dim=-1)
        if self.norm_top_k:
            weights /= weights.sum(dim=-1, keepdim=True)
        weights = weights.to(x.dtype)
        out = torch.zeros((batch * seq, hidden), dtype=x.dtype)
        mask = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        for index, expert in enumerate(self.experts):
            slot, rows = torch.where(mask[index])
            current = x[None, rows].reshape(-1, hidden)
            y = expert(current) * weights[rows, slot, None]
            out.index_add_(0, rows, y.to(x.dtype))
        if self.shared_expert is not None:
            out = out + torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)
        return out.reshape(batch, seq, hidden)


def _block(case: Dict[str, Any]) -> nn.Module:
    shape, options = case["shape"], case["options"]
    torch.manual_seed(0)
    block = _SparseMoeBlock(case["hidden"], shape["experts"], shape["topK"], shape["expertIntermediate"], shape["normTopK"], shape.get("sharedIntermediate"))
    block = block.to(DTYPES[options["computeBytes"]]).train()
    full = options["full"]
    for p in block.parameters():
        p.requires_grad_(full)
    adapted = set(options["adapted"])
    names = {"router": ["gate"], "gate_proj": ["gate_proj"], "up_proj": ["up_proj"], "down_proj": ["down_proj"], "shared_expert_gate": ["shared_expert_gate"]}
    targets = {leaf for name in adapted for leaf in names[name]}
    for module in list(block.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear) and child_name in targets:
                setattr(module, child_name, _LoraLinear(child, case["rank"]))
    return block


def _lora_rank_outputs(case: Dict[str, Any]) -> int:
    """Bytes per token of what moeActivations.ts leaves out, as the dense layers' count does: each adapted
    module's A output (rank fp32 values), which B keeps, per token slot that goes through it."""
    shape, adapted = case["shape"], set(case["options"]["adapted"])
    if case["options"]["full"] or not adapted:
        return 0
    routed = sum(name in adapted for name in ("gate_proj", "up_proj", "down_proj")) * shape["topK"]
    once = ("router" in adapted) + (sum(name in adapted for name in ("gate_proj", "up_proj", "down_proj", "shared_expert_gate")) if shape.get("sharedIntermediate") else 0)
    return 4 * case["rank"] * (routed + once)


CASES = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_pytorch_keeps_what_the_estimator_counts_per_token(case: Dict[str, Any]) -> None:
    block = _block(case)
    dtype = DTYPES[case["options"]["computeBytes"]]
    measured = sa.saved_activations(block, lambda batch: torch.randn(batch, SEQ, case["hidden"], dtype=dtype).requires_grad_())
    assert measured["constant"] == 0
    assert measured["perSample"] / SEQ == case["bytesPerToken"] + _lora_rank_outputs(case)


def test_the_vectors_cover_frozen_adapted_and_full_blocks_with_and_without_a_shared_expert() -> None:
    kinds = {(bool(c["shape"].get("sharedIntermediate")), c["options"]["full"], bool(c["options"]["adapted"])) for c in CASES}
    assert kinds >= {(False, False, False), (False, False, True), (False, True, False), (True, False, False), (True, False, True)}
