"""harness/saved_activations.py: what autograd keeps for backward, worked out by hand on small
models, the same on the meta device as on the CPU, and fused attention's saved tensors."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness import saved_activations as sa


def _factory(*shape: int, device: str = "cpu"):
    return lambda batch: torch.randn(batch, *shape, device=device) if device == "cpu" else torch.empty(batch, *shape, device=device)


def test_mlp_keeps_its_input_and_the_relu_output_once():
    # Linear(8, 16) saves its input (8 floats); ReLU saves its output (16 floats), which the
    # second Linear saves as its input too: one storage, counted once. Weights are not activations.
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).train()
    assert sa.saved_activations(model, _factory(8)) == {"perSample": (8 + 16) * 4, "constant": 0}


class _Residual(nn.Module):
    """A residual block written with functional code, as libraries write them: rows would show
    the two Linear layers only."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(32, 32)
        self.b = nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.a(x))          # gelu saves its input (a's output)
        return x + self.b(h) * 0.5     # b saves h; the scalar product and the sum save nothing


def test_functional_code_between_modules_is_counted():
    model = _Residual().train()
    # x (b... no: a saves x), a's output (gelu's input), gelu's output (b's input): 3 x 32 floats.
    assert sa.saved_activations(model, _factory(32))["perSample"] == 3 * 32 * 4


class _Block(nn.Module):
    """x + fc2(gelu(fc1(x))): the block's input lives until the sum, beside the hidden layer
    before and after the activation."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(x)))


def test_a_frozen_forward_peaks_with_the_residual_stream_and_an_activation_s_input_and_output():
    model = nn.Sequential(_Block(), _Block()).to("meta")
    # In the second block: its input (8 floats, made by the first), fc1's output and gelu's (32 each).
    # In the first the input is the batch, which is not counted: 64 floats. Parameters are not counted.
    assert sa.forward_peak(model, _factory(8, device="meta")) == {"perSample": (8 + 32 + 32) * 4, "constant": 0}
    # Autograd off: nothing is saved, so the peak is the same with the parameters frozen or not.
    model.requires_grad_(False)
    assert sa.forward_peak(model, _factory(8, device="meta"))["perSample"] == (8 + 32 + 32) * 4


def test_a_frozen_forward_on_the_cpu_peaks_where_it_does_on_meta():
    model = nn.Sequential(_Block(), _Block())
    assert sa.forward_peak(model, _factory(8)) == sa.forward_peak(model.to("meta"), _factory(8, device="meta"))


def test_meta_device_gives_what_the_cpu_gives():
    torchvision = pytest.importorskip("torchvision")
    cpu = torchvision.models.resnet18(num_classes=10).train()
    meta = torchvision.models.resnet18(num_classes=10).to("meta").train()
    on_cpu = sa.saved_activations(cpu, _factory(3, 64, 64))
    on_meta = sa.saved_activations(meta, _factory(3, 64, 64, device="meta"))
    assert on_cpu == on_meta
    assert on_cpu["perSample"] > 0


def test_fused_attention_saves_q_k_v_output_and_logsumexp_not_the_matrix():
    had = hasattr(F, "scaled_dot_product_attention")
    original = getattr(F, "scaled_dot_product_attention", None)
    try:
        installed = sa.install_fused_attention()
        assert installed is not had
        q = torch.empty(2, 4, 50, 8, device="meta", requires_grad=True)
        k = torch.empty(2, 4, 50, 8, device="meta", requires_grad=True)
        v = torch.empty(2, 4, 50, 8, device="meta", requires_grad=True)

        class Attend(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return F.scaled_dot_product_attention(x.clone(), k, v)

        if installed:
            bytes_ = sa.saved_bytes(Attend(), lambda batch: q, 2)
            # the clone of q (a new storage), k, v, the output (each 2 x 4 x 50 x 8 floats) and the
            # log-sum-exp (2 x 4 x 50): no 50 x 50 matrix.
            assert bytes_ == (4 * 2 * 4 * 50 * 8 + 2 * 4 * 50) * 4
    finally:
        if had:
            F.scaled_dot_product_attention = original  # type: ignore[attr-defined]
        elif hasattr(F, "scaled_dot_product_attention"):
            delattr(F, "scaled_dot_product_attention")


def test_a_forward_that_is_not_linear_in_the_batch_is_refused():
    class Odd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            extra = torch.ones(x.shape[0] ** 2, 8, requires_grad=True)
            return (x * self.w).sum() + (extra * extra).sum()

    with pytest.raises(ValueError, match="not linear"):
        sa.saved_activations(Odd(), _factory(8))


class _DeadBranch(nn.Module):
    """A result forward computes and drops: its graph, and what it saved, are freed before the
    end of forward (and a later tensor may take its storage's address)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(32, 64)
        self.b = nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = F.gelu(self.a(x))
        del unused
        return F.relu(self.b(x))


def test_what_a_dropped_branch_saved_is_not_held():
    # Held: x (both Linear layers save it: one storage) and relu's output; not a's output.
    assert sa.saved_activations(_DeadBranch().train(), _factory(32))["perSample"] == (32 + 16) * 4
