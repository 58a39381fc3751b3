"""Tests of ccl_helpers.models: output shapes, the affine MLP, the conv net's layout,
the classifier head, the deep ReLU encoder (formula, initialisation statistics, fixed vs
trained layers, under vmap), and validation."""

from __future__ import annotations

import math
from functools import partial

import pytest
import torch
from bad_calls import bad_call
from conftest import randn as randn64
from torch import nn

from ccl_helpers import models
from ccl_helpers.models import MLP, Classifier, ConvNet, DeepReLU
from ccl_helpers.models import _MaxPool2x2 as MaxPool2x2
from ccl_helpers.train import StackedModel

randn = partial(randn64, dtype=torch.float32)


@pytest.mark.parametrize("input_shape", [(12,), (3, 4), (1, 3, 4)])
@pytest.mark.parametrize("hidden, out_features", [((), 5), ((7,), 3), ((8, 6), 4)])
def test_mlp_shapes(input_shape, hidden, out_features):
    model = MLP(12, hidden, out_features)
    assert model(randn(9, *input_shape)).shape == (9, out_features)
    assert model.out_features == out_features
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == list(
        zip([12, *hidden], [*hidden, out_features])
    )


def test_mlp_default_widths():
    model = MLP(64)
    assert model(randn(2, 64)).shape == (2, 64)
    assert sum(isinstance(m, nn.Linear) for m in model.modules()) == 3


def test_mlp_without_hidden_layers_is_affine():
    torch.manual_seed(0)
    model = MLP(6, (), 4).double()
    x, y = (
        randn(10, 6, seed=1, dtype=torch.float64),
        randn(10, 6, seed=2, dtype=torch.float64),
    )
    for a in (-1.5, 0.0, 0.3, 2.0):
        torch.testing.assert_close(
            model(a * x + (1 - a) * y), a * model(x) + (1 - a) * model(y)
        )
    # and equals x ↦ W x + b of its single layer
    (linear,) = [m for m in model.modules() if isinstance(m, nn.Linear)]
    torch.testing.assert_close(model(x), x @ linear.weight.T + linear.bias)


def test_mlp_with_hidden_layers_is_not_affine():
    torch.manual_seed(0)
    model = MLP(6, (16,), 4).double()
    x, y = (
        randn(50, 6, seed=1, dtype=torch.float64),
        randn(50, 6, seed=2, dtype=torch.float64),
    )
    gap = model(0.5 * x + 0.5 * y) - (0.5 * model(x) + 0.5 * model(y))
    assert float(gap.detach().abs().max()) > 1e-3


def test_mlp_matches_explicit_relu_network():
    torch.manual_seed(3)
    model = MLP(5, (4, 3), 2).double()
    w1, w2, w3 = [m for m in model.modules() if isinstance(m, nn.Linear)]
    x = randn(7, 5, seed=4, dtype=torch.float64)
    expected = (
        torch.relu(torch.relu(x @ w1.weight.T + w1.bias) @ w2.weight.T + w2.bias)
        @ w3.weight.T
        + w3.bias
    )
    torch.testing.assert_close(model(x), expected)


def test_convnet_default_layout_on_28_by_28():
    model = ConvNet()
    assert model(randn(4, 1, 28, 28)).shape == (4, 32)
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [
        (1, 8, (5, 5)),
        (8, 16, (5, 5)),
    ]
    assert sum(isinstance(m, MaxPool2x2) for m in model.modules()) == 2
    # 28 → conv 24 → pool 12 → conv 8 → pool 4: 16 · 4 · 4 features
    assert model.net[-1].in_features == 16 * 4 * 4


@pytest.mark.parametrize(
    "image_size, kernel_size, padding, channels, side",
    [
        (8, 5, 2, (8, 16), 2),
        (7, 5, 2, (4,), 3),
        (12, 3, 0, (3, 5), 1),
        (9, 3, 1, (2, 2, 2), 1),
    ],
)
def test_convnet_sizes_follow_the_block_formula(
    image_size, kernel_size, padding, channels, side
):
    # side s ↦ ⌊(s + 2p − k + 1) / 2⌋ per block, worked out by hand in ``side``
    model = ConvNet(
        1, image_size, channels, 5, kernel_size=kernel_size, padding=padding
    )
    x = randn(3, 1, image_size, image_size)
    assert model(x).shape == (3, 5)
    assert model.net[-1].in_features == channels[-1] * side * side
    assert model.net[:-2](x).shape[-1] == side


def test_convnet_multichannel_input():
    model = ConvNet(
        in_channels=3,
        image_size=6,
        channels=(2, 2),
        out_features=3,
        kernel_size=3,
        padding=1,
    )
    assert model(randn(2, 3, 6, 6)).shape == (2, 3)


@pytest.mark.parametrize(
    "shape", [(1, 28, 28), (28, 28), (2, 1, 1, 28, 28), (784,), (2, 1, 27, 28)]
)
def test_convnet_rejects_wrong_shapes(shape):
    with pytest.raises(ValueError, match="x must have shape"):
        ConvNet()(randn(*shape))


def _relu_then_pool(model: ConvNet) -> nn.Sequential:
    """The same net with each block in the order conv → ReLU → nn.MaxPool2d(2)."""
    layers = []
    for layer in model.net:
        if isinstance(layer, MaxPool2x2):
            continue
        layers.append(layer)
        if isinstance(layer, nn.ReLU):
            layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


@pytest.mark.parametrize("shape", [(3, 2, 8, 8), (2, 3, 7, 9), (1, 1, 2, 5)])
@pytest.mark.parametrize("ties", [False, True])
def test_maxpool2x2_equals_max_pool2d_with_and_without_gradients(shape, ties):
    # integer entries make ties common, as on an image's blank background
    x = torch.randint(-2, 3, shape).float() if ties else randn(*shape)
    reference = nn.functional.max_pool2d(x, 2)
    with torch.no_grad():
        assert torch.equal(MaxPool2x2()(x), reference)
    ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    upstream = randn(*reference.shape, seed=3)
    MaxPool2x2()(ours).backward(upstream)
    nn.functional.max_pool2d(theirs, 2).backward(upstream)
    assert torch.equal(ours.grad, theirs.grad)


def test_maxpool2x2_propagates_nan_like_max_pool2d():
    x = torch.zeros(1, 1, 4, 4)
    x[0, 0, 1, 2] = math.nan
    with torch.no_grad():
        out = MaxPool2x2()(x)
    assert torch.equal(out.isnan(), nn.functional.max_pool2d(x, 2).isnan())


def test_convnet_pool_before_relu_is_the_same_function_and_gradient():
    torch.manual_seed(0)
    model = ConvNet()
    reordered = _relu_then_pool(model)
    x = randn(6, 1, 28, 28).clamp_min(0)  # blank (zero) regions: ties in the pooling
    x[:, :, :10] = 0
    assert torch.equal(model(x), reordered(x))
    ours = torch.autograd.grad(model(x).square().sum(), list(model.parameters()))
    theirs = torch.autograd.grad(
        reordered(x).square().sum(), list(reordered.parameters())
    )
    for a, b in zip(ours, theirs):
        assert torch.equal(a, b)


def test_convnet_under_stacked_vmap_and_gradients():
    model = StackedModel(lambda: ConvNet(image_size=8, padding=2), n_seeds=3, seed=2)
    x = randn(5, 1, 8, 8, seed=1)
    out = model(x)
    assert out.shape == (3, 5, 32)
    for i in range(3):
        torch.testing.assert_close(
            out[i], model.seed_module(i)(x), rtol=1e-5, atol=1e-6
        )
    assert not torch.allclose(out[0], out[1])
    out.square().sum().backward()
    for p in model.params.values():
        assert p.grad is not None and bool((p.grad.flatten(1).abs().sum(1) > 0).all())


def test_classifier_shapes_and_composition():
    torch.manual_seed(0)
    encoder = MLP(10, (8,), 6)
    model = Classifier(encoder, n_classes=4)
    x = randn(5, 10)
    logits = model(x)
    assert logits.shape == (5, 4)
    torch.testing.assert_close(
        logits, encoder(x) @ model.head.weight.T + model.head.bias
    )
    assert model.encoder is encoder
    conv = Classifier(ConvNet(channels=(2, 3), out_features=7), n_classes=10)
    assert conv(randn(3, 1, 28, 28)).shape == (3, 10)


def test_same_seed_same_initialisation():
    torch.manual_seed(5)
    first = MLP(4, (3,), 2)
    torch.manual_seed(5)
    second = MLP(4, (3,), 2)
    for a, b in zip(first.parameters(), second.parameters()):
        assert torch.equal(a, b)


def test_models_have_no_batchnorm():
    for model in (
        MLP(4),
        ConvNet(),
        Classifier(ConvNet(), 10),
        DeepReLU(4, 8, 2, 3, trainable="all"),
    ):
        assert not any(
            isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()
        )
        assert len(list(model.buffers())) == 0


# ---------------------------------------------------------------- the deep ReLU encoder
# (Allen-Zhu et al. / Wen)


@pytest.mark.parametrize("trainable", ["hidden", "all"])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_deep_relu_layers_and_formula(trainable, depth):
    torch.manual_seed(0)
    model = DeepReLU(6, 16, depth, 4, trainable=trainable).double()
    names = ["A", *(f"W{layer}" for layer in range(1, depth + 1)), "B"]
    assert model.layer_names == names
    shapes = {
        "A": (16, 6),
        "B": (4, 16),
        **{f"W{layer}": (16, 16) for layer in range(1, depth + 1)},
    }
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    assert {k: tuple(v.shape) for k, v in state.items()} == shapes
    trained = set(dict(model.named_parameters()))
    assert trained == (set(names) if trainable == "all" else set(names) - {"A", "B"})
    assert not any("bias" in k for k in state)
    x = randn(5, 2, 3, seed=1, dtype=torch.float64)  # flattened to 6 features
    h = torch.relu(x.flatten(1) @ state["A"].T)
    for layer in range(1, depth + 1):
        h = torch.relu(h @ state[f"W{layer}"].T)
    torch.testing.assert_close(model.features(x), h)
    torch.testing.assert_close(model(x), h @ state["B"].T)


def test_deep_relu_initial_entry_variances():
    torch.manual_seed(1)
    m, d = 512, 8
    model = DeepReLU(64, m, 2, d)
    for name, variance in [("A", 2 / m), ("W1", 2 / m), ("W2", 2 / m), ("B", 1 / d)]:
        entries = getattr(model, name).detach().double().flatten()
        n = entries.numel()
        assert abs(float(entries.mean())) < 4 * math.sqrt(variance / n)
        # the sample variance of n normals has standard error σ²·√(2/n)
        assert abs(float(entries.var()) - variance) < 4 * variance * math.sqrt(2 / n)
        assert abs(float(stats_kurtosis(entries))) < 4 * math.sqrt(
            24 / n
        )  # Gaussian: excess kurtosis 0


def stats_kurtosis(x):
    z = (x - x.mean()) / x.std()
    return (z**4).mean() - 3


def test_deep_relu_output_norms_concentrate_at_large_width():
    """‖x‖ = 1 ⇒ E‖h_L‖² = 1 and E‖f(x)‖² = 1; the spread of ‖h_L‖² shrinks like
    √(L/m)."""
    x = randn(16, 10, seed=2, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    spreads = {}
    for m in (32, 2048):
        norms, outputs = [], []
        for seed in range(4):
            torch.manual_seed(seed)
            model = DeepReLU(10, m, 2, 32).double()
            with torch.no_grad():
                norms.append(model.features(x).square().sum(1))
                outputs.append(model(x).square().sum(1))
        norms, outputs = torch.cat(norms), torch.cat(outputs)
        spreads[m] = float((norms - 1).square().mean().sqrt())
        if m == 2048:
            # per layer Var(‖h_l‖²/‖h_{l−1}‖²) = 5/m, three ReLU layers: std ≈ √(15/m) ≈
            # 0.086
            assert abs(float(norms.mean()) - 1) < 0.1
            assert spreads[m] < 3 * math.sqrt(15 / m)
            # ‖f(x)‖² ≈ ‖h_L‖² χ²_d / d: mean 1, relative std √(2/d) = 0.25 per draw, 64
            # draws
            assert abs(float(outputs.mean()) - 1) < 4 * 0.27 / 8
    assert spreads[2048] < spreads[32] / 3


@pytest.mark.parametrize("trainable", ["hidden", "all"])
def test_deep_relu_under_stacked_vmap(trainable):
    model = StackedModel(
        lambda: DeepReLU(5, 12, 2, 3, trainable=trainable), n_seeds=3, seed=4
    )
    outer = {"A", "B"}
    assert (set(model.buffers) == outer) == (trainable == "hidden")
    assert (outer <= set(model.params)) == (trainable == "all")
    x = randn(7, 5, seed=3)
    out = model(x)
    assert out.shape == (3, 7, 3)
    for i in range(3):
        torch.testing.assert_close(
            out[i], model.seed_module(i)(x), rtol=1e-6, atol=1e-6
        )
    # distinct seeds, distinct fixed layers too
    state = {**model.params, **model.buffers}
    assert not torch.equal(state["A"][0], state["A"][1])


def test_deep_relu_same_seed_same_initialisation():
    torch.manual_seed(7)
    first = DeepReLU(4, 8, 2, 3)
    torch.manual_seed(7)
    second = DeepReLU(4, 8, 2, 3)
    for (name, a), b in zip(first.state_dict().items(), second.state_dict().values()):
        assert torch.equal(a, b), name


def test_deep_relu_rejects_wrong_input_size():
    model = DeepReLU(6, 8, 1, 2)
    with pytest.raises(ValueError, match="x must have shape"):
        model(randn(3, 5))
    with pytest.raises(ValueError, match="x must have shape"):
        model(randn(6))


# ---------------------------------------------------------------- bad calls

SIZE = "must be an integer ≥ 1"

BAD_CALLS = [
    bad_call(models.MLP, "in_features", 0),
    bad_call(models.MLP, f"hidden {SIZE}", 4, (8, 0), 2),
    bad_call(models.MLP, "hidden", 4, (-1,), 2),
    bad_call(models.MLP, "hidden", 4, (8, 2.5), 2),
    bad_call(models.MLP, f"out_features {SIZE}", 4, (8,), 0),
    bad_call(models.ConvNet, f"in_channels {SIZE}", in_channels=0),
    bad_call(models.ConvNet, f"image_size {SIZE}", image_size=0),
    bad_call(models.ConvNet, f"channels {SIZE}", channels=(4, 0)),
    bad_call(models.ConvNet, f"out_features {SIZE}", out_features=-3),
    # 8 → 4 → pool 2 → a 5×5 convolution does not fit
    bad_call(models.ConvNet, "image_size must leave", image_size=8),
    bad_call(models.ConvNet, "image_size must leave", image_size=15),
    bad_call(models.ConvNet, "padding", padding=5),
    bad_call(models.ConvNet, "padding", padding=-1),
    bad_call(models.ConvNet, "kernel_size", kernel_size=0),
    bad_call(models.Classifier, f"n_classes {SIZE}", MLP(4, (), 3), n_classes=0),
    bad_call(models.Classifier, "n_classes", MLP(4, (), 3), n_classes=2.0),
    bad_call(models.DeepReLU, "in_features", 0, 8, 1, 2),
    bad_call(models.DeepReLU, "width", 4, 0, 1, 2),
    bad_call(models.DeepReLU, "out_features", 4, 8, 1, -1),
    bad_call(models.DeepReLU, "depth must be an integer ≥ 0", 4, 8, -1, 2),
    bad_call(models.DeepReLU, "depth", 4, 8, 1.5, 2),
    # 10⁶ layers: built in a Python loop, each W_l fits; refused before the first
    bad_call(
        models.DeepReLU, "depth=1000000 give 1,000,000 layers", 10, 1000, 10**6, 2
    ),
    bad_call(
        models.DeepReLU,
        r"trainable must be one of \('hidden', 'all'\)",
        4,
        8,
        1,
        2,
        trainable="outer",
    ),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
