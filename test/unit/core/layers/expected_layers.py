"""Prints the parameter counts and output shapes real PyTorch gives for the layer specs' cases.

    /usr/bin/python3 test/unit/core/layers/expected_layers.py > test/unit/core/layers/expected-layers.json

Each case builds `getattr(torch.nn, type)(*args, **kwargs)`, runs it on the inputs with two batch
sizes and writes `params` (sum(p.numel() for p in m.parameters())) and `output`: the returned
shapes, nested like the returned tuples, None as null, a dimension that scales with the batch as
{"batch": k}. Inputs use "B" for the batch dimension and {"batch": k} for k times it; an input
given as {"shape": ..., "long": n} holds indices below n, {"shape": ..., "offsets": k} holds
EmbeddingBag offsets 0, k, 2k, ... A nested layer argument is {"layer": {"type", "args", "kwargs"}}, as the
analyzer's LayerValue. Cases marked `error` must make PyTorch raise.

Features newer than the installed torch (LayerNorm(bias=False), RMSNorm, ZeroPad1d, ...) are
measured on an equivalent module given by `emulate` (as are modules that need a GPU), with `drop_bias` removing the bias
parameters that `bias=False` would not create. Output is deterministic.
"""
import json
import sys

import torch
import torch.nn as nn

BATCH_SIZES = (3, 5)
CASES = []


def L(type_, *args, **kwargs):
    """A nested layer construction, as the analyzer passes it."""
    return {"layer": {"type": type_, "args": list(args), "kwargs": kwargs}}


def case(type_, *args, inputs, call=None, error=False, message=None, emulate=None, **kwargs):
    entry = {"type": type_, "args": list(args), "kwargs": kwargs, "inputs": inputs}
    if call:
        entry["call"] = call
    if error:
        entry["error"] = True
    if message:
        entry["message"] = message
    if emulate:
        entry["emulate"] = emulate
    CASES.append(entry)


def emulated(type_, *args, drop_bias=False, always=False, **kwargs):
    return {"type": type_, "args": list(args), "kwargs": kwargs, "drop_bias": drop_bias, "always": always}


B = "B"


def nB(k):
    return {"batch": k}


def long(shape, high):
    return {"shape": shape, "long": high}


# Linear layers
case("Linear", 784, 512, inputs=[[B, 784]])
case("Linear", 20, 5, bias=False, inputs=[[B, 7, 20]])
case("Linear", 10, 3, inputs=[[10]])
case("Linear", 10, 3, False, inputs=[[nB(35), 10]])
case("Linear", 20, 5, inputs=[[B, 30]], error=True, message="expects 20 input features but receives 30")
case("LazyLinear", 16, inputs=[[B, 12]])
case("LazyLinear", 16, bias=False, inputs=[[B, 4, 12]])
case("Bilinear", 10, 20, 7, inputs=[[B, 10], [B, 20]])
case("Bilinear", 4, 5, 6, bias=False, inputs=[[B, 3, 4], [B, 3, 5]])
case("Bilinear", 10, 20, 7, inputs=[[B, 10], [B, 21]], error=True, message="expects 20 features in its second input")
case("Identity", 54, unused="x", inputs=[[B, 3, 4]])

# Convolutions
case("Conv1d", 16, 33, 3, stride=2, inputs=[[B, 16, 50]])
case("Conv1d", 4, 8, 5, padding="same", dilation=2, inputs=[[B, 4, 30]])
case("Conv1d", 4, 8, 3, inputs=[[4, 10]])
case("Conv2d", 3, 32, 3, padding=1, inputs=[[B, 3, 32, 32]])
case("Conv2d", 16, 33, [3, 5], stride=[2, 1], padding=[4, 2], dilation=[3, 1], inputs=[[B, 16, 50, 100]])
case("Conv2d", 32, 64, 3, groups=4, bias=False, inputs=[[B, 32, 28, 28]])
case("Conv2d", 8, 8, 3, groups=8, padding="valid", inputs=[[B, 8, 9, 9]])
case("Conv2d", 3, 6, 4, stride=3, padding=2, padding_mode="reflect", inputs=[[B, 3, 17, 17]])
case("Conv2d", 3, 6, 3, 2, 1, 1, 3, False, inputs=[[B, 3, 15, 15]])
case("Conv2d", 3, 6, 3, padding="same", padding_mode="circular", inputs=[[B, 3, 10, 12]])
case("Conv3d", 4, 8, [3, 3, 3], stride=2, padding=1, inputs=[[B, 4, 8, 16, 16]])
case("Conv3d", 2, 4, 3, padding="same", inputs=[[2, 5, 6, 7]])
case("Conv2d", 3, 32, 3, inputs=[[B, 784]], error=True, message="expects a 3-D \\(C, H, W\\) or 4-D \\(N, C, H, W\\) input")
case("Conv2d", 3, 32, 3, inputs=[[B, 4, 32, 32]], error=True, message="expects 3 input channels but receives 4")
case("Conv2d", 3, 32, 5, inputs=[[B, 3, 3, 3]], error=True, message="too small")
case("Conv2d", 3, 32, 3, stride=2, padding="same", inputs=[[B, 3, 8, 8]], error=True, message="strided")
case("Conv2d", 3, 10, 3, groups=2, inputs=[[B, 3, 8, 8]], error=True, message="divisible by groups")
case("ConvTranspose1d", 16, 33, 3, stride=2, inputs=[[B, 16, 50]])
case("ConvTranspose2d", 16, 33, [3, 5], stride=[2, 1], padding=[4, 2], inputs=[[B, 16, 50, 100]])
case("ConvTranspose2d", 16, 16, 3, stride=2, padding=1, output_padding=1, inputs=[[B, 16, 12, 12]])
case("ConvTranspose2d", 8, 16, 3, stride=2, groups=4, bias=False, dilation=2, inputs=[[B, 8, 7, 7]])
case("ConvTranspose2d", 16, 16, 3, stride=2, padding=1, inputs=[[B, 16, 12, 12]], call={"output_size": [24, 24]})
case("ConvTranspose2d", 4, 6, 3, 2, 1, 1, 2, False, 1, inputs=[[4, 5, 5]])
case("ConvTranspose3d", 4, 2, 3, stride=2, output_padding=1, inputs=[[B, 4, 3, 5, 5]])
case("ConvTranspose2d", 4, 6, 3, inputs=[[B, 5, 5, 5]], error=True, message="expects 4 input channels")
case("LazyConv2d", 16, 3, padding=1, inputs=[[B, 3, 32, 32]])
case("LazyConv1d", 8, 3, groups=2, inputs=[[B, 4, 20]])
case("LazyConv3d", 4, 2, inputs=[[B, 2, 4, 4, 4]])
case("LazyConvTranspose2d", 8, 2, stride=2, inputs=[[B, 3, 5, 5]])
case("LazyConvTranspose1d", 6, 3, 2, 1, 1, inputs=[[B, 2, 9]])
case("LazyConvTranspose3d", 2, 3, bias=False, inputs=[[B, 3, 2, 2, 2]])

# Normalization
case("BatchNorm1d", 64, inputs=[[B, 64]])
case("BatchNorm1d", 64, inputs=[[B, 64, 10]])
case("BatchNorm1d", 64, affine=False, inputs=[[B, 64]])
case("BatchNorm2d", 32, inputs=[[B, 32, 8, 8]])
case("BatchNorm2d", 32, 1e-3, 0.1, False, inputs=[[B, 32, 8, 8]])
case("BatchNorm2d", 32, track_running_stats=False, inputs=[[B, 32, 8, 8]])
case("BatchNorm3d", 4, inputs=[[B, 4, 2, 3, 3]])
case("BatchNorm2d", 32, inputs=[[B, 32, 8]], error=True, message="expects a 4-D")
case("BatchNorm2d", 32, inputs=[[B, 16, 8, 8]], error=True, message="expects 32 channels but receives 16")
case("LazyBatchNorm2d", inputs=[[B, 12, 4, 4]])
case("LazyBatchNorm1d", affine=False, inputs=[[B, 7]])
case("LazyBatchNorm3d", inputs=[[B, 2, 2, 2, 2]])
# SyncBatchNorm only runs on a GPU; it is BatchNorm otherwise.
case("SyncBatchNorm", 16, inputs=[[B, 16, 4, 4]], emulate=emulated("BatchNorm2d", 16, always=True))
case("SyncBatchNorm", 8, affine=False, inputs=[[B, 8, 5]], emulate=emulated("BatchNorm1d", 8, affine=False, always=True))
case("InstanceNorm1d", 10, inputs=[[B, 10, 20]])
case("InstanceNorm1d", 10, affine=True, inputs=[[10, 20]])
case("InstanceNorm2d", 3, affine=True, inputs=[[B, 3, 8, 8]])
case("InstanceNorm2d", 3, inputs=[[B, 5, 8, 8]])
case("InstanceNorm3d", 2, 1e-5, 0.1, True, inputs=[[B, 2, 4, 4, 4]])
case("InstanceNorm2d", 3, affine=True, inputs=[[B, 4, 8, 8]], error=True, message="expects 3 channels but receives 4")
case("LazyInstanceNorm2d", inputs=[[B, 3, 8, 8]])
case("LazyInstanceNorm1d", affine=False, track_running_stats=False, inputs=[[6, 9]])
case("LazyInstanceNorm3d", inputs=[[B, 2, 3, 3, 3]])
case("LayerNorm", 512, inputs=[[B, 10, 512]])
case("LayerNorm", [10, 512], elementwise_affine=False, inputs=[[B, 10, 512]])
case("LayerNorm", [4, 5], inputs=[[B, 3, 4, 5]])
case("LayerNorm", 64, bias=False, inputs=[[B, 64]], emulate=emulated("LayerNorm", 64, drop_bias=True))
case("LayerNorm", 512, inputs=[[B, 10, 256]], error=True, message="normalizes over \\(512\\)")
case("RMSNorm", [8], inputs=[[B, 3, 8]], emulate=emulated("LayerNorm", [8], drop_bias=True))
case("RMSNorm", 8, elementwise_affine=False, inputs=[[B, 8]], emulate=emulated("LayerNorm", 8, elementwise_affine=False))
case("GroupNorm", 4, 32, inputs=[[B, 32, 8, 8]])
case("GroupNorm", 2, 6, affine=False, inputs=[[B, 6, 10]])
case("GroupNorm", 3, 6, inputs=[[B, 6]])
case("GroupNorm", 2, 4, affine=False, inputs=[[B, 6, 8]])
case("GroupNorm", 4, 30, inputs=[[B, 30, 8]], error=True, message="divisible by num_groups")
case("GroupNorm", 4, 32, inputs=[[B, 16, 8, 8]], error=True, message="expects 32 channels")
case("LocalResponseNorm", 2, inputs=[[B, 16, 8, 8]])
case("LocalResponseNorm", 3, 1e-4, 0.75, 2.0, inputs=[[B, 4, 10]])
case("LocalResponseNorm", 2, inputs=[[B, 16]], error=True, message="at least 3 dimensions")
case("CrossMapLRN2d", 3, inputs=[[B, 6, 5, 5]])

# Embeddings
case("Embedding", 1000, 64, inputs=[long([B, 35], 1000)])
case("Embedding", 10, 3, padding_idx=0, inputs=[long([B], 10)])
case("Embedding", 50, 8, inputs=[long([B, 4, 6], 50)])
case("Embedding", 100, 16, max_norm=1.0, inputs=[long([7], 100)])
case("EmbeddingBag", 100, 16, inputs=[long([B, 5], 100)])
case("EmbeddingBag", 100, 16, mode="sum", inputs=[long([nB(4)], 100), {"shape": [B], "offsets": 4}])
case("EmbeddingBag", 100, 8, mode="max", include_last_offset=True, inputs=[long([20], 100), {"shape": [5], "offsets": 5}])
case("EmbeddingBag", 100, 16, inputs=[long([20], 100)], error=True, message="needs offsets")

# Dropout
case("Dropout", inputs=[[B, 10]])
case("Dropout", 0.2, True, inputs=[[B, 3, 10]])
case("Dropout1d", inputs=[[B, 4, 10]])
case("Dropout1d", 0.1, inputs=[[4, 10]])
case("Dropout1d", inputs=[[B, 4, 8, 8]], error=True, message="expects a 2-D")
case("Dropout2d", 0.3, inputs=[[B, 4, 8, 8]])
case("Dropout3d", inputs=[[B, 2, 3, 4, 4]])
case("AlphaDropout", 0.1, inputs=[[B, 10]])
case("FeatureAlphaDropout", 0.2, inputs=[[B, 4, 8, 8]])

# Activations
X = [B, 4, 6]
for type_ in ["ReLU", "ReLU6", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
              "Softplus", "Softsign", "Softshrink", "Hardshrink", "Tanhshrink", "Hardtanh", "Hardsigmoid",
              "Hardswish", "LogSigmoid", "LeakyReLU", "PReLU", "GLU", "Softmax", "Softmin", "LogSoftmax"]:
    case(type_, inputs=[X])
case("ReLU", inplace=True, inputs=[[B, 10]])
case("LeakyReLU", 0.2, inputs=[[B, 10]])
case("RReLU", 0.1, 0.3, inputs=[[B, 10]])
case("ELU", alpha=0.5, inputs=[[5]])
case("GELU", approximate="tanh", inputs=[[B, 10]])
case("Softplus", beta=2, threshold=10, inputs=[[B, 10]])
case("Softshrink", 0.3, inputs=[[B, 10]])
case("Threshold", 0.1, 20, inputs=[X])
case("Hardtanh", -2, 2, inputs=[X])
case("PReLU", 4, inputs=[X])
case("PReLU", 5, init=0.1, inputs=[[3, 5]])
case("PReLU", 6, inputs=[[6]], error=True, message="input \\(6\\) has 1 channel")
case("PReLU", 5, inputs=[X], error=True, message="has 5 parameters but the input")
case("Softmax", dim=-1, inputs=[X])
case("Softmin", dim=1, inputs=[X])
case("LogSoftmax", 2, inputs=[X])
case("Softmax", dim=3, inputs=[X], error=True, message="out of range")
case("Softmax2d", inputs=[[B, 3, 4, 4]])
case("Softmax2d", inputs=[[3, 4, 4]])
case("Softmax2d", inputs=[[B, 10]], error=True, message="3-D")
case("GLU", dim=1, inputs=[X])
case("GLU", 0, inputs=[[nB(2), 3]])
case("GLU", inputs=[[B, 5]], error=True, message="not divisible by 2")

# Pooling
case("MaxPool2d", 2, inputs=[[B, 32, 32, 32]])
case("MaxPool2d", 3, stride=2, padding=1, inputs=[[B, 64, 112, 112]])
case("MaxPool2d", [3, 2], stride=[2, 1], ceil_mode=True, inputs=[[B, 4, 10, 7]])
case("MaxPool2d", 2, return_indices=True, inputs=[[B, 4, 8, 8]])
case("MaxPool2d", 3, 2, 1, 1, False, True, inputs=[[B, 4, 10, 10]])
case("MaxPool1d", 3, stride=2, dilation=2, inputs=[[B, 4, 20]])
case("MaxPool1d", 2, inputs=[[4, 9]])
case("MaxPool3d", 2, ceil_mode=True, inputs=[[B, 2, 5, 5, 5]])
case("MaxPool2d", 2, inputs=[[B, 10]], error=True, message="expects a 3-D")
case("MaxPool2d", 2, padding=2, inputs=[[B, 1, 8, 8]], error=True, message="half of kernel_size")
case("MaxPool2d", 5, inputs=[[B, 1, 3, 3]], error=True, message="too small")
case("AvgPool2d", 2, inputs=[[B, 16, 9, 9]])
case("AvgPool2d", 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, inputs=[[B, 3, 10, 10]])
case("AvgPool2d", 2, divisor_override=3, inputs=[[3, 6, 7]])
case("AvgPool1d", 4, 3, 2, True, inputs=[[B, 2, 17]])
case("AvgPool1d", 2, 2, 1, ceil_mode=True, inputs=[[B, 1, 4]])
case("AvgPool3d", [1, 2, 2], inputs=[[B, 2, 4, 8, 8]])
case("AdaptiveAvgPool2d", [7, 7], inputs=[[B, 512, 14, 14]])
case("AdaptiveAvgPool2d", 1, inputs=[[B, 512, 7, 7]])
case("AdaptiveAvgPool2d", [None, 7], inputs=[[B, 8, 10, 20]])
case("AdaptiveAvgPool1d", 3, inputs=[[4, 10]])
case("AdaptiveAvgPool3d", [1, 2, 3], inputs=[[B, 2, 4, 5, 6]])
case("AdaptiveMaxPool1d", 5, return_indices=True, inputs=[[B, 4, 16]])
case("AdaptiveMaxPool2d", [3, 3], inputs=[[B, 4, 16, 9]])
case("AdaptiveMaxPool3d", [2, None, 3], inputs=[[B, 1, 4, 5, 6]])
case("LPPool1d", 2, 3, stride=2, inputs=[[B, 4, 11]])
case("LPPool2d", 1.5, [3, 2], ceil_mode=True, inputs=[[B, 2, 9, 9]])
case("LPPool3d", 2, 2, inputs=[[B, 2, 4, 4, 4]], emulate=emulated("AvgPool3d", 2))
case("FractionalMaxPool2d", 3, output_size=[13, 12], inputs=[[B, 4, 25, 25]])
case("FractionalMaxPool2d", 2, output_ratio=[0.5, 0.5], return_indices=True, inputs=[[B, 4, 15, 15]])
case("FractionalMaxPool3d", 2, output_ratio=0.5, inputs=[[B, 2, 8, 8, 8]])
case("FractionalMaxPool2d", 2, inputs=[[B, 4, 15, 15]], error=True, message="exactly one")
case("MaxUnpool2d", 2, stride=2, inputs=[[B, 4, 4, 4], long([B, 4, 4, 4], 64)])
case("MaxUnpool1d", 3, stride=2, padding=1, inputs=[[B, 2, 5], long([B, 2, 5], 9)])
case("MaxUnpool2d", 2, inputs=[[B, 2, 4, 4], long([B, 2, 4, 4], 64)], call={"output_size": [9, 9]})
case("MaxUnpool3d", 2, inputs=[[B, 1, 2, 2, 2], long([B, 1, 2, 2, 2], 64)])

# Reshaping
case("Flatten", inputs=[[B, 64, 8, 8]])
case("Flatten", 0, inputs=[[B, 3, 4]])
case("Flatten", 2, inputs=[[B, 3, 4, 5]])
case("Flatten", 1, 2, inputs=[[B, 2, 3, 4]])
case("Flatten", start_dim=-3, end_dim=-2, inputs=[[B, 2, 3, 4]])
case("Flatten", 0, -1, inputs=[[nB(35), 10]])
case("Unflatten", 1, [2, 5], inputs=[[B, 10]])
case("Unflatten", -1, [-1, 4], inputs=[[B, 3, 12]])
case("Unflatten", 0, [-1, 5], inputs=[[nB(5), 7]])
case("Unflatten", 1, [3, 5], inputs=[[B, 10]], error=True, message="does not multiply")
case("PixelShuffle", 3, inputs=[[B, 9, 4, 4]])
case("PixelShuffle", 2, inputs=[[2, B, 8, 3, 3]])
case("PixelShuffle", 2, inputs=[[B, 6, 4, 4]], error=True, message="not divisible by 4")
case("PixelUnshuffle", 2, inputs=[[B, 1, 12, 12]])
case("ChannelShuffle", 2, inputs=[[B, 4, 3, 3]])
case("ChannelShuffle", 3, inputs=[[B, 4, 3, 3]], error=True, message="not divisible by 3")
case("Unfold", [2, 3], inputs=[[B, 5, 3, 4]])
case("Unfold", 3, 2, 1, 2, inputs=[[2, 10, 12]])
case("Unfold", 5, inputs=[[B, 5, 3, 4]], error=True, message="does not fit")
case("Fold", [4, 5], [2, 2], inputs=[[B, 12, 12]])
case("Fold", 6, 3, stride=3, inputs=[[9, 4]])
case("Fold", [4, 5], [2, 2], inputs=[[B, 12, 10]], error=True, message="has 10 blocks but")
case("Upsample", scale_factor=2, inputs=[[B, 3, 8, 8]])
case("Upsample", size=[20, 30], mode="bilinear", align_corners=False, inputs=[[B, 3, 8, 8]])
case("Upsample", scale_factor=1.5, mode="nearest", inputs=[[B, 2, 7, 7]])
case("Upsample", scale_factor=[2, 3], mode="bicubic", inputs=[[B, 1, 4, 5]])
case("Upsample", size=16, mode="linear", inputs=[[B, 2, 5]])
case("Upsample", scale_factor=2, mode="trilinear", align_corners=True, inputs=[[B, 1, 2, 3, 4]])
case("Upsample", scale_factor=0.5, mode="area", inputs=[[B, 1, 9, 9]])
case("Upsample", None, 3, "nearest-exact", inputs=[[B, 1, 5]])
case("Upsample", scale_factor=2, mode="bilinear", inputs=[[B, 3, 8]], error=True, message="mode 'bilinear' expects a 4-D")
case("Upsample", inputs=[[B, 3, 4, 4]], error=True, message="needs size or scale_factor")
case("UpsamplingNearest2d", scale_factor=2, inputs=[[B, 3, 4, 4]])
case("UpsamplingBilinear2d", size=[7, 9], inputs=[[B, 3, 4, 4]])

# Padding
case("ZeroPad2d", 2, inputs=[[B, 3, 8, 8]])
case("ZeroPad2d", [1, 2, 3, 4], inputs=[[B, 3, 8, 8]])
case("ZeroPad1d", 2, inputs=[[B, 3, 8]], emulate=emulated("ConstantPad1d", 2, 0.0))
case("ZeroPad3d", [1, 0, 1, 0, 2, 2], inputs=[[B, 1, 2, 3, 4]], emulate=emulated("ConstantPad3d", [1, 0, 1, 0, 2, 2], 0.0))
case("ConstantPad1d", 3, 3.5, inputs=[[B, 2, 4]])
case("ConstantPad1d", [3, -1], 0.0, inputs=[[B, 2, 4]])
case("ConstantPad2d", [1, 1, 2, 0], 1.0, inputs=[[3, 5]])
case("ConstantPad3d", 1, 0.0, inputs=[[B, 1, 2, 3, 4]])
case("ReflectionPad1d", 2, inputs=[[B, 2, 5]])
case("ReflectionPad2d", [1, 1, 2, 0], inputs=[[B, 1, 3, 3]])
case("ReflectionPad3d", 1, inputs=[[B, 1, 2, 2, 2]])
case("ReflectionPad2d", 3, inputs=[[B, 1, 3, 3]], error=True, message="smaller than the size 3")
case("ReflectionPad2d", 1, inputs=[[B, 3]], error=True, message="expects a 3-D")
case("ReplicationPad1d", [3, 1], inputs=[[B, 2, 4]])
case("ReplicationPad2d", 2, inputs=[[1, 3, 3]])
case("ReplicationPad3d", [1, 0, 1, 0, 1, 0], inputs=[[B, 1, 2, 2, 2]])
case("CircularPad1d", 1, inputs=[[B, 2, 4]], emulate=emulated("ReplicationPad1d", 1))
case("CircularPad2d", [1, 1, 2, 0], inputs=[[B, 1, 3, 3]], emulate=emulated("ReplicationPad2d", [1, 1, 2, 0]))
case("CircularPad3d", 1, inputs=[[B, 1, 2, 2, 2]], emulate=emulated("ReplicationPad3d", 1))

# Recurrent
case("LSTM", 10, 20, inputs=[[5, B, 10]])
case("LSTM", 10, 20, 2, batch_first=True, bidirectional=True, inputs=[[B, 7, 10]])
case("LSTM", 10, 20, num_layers=3, proj_size=5, dropout=0.1, inputs=[[6, B, 10]])
case("LSTM", 10, 20, 2, bias=False, bidirectional=True, proj_size=8, inputs=[[4, 10]])
case("LSTM", 10, 20, 1, True, True, inputs=[[B, 3, 10]])
case("LSTM", 10, 20, inputs=[[5, B, 12]], error=True, message="expects 10 input features but receives 12")
case("LSTM", 10, 20, proj_size=20, inputs=[[5, B, 10]], error=True, message="proj_size")
case("LSTM", 10, 20, inputs=[[B, 5, 6, 10]], error=True, message="expects a 2-D")
case("GRU", 8, 16, inputs=[[9, B, 8]])
case("GRU", 8, 16, 2, batch_first=True, bidirectional=True, inputs=[[B, 9, 8]])
case("GRU", 8, 16, 3, False, inputs=[[9, 8]])
case("RNN", 8, 16, nonlinearity="relu", num_layers=2, inputs=[[4, B, 8]])
case("RNN", 8, 16, batch_first=True, bias=False, bidirectional=True, inputs=[[B, 4, 8]])
case("RNNCell", 10, 20, inputs=[[B, 10]])
case("RNNCell", 10, 20, False, "relu", inputs=[[B, 10]])
case("LSTMCell", 10, 20, inputs=[[B, 10]])
case("GRUCell", 10, 20, bias=False, inputs=[[10]])
case("LSTMCell", 10, 20, inputs=[[B, 11]], error=True, message="expects 10 input features")

# Attention
Q = [10, B, 512]
case("MultiheadAttention", 512, 8, inputs=[Q, Q, Q])
case("MultiheadAttention", 64, 4, batch_first=True, inputs=[[B, 7, 64], [B, 9, 64], [B, 9, 64]], call={"need_weights": False})
case("MultiheadAttention", 64, 4, batch_first=True, inputs=[[B, 7, 64], [B, 9, 64], [B, 9, 64]], call={"average_attn_weights": False})
case("MultiheadAttention", 64, 4, 0.1, True, batch_first=True, inputs=[[B, 7, 64], [B, 9, 64], [B, 9, 64]], call={"need_weights": True})
case("MultiheadAttention", 32, 4, kdim=16, vdim=24, inputs=[[5, B, 32], [6, B, 16], [6, B, 24]])
case("MultiheadAttention", 32, 2, bias=False, add_bias_kv=True, add_zero_attn=True, inputs=[[5, B, 32], [5, B, 32], [5, B, 32]])
case("MultiheadAttention", 32, 2, 0.0, True, True, inputs=[[5, B, 32], [6, B, 32], [6, B, 32]])
case("MultiheadAttention", 16, 4, inputs=[[5, 16], [6, 16], [6, 16]])
case("MultiheadAttention", 16, 4, inputs=[[5, 16], [6, 16], [6, 16]], call={"average_attn_weights": False})
case("MultiheadAttention", 30, 4, inputs=[[5, B, 30]] * 3, error=True, message="divisible by num_heads")
case("MultiheadAttention", 64, 4, inputs=[[10, B, 32]] * 3, error=True, message="expects 64 features in the query")
case("MultiheadAttention", 64, 4, inputs=[[10, B, 64], [9, B, 64], [8, B, 64]], error=True, message="different lengths")

# Transformers
case("TransformerEncoderLayer", 512, 8, inputs=[[10, B, 512]])
case("TransformerEncoderLayer", d_model=64, nhead=4, dim_feedforward=128, batch_first=True, activation="gelu", norm_first=True, inputs=[[B, 12, 64]])
case("TransformerEncoderLayer", 64, 4, 256, inputs=[[10, 64]])
case("TransformerEncoderLayer", 64, 4, 256, bias=False, inputs=[[10, B, 64]],
     emulate=emulated("TransformerEncoderLayer", 64, 4, 256, drop_bias=True))
case("TransformerEncoderLayer", 512, 8, inputs=[[10, B, 256]], error=True, message="expects 512 features \\(d_model\\) in src")
case("TransformerEncoderLayer", 30, 4, inputs=[[10, B, 30]], error=True, message="divisible by nhead")
case("TransformerDecoderLayer", 512, 8, inputs=[[7, B, 512], [10, B, 512]])
case("TransformerDecoderLayer", 32, 4, 64, 0.0, batch_first=True, inputs=[[B, 5, 32], [B, 9, 32]])
case("TransformerDecoderLayer", 32, 4, 64, bias=False, inputs=[[5, B, 32], [9, B, 32]],
     emulate=emulated("TransformerDecoderLayer", 32, 4, 64, drop_bias=True))
case("TransformerDecoderLayer", 32, 4, inputs=[[5, B, 32], [9, 2, 32]], error=True, message="different batch sizes")
case("TransformerEncoder", L("TransformerEncoderLayer", 64, 4, 128), 3, inputs=[[10, B, 64]])
case("TransformerEncoder", L("TransformerEncoderLayer", 64, 4, 128, batch_first=True), num_layers=2, norm=L("LayerNorm", 64), inputs=[[B, 10, 64]])
case("TransformerEncoder", encoder_layer=L("TransformerEncoderLayer", d_model=32, nhead=2), num_layers=1, inputs=[[6, 32]])
case("TransformerEncoder", L("TransformerEncoderLayer", 64, 4, 128), 3, inputs=[[10, B, 32]], error=True, message="expects 64 features")
case("TransformerDecoder", L("TransformerDecoderLayer", 64, 4, 128), 2, L("LayerNorm", 64), inputs=[[7, B, 64], [10, B, 64]])
case("TransformerDecoder", L("TransformerDecoderLayer", 32, 4, 64, batch_first=True), num_layers=3, inputs=[[B, 7, 32], [B, 10, 32]])
case("Transformer", inputs=[[10, B, 512], [7, B, 512]])
case("Transformer", d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=128, batch_first=True,
     inputs=[[B, 10, 64], [B, 7, 64]])
case("Transformer", 64, 4, 2, 2, 128, inputs=[[10, 64], [7, 64]])
case("Transformer", 64, 4, 2, 2, 128, bias=False, inputs=[[10, B, 64], [7, B, 64]],
     emulate=emulated("Transformer", 64, 4, 2, 2, 128, drop_bias=True))
case("Transformer", d_model=32, nhead=4, num_decoder_layers=1, dim_feedforward=64,
     custom_encoder=L("TransformerEncoder", L("TransformerEncoderLayer", 32, 4, 64), 2),
     inputs=[[10, B, 32], [7, B, 32]])
case("Transformer", d_model=32, nhead=4, dim_feedforward=64,
     custom_encoder=L("TransformerEncoder", L("TransformerEncoderLayer", 32, 4, 64), 1, L("LayerNorm", 32)),
     custom_decoder=L("TransformerDecoder", L("TransformerDecoderLayer", 32, 4, 64), 1),
     inputs=[[10, B, 32], [7, B, 32]])
case("Transformer", 64, 4, 1, 1, 128, inputs=[[10, B, 64], [7, 2, 64]], error=True, message="different batch sizes")
case("Transformer", 64, 4, 1, 1, 128, inputs=[[10, B, 64], [7, B, 32]], error=True, message="expects 64 features")


def python_value(value):
    if isinstance(value, dict) and "layer" in value:
        return build(value["layer"])
    if isinstance(value, list):
        return tuple(python_value(v) for v in value)
    return value


def build(spec):
    cls = getattr(nn, spec["type"])
    return cls(*[python_value(a) for a in spec["args"]], **{k: python_value(v) for k, v in spec["kwargs"].items()})


def dim_size(dim, batch):
    if dim == "B":
        return batch
    if isinstance(dim, dict):
        return dim["batch"] * batch
    return dim


def make_input(spec, batch):
    shape = spec["shape"] if isinstance(spec, dict) else spec
    sizes = [dim_size(d, batch) for d in shape]
    if isinstance(spec, dict) and "long" in spec:
        return torch.randint(0, spec["long"], sizes)
    if isinstance(spec, dict) and "offsets" in spec:
        return torch.arange(sizes[0]) * spec["offsets"]
    return torch.randn(*sizes)


def marked(outputs):
    """The output structure, with dimensions that scale with the batch marked."""
    first = outputs[0]
    if first is None:
        return None
    if isinstance(first, torch.Tensor):
        shapes = [list(o.shape) for o in outputs]
        if len({len(s) for s in shapes}) != 1:
            raise ValueError(f"rank changes with the batch size: {shapes}")
        dims = []
        for sizes in zip(*shapes):
            if len(set(sizes)) == 1:
                dims.append(sizes[0])
            elif all(size % batch == 0 for size, batch in zip(sizes, BATCH_SIZES)) and len({size // batch for size, batch in zip(sizes, BATCH_SIZES)}) == 1:
                dims.append({"batch": sizes[0] // BATCH_SIZES[0]})
            else:
                raise ValueError(f"a dimension is not proportional to the batch: {shapes}")
        return dims
    return [marked([o[i] for o in outputs]) for i in range(len(first))]


def construct(entry):
    if entry.get("emulate", {}).get("always"):
        return build(entry["emulate"]), entry["emulate"]["drop_bias"]
    try:
        return build(entry), False
    except TypeError:
        if "emulate" not in entry:
            raise
    except AttributeError:
        if "emulate" not in entry:
            raise
    return build(entry["emulate"]), entry["emulate"]["drop_bias"]


def measure(entry):
    torch.manual_seed(0)
    module, drop_bias = construct(entry)
    outputs = []
    with torch.no_grad():
        for batch in BATCH_SIZES:
            inputs = [make_input(spec, batch) for spec in entry["inputs"]]
            outputs.append(module(*inputs, **entry.get("call", {})))
    params = sum(p.numel() for name, p in module.named_parameters()
                 if not (drop_bias and name.split(".")[-1] in ("bias", "in_proj_bias")))
    return params, marked(outputs)


def main():
    torch.set_num_threads(1)
    results = []
    for entry in CASES:
        result = dict(entry)
        result.pop("emulate", None)
        if entry.get("error"):
            try:
                measure(entry)
            except Exception:  # noqa: BLE001 - any PyTorch error will do
                results.append(result)
                continue
            raise SystemExit(f"PyTorch accepted a case marked as an error: {entry}")
        result["params"], result["output"] = measure(entry)
        results.append(result)
    # One case a line, for readable diffs.
    sys.stdout.write('{"torch": %s, "cases": [\n' % json.dumps(torch.__version__.split("+")[0]))
    sys.stdout.write(",\n".join(json.dumps(result) for result in results))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
