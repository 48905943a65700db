"""The learned estimators of one architecture family, as torch modules that export to one ONNX
graph: raw features in; memory (point and calibrated range, MiB), memory-bin probabilities and
utilization-class probabilities out.

- `Preprocess`: clips each feature to its training range (outside it the residual stays what it
  was at the edge, and the analytical anchor carries the extrapolation), log1p where the feature
  definition says so, standardises, and zeroes features that were constant in training.
- `MemoryMember`: an MLP on the standardised features predicting quantiles of the log ratio
  log(measured / analytical) (a multiplicative residual on our analytical model), monotone by
  construction. Bin probabilities come from these quantiles (regress, then bin): direct
  classifier heads per bin width scored lower in cross-validation (see README.md).
- `UtilizationMember`: an MLP with SMACT and SMOCC heads (three classes each).
- `FamilyModel`: members averaged inside the graph; see `forward` for the outputs.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

#: Quantiles of log(measured / analytical) every memory member predicts.
QUANTILES: Tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: The calibrated range is the 10th to the 90th percentile (an 80% interval).
RANGE_QUANTILES = (0.1, 0.9)
#: Utilization classes: thirds of the 0..1 range of the DCGM average.
UTILIZATION_EDGES = (1.0 / 3.0, 2.0 / 3.0)
UTILIZATION_CLASSES = ("low", "medium", "high")
_Z90 = 1.2815515655446004  # standard normal quantile at 0.9


@dataclass
class MemberConfig:
    hidden: int
    activation: str
    lr: float
    weight_decay: float
    steps: int
    seed: int
    batch: int = 256

    def describe(self) -> Dict[str, object]:
        return asdict(self)


def _activation(name: str) -> nn.Module:
    return {"silu": nn.SiLU(), "relu": nn.ReLU(), "tanh": nn.Tanh(), "gelu": nn.GELU()}[name]


class Preprocess(nn.Module):
    def __init__(self, low: np.ndarray, high: np.ndarray, log_mask: np.ndarray, mean: np.ndarray, scale: np.ndarray, keep: np.ndarray):
        super().__init__()
        for name, value in (("low", low), ("high", high), ("log_mask", log_mask), ("mean", mean), ("scale", scale), ("keep", keep)):
            self.register_buffer(name, torch.tensor(np.asarray(value, dtype=np.float32)))

    @staticmethod
    def fit(features: np.ndarray, transforms: Sequence[str]) -> "Preprocess":
        low = features.min(axis=0)
        high = features.max(axis=0)
        log_mask = np.array([1.0 if t == "log1p" else 0.0 for t in transforms])
        transformed = _transform(np.clip(features, low, high), log_mask)
        mean = transformed.mean(axis=0)
        scale = transformed.std(axis=0)
        keep = (scale > 1e-9).astype(np.float64)
        scale = np.where(keep > 0, scale, 1.0)
        return Preprocess(low, high, log_mask, mean, scale, keep)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.maximum(torch.minimum(x, self.high), self.low)
        logged = torch.log(torch.relu(x) + 1.0)
        x = self.log_mask * logged + (1.0 - self.log_mask) * x
        return (x - self.mean) / self.scale * self.keep


def _transform(features: np.ndarray, log_mask: np.ndarray) -> np.ndarray:
    return np.where(log_mask > 0, np.log1p(np.maximum(features, 0)), features)


def _trunk(n_in: int, config: MemberConfig) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, config.hidden), _activation(config.activation), nn.Linear(config.hidden, config.hidden), _activation(config.activation))


class MemoryMember(nn.Module):
    def __init__(self, n_in: int, config: MemberConfig):
        super().__init__()
        self.trunk = _trunk(n_in, config)
        self.quantile = nn.Linear(config.hidden, len(QUANTILES))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Quantiles of the log ratio [N, Q], in increasing order."""
        raw = self.quantile(self.trunk(z))
        mid = QUANTILES.index(0.5)
        steps = nn.functional.softplus(raw)
        columns: List[torch.Tensor] = [raw[:, mid]]
        for i in range(mid + 1, len(QUANTILES)):
            columns.append(columns[-1] + steps[:, i])
        below: List[torch.Tensor] = []
        current = raw[:, mid]
        for i in range(mid - 1, -1, -1):
            current = current - steps[:, i]
            below.insert(0, current)
        return torch.stack(below + columns, dim=1)


class UtilizationMember(nn.Module):
    def __init__(self, n_in: int, config: MemberConfig):
        super().__init__()
        self.trunk = _trunk(n_in, config)
        self.smact = nn.Linear(config.hidden, len(UTILIZATION_CLASSES))
        self.smocc = nn.Linear(config.hidden, len(UTILIZATION_CLASSES))

    def forward(self, z: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(z)
        return self.smact(h), self.smocc(h)


def pinball(quantiles: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    tau = torch.tensor(QUANTILES, dtype=quantiles.dtype)
    diff = target[:, None] - quantiles
    return torch.maximum(tau * diff, (tau - 1.0) * diff).mean()


def bin_index(mib: np.ndarray, width: int, count: int) -> np.ndarray:
    return np.minimum((mib // width).astype(np.int64), count - 1)


def utilization_class(values: np.ndarray) -> np.ndarray:
    """0 low, 1 medium, 2 high; -1 where not recorded (NaN)."""
    classes = np.full(values.shape, -1, dtype=np.int64)
    known = ~np.isnan(values)
    classes[known] = np.searchsorted(np.array(UTILIZATION_EDGES), values[known], side="right")
    return classes


def _batches(n: int, batch: int, generator: torch.Generator):
    while True:
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch):
            yield order[start:start + batch]


def _fit(member: nn.Module, rows: int, config: MemberConfig, generator: torch.Generator, loss_of: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Adam with cosine decay over `config.steps` mini-batches of the `rows` runs; `loss_of(index)` is the batch's loss."""
    optimizer = torch.optim.Adam(member.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, config.steps)
    batches = _batches(rows, config.batch, generator)
    member.train()
    for _ in range(config.steps):
        loss = loss_of(next(batches))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    member.eval()


def train_memory_member(z: torch.Tensor, log_ratio: torch.Tensor, config: MemberConfig) -> MemoryMember:
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    member = MemoryMember(z.shape[1], config)
    _fit(member, len(z), config, generator, lambda index: pinball(member(z[index]), log_ratio[index]))
    return member


def train_utilization_member(z: torch.Tensor, smact: torch.Tensor, smocc: torch.Tensor, config: MemberConfig) -> UtilizationMember:
    """Class targets -1 (not recorded) are left out of that head's loss; every row has at least one."""
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    member = UtilizationMember(z.shape[1], config)

    def loss_of(index: torch.Tensor) -> torch.Tensor:
        act_logits, occ_logits = member(z[index])
        loss = act_logits.sum() * 0.0
        for logits, target in ((act_logits, smact[index]), (occ_logits, smocc[index])):
            if bool((target >= 0).any()):
                loss = loss + nn.functional.cross_entropy(logits, target, ignore_index=-1)
        return loss

    _fit(member, len(z), config, generator, loss_of)
    return member


@dataclass
class Calibration:
    """Offsets (log space) added to the 10th and 90th percentiles so that 10% of out-of-fold runs
    fall below the range and 10% above it; the quantile used as the point estimate."""

    low_offset: float = 0.0
    high_offset: float = 0.0
    point_quantile: float = 0.5


def gaussian_bin_probabilities(anchor_log: torch.Tensor, quantiles: torch.Tensor, width: int, count: int) -> torch.Tensor:
    """P(bin) for one member from its quantiles: log-normal with median q50 and the spread of q10..q90."""
    i10, i50, i90 = QUANTILES.index(0.1), QUANTILES.index(0.5), QUANTILES.index(0.9)
    mu = anchor_log + quantiles[:, i50]
    sigma = torch.clamp((quantiles[:, i90] - quantiles[:, i10]) / (2.0 * _Z90), min=1e-3)
    edges = torch.log(torch.arange(1, count, dtype=torch.float32) * float(width))
    cdf = 0.5 * (1.0 + torch.erf((edges[None, :] - mu[:, None]) / (sigma[:, None] * math.sqrt(2.0))))
    n = anchor_log.shape[0]
    cdf = torch.cat([torch.zeros(n, 1), cdf, torch.ones(n, 1)], dim=1)
    return cdf[:, 1:] - cdf[:, :-1]


def interpolate_quantile(quantiles: torch.Tensor, tau: float) -> torch.Tensor:
    """The log ratio at quantile level tau, linearly between the trained levels."""
    if tau in QUANTILES:
        return quantiles[:, QUANTILES.index(tau)]
    upper = next(i for i, level in enumerate(QUANTILES) if level > tau)
    lower = upper - 1
    weight = (tau - QUANTILES[lower]) / (QUANTILES[upper] - QUANTILES[lower])
    return quantiles[:, lower] * (1 - weight) + quantiles[:, upper] * weight


class FamilyModel(nn.Module):
    """Outputs, for features [N, F] (raw, in featureDefinition.json order):
    - memory_mib [N, 3]: calibrated low (10th percentile), point, high (90th percentile), MiB;
    - bins_<width> [N, count] for each bin width: probabilities (each member's quantiles as a
      log-normal, the members' probabilities averaged);
    - smact, smocc [N, 3]: probabilities of low, medium, high (members averaged); left out when
      the family's data has no utilization measurements.
    """

    def __init__(self, preprocess: Preprocess, memory: Sequence[MemoryMember], utilization: Sequence[UtilizationMember], anchor_index: int, bin_sets: Sequence[Tuple[int, int]], calibration: Calibration):
        super().__init__()
        self.preprocess = preprocess
        self.memory = nn.ModuleList(memory)
        self.utilization = nn.ModuleList(utilization)
        self.anchor_index = anchor_index
        self.bin_sets = list(bin_sets)  # (width, count)
        self.calibration = calibration

    def forward(self, features: torch.Tensor):
        z = self.preprocess(features)
        members = [member(z) for member in self.memory]
        anchor_log = torch.log(features[:, self.anchor_index])
        quantiles = torch.stack(members, dim=0).mean(dim=0)
        low = interpolate_quantile(quantiles, RANGE_QUANTILES[0]) + self.calibration.low_offset
        point = interpolate_quantile(quantiles, self.calibration.point_quantile)
        high = interpolate_quantile(quantiles, RANGE_QUANTILES[1]) + self.calibration.high_offset
        memory = torch.exp(anchor_log[:, None] + torch.stack([torch.minimum(low, point), point, torch.maximum(high, point)], dim=1))
        bins = [torch.stack([gaussian_bin_probabilities(anchor_log, q, width, count) for q in members], dim=0).mean(dim=0) for width, count in self.bin_sets]
        if not self.utilization:  # no utilization measurements for this family
            return (memory, *bins)
        utilization = [member(z) for member in self.utilization]
        smact = torch.stack([torch.softmax(act, dim=1) for act, _ in utilization], dim=0).mean(dim=0)
        smocc = torch.stack([torch.softmax(occ, dim=1) for _, occ in utilization], dim=0).mean(dim=0)
        return (memory, *bins, smact, smocc)
