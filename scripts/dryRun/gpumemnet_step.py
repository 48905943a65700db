"""The training script behind the dry run's evaluation on GPUMemNet's synthetic runs (A100 40 GB):
the network of one published record rebuilt from its file name (input, classes, dropout) and its
layer list (type, activations per sample, parameters), trained as the generator trained it (Adam,
cross-entropy, fp32). `python gpumemnet_step.py RECORD.json` with {"family", "file", "layers"}.
Layer lists that do not determine a network (residual and dense CNNs leave out their additions and
concatenations) raise ValueError before anything is built."""
import ast
import json
import math
import re
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

ACTIVATIONS = {name.lower(): getattr(nn, name) for name in ("Identity", "ReLU", "GELU", "SELU", "ELU", "Tanh", "Sigmoid", "Softplus", "LeakyReLU", "SiLU", "Mish", "Hardswish", "PReLU", "CELU", "Softsign", "Tanhshrink", "ReLU6", "Hardtanh", "LogSigmoid")}


def setting(file, name, cast=int):
    match = re.search(r"(?:^|_)" + name + r":([^_]+)", file)
    if not match:
        raise ValueError(f"no {name} in {file}")
    return cast(match.group(1).replace(".out", ""))


def shapeless_layer(kind, dropout):
    """A layer the generator puts between the sized ones, in either family."""
    if kind == "dropout":
        return nn.Dropout(dropout)
    if kind == "softmax":
        return nn.Softmax(dim=1)
    if kind in ACTIVATIONS:
        return ACTIVATIONS[kind]()
    raise ValueError(f"layer {kind}")


def build(family, file, layers):
    dropout = setting(file, "dropout", float) if "dropout:True" in file else 0.0
    modules = []
    if family == "mlp":
        width = setting(file, "input")
        for kind, activations, params in layers:
            kind = kind.lower()
            if kind == "linear":
                if params != width * activations + activations:
                    raise ValueError(f"linear {width}->{activations} has {params} parameters")
                modules.append(nn.Linear(width, activations))
                width = activations
            elif kind == "batch_normalization":
                modules.append(nn.BatchNorm1d(width))
            else:
                modules.append(shapeless_layer(kind, dropout))
        return nn.Sequential(*modules), (setting(file, "input"),)
    arch = setting(file, "arch", str)
    if arch in ("residual", "dense"):
        raise ValueError(f"{arch} networks: the layer list leaves out their additions and concatenations")
    channels, size = setting(file, "input_channels"), setting(file, "input_size")
    shape = (channels, size, size)
    height = size
    for kind, activations, params in layers:
        kind = kind.lower()
        if kind == "conv2d":
            for k in (3, 1, 5, 7):
                out = params / (channels * k * k + 1)
                if out != int(out) or activations % int(out):
                    continue
                side = math.isqrt(activations // int(out))
                if side * side != activations // int(out) or side > height:
                    continue
                stride = max(1, round(height / side))
                modules.append(nn.Conv2d(channels, int(out), k, stride=stride, padding=k // 2))
                channels, height = int(out), side
                break
            else:
                raise ValueError(f"conv2d with {activations} activations and {params} parameters from {channels} channels")
        elif kind == "batchnorm2d":
            modules.append(nn.BatchNorm2d(channels))
        elif kind == "adaptive_avg_pool2d":
            modules.extend([nn.AdaptiveAvgPool2d(1), nn.Flatten()])
            height = 1
        elif kind == "linear":
            modules.append(nn.Linear(channels, activations))
            channels = activations
        else:
            modules.append(shapeless_layer(kind, dropout))
    return nn.Sequential(*modules), shape


with open(sys.argv[1]) as handle:
    record = json.load(handle)
layers = ast.literal_eval(record["layers"])
model, sample = build(record["family"], record["file"], layers)
classes = layers[-1][1]
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
data = TensorDataset(torch.randn(16, *sample), torch.randint(0, classes, (16,)))
loader = DataLoader(data, batch_size=setting(record["file"], "batch"), shuffle=True)
for epoch in range(3):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
