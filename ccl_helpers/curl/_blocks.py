"""Blocks of similar points: Monte Carlo estimates of the block loss and its bound.

The estimates are paired; the bound is evaluated along training."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from .. import coupon, metrics
from .._checks import check_inputs, check_instance, check_int
from .._precision import softplus
from ._lemma import mean_classifier_bound


class _BlockSamples(NamedTuple):
    """Indices into a labelled set of M draws of (x, x⁺_1 … x⁺_b, x⁻_1 … x⁻_b): x⁺_j
    i.i.d. from D_{c⁺} (c⁺ the class of x), x⁻_j i.i.d. from D_{c⁻}, c⁻ ~ ρ."""

    anchor: Tensor  #: (M,)
    positives: Tensor  #: (M, b)
    negatives: Tensor  #: (M, b)


def _draw_block_samples(
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
) -> _BlockSamples:
    """Draw M = ``n_samples`` anchors with a positive and a negative block of
    ``block_size`` each, on the finite distribution of labels (n,) (D_c uniform over
    class c's examples, ρ the label frequencies, so x is uniform over the set), the
    labels covering the classes 0..N_C − 1 (N_C ≥ 2)."""
    b, m = block_size, n_samples
    members, counts = metrics.class_members(labels)
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
    return _BlockSamples(
        anchor, uniform_members(labels[anchor]), uniform_members(negative_class)
    )


def _block_losses(features: Tensor, samples: _BlockSamples) -> dict[str, Tensor]:
    """Paired Monte Carlo estimates of L_un and of the block loss
    L^block_un = E ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), f̄^± the mean of f over the block, ℓ(z) =
    log(1 + e^z) (``ccl_helpers._precision.softplus``); L_un uses the first element of
    each block, so the two share draws.

    features (..., n, d), the samples indexing its n rows → {"L_un", "L_un_se",
    "L_block", "L_block_se", "gap_se"}, each (...) float64 (``gap_se``: the standard
    error of L_un − L^block_un). Jensen's inequality gives L^block_un ≤ L_un for
    every f.
    """
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


def block_evaluator(
    inputs: Tensor,
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
):
    """An ``evaluate`` for :func:`ccl_helpers.train.train`: model ↦ {quantity: (S,)}
    on the finite distribution (inputs (n, ...), labels (n,) covering the classes
    0..N_C − 1, N_C ≥ 2).

    M = ``n_samples`` anchors x, each with a positive block x⁺_1 … x⁺_b and a negative
    block x⁻_1 … x⁻_b (b = ``block_size``; x⁺_j i.i.d. from D_{c⁺}, c⁺ the class of x,
    x⁻_j i.i.d. from D_{c⁻}, c⁻ ~ ρ; x uniform over the set), are drawn once here and
    shared by every checkpoint. The quantities: paired Monte Carlo estimates of L_un
    and of the block loss L^block_un = E ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), f̄^± the mean of f over
    the block, ℓ(z) = log(1 + e^z), L_un from the first element of each block
    (``L_un``, ``L_un_se``, ``L_block``, ``L_block_se``, and ``gap_se``, the standard
    error of L_un − L^block_un; Jensen's inequality gives L^block_un ≤ L_un for every
    f); ``L_mu`` (the mean classifier on AVG-2, exact); and the lemma's bound from each
    loss, ``bound`` (L_un − τ log 2)/(1 − τ) and ``block_bound``
    (L^block_un − τ log 2)/(1 − τ)."""
    check_inputs("inputs", inputs, labels)
    block_size = check_int("block_size", block_size, 1)
    n_samples = check_int("n_samples", n_samples, 2)
    if generator is not None:
        check_instance("generator", generator, torch.Generator)
    counts = torch.bincount(labels)
    if bool((counts == 0).any()) or counts.numel() < 2:
        raise ValueError("labels must cover the classes 0..N_C−1 (N_C ≥ 2)")
    samples = _draw_block_samples(labels, block_size, n_samples, generator)
    tau = coupon.tau_plus(1, metrics.class_frequencies(labels))

    def evaluate(model) -> dict[str, Tensor]:
        features = model(inputs).double()
        losses = _block_losses(features, samples)
        return {
            **losses,
            "L_mu": metrics.mean_classifier(features, labels, task_size=2)["loss"],
            "bound": mean_classifier_bound(losses["L_un"], tau),
            "block_bound": mean_classifier_bound(losses["L_block"], tau),
        }

    return evaluate
