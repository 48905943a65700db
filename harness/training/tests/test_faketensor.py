"""The FakeTensor baseline the benchmark times: it counts tensor bytes without allocating them."""
import torch

from harness.training.faketensor import corpus_model, faketensor_peak_mib


def test_counts_weights_gradients_optimizer_state_and_activations():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.ReLU(), torch.nn.Linear(1000, 10))
    params = sum(p.numel() for p in model.parameters())
    sgd = faketensor_peak_mib(model, [torch.randn(64, 1000)], "sgd")
    adam = faketensor_peak_mib(model, [torch.randn(64, 1000)], "adam")
    weights_and_grads = 2 * 4 * params / 2**20
    assert weights_and_grads < sgd < weights_and_grads + 2.0
    # Adam keeps two moments per weight on top.
    assert adam > sgd + 2 * 4 * params / 2**20 * 0.99
    # Nothing real was allocated on the model: its weights are untouched.
    assert not any(type(p).__name__ == "FakeTensor" for p in model.parameters())


def test_builds_the_benchmark_model_from_the_corpus():
    model, make_input, setup = corpus_model("mlp_mnist_sequential.py", "model")
    assert setup["batchSize"] == 128
    peak = faketensor_peak_mib(model, make_input(setup["batchSize"]), setup["optimizer"])
    assert peak > 2 * 4 * sum(p.numel() for p in model.parameters()) / 2**20
