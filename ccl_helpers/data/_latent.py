"""The latent-class model, scikit-learn's digits, and fixed training sets.

The latent-class model (Arora et al., 2019): nature has classes c with probabilities
ρ(c) and a distribution D_c per class. A similar pair (x, x⁺) ~ D_sim draws c⁺ ~ ρ and
x, x⁺ i.i.d. from D_{c⁺}; a negative x⁻ ~ D_neg draws c⁻ ~ ρ and x⁻ ~ D_{c⁻}.
Two kinds of D_c are provided: Gaussian (:class:`GaussianClasses`) and the uniform
distribution over the examples of a labelled data set (:class:`EmpiricalClasses`).
Every sampler takes a ``shape`` (e.g. ``(n_seeds, batch)``) and a ``torch.Generator``,
and returns tensors of that leading shape on the model's device.

Fixed training sets for the convergence theorems (Merad et al., Section 4; Wen 2020):
inputs on the unit sphere (:func:`unit_sphere`), their separation δ (:func:`separation`)
and fixed triplets (:func:`fixed_triplets`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from .. import coupon
from .._checks import (
    check_choice,
    check_device,
    check_finite,
    check_floating_dtype,
    check_inputs,
    check_instance,
    check_int,
    check_labels,
    check_open_unit,
    check_positive,
    check_probabilities,
    check_tensor,
)


def _check_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(check_int("shape", size) for size in shape)


def _block(classes: Tensor, block_size: int | None) -> Tensor:
    if block_size is None:
        return classes
    if block_size < 1:
        raise ValueError(f"block_size must be ≥ 1, got {block_size}")
    return classes.unsqueeze(-1).expand(*classes.shape, block_size)


class LatentClassModel:
    """Base of the latent-class model: ρ plus a sampler of x ~ D_c for given classes.

    Subclasses set ``class_probs`` (N_C,) and implement ``_sample_given`` (the
    sampler of :meth:`sample_given` on trusted classes).
    """

    class_probs: Tensor

    @property
    def n_classes(self) -> int:
        """N_C, the number of latent classes."""
        return self.class_probs.numel()

    @property
    def collision_probability(self) -> float:
        """τ = P(c⁺ = c⁻) = Σ_c ρ(c)², the chance that a negative shares the positive's
        class."""
        return coupon.tau_plus(1, self.class_probs)

    def sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        """x ~ D_c for every entry c of ``classes`` (shape S) → (*S, *input_shape);
        ``classes`` an int64 tensor of classes in 0..N_C − 1 (no negative index; its
        values are read)."""
        check_tensor("classes", classes, integer=True)
        if classes.dtype != torch.int64:  # uint8 and bool index as masks, not classes
            raise ValueError(
                f"classes must be torch.int64 (torch.long) classes, got "
                f"{classes.dtype}: pass classes.long()"
            )
        if classes.numel() and (
            int(classes.min()) < 0 or int(classes.max()) >= self.n_classes
        ):
            raise ValueError(
                f"classes must hold classes in 0..N_C − 1 = {self.n_classes - 1}, got "
                f"entries from {int(classes.min())} to {int(classes.max())}"
            )
        return self._sample_given(classes, generator)

    def _sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        """:meth:`sample_given` on classes drawn from ρ (trusted)."""
        raise NotImplementedError

    def sample_classes(
        self, shape: tuple[int, ...], generator: torch.Generator
    ) -> Tensor:
        """c ~ ρ, i.i.d., of the given shape (a LongTensor)."""
        shape = _check_shape(shape)
        flat = torch.multinomial(
            self.class_probs,
            int(torch.Size(shape).numel()),
            replacement=True,
            generator=generator,
        )
        return flat.reshape(shape)

    def sample_sim(
        self,
        shape: tuple[int, ...],
        generator: torch.Generator,
        block_size: int | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """(x, x⁺, c⁺) ~ D_sim: x (*shape, *input), x⁺ (*shape, *input) — or, with
        ``block_size`` b, a block of b positives (*shape, b, *input) all from c⁺ — and
        c⁺ (*shape)."""
        classes = self.sample_classes(shape, generator)
        anchor = self._sample_given(classes, generator)
        positive = self._sample_given(_block(classes, block_size), generator)
        return anchor, positive, classes

    def sample_neg(
        self,
        shape: tuple[int, ...],
        generator: torch.Generator,
        block_size: int | None = None,
    ) -> tuple[Tensor, Tensor]:
        """(x⁻, c⁻) ~ D_neg: x⁻ (*shape, *input) — or a block (*shape, b, *input) from
        one class c⁻ — and c⁻ (*shape)."""
        classes = self.sample_classes(shape, generator)
        return self._sample_given(_block(classes, block_size), generator), classes


@dataclass
class GaussianClasses(LatentClassModel):
    """D_c = N(means[c], noise_std² I): class probabilities ρ (N_C,), means (N_C, D)."""

    class_probs: Tensor
    means: Tensor
    noise_std: float

    def __post_init__(self):
        check_probabilities("class_probs", self.class_probs)
        check_tensor("means", self.means, ndim=2, floating=True)
        if self.means.shape[0] != self.class_probs.numel():
            raise ValueError(
                "means must have shape (n_classes, dim), n_classes = len(class_probs) "
                f"= {self.class_probs.numel()}, got {tuple(self.means.shape)}"
            )
        check_finite("means", self.means)
        check_positive("noise_std", self.noise_std)

    @classmethod
    def random(
        cls,
        n_classes: int,
        dim: int,
        *,
        class_probs: Tensor | None = None,
        separation: float = 1.0,
        noise_std: float = 1.0,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ) -> GaussianClasses:
        """Class means drawn i.i.d. N(0, separation²/dim · I), so ‖m_c‖ ≈ separation
        (finite, ≥ 0); ρ uniform by default."""
        check_positive("separation", separation, allow_zero=True)
        if n_classes < 2 or dim < 1:
            raise ValueError(
                f"need n_classes ≥ 2 and dim ≥ 1, got n_classes={n_classes}, dim={dim}"
            )
        generator = torch.Generator(device="cpu").manual_seed(seed)
        means = torch.randn(n_classes, dim, generator=generator) * separation / dim**0.5
        probs = (
            torch.full((n_classes,), 1.0 / n_classes)
            if class_probs is None
            else class_probs.cpu()
        )
        return cls(probs.float().to(device), means.to(device), float(noise_std))

    def _sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        noise = torch.randn(
            *classes.shape,
            self.means.shape[1],
            generator=generator,
            device=self.means.device,
            dtype=self.means.dtype,
        )
        return self.means[classes] + self.noise_std * noise


class EmpiricalClasses(LatentClassModel):
    """D_c = uniform over the examples of class c of a labelled set; ρ = class
    frequencies unless given.

    Args:
        inputs: (n, *input_shape) examples; labels: (n,) classes in 0..N_C−1, every
            class present.
    """

    def __init__(
        self, inputs: Tensor, labels: Tensor, class_probs: Tensor | None = None
    ):
        check_inputs("inputs", inputs, labels)
        counts = torch.bincount(labels)
        if bool((counts == 0).any()) or counts.numel() < 2:
            raise ValueError(
                "labels must cover the classes 0..N_C−1 (N_C ≥ 2), each at least once"
            )
        self.inputs, self.labels = inputs, labels
        self.counts = counts
        self.class_probs = (
            counts.float() / counts.sum()
            if class_probs is None
            else check_probabilities("class_probs", class_probs.to(inputs.device))
        )
        if self.class_probs.numel() != counts.numel():
            raise ValueError(
                f"class_probs must have {counts.numel()} entries, got "
                f"{self.class_probs.numel()}"
            )
        self.order = torch.argsort(labels, stable=True)
        self.starts = torch.cumsum(counts, 0) - counts

    def _sample_given(self, classes: Tensor, generator: torch.Generator) -> Tensor:
        uniform = torch.rand(classes.shape, generator=generator, device=classes.device)
        within = (
            (uniform * self.counts[classes]).long().clamp_max(self.counts[classes] - 1)
        )
        return self.inputs[self.order[self.starts[classes] + within]]


def load_digits(
    device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
) -> tuple[Tensor, Tensor]:
    """scikit-learn's 1,797 handwritten digits (shipped with the library, no download).

    Returns images (1797, 1, 8, 8) scaled to [0, 1] and labels (1797,) in 0..9, on
    ``device``, images in the floating ``dtype``.
    """
    device = check_device("device", device)
    check_floating_dtype("dtype", dtype)
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    images = torch.as_tensor(bunch.images, dtype=dtype).unsqueeze(1) / 16.0
    return images.to(device), torch.as_tensor(
        bunch.target, dtype=torch.long, device=device
    )


def train_test_split(
    inputs: Tensor, labels: Tensor, test_fraction: float = 0.3, seed: int = 0
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Stratified split → (x_train, y_train, x_test, y_test), on the inputs' device.

    inputs: (n, ...) finite floating-point examples; labels: (n,) classes ≥ 0, each
    class with at least 2 examples; test_fraction in (0, 1), leaving at least one
    example per class on each side; seed: an integer ≥ 0."""
    check_tensor("inputs", inputs, min_ndim=1, floating=True)
    check_finite("inputs", inputs)
    check_labels("labels", labels)
    check_open_unit("test_fraction", test_fraction)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    if inputs.shape[0] != labels.shape[0]:
        raise ValueError(
            "inputs and labels must have the same length, got "
            f"{inputs.shape[0]} and {labels.shape[0]}"
        )
    counts = torch.bincount(labels)
    present = counts[counts > 0]
    if present.numel() and int(present.min()) < 2:
        raise ValueError(
            "labels must hold at least 2 examples of each class (stratified split), "
            f"class {int(torch.nonzero((counts > 0) & (counts < 2))[0])} has 1"
        )
    n_test = math.ceil(test_fraction * labels.numel())
    if min(n_test, labels.numel() - n_test) < present.numel():
        raise ValueError(
            f"test_fraction={test_fraction} splits the n={labels.numel()} labels into "
            f"{labels.numel() - n_test} training and {n_test} test examples: each side "
            f"needs at least one example of each of the {present.numel()} classes"
        )
    from sklearn.model_selection import train_test_split as sklearn_split

    index = torch.arange(labels.numel())
    train, test = sklearn_split(
        index.numpy(),
        test_size=test_fraction,
        random_state=seed,
        stratify=labels.cpu().numpy(),
    )
    train, test = (
        torch.as_tensor(train, device=inputs.device),
        torch.as_tensor(test, device=inputs.device),
    )
    return inputs[train], labels[train], inputs[test], labels[test]


# ---------------------------------------------------------------- fixed training sets
# (Assumption 1)


def unit_sphere(x: Tensor) -> Tensor:
    """Flatten and normalise each example to the unit sphere: x (n, *input_shape) → x_i
    / ‖x_i‖₂, (n, D).

    Assumption 1 of Merad et al. (Section 4) and of Wen (2020): ‖x‖₂ = 1 for every
    training input. Raises ValueError when a row is all zero (it has no direction) or
    not finite.
    """
    if x.ndim < 1 or x.shape[0] < 1:
        raise ValueError(f"x must have shape (n, ...) with n ≥ 1, got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got {x.dtype}")
    flat = x.reshape(x.shape[0], -1)
    norms = flat.norm(dim=1, keepdim=True)
    if not bool(torch.isfinite(norms).all()):
        raise ValueError("x must be finite")
    zero = int((norms == 0).sum())
    if zero:
        raise ValueError(
            f"x has {zero} all-zero rows, which cannot be normalised to unit norm"
        )
    return flat / norms


def _duplicate_rows(x: Tensor) -> Tensor:
    """Exact duplicates among the rows of x (n, *input_shape): a LongTensor (k, 2) of
    pairs (i, j), i < j, where row j equals row i and i is the first occurrence of that
    row; (0, 2) when all rows differ (x trusted: floating-point and finite)."""
    flat = x.reshape(x.shape[0], -1)
    _, inverse = torch.unique(flat, dim=0, return_inverse=True)
    index = torch.arange(flat.shape[0], device=x.device)
    first = torch.full(
        (int(inverse.max()) + 1 if index.numel() else 0,),
        flat.shape[0],
        device=x.device,
        dtype=torch.long,
    ).scatter_reduce(0, inverse, index, reduce="amin")
    later = first[inverse] != index
    return torch.stack([first[inverse][later], index[later]], dim=1)


def separation(
    x: Tensor, *, return_pair: bool = False, block_elements: int = 2**24
) -> Tensor | tuple[Tensor, Tensor]:
    """δ of the separation assumption: δ = min over pairs i ≠ j of ‖x_i − x_j‖₂, for x
    (n, *input_shape).

    Merad et al., Assumption 1: ‖x − x′‖₂ ≥ δ for any two samples of X_data = ∪ᵢ {xᵢ,
    xᵢ⁺, xᵢ⁻} (the paper notes it fails as soon as one sample is reused in two triplets,
    so repeated samples count);
    Wen (2020), Assumption 2: ‖xᵢ − xⱼ‖₂ ≥ δ for all i ≠ j in [n]. Exact duplicates are
    therefore not ignored: they give δ = 0, with a warning that counts the duplicated
    pairs.

    Vectorised in blocks of rows (at most ``block_elements`` distances at a time):
    candidate nearest neighbours from the Gram matrix, then their distances recomputed
    directly (exact, no cancellation). Returns a 0-dim tensor on x's device, and with
    ``return_pair`` also the closest pair (i, j), i < j.
    """
    check_tensor("x", x, min_ndim=1, floating=True)
    block_elements = check_int("block_elements", block_elements)
    if x.shape[0] < 2:
        raise ValueError(f"x must have shape (n, ...) with n ≥ 2, got {tuple(x.shape)}")
    flat = x.reshape(x.shape[0], -1)
    if not bool(torch.isfinite(flat).all()):
        raise ValueError("x must be finite")
    n = flat.shape[0]
    squared = flat.square().sum(1)
    rows = max(1, block_elements // n)
    nearest = torch.empty(n, dtype=torch.long, device=x.device)
    for start in range(0, n, rows):
        block = flat[start : start + rows]
        gram = (
            squared[start : start + rows, None] + squared[None, :] - 2 * block @ flat.T
        )
        own = torch.arange(start, start + block.shape[0], device=x.device)
        gram[torch.arange(block.shape[0], device=x.device), own] = float("inf")
        nearest[start : start + rows] = gram.argmin(1)
    distances = (flat - flat[nearest]).norm(dim=1)
    i = int(distances.argmin())
    delta = distances[i]
    if float(delta) == 0.0:
        count = _duplicate_rows(flat).shape[0]
        warnings.warn(
            f"x has {count} exactly duplicated rows: the separation "
            "assumption fails (δ = 0)",
            stacklevel=2,
        )
    if not return_pair:
        return delta
    j = int(nearest[i])
    return delta, torch.tensor(sorted((i, j)), device=x.device)


class Triplets(NamedTuple):
    """n fixed triplets (xᵢ, xᵢ⁺, xᵢ⁻) on the unit sphere.

    anchor, positive, negative: (n, D); anchor_class c⁺ᵢ (the class of xᵢ and xᵢ⁺) and
    negative_class c⁻ᵢ: (n,); index: (n, 3) rows of the source data set used for (xᵢ,
    xᵢ⁺, xᵢ⁻), all 3n distinct.
    """

    anchor: Tensor
    positive: Tensor
    negative: Tensor
    anchor_class: Tensor
    negative_class: Tensor
    index: Tensor

    def inputs(self) -> Tensor:
        """X_data of Assumption 1: every sample of every triplet, (3n, D) (anchors,
        positives, negatives)."""
        return torch.cat([self.anchor, self.positive, self.negative])


NEGATIVES = ("rho", "other_class")
"""How :func:`fixed_triplets` draws the negative's class: ``"rho"``, c⁻ ~ ρ
independently of c⁺ (the source's D_neg, so c⁻ = c⁺ with probability τ);
``"other_class"``, c⁻ ~ ρ conditioned on c⁻ ≠ c⁺."""


def fixed_triplets(
    inputs: Tensor,
    labels: Tensor,
    n: int,
    generator: torch.Generator,
    *,
    class_probs: Tensor | None = None,
    negatives: str = "rho",
) -> Triplets:
    """n fixed training triplets from labelled data, as in Merad et al., Section 4 (eq.
    (11)).

    For each i: c⁺ᵢ ~ ρ and xᵢ, xᵢ⁺ from class c⁺ᵢ (a similar pair of D_sim); c⁻ᵢ ~ ρ
    and xᵢ⁻ from class c⁻ᵢ (a negative of D_neg; see :data:`NEGATIVES`). Classes are
    i.i.d.; within a class the examples are drawn uniformly *without replacement* over
    all 3n slots, so that no example is used twice — the source notes that Assumption 1
    fails as soon as a sample is reused. Every sample is mapped to the unit sphere
    (:func:`unit_sphere`).

    Args:
        inputs: (N, *input_shape) examples; labels: (N,) classes 0..N_C−1, every class
            present.
        n: number of triplets (≥ 1); each class must hold the examples the draw asks of
            it.
        generator: a torch.Generator on the inputs' device.
        class_probs: ρ (N_C,), default the label frequencies.
    """
    check_tensor("inputs", inputs, min_ndim=1, floating=True)
    check_finite("inputs", inputs)
    n = check_int("n", n)
    check_choice("negatives", negatives, NEGATIVES)
    latent = EmpiricalClasses(
        inputs, labels, class_probs
    )  # validates inputs, labels and ρ
    if 3 * n > labels.numel():
        raise ValueError(
            f"n must be ≤ N/3 = {labels.numel() // 3} (3n distinct examples), got {n}"
        )
    rho = latent.class_probs
    anchor_class = torch.multinomial(rho, n, replacement=True, generator=generator)
    if negatives == "rho":
        negative_class = torch.multinomial(
            rho, n, replacement=True, generator=generator
        )
    else:
        weights = rho.expand(n, -1).clone()
        weights[torch.arange(n, device=rho.device), anchor_class] = 0
        if bool((weights.sum(1) == 0).any()):
            raise ValueError(
                "class_probs must give positive mass to a class other than "
                "each anchor's"
            )
        negative_class = torch.multinomial(weights, 1, generator=generator).squeeze(1)
    # the 3n slots' classes (c⁺ᵢ, c⁺ᵢ, c⁻ᵢ) and, for each slot, its rank among the slots
    # of its class
    wanted = torch.stack([anchor_class, anchor_class, negative_class], dim=1).flatten()
    order = torch.argsort(wanted, stable=True)
    demand = torch.bincount(wanted, minlength=latent.n_classes)
    short = torch.nonzero(demand > latent.counts).flatten()
    if short.numel():
        c = int(short[0])
        raise ValueError(
            f"n={n} triplets need {int(demand[c])} examples of class {c}, "
            "which has only "
            f"{int(latent.counts[c])}; lower n"
        )
    rank = torch.empty_like(order)
    rank[order] = (
        torch.arange(wanted.numel(), device=wanted.device)
        - (torch.cumsum(demand, 0) - demand)[wanted[order]]
    )
    # the examples grouped by class, in a random order within each class
    shuffled = torch.randperm(labels.numel(), generator=generator, device=labels.device)
    by_class = shuffled[torch.argsort(labels[shuffled], stable=True)]
    index = by_class[latent.starts[wanted] + rank].reshape(n, 3)
    points = unit_sphere(inputs[index.flatten()]).reshape(n, 3, -1)
    return Triplets(
        points[:, 0], points[:, 1], points[:, 2], anchor_class, negative_class, index
    )


def hard_negatives(triplets: Triplets, delta: float) -> Triplets:
    """The triplets with every negative moved on the unit sphere to distance δ of its
    positive: x⁻ᵢ ← cos θ x⁺ᵢ + sin θ vᵢ, 2 sin(θ/2) = δ, vᵢ the unit direction of the
    original x⁻ᵢ orthogonal to x⁺ᵢ (along the great circle through both).

    Then ‖x⁻ᵢ − x⁺ᵢ‖₂ = δ for every i, so the separation of Assumption 1 (Merad et
    al.) is exactly δ when δ is at most half the original separation (a negative
    stays ≥ δ from every other sample). Hard negatives: the encoder must tell apart
    two inputs δ apart. Shapes as the input's (n, D); classes and index unchanged.

    Raises ValueError unless 0 < δ ≤ 2, or when a negative is parallel to its
    positive (no direction to move along).
    """
    check_instance("triplets", triplets, Triplets)
    delta = check_positive("delta", delta)
    if delta > 2:
        raise ValueError(f"delta must be in (0, 2] (unit sphere), got {delta}")
    positive, negative = triplets.positive, triplets.negative
    along = (negative * positive).sum(-1, keepdim=True)
    orthogonal = negative - along * positive
    size = orthogonal.norm(dim=-1, keepdim=True)
    if bool((size <= 1e-6 * negative.norm(dim=-1, keepdim=True)).any()):
        raise ValueError("triplets has a negative parallel to its positive")
    theta = 2 * math.asin(delta / 2)
    moved = math.cos(theta) * positive + math.sin(theta) * orthogonal / size
    return triplets._replace(negative=moved)
