"""Data: the latent-class model of contrastive learning and the embedded digits data.

The latent-class model (Arora et al., 2019): nature has classes c with probabilities
ρ(c) and a distribution D_c per class. A similar pair (x, x⁺) ~ D_sim draws c⁺ ~ ρ and
x, x⁺ i.i.d. from D_{c⁺}; a negative x⁻ ~ D_neg draws c⁻ ~ ρ and x⁻ ~ D_{c⁻}.
Two kinds of D_c are provided: Gaussian (:class:`GaussianClasses`) and the uniform
distribution over the examples of a labelled data set (:class:`EmpiricalClasses`).
Every sampler takes a ``shape`` (e.g. ``(n_seeds, batch)``) and a ``torch.Generator``,
and returns tensors of that leading shape on the model's device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def check_class_probs(class_probs: Tensor, name: str = "class_probs") -> Tensor:
    """Validate a probability vector ρ of shape (N_C,): non-negative, summing to one."""
    if class_probs.ndim != 1 or class_probs.numel() < 2:
        raise ValueError(f"{name} must be a vector over at least 2 classes, got shape {tuple(class_probs.shape)}")
    if bool((class_probs < 0).any()):
        raise ValueError(f"{name} must be non-negative")
    total = float(class_probs.double().sum())
    if abs(total - 1.0) > 1e-5:
        raise ValueError(f"{name} must sum to 1, sums to {total:.6g}")
    return class_probs


def _check_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if any(s < 1 for s in shape):
        raise ValueError(f"shape must have positive sizes, got {shape}")
    return shape


def _block(classes: Tensor, block_size: int | None) -> Tensor:
    if block_size is None:
        return classes
    if block_size < 1:
        raise ValueError(f"block_size must be ≥ 1, got {block_size}")
    return classes.unsqueeze(-1).expand(*classes.shape, block_size)


class LatentClassModel:
    """Base of the latent-class model: ρ plus a sampler of x ~ D_c for given classes.

    Subclasses set ``class_probs`` (N_C,) and implement :meth:`sample_given`.
    """

    class_probs: Tensor

    @property
    def n_classes(self) -> int:
        """N_C, the number of latent classes."""
        return self.class_probs.numel()

    @property
    def collision_probability(self) -> float:
        """τ = P(c⁺ = c⁻) = Σ_c ρ(c)², the chance that a negative shares the positive's class."""
        return float((self.class_probs**2).sum())

    def sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        """x ~ D_c for every entry c of ``classes`` (shape S) → (*S, *input_shape)."""
        raise NotImplementedError

    def sample_classes(self, shape: tuple[int, ...], generator: torch.Generator) -> Tensor:
        """c ~ ρ, i.i.d., of the given shape (a LongTensor)."""
        shape = _check_shape(shape)
        flat = torch.multinomial(self.class_probs, int(torch.Size(shape).numel()), replacement=True,
                                 generator=generator)
        return flat.reshape(shape)

    def sample_sim(self, shape: tuple[int, ...], generator: torch.Generator,
                   block_size: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """(x, x⁺, c⁺) ~ D_sim: x (*shape, *input), x⁺ (*shape, *input) — or, with ``block_size`` b,
        a block of b positives (*shape, b, *input) all from c⁺ — and c⁺ (*shape)."""
        classes = self.sample_classes(shape, generator)
        anchor = self.sample_given(classes, generator)
        positive = self.sample_given(_block(classes, block_size), generator)
        return anchor, positive, classes

    def sample_neg(self, shape: tuple[int, ...], generator: torch.Generator,
                   block_size: int | None = None) -> tuple[Tensor, Tensor]:
        """(x⁻, c⁻) ~ D_neg: x⁻ (*shape, *input) — or a block (*shape, b, *input) from one class c⁻ — and c⁻ (*shape)."""
        classes = self.sample_classes(shape, generator)
        return self.sample_given(_block(classes, block_size), generator), classes


@dataclass
class GaussianClasses(LatentClassModel):
    """D_c = N(means[c], noise_std² I): class probabilities ρ (N_C,), means (N_C, D)."""

    class_probs: Tensor
    means: Tensor
    noise_std: float

    def __post_init__(self):
        check_class_probs(self.class_probs)
        if self.means.ndim != 2 or self.means.shape[0] != self.class_probs.numel():
            raise ValueError(f"means must have shape (n_classes={self.class_probs.numel()}, dim), "
                             f"got {tuple(self.means.shape)}")
        if not self.noise_std > 0:
            raise ValueError(f"noise_std must be > 0, got {self.noise_std}")

    @classmethod
    def random(cls, n_classes: int, dim: int, *, class_probs: Tensor | None = None, separation: float = 1.0,
               noise_std: float = 1.0, seed: int = 0, device: torch.device | str = "cpu") -> GaussianClasses:
        """Class means drawn i.i.d. N(0, separation²/dim · I), so ‖m_c‖ ≈ separation; ρ uniform by default."""
        if n_classes < 2 or dim < 1:
            raise ValueError(f"need n_classes ≥ 2 and dim ≥ 1, got n_classes={n_classes}, dim={dim}")
        generator = torch.Generator(device="cpu").manual_seed(seed)
        means = torch.randn(n_classes, dim, generator=generator) * separation / dim**0.5
        probs = torch.full((n_classes,), 1.0 / n_classes) if class_probs is None else class_probs.cpu()
        return cls(probs.float().to(device), means.to(device), float(noise_std))

    def sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        noise = torch.randn(*classes.shape, self.means.shape[1], generator=generator,
                            device=self.means.device, dtype=self.means.dtype)
        return self.means[classes] + self.noise_std * noise


class EmpiricalClasses(LatentClassModel):
    """D_c = uniform over the examples of class c of a labelled set; ρ = class frequencies unless given.

    Args:
        inputs: (n, *input_shape) examples; labels: (n,) classes in 0..N_C−1, every class present.
    """

    def __init__(self, inputs: Tensor, labels: Tensor, class_probs: Tensor | None = None):
        if labels.ndim != 1 or inputs.shape[0] != labels.shape[0]:
            raise ValueError(f"inputs (n, ...) and labels (n,) must agree in n, got {tuple(inputs.shape)} "
                             f"and {tuple(labels.shape)}")
        counts = torch.bincount(labels)
        if bool((counts == 0).any()) or counts.numel() < 2:
            raise ValueError("labels must cover the classes 0..N_C−1 (N_C ≥ 2), each at least once")
        self.inputs, self.labels = inputs, labels
        self.counts = counts
        self.class_probs = (counts.float() / counts.sum() if class_probs is None
                            else check_class_probs(class_probs.to(inputs.device)))
        if self.class_probs.numel() != counts.numel():
            raise ValueError(f"class_probs must have {counts.numel()} entries, got {self.class_probs.numel()}")
        self.order = torch.argsort(labels, stable=True)
        self.starts = torch.cumsum(counts, 0) - counts

    def sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        uniform = torch.rand(classes.shape, generator=generator, device=classes.device)
        within = (uniform * self.counts[classes]).long().clamp_max(self.counts[classes] - 1)
        return self.inputs[self.order[self.starts[classes] + within]]


def load_digits(device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor]:
    """scikit-learn's 1,797 handwritten digits (shipped with the library, no download).

    Returns images (1797, 1, 8, 8) scaled to [0, 1] and labels (1797,) in 0..9, on ``device``.
    """
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    images = torch.as_tensor(bunch.images, dtype=dtype).unsqueeze(1) / 16.0
    return images.to(device), torch.as_tensor(bunch.target, dtype=torch.long, device=device)


def train_test_split(inputs: Tensor, labels: Tensor, test_fraction: float = 0.3,
                     seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Stratified split → (x_train, y_train, x_test, y_test), on the inputs' device."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if inputs.shape[0] != labels.shape[0]:
        raise ValueError(f"inputs and labels must have the same length, got {inputs.shape[0]} and {labels.shape[0]}")
    from sklearn.model_selection import train_test_split as sklearn_split

    index = torch.arange(labels.numel())
    train, test = sklearn_split(index.numpy(), test_size=test_fraction, random_state=seed,
                                stratify=labels.cpu().numpy())
    train, test = torch.as_tensor(train, device=inputs.device), torch.as_tensor(test, device=inputs.device)
    return inputs[train], labels[train], inputs[test], labels[test]
