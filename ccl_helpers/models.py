"""Encoders f: inputs → R^d, without BatchNorm so that seeds train together under vmap.

:class:`MLP`, :class:`ConvNet` and :class:`Classifier` for the experiments on real data;
:class:`DeepReLU`, the bias-free deep ReLU network with the Allen-Zhu et al. (2019)
initialisation, for the convergence theorems (Merad et al., Theorem 1; Wen 2020, Theorem
4.2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ._checks import check_choice, check_count, check_int, check_sizes

__all__ = ["MLP", "Classifier", "ConvNet", "DeepReLU"]


class MLP(nn.Module):
    """f(x) = W_L relu(… relu(W_1 vec(x) + b_1) …) + b_L (affine when ``hidden`` is
    empty).

    Shapes: x (n, *input_shape) with prod(input_shape) = in_features → (n,
        out_features).
    """

    def __init__(
        self,
        in_features: int,
        hidden: Sequence[int] = (256, 256),
        out_features: int = 64,
    ):
        check_sizes("in_features", in_features)
        check_sizes("hidden", hidden)
        check_sizes("out_features", out_features)
        super().__init__()
        widths = [in_features, *hidden]
        layers: list[nn.Module] = [nn.Flatten()]
        for fan_in, fan_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
        layers.append(nn.Linear(widths[-1], out_features))
        self.net = nn.Sequential(*layers)
        self.out_features = out_features

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class _MaxPool2x2(nn.Module):
    """2×2 max-pooling, stride 2 (a trailing odd row or column dropped): x (..., h, w) →
    (..., ⌊h/2⌋, ⌊w/2⌋), the values of ``nn.MaxPool2d(2)``.

    Without gradients (evaluation) as two elementwise maxima over strided views, about
    5× faster on the CPU, whose pooling kernel reads the windows element by element;
    with gradients by ``max_pool2d`` itself, whose backward pass (each window's
    gradient to its first maximum) is the cheaper one.
    """

    def forward(self, x: Tensor) -> Tensor:
        if torch.is_grad_enabled():
            return nn.functional.max_pool2d(x, 2)
        h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
        rows = torch.maximum(x[..., 0:h:2, :w], x[..., 1:h:2, :w])
        return torch.maximum(rows[..., 0::2], rows[..., 1::2])


class ConvNet(nn.Module):
    """The small conv net of Merad et al.'s image experiments: ``len(channels)`` blocks
    [conv k×k (zero padding p) → 2×2 max-pool (stride 2) → ReLU], then
    flatten and a linear map to R^out_features. No BatchNorm, so stacked seeds run under
    vmap. The ReLU after the pooling gives the function and gradient of conv → ReLU →
    pool (max commutes with a nondecreasing map), on a quarter of the entries.

    Default: 1 → 8 → 16 channels, 5×5 kernels, no padding, 28×28 inputs (FashionMNIST):
    28 → 24 → 12 → 8 → 4, 16·4·4 = 256 features → d = 32. Each block maps the side s to
    ⌊(s + 2p − k + 1) / 2⌋; 8×8 digits need ``padding=2`` (8 → 4 → 2, 64 features).

    Time per training step (forward, loss, backward, Adam) of the default net on 256
    anchors + 256 positives (28×28), one seed, NT-Xent / InfoNCE with the 255 other
    positives as negatives, on the book's CPU machine kind (2 cores, idle): one thread
    86 / 106 ms, two threads 55 / 66 ms (medians of 20 steps after 3 warm-up steps).

    Shapes: x (n, in_channels, image_size, image_size) → (n, out_features).
    """

    def __init__(
        self,
        in_channels: int = 1,
        image_size: int = 28,
        channels: Sequence[int] = (8, 16),
        out_features: int = 32,
        *,
        kernel_size: int = 5,
        padding: int = 0,
    ):
        for name, size in (
            ("in_channels", in_channels),
            ("image_size", image_size),
            ("channels", channels),
            ("out_features", out_features),
            ("kernel_size", kernel_size),
        ):
            check_sizes(name, size)
        check_int("padding", padding, 0, kernel_size - 1)
        super().__init__()
        layers: list[nn.Module] = []
        fan_in, size = in_channels, image_size
        for fan_out in channels:
            size = size + 2 * padding - kernel_size + 1
            if size < 2:
                raise ValueError(
                    f"image_size must leave each block's convolution ≥ 2 pixels wide "
                    f"(kernel_size {kernel_size}, padding {padding}, "
                    f"{len(channels)} blocks), got {image_size}"
                )
            layers += [
                nn.Conv2d(fan_in, fan_out, kernel_size, padding=padding),
                _MaxPool2x2(),
                nn.ReLU(),
            ]
            fan_in, size = fan_out, size // 2
        layers += [nn.Flatten(), nn.Linear(fan_in * size * size, out_features)]
        self.net = nn.Sequential(*layers)
        self.image_size, self.out_features = image_size, out_features

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4 or x.shape[-2:] != (self.image_size, self.image_size):
            raise ValueError(
                f"x must have shape (n, channels, {self.image_size}, "
                f"{self.image_size}), got {tuple(x.shape)}"
            )
        return self.net(x)


class Classifier(nn.Module):
    """An encoder followed by a linear head: x ↦ W f(x) + b, logits (n, n_classes).

    ``encoder`` is the representation f (the penultimate layer of the supervised
    network).
    """

    def __init__(self, encoder: nn.Module, n_classes: int):
        check_sizes("n_classes", n_classes)
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.out_features, n_classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.encoder(x))


_MAX_DEPTH = 10_000
"""The most square layers :class:`DeepReLU` builds. They are built and run in Python
loops, one m × m matrix W_l a layer, each of which fits: a huge depth exhausts the
memory (or, at small widths, runs for hours) without any one allocation failing. The
sources' networks have a few layers (the book's at most 2)."""

_TRAINABLE = ("hidden", "all")
"""Which layers of :class:`DeepReLU` gradient descent trains: ``"hidden"`` (W_1 … W_L
only, A and B fixed at their initialisation, as in Allen-Zhu et al. 2019 and hence Merad
et al.'s Theorem 1) or ``"all"`` (A, W_1 … W_L and B, as in Wen 2020, Algorithm 1)."""


class DeepReLU(nn.Module):
    """The deep ReLU encoder of Allen-Zhu, Li & Song (2019), used by Merad et al.
    (Section 4, Theorem 1) and, as each of its two encoders, by Wen (2020, Definitions
    3.1–3.2). No biases.

    f(x) = B h_L,  h_l = relu(W_l h_{l−1}) for l = 1 … L,  h_0 = relu(A x),

    with A ∈ R^{m×d_x}, W_l ∈ R^{m×m}, B ∈ R^{d×m} (m = ``width``, L = ``depth``, d_x =
    ``in_features``, d = ``out_features``). Initialisation (Allen-Zhu et al. 2019; Wen's
    Definition 3.2, "He initialisation"), all entries independent:

        A_ij ~ N(0, 2/m),   (W_l)_ij ~ N(0, 2/m),   B_ij ~ N(0, 1/d).

    Hence for ‖x‖ = 1: E‖h_0‖² = 1, E[‖h_l‖² | h_{l−1}] = ‖h_{l−1}‖² and
    E[‖f(x)‖² | h_L] = ‖h_L‖², so ‖h_L‖² → 1 as m → ∞ (fluctuations O(√(L/m))) and
    ‖f(x)‖² ≈ ‖h_L‖² · χ²_d / d.

    Depth conventions: Merad et al. (and Allen-Zhu et al.) count the L square layers W_1
    … W_L; Wen's "(L+1)-layer" network W_L σ(… W_1 σ(W_0 x)) has W_0 = A, W_L = B and L
    − 1 square layers, i.e. ``depth = L_Wen − 1`` here (``depth = 0`` is the two-layer
    net B relu(A x)).

    Args:
        trainable: ``"hidden"`` (default): A and B are fixed at their random
            initialisation and stored as buffers, only W_1 … W_L are parameters —
            Allen-Zhu et al.'s setting, to which Merad et al. defer for Theorem 1.
            ``"all"``: A, W_1 … W_L and B are all parameters — Wen's Algorithm 1 updates
            every layer.

    Parameter (or buffer) names: ``A``, ``W1`` … ``W{depth}``, ``B``.
    Shapes: x (n, *input_shape) with prod(input_shape) = in_features → (n,
        out_features).
    """

    def __init__(
        self,
        in_features: int,
        width: int,
        depth: int,
        out_features: int,
        *,
        trainable: str = "hidden",
    ):
        check_sizes("in_features", in_features)
        check_sizes("width", width)
        check_sizes("out_features", out_features)
        depth = check_int("depth", depth, 0)
        check_count("layers", depth, _MAX_DEPTH, f"depth={depth}")
        check_choice("trainable", trainable, _TRAINABLE)
        super().__init__()
        self.in_features, self.width, self.depth, self.out_features = (
            in_features,
            width,
            depth,
            out_features,
        )
        self.trainable = trainable
        hidden_std, out_std = (2.0 / width) ** 0.5, (1.0 / out_features) ** 0.5
        outer = [
            ("A", (width, in_features), hidden_std),
            ("B", (out_features, width), out_std),
        ]
        for name, shape, std in outer:
            value = torch.randn(shape) * std
            if trainable == "all":
                self.register_parameter(name, nn.Parameter(value))
            else:
                self.register_buffer(name, value)
        for layer in range(1, depth + 1):
            self.register_parameter(
                f"W{layer}", nn.Parameter(torch.randn(width, width) * hidden_std)
            )

    @property
    def layer_names(self) -> list[str]:
        """["A", "W1", …, "W{depth}", "B"], input to output."""
        return ["A", *(f"W{layer}" for layer in range(1, self.depth + 1)), "B"]

    def features(self, x: Tensor) -> Tensor:
        """h_L = relu(W_L … relu(A vec(x))): (n, *input_shape) → (n, width)."""
        h = torch.relu(x.flatten(1) @ self.A.T)
        for layer in range(1, self.depth + 1):
            h = torch.relu(h @ getattr(self, f"W{layer}").T)
        return h

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or math.prod(x.shape[1:]) != self.in_features:
            raise ValueError(
                f"x must have shape (n, ...) with {self.in_features} features per row, "
                f"got {tuple(x.shape)}"
            )
        return self.features(x) @ self.B.T
