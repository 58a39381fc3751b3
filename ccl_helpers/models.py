"""Encoders f: inputs → R^d. No BatchNorm, so that seeds can be trained together under vmap."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn


def _check_sizes(**sizes: int | Sequence[int]) -> None:
    for name, value in sizes.items():
        values = [value] if isinstance(value, int) else list(value)
        if any(int(v) < 1 for v in values):
            raise ValueError(f"{name} must be positive, got {value!r}")


class MLP(nn.Module):
    """f(x) = W_L relu(… relu(W_1 vec(x) + b_1) …) + b_L (affine when ``hidden`` is empty).

    Shapes: x (n, *input_shape) with prod(input_shape) = in_features → (n, out_features).
    """

    def __init__(self, in_features: int, hidden: Sequence[int] = (256, 256), out_features: int = 64):
        super().__init__()
        _check_sizes(in_features=in_features, hidden=hidden, out_features=out_features)
        widths = [in_features, *hidden]
        layers: list[nn.Module] = [nn.Flatten()]
        for fan_in, fan_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
        layers.append(nn.Linear(widths[-1], out_features))
        self.net = nn.Sequential(*layers)
        self.out_features = out_features

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class ConvNet(nn.Module):
    """A small conv net for small square images: [conv3×3 → ReLU] × len(channels), each conv
    after the first with stride 2, then flatten and a linear map to R^out_features.

    Shapes: x (n, in_channels, image_size, image_size) → (n, out_features).
    """

    def __init__(self, in_channels: int = 1, image_size: int = 8, channels: Sequence[int] = (32, 64),
                 out_features: int = 64):
        super().__init__()
        _check_sizes(in_channels=in_channels, image_size=image_size, channels=channels, out_features=out_features)
        layers: list[nn.Module] = []
        fan_in, size = in_channels, image_size
        for i, fan_out in enumerate(channels):
            stride = 1 if i == 0 else 2
            layers += [nn.Conv2d(fan_in, fan_out, 3, stride=stride, padding=1), nn.ReLU()]
            fan_in, size = fan_out, (size - 1) // stride + 1
        layers += [nn.Flatten(), nn.Linear(fan_in * size * size, out_features)]
        self.net = nn.Sequential(*layers)
        self.out_features = out_features

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise ValueError(f"x must have shape (n, channels, H, W), got {tuple(x.shape)}")
        return self.net(x)


class Classifier(nn.Module):
    """An encoder followed by a linear head: x ↦ W f(x) + b, logits (n, n_classes).

    ``encoder`` is the representation f (the penultimate layer of the supervised network).
    """

    def __init__(self, encoder: nn.Module, n_classes: int):
        super().__init__()
        _check_sizes(n_classes=n_classes)
        self.encoder = encoder
        self.head = nn.Linear(encoder.out_features, n_classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.encoder(x))
