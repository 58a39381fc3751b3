"""L_un(f), the unsupervised loss: exact over a labelled set, or by Monte Carlo."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from .._checks import (
    check_features,
    check_finite,
    check_instance,
    check_int,
    check_min_size,
    check_probabilities,
    check_tensor,
)
from ._classifiers import (
    class_frequencies,
    class_members,
    class_weights,
    labelled_set_sizes,
)

CHUNK_ELEMENTS = 2**22
"""Elements per chunk of the memory-bounded loops (about 32 MiB in float64)."""


def exact_unsupervised_loss(
    features: Tensor,
    labels: Tensor,
    class_probs: Tensor | None = None,
    chunk_size: int = 64,
) -> Tensor:
    """L_un(f) (Arora et al. 2019, eq. (1)), exactly, each D_c uniform over class c.

    L_un = Σ_c ρ(c) Σ_{c⁻} ρ(c⁻) mean_{x, x⁺ ∈ c} mean_{x⁻ ∈ c⁻}
    log(1 + e^{f(x)ᵀf(x⁻) − f(x)ᵀf(x⁺)}) (x and x⁺ drawn independently, so x⁺ = x
    has its share). All n·n_c·n terms are summed, in float64, over chunks of
    ``chunk_size`` anchors to bound memory. features (..., n, d), labels (n,),
    ρ (N_C,) defaulting to the label frequencies → (...).
    """
    check_features("features", features, labels)
    if class_probs is not None:
        check_probabilities("class_probs", class_probs)
    chunk_size = check_int("chunk_size", chunk_size)
    check_min_size("labels", labels, 1)
    members, counts = class_members(labels)
    if bool((counts == 0).any()):
        raise ValueError("every class 0..max(labels) must have at least one example")
    rho = class_frequencies(labels) if class_probs is None else class_probs.double()
    if rho.numel() != counts.numel():
        raise ValueError(
            f"class_probs must have one entry per class ({counts.numel()}), "
            f"got {rho.numel()}"
        )
    rho = rho.to(features.device)
    example_weight = rho[labels] / counts[labels]  # ρ(c)/n_c: x's weight in D
    positives = members[labels]  # (n, n_max), −1 pads
    positive_weight = (positives >= 0).double() / counts[labels, None]
    gram = features.double() @ features.double().transpose(-1, -2)
    total = torch.zeros(
        features.shape[:-2], dtype=torch.float64, device=features.device
    )
    for start in range(0, labels.numel(), chunk_size):
        rows = slice(start, start + chunk_size)
        g = gram[..., rows, :]
        g_pos = g.gather(-1, positives[rows].clamp_min(0).expand(*g.shape[:-1], -1))
        # torch's softplus returns g itself above its threshold; at 40 the error
        # e^{−40} ≈ 4e−18 is below float64's rounding, and one kernel is 4× faster
        # than the autograd-safe _precision.softplus (no gradient is taken here)
        gaps = g.unsqueeze(-2) - g_pos.unsqueeze(-1)
        terms = F.softplus(gaps, threshold=40.0) @ example_weight  # (..., a, n_max)
        total += ((terms * positive_weight[rows]).sum(-1) * example_weight[rows]).sum(
            -1
        )
    return total


class UnsupervisedSamples(NamedTuple):
    """Indices into a labelled set of M draws of (x, x⁺, x⁻_1 … x⁻_N) from D_sim ⊗
    D_neg^{⊗N}."""

    anchor: Tensor  #: (M,) x
    positive: Tensor  #: (M,) x⁺, of the anchor's class
    negatives: Tensor  #: (M, N) x⁻_1 … x⁻_N


def draw_unsupervised_samples(
    labels: Tensor,
    n_negatives: int,
    n_samples: int,
    generator: torch.Generator | None = None,
    class_probs: Tensor | None = None,
) -> UnsupervisedSamples:
    r"""Draw M = n_samples tuples (x, x⁺, x⁻_1, …, x⁻_N), as indices into a labelled
    set.

    D_c is uniform over the examples of class c: c ~ ρ, then x and x⁺ i.i.d. uniform
    over class c (x⁺ = x has its share, as in
    :func:`ccl_helpers.metrics.exact_unsupervised_loss`); each x⁻_i independently:
    c⁻ ~ ρ, x⁻ uniform over class c⁻ — i.e. example i has weight ρ(y_i)/n_{y_i}.

    Args:
        labels: (n,) LongTensor covering 0..N_C−1. n_negatives: N ≥ 1. n_samples: M ≥ 2.
        generator: a torch.Generator on the labels' device (default: a new one seeded
            0), for determinism. class_probs: ρ (N_C,), entries > 0; default the label
            frequencies.
    Returns: the indices (anchor (M,), positive (M,), negatives (M, N)), a named
    tuple on the labels' device.
    """
    n_negatives = check_int("n_negatives", n_negatives)
    n_samples = check_int("n_samples", n_samples, 2)
    n, m = n_negatives, n_samples
    n_classes, counts = labelled_set_sizes(torch.zeros(labels.numel(), 1), labels)
    rho = class_weights(class_probs, n_classes, counts, uniform_default=False)
    if generator is None:
        generator = torch.Generator(device=labels.device).manual_seed(0)
    example_weight = rho[labels] / counts[labels]
    anchor = torch.multinomial(example_weight, m, replacement=True, generator=generator)
    members, _ = class_members(labels, n_classes)
    anchor_class = labels[anchor]
    uniform = torch.rand(
        m, generator=generator, device=labels.device, dtype=torch.float64
    )
    within = (uniform * counts[anchor_class]).long().clamp_max(counts[anchor_class] - 1)
    positive = members[anchor_class, within]
    negatives = torch.multinomial(
        example_weight, m * n, replacement=True, generator=generator
    ).view(m, n)
    return UnsupervisedSamples(anchor, positive, negatives)


def unsupervised_loss_curve(
    features: Tensor, samples: UnsupervisedSamples
) -> tuple[Tensor, Tensor]:
    r"""Unbiased estimates of L^N_un(f) for every N = 1 … N_max at once, with standard
    errors.

    For draw t with scores s⁺_t = f(x_t)ᵀf(x⁺_t) and s_{t,i} = f(x_t)ᵀf(x⁻_{t,i}), the
    N-negative
    loss uses the first N negatives: ℓ_{t,N} = log(e^{s⁺_t} + Σ_{i≤N} e^{s_{t,i}}) −
    s⁺_t (eq. 6, cumulative log-sum-exp), and L̂^N_un = mean_t ℓ_{t,N}, standard error
    std_t(ℓ_{t,N})/√M. The estimates for different N share draws (common random
    numbers); each is unbiased.

    Args:
        features: f(x), shape (..., n, d) (the seeds' features of the labelled set).
        samples: from :func:`draw_unsupervised_samples` (N_max =
            samples.negatives.shape[1]).
    Returns: estimate (..., N_max) and standard error (..., N_max), float64; column N −
    1 is L^N_un. Computed in float64 in memory-bounded chunks of draws.
    """
    check_tensor("features", features, min_ndim=2, floating=True)
    check_instance("samples", samples, UnsupervisedSamples)
    anchor, positive, negatives = samples
    if (
        negatives.ndim != 2
        or anchor.shape != positive.shape
        or anchor.shape[0] != negatives.shape[0]
        or anchor.shape[0] < 2
    ):
        raise ValueError(
            "samples must hold anchor (M,), positive (M,), negatives (M, N) with M ≥ 2"
        )
    n = features.shape[-2]
    if any(int(idx.max()) >= n or int(idx.min()) < 0 for idx in samples):
        raise ValueError(
            f"samples index examples outside 0..{n - 1} of features (..., n={n}, d)"
        )
    check_finite("features", features)
    features = features.double()
    m, n_max = negatives.shape
    batch = math.prod(features.shape[:-2])
    chunk = max(1, CHUNK_ELEMENTS // (batch * n_max * features.shape[-1]))
    shift = torch.log(
        torch.arange(2, n_max + 2, dtype=torch.float64, device=features.device)
    )  # log(N+1)
    first = torch.zeros(
        *features.shape[:-2], n_max, dtype=torch.float64, device=features.device
    )
    second = torch.zeros_like(first)
    for start in range(0, m, chunk):  # memory-bounded chunks of draws
        rows = slice(start, start + chunk)
        a = features[..., anchor[rows], :]
        positive_score = (a * features[..., positive[rows], :]).sum(
            -1, keepdim=True
        )  # (..., t, 1)
        negative_scores = torch.einsum(
            "...td,...tnd->...tn", a, features[..., negatives[rows], :]
        )
        loss = (
            torch.logaddexp(positive_score, torch.logcumsumexp(negative_scores, -1))
            - positive_score
        )
        centred = loss - shift
        first = first + centred.sum(-2)
        second = second + (centred * centred).sum(-2)
    mean = first / m
    variance = ((second - m * mean * mean) / (m - 1)).clamp_min(0)
    return mean + shift, (variance / m).sqrt()


def unsupervised_loss_monte_carlo(
    features: Tensor,
    labels: Tensor,
    n_negatives: int,
    n_samples: int,
    generator: torch.Generator | None = None,
    class_probs: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Unbiased Monte Carlo estimate of L^N_un(f) (eq. 6) on a finite labelled set, and
    its standard error.

    D_c uniform over the examples of class c, ρ the label frequencies unless given; M =
    n_samples draws of (x, x⁺, x⁻_1 … x⁻_N) (:func:`draw_unsupervised_samples`),
    estimate = mean of −log(e^{f(x)ᵀf(x⁺)} / (e^{f(x)ᵀf(x⁺)} + Σ_i e^{f(x)ᵀf(x⁻_i)})),
    standard error = std/√M. (For N = 1 the exact value is
    :func:`ccl_helpers.metrics.exact_unsupervised_loss`.)

    Args: features (..., n, d); labels (n,); n_negatives N ≥ 1; n_samples M ≥ 2;
        generator on the labels' device (default seeded 0); class_probs ρ (N_C,).

    Returns: estimate (...) and standard error (...), float64.
    """
    n_negatives = check_int("n_negatives", n_negatives)
    n_samples = check_int("n_samples", n_samples, 2)
    labelled_set_sizes(features, labels)
    samples = draw_unsupervised_samples(
        labels, n_negatives, n_samples, generator, class_probs
    )
    estimate, standard_error = unsupervised_loss_curve(features, samples)
    return estimate[..., -1], standard_error[..., -1]
