"""Proposition 1 of Merad et al. (2020): its factor, bounds, both sides.

The bounds are in nats and as printed; both sides are computed on a k × N grid."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch
from torch import Tensor

from .. import coupon, metrics
from .._checks import check_finite_real, check_instance, check_int, check_positive
from ._exact import average_mean_classifier_loss


def _check_task(task_size, n_classes) -> tuple[int, int]:
    """(k + 1, N_C) as ints: task_size in 2..n_classes, n_classes ≥ 2."""
    task_size = check_int("task_size", task_size, 2)
    n_classes = check_int("n_classes", n_classes, 2)
    return check_int("task_size", task_size, 2, n_classes), n_classes


def proposition1_factor(n_negatives: int, task_size: int, n_classes: int) -> float:
    """k / (1 − τ⁺_N) of Proposition 1 for uniform ρ over n_classes classes, k =
    task_size − 1.

    It decreases to k as N grows (τ⁺_N = N_C^{−N} → 0). Args: n_negatives N ≥ 1,
    task_size k + 1 in 2..n_classes, n_classes N_C ≥ 2. Returns: a float."""
    n_negatives = check_int("n_negatives", n_negatives, 1)
    task_size, n_classes = _check_task(task_size, n_classes)
    tau = coupon.tau_plus(
        n_negatives, torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)
    )
    return (task_size - 1) / (1 - tau)


def proposition1_bound(
    unsupervised_loss: Tensor | float, n_negatives: int, task_size: int, n_classes: int
) -> Tensor | float:
    r"""Proposition 1 (2) (ρ uniform over N_C classes, k = task_size − 1,
    1 ≤ k ≤ N_C − 1):

        L^µ_sup,k(f) ≤ k / (1 − τ⁺_N) · (L^N_un(f) − τ⁺_N log(N + 1)),
            τ⁺_N = N_C^{−N},

    the term τ⁺_N log(N + 1) being the loss when all N negatives share the positive's
    class (all logits equal: log(N + 1) nats). At N = 1 this is part (1) in nats.

    Args:
        unsupervised_loss: L^N_un(f) in nats, a finite float or tensor of any shape.
        n_negatives: N ≥ 1; task_size: k + 1 in 2..n_classes; n_classes: N_C ≥ 2.
    Returns: the bound, of the type and shape of ``unsupervised_loss``.
    """
    n = n_negatives = check_int("n_negatives", n_negatives, 1)
    task_size, n_classes = _check_task(task_size, n_classes)
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    tau = coupon.tau_plus(
        n, torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)
    )
    return (task_size - 1) / (1 - tau) * (loss - tau * math.log(n + 1))


def proposition1_part1_bound(
    unsupervised_loss: Tensor | float,
    task_size: int,
    n_classes: int,
    *,
    as_printed: bool = False,
) -> Tensor | float:
    r"""Proposition 1 (1) in nats (ρ uniform, N = 1, k = task_size − 1):

        L^µ_sup,k(f) ≤ k / (1 − τ⁺) · (L_un(f) − τ⁺ log 2),
            τ⁺ = P(c = c⁻) = Σ_c ρ(c)² = 1/N_C,

    log 2 = ζ(0) being the loss of a collision c⁻ = c. Equals :func:`proposition1_bound`
    at N = 1 and, for k = 1, the CURL lemma
    (:func:`ccl_helpers.curl.mean_classifier_bound`).

    With ``as_printed=True``, the source's print: k/(1 − τ⁺) · (L_un(f) − τ⁺). Its
    proof sets log = log₂, where ζ(0) = 1: with L_un in bits this is the bound above in
    bits (times log 2 it is the nats form). Fed L_un in nats it is smaller than the
    nats bound by k τ⁺ (1 − log 2)/(1 − τ⁺) and fails, e.g. for the zero encoder at
    k = 1: L^µ_sup,1 = log 2 > (log 2 − 1/N_C)/(1 − 1/N_C).

    Args: unsupervised_loss L_un(f) (float or tensor; in bits with ``as_printed``);
        task_size in 2..n_classes; n_classes ≥ 2.
    """
    task_size, n_classes = _check_task(task_size, n_classes)
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    tau = 1.0 / n_classes
    collision = tau if as_printed else tau * math.log(2)
    return (task_size - 1) * (loss - collision) / (1 - tau)


def proposition1_grid(
    features: Tensor,
    labels: Tensor,
    n_negatives: Sequence[int],
    *,
    n_samples: int = 20_000,
    generator: torch.Generator | None = None,
    means: Tensor | None = None,
    confidence: float = 4.0,
) -> pd.DataFrame:
    r"""Proposition 1 on a k × N grid: L^µ_sup,k(f) against k/(1 − τ⁺_N)(L^N_un(f) −
    τ⁺_N log(N + 1)).

    ρ uniform over the N_C classes of ``labels`` (as the proposition assumes), D_c
    uniform over the examples of class c. For every k = 1 … N_C − 1 the exact
    :func:`average_mean_classifier_loss`; for every N in ``n_negatives`` L^N_un, the
    Monte Carlo estimate of :func:`ccl_helpers.metrics.unsupervised_loss_curve` (one
    set of M = n_samples draws with max(N) negatives; N uses the first N).

    Args: features (S, n, d) or (n, d); labels (n,); n_negatives: N values ≥ 1;
        generator on the labels' device; means: µ (…, N_C, d), default the class means
        of ``features``; confidence: z.
    Returns: a tidy frame, one row per (seed, n_negatives, task_size): k, L_mu, L_un,
        L_un_se, tau_plus, factor = k/(1 − τ⁺_N), bound, and bound_high, the bound at
        L_un + z·se (the book's one convention, as :func:`add_lemma_bounds`): L_mu >
        bound_high is a violation beyond the Monte Carlo noise.
    """
    n_samples = check_int("n_samples", n_samples, 2)
    if generator is not None:
        check_instance("generator", generator, torch.Generator)
    confidence = check_positive("confidence", confidence, allow_zero=True)
    values = [check_int("n_negatives", n) for n in n_negatives]
    if not values:
        raise ValueError("n_negatives must hold at least one value ≥ 1")
    n_classes, _ = metrics.labelled_set_sizes(features, labels)
    if features.numel() == 0:
        raise ValueError(
            f"features must hold at least one seed and one dimension, got shape "
            f"{tuple(features.shape)}"
        )
    features = features.double().reshape(-1, *features.shape[-2:])  # (S, n, d)
    rho = torch.full(
        (n_classes,), 1.0 / n_classes, dtype=torch.float64, device=labels.device
    )
    task_sizes = range(2, n_classes + 1)
    l_mu = torch.stack(
        [
            average_mean_classifier_loss(
                features, labels, m, class_probs=rho, means=means
            )
            for m in task_sizes
        ],
        -1,
    )  # (S, N_C − 1)
    samples = metrics.draw_unsupervised_samples(
        labels, max(values), n_samples, generator, rho
    )
    estimate, se = metrics.unsupervised_loss_curve(features, samples)
    frames = []
    for n in values:  # a handful of N values, each vectorised over seeds and tasks
        l_un, l_se = estimate[:, n - 1], se[:, n - 1]
        tau = coupon.tau_plus(n, rho)
        factor = torch.tensor(
            [proposition1_factor(n, m, n_classes) for m in task_sizes],
            dtype=torch.float64,
        )
        log_term = tau * math.log(n + 1)
        bound = factor[None, :] * (l_un.cpu()[:, None] - log_term)
        high = factor[None, :] * ((l_un + confidence * l_se).cpu()[:, None] - log_term)
        seeds, sizes = torch.meshgrid(
            torch.arange(features.shape[0]),
            torch.tensor(list(task_sizes)),
            indexing="ij",
        )
        frames.append(
            pd.DataFrame(
                {
                    "seed": seeds.flatten().numpy(),
                    "n_negatives": n,
                    "task_size": sizes.flatten().numpy(),
                    "k": (sizes - 1).flatten().numpy(),
                    "L_mu": l_mu.cpu().flatten().numpy(),
                    "L_un": l_un.cpu()[:, None]
                    .expand(-1, len(task_sizes))
                    .flatten()
                    .numpy(),
                    "L_un_se": l_se.cpu()[:, None]
                    .expand(-1, len(task_sizes))
                    .flatten()
                    .numpy(),
                    "tau_plus": tau,
                    "factor": factor[None, :]
                    .expand(features.shape[0], -1)
                    .flatten()
                    .numpy(),
                    "bound": bound.flatten().numpy(),
                    "bound_high": high.flatten().numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
