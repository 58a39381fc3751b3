"""Exact supervised quantities on a finite labelled set, over all tasks.

They are L^µ_sup,k over all tasks, the best linear classifier's loss, and the range
of the output norms."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import metrics
from .._checks import check_int


def average_mean_classifier_loss(
    features: Tensor,
    labels: Tensor,
    task_size: int,
    *,
    class_probs: Tensor | None = None,
    means: Tensor | None = None,
) -> Tensor:
    r"""L^µ_sup,k(f) = E_{T~D_{k+1}} L^µ_sup(f, T), averaged exactly over all
    C(N_C, k+1) tasks (eq. 10).

        L^µ_sup,k(f) = C(N_C, k+1)^{−1} Σ_{|T| = k+1} Σ_{c∈T} ρ(c)/ρ(T)
                       · mean_{x ∈ class c} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c,

    D_{k+1} uniform over the sets of k + 1 distinct classes and D_T(c) = ρ(c | c ∈ T),
    as in the source; D_c uniform over the examples of class c. For uniform ρ (the
    default, as Proposition 1 assumes) this is
    :func:`ccl_helpers.metrics.mean_classifier`'s AVG-(k+1) loss (whose tasks are drawn
    ∝ Π_{c∈T} ρ(c), with weight 1/(k+1) per class: the same for uniform ρ only). With
    task_size = N_C it is L^µ_sup(f, C) = Σ_c ρ(c) E_{D_c}[ℓ^µ] of Lemmas 1 and 2.

    Args:
        features: f(x), shape (..., n, d); labels: (n,) covering 0..N_C−1 (N_C =
            means.shape[-2] if means is given).
        task_size: k + 1, in 2..N_C (the C(N_C, k + 1) tasks enumerated by
            :func:`ccl_helpers.metrics.all_tasks`).
        class_probs: ρ (N_C,), every entry > 0; default uniform.
        means: µ_c, shape (..., N_C, d) broadcastable with features; default the class
            means of ``features`` (the population value on this finite distribution).
    Returns: (...) float64, on the features' device. Vectorised over tasks (in
        memory-bounded chunks).
    """
    task_size = check_int("task_size", task_size, 2)
    n_classes = None if means is None else means.shape[-2]
    n_classes, counts = metrics.labelled_set_sizes(features, labels, n_classes)
    tasks = metrics.all_tasks(
        n_classes, check_int("task_size", task_size, 2, n_classes), features.device
    )
    rho = metrics.class_weights(class_probs, n_classes, counts, uniform_default=True)
    if means is None:
        means = metrics.class_means(features, labels, n_classes)
    elif (
        means.ndim < 2
        or means.shape[-1] != features.shape[-1]
        or not bool(torch.isfinite(means).all())
    ):
        raise ValueError(
            f"means must be finite with shape (..., N_C, d={features.shape[-1]}), "
            f"got {tuple(means.shape)}"
        )
    logits = features.double() @ means.double().transpose(-1, -2)  # (..., n, N_C)
    own = logits.gather(
        -1, labels.expand(*logits.shape[:-2], -1).unsqueeze(-1)
    ).squeeze(-1)  # (..., n)
    member = torch.zeros(
        tasks.shape[0], n_classes, dtype=torch.bool, device=features.device
    )
    member.scatter_(1, tasks, True)
    weight = (
        member[:, labels]
        * (rho[labels] / counts[labels])[None, :]
        / rho[tasks].sum(-1, keepdim=True)
    )
    log_mask = torch.zeros(
        member.shape, dtype=torch.float64, device=features.device
    ).masked_fill(~member, -math.inf)
    batch = math.prod(logits.shape[:-2])
    chunk = max(1, metrics.CHUNK_ELEMENTS // (batch * labels.numel() * n_classes))
    total = torch.zeros(logits.shape[:-2], dtype=torch.float64, device=features.device)
    for start in range(0, tasks.shape[0], chunk):  # memory-bounded chunks of tasks
        stop = start + chunk
        lse = torch.logsumexp(
            logits.unsqueeze(-3) + log_mask[start:stop, None, :], dim=-1
        )  # (..., t, n)
        total = total + ((lse - own.unsqueeze(-2)) * weight[start:stop]).sum((-1, -2))
    return total / tasks.shape[0]


def _best_linear_loss(
    features: Tensor,
    labels: Tensor,
    *,
    class_probs: Tensor | None = None,
    max_iter: int = 300,
) -> Tensor:
    r"""An upper estimate of L_sup(f, C) = inf_W Σ_c ρ(c) mean_{x∈c} ℓ(W f(x), c),
    ℓ the cross-entropy (eq. 3, T = C).

    W (N_C × d, no bias) is fitted on its own: L-BFGS in float64 from W = 0, example
    weights ρ(c)/n_c (:func:`ccl_helpers.metrics.fit_linear_classifiers`), all leading
    dimensions together; its loss is returned as it is. Nothing of the mean classifier
    enters, so L_sup ≤ L^µ_sup is a check between two independent computations: it
    fails if the fit stops above the mean classifier's loss. On a set of examples that
    is not linearly separable the infimum is positive and attained. ρ defaults to the
    label frequencies. features (..., n, d), labels (n,) → (...) float64.
    """
    n_classes, counts = metrics.labelled_set_sizes(features, labels)
    rho = metrics.class_weights(class_probs, n_classes, counts, uniform_default=False)
    features = features.detach().double()
    task = torch.arange(n_classes, device=labels.device)[None]  # T = C, (1, N_C)
    example_weight = rho[labels] / counts[labels]
    rows = metrics.fit_linear_classifiers(
        features,
        labels,
        task,
        sample_weight=example_weight,
        dtype=torch.float64,
        max_iter=max_iter,
        tolerance=1e-9,
    )
    loss, _ = metrics.task_loss_and_accuracy(
        features, labels, rows, task, rho, sample_weight=example_weight
    )
    return loss


def _output_norm_range(features: Tensor) -> tuple[Tensor, Tensor]:
    """min_x ‖f(x)‖ and max_x ‖f(x)‖ over the n examples (Assumption 2's η < ‖f(x)‖ <
    C).

    features (..., n, d) → (min (...), max (...)), in the features' dtype and device."""
    norms = torch.linalg.vector_norm(features, dim=-1)
    return norms.amin(-1), norms.amax(-1)
