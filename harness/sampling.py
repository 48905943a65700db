"""Sampling model configurations from the ranges of a collection config, and building them.

A configuration is a JSON-ready dict: family, variant, architecture parameters, per-sample
inputs, task and training set-up. Each one is turned into the source of a small, runnable
training script (`render_source`), and the model is built by running that source
(`build_model`), so the model the harness measures is exactly the one the script describes and
the TypeScript analyzer can read the same script.

Families and variants:

| family | variants |
| --- | --- |
| mlp | `mlp` (Linear stack), `mlp-residual` (pre-norm residual blocks) |
| cnn | `cnn2d`, `cnn2d-residual` (ResNet-style basic blocks), `cnn1d`, `cnn1d-residual` |
| transformer | `encoder` (nn.TransformerEncoder classifier), `gpt` (decoder-only blocks: causal nn.MultiheadAttention, MLP, residual connections, optionally tied head) |

Value specs in the config (see harness/README.md): a scalar is fixed; a list of two numbers is
an inclusive range (integers when both are integers, sampled log-uniformly for size-like keys);
any other list, or `{choices: [...]}`, is a choice.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

FAMILIES = ("mlp", "cnn", "transformer")
OPTIMIZERS = ("sgd", "sgd-momentum", "adam", "adamw", "rmsprop", "adagrad")
PRECISIONS = ("fp32", "fp16-mixed", "bf16-mixed")
#: Precisions a device trains with. CPU runs (tests of the flow, never training data) use fp32
#: only: fp16 autocast needs CUDA, and CPU bf16 autocast is incomplete in older PyTorch releases.
DEVICE_PRECISIONS = {"cuda": PRECISIONS, "cpu": ("fp32",)}

#: Sampled log-uniformly when given as a [low, high] range.
LOG_SCALE_KEYS = {"width", "channels", "dModel", "seqLen", "vocab", "classes", "batchSize", "length"}

DEFAULTS: Dict[str, Dict[str, Any]] = {
    "training": {
        "batchSize": [8, 512],
        "optimizer": list(OPTIMIZERS[:5]),
        "precision": list(PRECISIONS),
    },
    "mlp": {
        "count": 50,
        "inputShape": [[784], [3072], [1, 28, 28], [3, 32, 32]],
        "classes": [2, 1000],
        "depth": [1, 8],
        "width": [64, 4096],
        "activation": ["ReLU", "GELU", "Tanh", "SiLU"],
        "normalization": ["none", "batchnorm", "layernorm"],
        "dropout": [0.0, 0.5],
        "residual": [False, True],
    },
    "cnn": {
        "count": 50,
        "conv": ["conv2d", "conv1d"],
        "inputShape2d": [[1, 28, 28], [3, 32, 32], [3, 64, 64], [3, 128, 128], [3, 224, 224]],
        "inputShape1d": [[1, 4000], [1, 16000], [12, 1000], [64, 256]],
        "channels": [8, 128],
        "stages": [1, 5],
        "blocksPerStage": [1, 3],
        "kernel": {"choices": [3, 5, 7]},
        "normalization": ["batchnorm", "none"],
        "residual": [False, True],
        "classes": [2, 1000],
    },
    "transformer": {
        "count": 50,
        "style": ["encoder", "gpt"],
        "layers": [1, 12],
        "heads": [2, 4, 8, 16],
        "dModel": [64, 1024],
        "ffMultiplier": [2, 4],
        "seqLen": [32, 1024],
        "vocab": [1000, 50257],
        "dropout": [0.0, 0.2],
        "tiedHead": [False, True],
        "classes": [2, 100],
    },
}


class SamplingError(ValueError):
    """A value spec in the config cannot be sampled (names the key)."""


# --------------------------------------------------------------------------- value specs


def sample_value(spec: Any, rng: random.Random, key: str) -> Any:
    """One value from a spec: scalar (fixed), [low, high] (range), list or {choices} (choice)."""
    if isinstance(spec, dict):
        if set(spec) != {"choices"} or not isinstance(spec["choices"], list) or not spec["choices"]:
            raise SamplingError(f"{key}: a mapping spec must be {{choices: [non-empty list]}}")
        return rng.choice(spec["choices"])
    if isinstance(spec, list):
        if not spec:
            raise SamplingError(f"{key}: empty list")
        if len(spec) == 2 and all(_is_number(v) for v in spec):
            low, high = spec
            if low > high:
                raise SamplingError(f"{key}: range [{low}, {high}] is empty")
            if isinstance(low, int) and isinstance(high, int):
                if key in LOG_SCALE_KEYS and low > 0:
                    value = math.exp(rng.uniform(math.log(low), math.log(high + 1)))
                    return min(high, max(low, int(value)))
                return rng.randint(low, high)
            return round(rng.uniform(float(low), float(high)), 3)
        return rng.choice(spec)
    return spec


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --------------------------------------------------------------------------- configurations


def sample_configs(config: Dict[str, Any], device: str) -> List[Dict[str, Any]]:
    """Every configuration the collection config asks for, in run order (families interleaved).

    Deterministic in (config, device): each family draws from its own generator seeded by the
    config's `seed` and the family name, so a rerun yields the same list and changing one
    family's count does not change the others' configurations."""
    if device not in DEVICE_PRECISIONS:
        raise SamplingError(f"device must be cuda or cpu, not {device!r}")
    seed = config.get("seed", 0)
    families = config.get("families")
    if not isinstance(families, dict) or not families:
        raise SamplingError("families: the config must list at least one of " + ", ".join(FAMILIES))
    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise SamplingError(f"families: unknown {sorted(unknown)}; known: {list(FAMILIES)}")
    training = {**DEFAULTS["training"], **(config.get("training") or {})}
    per_family: List[List[Dict[str, Any]]] = []
    for family in FAMILIES:
        if family not in families:
            continue
        spec = {**DEFAULTS[family], **(families[family] or {})}
        count = spec.get("count", 0)
        if not isinstance(count, int) or count < 0:
            raise SamplingError(f"families.{family}.count must be a whole number")
        rng = random.Random(f"{seed}:{family}")
        sampler = _SAMPLERS[family]
        configs = []
        seen = set()
        attempts = 0
        while len(configs) < count:
            attempts += 1
            if attempts > count * 50 + 100:
                raise SamplingError(f"families.{family}: the ranges allow fewer than {count} distinct configurations")
            arch = sampler(spec, rng)
            setup = _sample_setup(training, rng, device, family)
            item = _finish(family, arch, setup, device)
            if item["id"] in seen:
                continue
            seen.add(item["id"])
            configs.append(item)
        per_family.append(configs)
    ordered: List[Dict[str, Any]] = []
    for index in range(max((len(c) for c in per_family), default=0)):
        for configs in per_family:
            if index < len(configs):
                ordered.append(configs[index])
    return ordered


def _sample_setup(training: Dict[str, Any], rng: random.Random, device: str, family: str) -> Dict[str, Any]:
    batch = sample_value(training["batchSize"], rng, "batchSize")
    optimizer = sample_value(training["optimizer"], rng, "optimizer")
    if optimizer not in OPTIMIZERS:
        raise SamplingError(f"training.optimizer: unknown {optimizer!r}; known: {list(OPTIMIZERS)}")
    allowed = [p for p in _as_choices(training["precision"]) if p in DEVICE_PRECISIONS[device]]
    for precision in _as_choices(training["precision"]):
        if precision not in PRECISIONS:
            raise SamplingError(f"training.precision: unknown {precision!r}; known: {list(PRECISIONS)}")
    if not allowed:
        raise SamplingError(f"training.precision: none of {training['precision']} runs on {device}")
    precision = rng.choice(allowed)
    if not isinstance(batch, int) or batch < 1:
        raise SamplingError(f"training.batchSize: must be a whole number >= 1, got {batch!r}")
    return {"batchSize": batch, "optimizer": optimizer, "precision": precision, "family": family}


def _as_choices(spec: Any) -> List[Any]:
    if isinstance(spec, dict):
        return list(spec.get("choices", []))
    if isinstance(spec, list):
        return list(spec)
    return [spec]


def _finish(family: str, arch: Tuple[str, Dict[str, Any], List[Dict[str, Any]], Dict[str, Any]], setup: Dict[str, Any], device: str) -> Dict[str, Any]:
    variant, params, inputs, task = arch
    body = {"family": family, "variant": variant, "params": params, "inputs": inputs, "task": task, "setup": setup, "device": device}
    digest = hashlib.sha1(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()[:12]
    return {"id": f"{family}-{digest}", **body}


def _pick(spec: Dict[str, Any], key: str, rng: random.Random) -> Any:
    return sample_value(spec[key], rng, key)


def _sample_mlp(spec: Dict[str, Any], rng: random.Random):
    shape = list(_pick(spec, "inputShape", rng))
    residual = bool(_pick(spec, "residual", rng))
    params = {
        "depth": int(_pick(spec, "depth", rng)),
        "width": int(_pick(spec, "width", rng)),
        "activation": _pick(spec, "activation", rng),
        "normalization": _pick(spec, "normalization", rng),
        "dropout": float(_pick(spec, "dropout", rng)),
        "residual": residual,
        "classes": int(_pick(spec, "classes", rng)),
    }
    _check_choice("activation", params["activation"], ACTIVATIONS)
    _check_choice("normalization", params["normalization"], ("none", "batchnorm", "layernorm"))
    _check_positive(params, ("depth", "width", "classes"))
    if residual and params["normalization"] == "batchnorm":
        params["normalization"] = "layernorm"  # the residual block is pre-norm with LayerNorm
    return ("mlp-residual" if residual else "mlp"), params, [{"shape": shape, "dtype": "float"}], {"kind": "classification", "classes": params["classes"]}


def _sample_cnn(spec: Dict[str, Any], rng: random.Random):
    conv = _pick(spec, "conv", rng)
    _check_choice("conv", conv, ("conv1d", "conv2d"))
    shape = list(_pick(spec, "inputShape2d" if conv == "conv2d" else "inputShape1d", rng))
    expected_rank = 3 if conv == "conv2d" else 2
    if len(shape) != expected_rank:
        raise SamplingError(f"inputShape{'2d' if conv == 'conv2d' else '1d'}: {shape} is not [C, {'H, W' if conv == 'conv2d' else 'L'}]")
    residual = bool(_pick(spec, "residual", rng))
    # Every stage but the last halves each spatial size, which must stay >= 2.
    smallest = min(shape[1:])
    max_stages = max(1, int(math.log2(smallest)))
    params = {
        "channels": int(_pick(spec, "channels", rng)),
        "stages": min(int(_pick(spec, "stages", rng)), max_stages),
        "blocksPerStage": int(_pick(spec, "blocksPerStage", rng)),
        "kernel": int(_pick(spec, "kernel", rng)),
        "normalization": _pick(spec, "normalization", rng),
        "residual": residual,
        "classes": int(_pick(spec, "classes", rng)),
    }
    _check_choice("normalization", params["normalization"], ("none", "batchnorm"))
    _check_positive(params, ("channels", "stages", "blocksPerStage", "kernel", "classes"))
    if params["kernel"] % 2 == 0:
        params["kernel"] += 1  # odd kernels keep the size with padding k // 2
    variant = conv.replace("conv", "cnn") + ("-residual" if residual else "")
    return variant, params, [{"shape": shape, "dtype": "float"}], {"kind": "classification", "classes": params["classes"]}


def _sample_transformer(spec: Dict[str, Any], rng: random.Random):
    style = _pick(spec, "style", rng)
    _check_choice("style", style, ("encoder", "gpt"))
    heads = int(_pick(spec, "heads", rng))
    d_model = int(_pick(spec, "dModel", rng))
    d_model = max(heads, int(math.ceil(d_model / heads)) * heads)  # heads must divide dModel
    params = {
        "style": style,
        "layers": int(_pick(spec, "layers", rng)),
        "heads": heads,
        "dModel": d_model,
        "ffDim": d_model * int(_pick(spec, "ffMultiplier", rng)),
        "seqLen": int(_pick(spec, "seqLen", rng)),
        "vocab": int(_pick(spec, "vocab", rng)),
        "dropout": float(_pick(spec, "dropout", rng)),
    }
    _check_positive(params, ("layers", "heads", "dModel", "ffDim", "seqLen", "vocab"))
    if style == "gpt":
        params["tiedHead"] = bool(_pick(spec, "tiedHead", rng))
        task = {"kind": "language-model", "vocab": params["vocab"]}
    else:
        params["classes"] = int(_pick(spec, "classes", rng))
        task = {"kind": "classification", "classes": params["classes"]}
    inputs = [{"shape": [params["seqLen"]], "dtype": "long", "high": params["vocab"]}]
    return style, params, inputs, task


def _check_choice(key: str, value: Any, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise SamplingError(f"{key}: {value!r} is not one of {list(allowed)}")


def _check_positive(params: Dict[str, Any], keys: Sequence[str]) -> None:
    for key in keys:
        if params[key] < 1:
            raise SamplingError(f"{key}: must be >= 1, got {params[key]}")


_SAMPLERS: Dict[str, Callable[[Dict[str, Any], random.Random], Any]] = {
    "mlp": _sample_mlp,
    "cnn": _sample_cnn,
    "transformer": _sample_transformer,
}

ACTIVATIONS = ("ReLU", "GELU", "Tanh", "SiLU")


# --------------------------------------------------------------------------- source


def render_source(config: Dict[str, Any]) -> str:
    """A runnable training script for the configuration: the model as `model`, the set-up as
    constants and a short training loop under `if __name__ == "__main__":`."""
    variant = config["variant"]
    if variant.startswith("mlp"):
        body = _mlp_source(config)
    elif variant.startswith("cnn"):
        body = _cnn_source(config)
    elif variant == "encoder":
        body = _encoder_source(config)
    elif variant == "gpt":
        body = _gpt_source(config)
    else:
        raise SamplingError(f"unknown variant {variant!r}")
    header = (
        f'"""Sampled by `python3 -m harness collect`: configuration {config["id"]} ({variant}).\n\n'
        f"Set-up: {json.dumps(config['setup'], sort_keys=True)}\n\"\"\"\n"
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
        f"BATCH_SIZE = {config['setup']['batchSize']}\n"
    )
    return header + body + _main_source(config)


def _mlp_source(config: Dict[str, Any]) -> str:
    p = config["params"]
    in_features = math.prod(config["inputs"][0]["shape"])
    act = f"nn.{p['activation']}()"
    lines: List[str] = []
    classes = ""
    if p["residual"]:
        norm = "nn.LayerNorm(width)" if p["normalization"] != "none" else None
        classes = (
            "\n\nclass ResidualBlock(nn.Module):\n"
            "    def __init__(self, width):\n"
            "        super().__init__()\n"
            + (f"        self.norm = {norm}\n" if norm else "")
            + "        self.fc = nn.Linear(width, width)\n"
            f"        self.act = {act}\n"
            + (f"        self.drop = nn.Dropout({p['dropout']})\n" if p["dropout"] > 0 else "")
            + "\n    def forward(self, x):\n"
            + ("        h = self.fc(self.norm(x))\n" if norm else "        h = self.fc(x)\n")
            + ("        return x + self.drop(self.act(h))\n" if p["dropout"] > 0 else "        return x + self.act(h)\n")
        )
        if len(config["inputs"][0]["shape"]) > 1:
            lines.append("nn.Flatten()")
        lines += [f"nn.Linear({in_features}, {p['width']})", act]
        lines += [f"ResidualBlock({p['width']})" for _ in range(p["depth"])]
    else:
        if len(config["inputs"][0]["shape"]) > 1:
            lines.append("nn.Flatten()")
        features = in_features
        for _ in range(p["depth"]):
            lines.append(f"nn.Linear({features}, {p['width']})")
            if p["normalization"] == "batchnorm":
                lines.append(f"nn.BatchNorm1d({p['width']})")
            elif p["normalization"] == "layernorm":
                lines.append(f"nn.LayerNorm({p['width']})")
            lines.append(act)
            if p["dropout"] > 0:
                lines.append(f"nn.Dropout({p['dropout']})")
            features = p["width"]
    lines.append(f"nn.Linear({p['width']}, {p['classes']})")
    return classes + "\n\nmodel = nn.Sequential(\n" + "".join(f"    {line},\n" for line in lines) + ")\n"


def _cnn_source(config: Dict[str, Any]) -> str:
    p = config["params"]
    two_d = config["variant"].startswith("cnn2d")
    dim = "2d" if two_d else "1d"
    k, pad = p["kernel"], p["kernel"] // 2
    norm = p["normalization"] == "batchnorm"
    classes = ""
    if p["residual"]:
        classes = (
            "\n\nclass ResidualBlock(nn.Module):\n"
            "    def __init__(self, channels):\n"
            "        super().__init__()\n"
            f"        self.conv1 = nn.Conv{dim}(channels, channels, {k}, padding={pad}, bias={not norm})\n"
            + (f"        self.bn1 = nn.BatchNorm{dim}(channels)\n" if norm else "")
            + f"        self.conv2 = nn.Conv{dim}(channels, channels, {k}, padding={pad}, bias={not norm})\n"
            + (f"        self.bn2 = nn.BatchNorm{dim}(channels)\n" if norm else "")
            + "        self.relu = nn.ReLU()\n"
            "\n    def forward(self, x):\n"
            + ("        out = self.relu(self.bn1(self.conv1(x)))\n        out = self.bn2(self.conv2(out))\n" if norm
               else "        out = self.relu(self.conv1(x))\n        out = self.conv2(out)\n")
            + "        return self.relu(out + x)\n"
        )
    lines: List[str] = []
    in_channels = config["inputs"][0]["shape"][0]
    channels = p["channels"]
    for stage in range(p["stages"]):
        out_channels = min(p["channels"] * 2 ** stage, 1024)
        lines.append(f"nn.Conv{dim}({in_channels}, {out_channels}, {k}, padding={pad}, bias={not norm})")
        if norm:
            lines.append(f"nn.BatchNorm{dim}({out_channels})")
        lines.append("nn.ReLU()")
        blocks = p["blocksPerStage"] - 1 if not p["residual"] else p["blocksPerStage"]
        for _ in range(blocks):
            if p["residual"]:
                lines.append(f"ResidualBlock({out_channels})")
            else:
                lines.append(f"nn.Conv{dim}({out_channels}, {out_channels}, {k}, padding={pad}, bias={not norm})")
                if norm:
                    lines.append(f"nn.BatchNorm{dim}({out_channels})")
                lines.append("nn.ReLU()")
        if stage < p["stages"] - 1:
            lines.append(f"nn.MaxPool{dim}(2)")
        in_channels = channels = out_channels
    lines += [f"nn.AdaptiveAvgPool{dim}(1)", "nn.Flatten()", f"nn.Linear({channels}, {p['classes']})"]
    return classes + "\n\nmodel = nn.Sequential(\n" + "".join(f"    {line},\n" for line in lines) + ")\n"


def _encoder_source(config: Dict[str, Any]) -> str:
    p = config["params"]
    return (
        f"VOCAB_SIZE = {p['vocab']}\nSEQ_LEN = {p['seqLen']}\n"
        "\n\nclass EncoderClassifier(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.embed = nn.Embedding(VOCAB_SIZE, {p['dModel']})\n"
        f"        self.pos = nn.Embedding(SEQ_LEN, {p['dModel']})\n"
        f"        layer = nn.TransformerEncoderLayer({p['dModel']}, {p['heads']}, {p['ffDim']}, {p['dropout']}, batch_first=True)\n"
        f"        self.encoder = nn.TransformerEncoder(layer, {p['layers']})\n"
        f"        self.head = nn.Linear({p['dModel']}, {p['classes']})\n"
        "\n    def forward(self, tokens):\n"
        "        positions = torch.arange(tokens.size(1), device=tokens.device)\n"
        "        x = self.embed(tokens) + self.pos(positions)\n"
        "        x = self.encoder(x)\n"
        "        return self.head(x.mean(dim=1))\n"
        "\n\nmodel = EncoderClassifier()\n"
    )


def _gpt_source(config: Dict[str, Any]) -> str:
    p = config["params"]
    drop = p["dropout"]
    return (
        f"VOCAB_SIZE = {p['vocab']}\nSEQ_LEN = {p['seqLen']}\n"
        "\n\nclass Block(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.ln1 = nn.LayerNorm({p['dModel']})\n"
        f"        self.attn = nn.MultiheadAttention({p['dModel']}, {p['heads']}, dropout={drop}, batch_first=True)\n"
        f"        self.ln2 = nn.LayerNorm({p['dModel']})\n"
        "        self.mlp = nn.Sequential(\n"
        f"            nn.Linear({p['dModel']}, {p['ffDim']}),\n"
        "            nn.GELU(),\n"
        f"            nn.Linear({p['ffDim']}, {p['dModel']}),\n"
        f"            nn.Dropout({drop}),\n"
        "        )\n"
        '        self.register_buffer("mask", torch.triu(torch.ones(SEQ_LEN, SEQ_LEN, dtype=torch.bool), diagonal=1))\n'
        "\n    def forward(self, x):\n"
        "        h = self.ln1(x)\n"
        "        attended, _ = self.attn(h, h, h, attn_mask=self.mask, need_weights=False)\n"
        "        x = x + attended\n"
        "        x = x + self.mlp(self.ln2(x))\n"
        "        return x\n"
        "\n\nclass GPT(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.tok = nn.Embedding(VOCAB_SIZE, {p['dModel']})\n"
        f"        self.pos = nn.Embedding(SEQ_LEN, {p['dModel']})\n"
        f"        self.drop = nn.Dropout({drop})\n"
        f"        self.blocks = nn.ModuleList([Block() for _ in range({p['layers']})])\n"
        f"        self.ln_f = nn.LayerNorm({p['dModel']})\n"
        f"        self.head = nn.Linear({p['dModel']}, VOCAB_SIZE, bias=False)\n"
        + ("        self.head.weight = self.tok.weight\n" if p["tiedHead"] else "")
        + "\n    def forward(self, idx):\n"
        "        positions = torch.arange(idx.size(1), device=idx.device)\n"
        "        x = self.drop(self.tok(idx) + self.pos(positions))\n"
        "        for block in self.blocks:\n"
        "            x = block(x)\n"
        "        return self.head(self.ln_f(x))\n"
        "\n\nmodel = GPT()\n"
    )


_OPTIMIZER_SOURCE = {
    "sgd": "torch.optim.SGD(model.parameters(), lr=0.01)",
    "sgd-momentum": "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)",
    "adam": "torch.optim.Adam(model.parameters(), lr=0.001)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=0.001)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=0.001)",
    "adagrad": "torch.optim.Adagrad(model.parameters(), lr=0.01)",
}


def _main_source(config: Dict[str, Any]) -> str:
    setup = config["setup"]
    spec = config["inputs"][0]
    shape = ", ".join(str(d) for d in spec["shape"])
    if spec["dtype"] == "long":
        x = f"torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, {shape}), device=device)"
    else:
        x = f"torch.randn(BATCH_SIZE, {shape}, device=device)"
    task = config["task"]
    if task["kind"] == "language-model":
        y = f"torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, {shape}), device=device)"
        loss = "F.cross_entropy(output.view(-1, output.size(-1)), y.view(-1))"
    else:
        y = f"torch.randint(0, {task['classes']}, (BATCH_SIZE,), device=device)"
        loss = "F.cross_entropy(output, y)"
    precision = setup["precision"]
    lines = [
        "",
        "",
        'if __name__ == "__main__":',
        '    device = "cuda" if torch.cuda.is_available() else "cpu"',
        "    model = model.to(device)",
        f"    optimizer = {_OPTIMIZER_SOURCE[setup['optimizer']]}",
    ]
    if precision == "fp16-mixed":
        lines.append("    scaler = torch.cuda.amp.GradScaler()")
    lines += [f"    x = {x}", f"    y = {y}", "    for step in range(100):"]
    if precision == "fp32":
        lines += ["        output = model(x)", f"        loss = {loss}"]
    else:
        dtype = "torch.float16" if precision == "fp16-mixed" else "torch.bfloat16"
        lines += [
            f"        with torch.autocast(device_type=device, dtype={dtype}):",
            "            output = model(x)",
            f"            loss = {loss}",
        ]
    lines.append("        optimizer.zero_grad(set_to_none=True)")
    if precision == "fp16-mixed":
        lines += ["        scaler.scale(loss).backward()", "        scaler.step(optimizer)", "        scaler.update()"]
    else:
        lines += ["        loss.backward()", "        optimizer.step()"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- building


def build_model(config: Dict[str, Any], source: Optional[str] = None):
    """Runs the configuration's source (not as __main__) and returns its `model`."""
    source = source if source is not None else render_source(config)
    namespace: Dict[str, Any] = {"__name__": f"sampled_{config['id'].replace('-', '_')}"}
    exec(compile(source, f"<{config['id']}.py>", "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace["model"]


def make_optimizer(name: str, parameters):
    """The optimizer the set-up names, with the same arguments as the rendered script."""
    import torch

    if name == "sgd":
        return torch.optim.SGD(parameters, lr=0.01)
    if name == "sgd-momentum":
        return torch.optim.SGD(parameters, lr=0.01, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(parameters, lr=0.001)
    if name == "adamw":
        return torch.optim.AdamW(parameters, lr=0.001)
    if name == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=0.001)
    if name == "adagrad":
        return torch.optim.Adagrad(parameters, lr=0.01)
    raise SamplingError(f"unknown optimizer {name!r}")


def validate_config(config: Dict[str, Any]) -> List[str]:
    """Structural problems of a configuration (empty when valid): what `sample_configs` must never
    produce. Building and running the model is the stronger check (harness/tests)."""
    problems: List[str] = []
    p, variant = config["params"], config["variant"]
    shape = config["inputs"][0]["shape"]
    if config["setup"]["precision"] not in DEVICE_PRECISIONS[config["device"]]:
        problems.append(f"precision {config['setup']['precision']} on {config['device']}")
    if config["setup"]["batchSize"] < 1:
        problems.append("batch size < 1")
    if variant.startswith("cnn"):
        pools = p["stages"] - 1
        if min(shape[1:]) // (2 ** pools) < 1:
            problems.append(f"{pools} poolings shrink {shape} below 1")
        if p["kernel"] % 2 != 1:
            problems.append("even kernel")
    if variant in ("encoder", "gpt"):
        if p["dModel"] % p["heads"]:
            problems.append(f"dModel {p['dModel']} not divisible by heads {p['heads']}")
        if config["inputs"][0]["high"] != p["vocab"]:
            problems.append("token range differs from the vocabulary")
    return problems
