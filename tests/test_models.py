"""Tests of ccl_helpers.models: output shapes, the affine MLP, the conv net's layout, the
classifier head, and validation."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from ccl_helpers.models import MLP, Classifier, ConvNet


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize("input_shape", [(12,), (3, 4), (1, 3, 4)])
@pytest.mark.parametrize("hidden, out_features", [((), 5), ((7,), 3), ((8, 6), 4)])
def test_mlp_shapes(input_shape, hidden, out_features):
    model = MLP(12, hidden, out_features)
    assert model(randn(9, *input_shape)).shape == (9, out_features)
    assert model.out_features == out_features
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == list(zip([12, *hidden], [*hidden, out_features]))


def test_mlp_default_widths():
    model = MLP(64)
    assert model(randn(2, 64)).shape == (2, 64)
    assert sum(isinstance(m, nn.Linear) for m in model.modules()) == 3


def test_mlp_without_hidden_layers_is_affine():
    torch.manual_seed(0)
    model = MLP(6, (), 4).double()
    x, y = randn(10, 6, seed=1, dtype=torch.float64), randn(10, 6, seed=2, dtype=torch.float64)
    for a in (-1.5, 0.0, 0.3, 2.0):
        torch.testing.assert_close(model(a * x + (1 - a) * y), a * model(x) + (1 - a) * model(y))
    # and equals x ↦ W x + b of its single layer
    (linear,) = [m for m in model.modules() if isinstance(m, nn.Linear)]
    torch.testing.assert_close(model(x), x @ linear.weight.T + linear.bias)


def test_mlp_with_hidden_layers_is_not_affine():
    torch.manual_seed(0)
    model = MLP(6, (16,), 4).double()
    x, y = randn(50, 6, seed=1, dtype=torch.float64), randn(50, 6, seed=2, dtype=torch.float64)
    gap = model(0.5 * x + 0.5 * y) - (0.5 * model(x) + 0.5 * model(y))
    assert float(gap.detach().abs().max()) > 1e-3


def test_mlp_matches_explicit_relu_network():
    torch.manual_seed(3)
    model = MLP(5, (4, 3), 2).double()
    w1, w2, w3 = [m for m in model.modules() if isinstance(m, nn.Linear)]
    x = randn(7, 5, seed=4, dtype=torch.float64)
    expected = torch.relu(torch.relu(x @ w1.weight.T + w1.bias) @ w2.weight.T + w2.bias) @ w3.weight.T + w3.bias
    torch.testing.assert_close(model(x), expected)


@pytest.mark.parametrize("channels", [(4,), (4, 6), (3, 5, 2)])
@pytest.mark.parametrize("image_size", [8, 7])
def test_convnet_shapes(channels, image_size):
    model = ConvNet(in_channels=1, image_size=image_size, channels=channels, out_features=5)
    assert model(randn(3, 1, image_size, image_size)).shape == (3, 5)
    assert model.out_features == 5


def test_convnet_default_on_digits_shape():
    model = ConvNet()
    assert model(randn(4, 1, 8, 8)).shape == (4, 64)
    # 8×8 → conv stride 1 keeps 8×8 → conv stride 2 gives 4×4, 64 channels
    assert model.net[-1].in_features == 64 * 4 * 4


def test_convnet_multichannel_input():
    model = ConvNet(in_channels=3, image_size=6, channels=(2, 2), out_features=3)
    assert model(randn(2, 3, 6, 6)).shape == (2, 3)


@pytest.mark.parametrize("shape", [(1, 8, 8), (8, 8), (2, 1, 1, 8, 8), (64,)])
def test_convnet_rejects_wrong_rank(shape):
    with pytest.raises(ValueError, match="x must have shape"):
        ConvNet(channels=(2,), out_features=2)(randn(*shape))


def test_classifier_shapes_and_composition():
    torch.manual_seed(0)
    encoder = MLP(10, (8,), 6)
    model = Classifier(encoder, n_classes=4)
    x = randn(5, 10)
    logits = model(x)
    assert logits.shape == (5, 4)
    torch.testing.assert_close(logits, encoder(x) @ model.head.weight.T + model.head.bias)
    assert model.encoder is encoder
    conv = Classifier(ConvNet(channels=(2, 3), out_features=7), n_classes=10)
    assert conv(randn(3, 1, 8, 8)).shape == (3, 10)


@pytest.mark.parametrize("make", [
    lambda: MLP(0),
    lambda: MLP(4, (8, 0), 2),
    lambda: MLP(4, (-1,), 2),
    lambda: MLP(4, (8,), 0),
    lambda: ConvNet(in_channels=0),
    lambda: ConvNet(image_size=0),
    lambda: ConvNet(channels=(4, 0)),
    lambda: ConvNet(out_features=-3),
    lambda: Classifier(MLP(4, (), 3), n_classes=0),
])
def test_non_positive_sizes_raise(make):
    with pytest.raises(ValueError, match="must be positive"):
        make()


def test_same_seed_same_initialisation():
    torch.manual_seed(5)
    first = MLP(4, (3,), 2)
    torch.manual_seed(5)
    second = MLP(4, (3,), 2)
    for a, b in zip(first.parameters(), second.parameters()):
        assert torch.equal(a, b)


def test_models_have_no_batchnorm():
    for model in (MLP(4), ConvNet(), Classifier(ConvNet(), 10)):
        assert not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
        assert len(list(model.buffers())) == 0
