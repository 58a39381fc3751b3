"""Blocks of similar points: Monte Carlo estimates of the block loss and its bound.

The estimates are paired; the bound is evaluated along training."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from .. import coupon, metrics
from ..checks import (
    Estimate,
    Instance,
    Int,
    Labels,
    Optional,
    Sized,
    TensorOf,
    checked,
)
from ..losses import softplus
from ._lemma import _mean_classifier_bound


class BlockSamples(NamedTuple):
    """Indices into a labelled set of M draws of (x, x⁺_1 … x⁺_b, x⁻_1 … x⁻_b): x⁺_j
    i.i.d. from D_{c⁺} (c⁺ the class of x), x⁻_j i.i.d. from D_{c⁻}, c⁻ ~ ρ."""

    anchor: Tensor  #: (M,)
    positives: Tensor  #: (M, b)
    negatives: Tensor  #: (M, b)


BLOCK_DRAWS = Estimate(
    "curl's block draws",
    ("block_size", "n_samples"),
    lambda a: 24 * a["n_samples"] * (2 * a["block_size"] + 1),
)
"""The memory of M = n_samples draws of (x, x⁺_1 … x⁺_b, x⁻_1 … x⁻_b): per example an
int64 index, a float64 uniform or an int64 class, and an int64 position."""


@checked(
    labels=Labels(),
    block_size=Sized(Int(1), BLOCK_DRAWS),
    n_samples=Sized(Int(2), BLOCK_DRAWS),
    generator=Optional(Instance(torch.Generator)),
)
def draw_block_samples(
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
) -> BlockSamples:
    """Draw M = ``n_samples`` anchors with a positive and a negative block of
    ``block_size`` each, on the finite distribution of labels (n,) (D_c uniform over
    class c's examples, ρ the label frequencies, so x is uniform over the set)."""
    b, m = block_size, n_samples
    members, counts = metrics.class_members(labels)
    if bool((counts == 0).any()) or counts.numel() < 2:
        raise ValueError("labels must cover the classes 0..N_C−1 (N_C ≥ 2)")
    if generator is None:
        generator = torch.Generator(device=labels.device).manual_seed(0)
    device = labels.device

    def uniform_members(classes: Tensor) -> Tensor:  # (M,) classes → (M, b) examples
        u = torch.rand((m, b), generator=generator, device=device, dtype=torch.float64)
        within = (u * counts[classes, None]).long().clamp_max(counts[classes, None] - 1)
        return members[classes[:, None], within]

    anchor = torch.randint(labels.numel(), (m,), generator=generator, device=device)
    negative_class = labels[
        torch.randint(labels.numel(), (m,), generator=generator, device=device)
    ]
    return BlockSamples(
        anchor, uniform_members(labels[anchor]), uniform_members(negative_class)
    )


@checked(
    features=TensorOf(min_ndim=2, floating=True, finite=True),
    samples=Instance(BlockSamples),
)
def block_losses(features: Tensor, samples: BlockSamples) -> dict[str, Tensor]:
    """Paired Monte Carlo estimates of L_un and of the block loss
    L^block_un = E ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), f̄^± the mean of f over the block, ℓ(z) =
    log(1 + e^z) (:func:`ccl_helpers.losses.softplus`); L_un uses the first element of
    each block, so the two share draws.

    features (..., n, d) → {"L_un", "L_un_se", "L_block", "L_block_se", "gap_se"}, each
    (...) float64 (``gap_se``: the standard error of L_un − L^block_un). Jensen's
    inequality gives L^block_un ≤ L_un for every f.
    """
    n = features.shape[-2]
    if any(int(index.max()) >= n for index in samples):
        raise ValueError(
            f"samples index examples beyond the n = {n} rows of features (..., n, d)"
        )
    return _block_losses(features, samples)


def _block_losses(features: Tensor, samples: BlockSamples) -> dict[str, Tensor]:
    """:func:`block_losses` on arguments its caller has checked."""
    anchor, positives, negatives = samples
    f = features.double()
    a = f[..., anchor, :]  # (..., M, d)
    single = softplus(
        (a * (f[..., negatives[:, 0], :] - f[..., positives[:, 0], :])).sum(-1)
    )
    block = softplus(
        (a * (f[..., negatives, :].mean(-2) - f[..., positives, :].mean(-2))).sum(-1)
    )
    m = anchor.numel()

    def standard_error(values: Tensor) -> Tensor:
        return values.std(-1) / math.sqrt(m)

    return {
        "L_un": single.mean(-1),
        "L_un_se": standard_error(single),
        "L_block": block.mean(-1),
        "L_block_se": standard_error(block),
        "gap_se": standard_error(single - block),
    }


@checked(
    labels=Labels(),
    inputs=TensorOf(min_ndim=1, floating=True, finite=True, like=("labels", 0)),
    block_size=Sized(Int(1), BLOCK_DRAWS),
    n_samples=Sized(Int(2), BLOCK_DRAWS),
    generator=Optional(Instance(torch.Generator)),
)
def block_evaluator(
    inputs: Tensor,
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
):
    """An ``evaluate`` for :func:`ccl_helpers.train.train`: model ↦ {quantity: (S,)}
    on the finite distribution (inputs, labels), with draws made once here
    (:func:`draw_block_samples`) and shared by every checkpoint: the entries of
    :func:`block_losses`, ``L_mu`` (the mean classifier on AVG-2, exact), and the
    lemma's bound from each loss, ``bound`` (L_un − τ log 2)/(1 − τ) and
    ``block_bound`` (L^block_un − τ log 2)/(1 − τ)."""
    samples = draw_block_samples(labels, block_size, n_samples, generator)
    tau = coupon.tau_plus(1, metrics.class_frequencies(labels))

    def evaluate(model) -> dict[str, Tensor]:
        features = model(inputs).double()
        losses = _block_losses(features, samples)
        return {
            **losses,
            "L_mu": metrics.mean_classifier(features, labels, task_size=2)["loss"],
            "bound": _mean_classifier_bound(losses["L_un"], tau),
            "block_bound": _mean_classifier_bound(losses["L_block"], tau),
        }

    return evaluate
