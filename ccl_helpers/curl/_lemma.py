"""The simple lemma of Arora et al. (2019): its right-hand side and three sides.

Its three sides are computed on a finite distribution."""

from __future__ import annotations

import math

from torch import Tensor

from .. import coupon, metrics
from .._checks import (
    check_feature_dims,
    check_finite_real,
    check_int,
    check_labels,
    check_positive,
    check_tensor,
)


def mean_classifier_bound(
    unsupervised_loss: Tensor | float, tau: float
) -> Tensor | float:
    """The lemma's right-hand side (L_un − τ·log 2)/(1 − τ), in nats; τ in [0, 1);
    L_un a finite real or a floating tensor (its values are not read: a NaN loss
    along training gives a NaN bound)."""
    check_positive("tau", tau, allow_zero=True)
    if isinstance(unsupervised_loss, Tensor):
        check_tensor("unsupervised_loss", unsupervised_loss, floating=True)
    else:
        check_finite_real("unsupervised_loss", unsupervised_loss)
    if not tau < 1:
        raise ValueError(f"tau must be in [0, 1), got {tau}")
    return (unsupervised_loss - tau * math.log(2)) / (1 - tau)


def lemma_quantities(
    features: Tensor,
    labels: Tensor,
    *,
    fit_linear: bool = True,
    heldout_fit: tuple[Tensor, Tensor] | None = None,
    max_iter: int = 500,
) -> dict[str, Tensor]:
    """The three sides of the lemma on a finite distribution (D_c uniform over class c's
    examples, ρ the label frequencies), for binary tasks: ``L_un`` (exact), ``L_mu``
    (mean classifier, µ from the same data), ``L_sup`` (best linear classifier fitted on
    the same data), ``bound`` = (L_un − τ log 2)/(1 − τ), and the mean classifier's
    AVG-2 ``accuracy_mu``. Each (...). Computed in float64, so the lemma (an exact
    inequality on this distribution) holds to rounding. Without ``fit_linear``,
    ``L_sup`` (the costly part) is left out. With ``heldout_fit`` = (fit_features
    (..., m, d), fit_labels (m,)), ``L_sup_heldout`` is the binary tasks' loss on this
    distribution of one N_C-way head fitted on other data, each task using its two
    rows: one W per task, so an upper estimate of the population's L_sup, which the
    in-sample fit of a small distribution underestimates (towards 0)."""
    check_tensor("features", features, min_ndim=2, floating=True)
    check_labels("labels", labels)
    max_iter = check_int("max_iter", max_iter, 1)
    if heldout_fit is not None:
        fit_features, fit_labels = heldout_fit
        check_feature_dims("fit_features", fit_features, "features", features)
    features = features.double()
    rho = metrics.class_frequencies(labels)
    unsupervised = metrics.exact_unsupervised_loss(features, labels, rho)
    mean = metrics.mean_classifier(features, labels, task_size=2, class_probs=rho)
    sides = {
        "L_un": unsupervised,
        "L_mu": mean["loss"],
        "bound": mean_classifier_bound(unsupervised, coupon.tau_plus(1, rho)),
        "accuracy_mu": mean["accuracy"],
    }
    if fit_linear:
        sides["L_sup"] = metrics.linear_probe(
            features, labels, task_size=2, class_probs=rho, max_iter=max_iter
        )["loss"]
    if heldout_fit is not None:
        n_classes = rho.numel()
        every_class = metrics.all_tasks(n_classes, n_classes, features.device)
        head = metrics.fit_linear_classifiers(
            fit_features, fit_labels, every_class, max_iter=max_iter
        )[..., 0, :, :]  # (..., N_C, d)
        tasks = metrics.all_tasks(n_classes, 2, features.device)
        sides["L_sup_heldout"] = metrics.task_loss_and_accuracy(
            features, labels, head[..., tasks, :].double(), tasks, rho
        )[0]
    return sides
