"""Xception (Chollet 2017) as timm builds it under the name `xception` (`legacy_xception` since
timm 0.9), written from the published architecture for the catalog generator; timm is not
installed where the catalog is generated.

The paper's network: an entry flow (two plain 3x3 convolutions, then three blocks that halve the
resolution and grow the channels to 128, 256 and 728), a middle flow of eight identical blocks of
three separable convolutions at 728 channels, and an exit flow (a block that grows to 1024
channels and halves the resolution, then separable convolutions to 1536 and 2048 channels),
global average pooling and the classifier. Each separable convolution is a depthwise 3x3
convolution followed by a pointwise 1x1 convolution, both without bias, then batch norm. A block
whose output differs from its input in channels or resolution has a strided 1x1 convolution and
batch norm on its shortcut.

The module names are the ones timm's checkpoints use (conv1/bn1/act1, block1..block12 with
`rep`, `skip`, `skipbn`, separable convolutions with `conv1` and `pointwise`, global_pool.pool,
global_pool.flatten, fc), so the layer table's paths read like timm's. timm publishes 22,855,952
parameters (22.86M) for it.
"""
from __future__ import annotations

from typing import List

import torch
import torch.nn.functional as F
from torch import nn

#: (in channels, out channels, separable convolutions, stride, starts with ReLU, grows first)
BLOCKS = [
    (64, 128, 2, 2, False, True),
    (128, 256, 2, 2, True, True),
    (256, 728, 2, 2, True, True),
    *[(728, 728, 3, 1, True, True)] * 8,
    (728, 1024, 2, 2, True, False),
]

NUM_FEATURES = 2048


class SeparableConv2d(nn.Module):
    """A depthwise convolution (one filter per channel) and a pointwise 1x1 convolution, no bias."""

    def __init__(self, channels_in: int, channels_out: int, kernel_size: int = 1, stride: int = 1, padding: int = 0) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_in, kernel_size, stride, padding, groups=channels_in, bias=False)
        self.pointwise = nn.Conv2d(channels_in, channels_out, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.conv1(x))


class Block(nn.Module):
    """`reps` x (ReLU, separable 3x3 convolution, batch norm), a 3x3 max pool when strided, plus a
    shortcut (a strided 1x1 convolution and batch norm where the shape changes)."""

    def __init__(self, channels_in: int, channels_out: int, reps: int, stride: int, start_with_relu: bool, grow_first: bool) -> None:
        super().__init__()
        if channels_in != channels_out or stride != 1:
            self.skip = nn.Conv2d(channels_in, channels_out, 1, stride=stride, bias=False)
            self.skipbn = nn.BatchNorm2d(channels_out)
        else:
            self.skip = None
        # Channels before and after each separable convolution: the block widens at its first
        # convolution (grow_first) or at its last one.
        if grow_first:
            widths = [channels_in] + [channels_out] * reps
        else:
            widths = [channels_in] * reps + [channels_out]
        layers: List[nn.Module] = []
        for index in range(reps):
            # The first ReLU must not be in place: the shortcut still reads the block's input.
            layers.append(nn.ReLU(inplace=index > 0))
            layers.append(SeparableConv2d(widths[index], widths[index + 1], 3, 1, 1))
            layers.append(nn.BatchNorm2d(widths[index + 1]))
        if not start_with_relu:
            layers = layers[1:]
        if stride != 1:
            layers.append(nn.MaxPool2d(3, stride, 1))
        self.rep = nn.Sequential(*layers)

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        x = self.rep(inp)
        if self.skip is not None:
            shortcut = self.skipbn(self.skip(inp))
        else:
            shortcut = inp
        x += shortcut
        return x


class SelectAdaptivePool2d(nn.Module):
    """timm's global pooling head for pool_type='avg' with flattening: adaptive average pooling to
    1x1, then Flatten(1)."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.flatten(self.pool(x))


class Xception(nn.Module):
    def __init__(self, num_classes: int = 1000, in_chans: int = 3, drop_rate: float = 0.0) -> None:
        super().__init__()
        self.drop_rate = drop_rate
        self.num_classes = num_classes
        self.conv1 = nn.Conv2d(in_chans, 32, 3, 2, 0, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.act1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(32, 64, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.act2 = nn.ReLU(inplace=True)
        for index, config in enumerate(BLOCKS, start=1):
            self.add_module(f"block{index}", Block(*config))
        self.conv3 = SeparableConv2d(1024, 1536, 3, 1, 1)
        self.bn3 = nn.BatchNorm2d(1536)
        self.act3 = nn.ReLU(inplace=True)
        self.conv4 = SeparableConv2d(1536, NUM_FEATURES, 3, 1, 1)
        self.bn4 = nn.BatchNorm2d(NUM_FEATURES)
        self.act4 = nn.ReLU(inplace=True)
        self.global_pool = SelectAdaptivePool2d()
        self.fc = nn.Linear(NUM_FEATURES, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.act2(self.bn2(self.conv2(x)))
        for index in range(1, len(BLOCKS) + 1):
            x = getattr(self, f"block{index}")(x)
        x = self.act3(self.bn3(self.conv3(x)))
        x = self.act4(self.bn4(self.conv4(x)))
        x = self.global_pool(x)
        if self.drop_rate:
            x = F.dropout(x, self.drop_rate, training=self.training)
        return self.fc(x)
