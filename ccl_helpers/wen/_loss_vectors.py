"""The loss vectors of Definition 4.1: Facts 1 and 2 in closed form.

The closed forms are given as printed and as corrected, and checked against autograd."""

from __future__ import annotations

import pandas as pd
import torch
from torch import Tensor

from ..checks import Choice, checked
from ._loss import _exact_loss
from ._negative_sets import OUTPUTS_AND_SETS, _checked_sets, _set_logits, _with_zero

FACT1_FORMS = ("corrected", "appendix", "main_text")
"""The forms of Fact 1 :func:`loss_tilde` computes: ``"corrected"`` (1/n, full
denominator) = ∂L_S/∂q_i; ``"appendix"`` (Appendix C.1: full denominator, no 1/n) =
n·∂L_S/∂q_i; ``"main_text"`` (Section 5.1: denominator 1 + Σ_{s=1}^{j} e^{u_is}, no 1/n,
negatives of a set in ascending index order)."""


@checked(**OUTPUTS_AND_SETS, form=Choice(("full", "partial")))
def negative_weights(
    q: Tensor,
    k: Tensor,
    n_negatives: int,
    *,
    sets: Tensor | None = None,
    form: str = "full",
) -> Tensor:
    """P̄ (..., n, n): P̄_ij = E^{Neg(i)}[1{j ∈ N} p_ij(N)], the expected softmax weight
    of negative j for anchor i.

    ``form="full"``: p_ij(N) = e^{u_ij} / (1 + Σ_{s∈N} e^{u_is}) (the derivative of
    log(1 + Σ_{s∈N} e^{u_is})); ``form="partial"``: the main text's p_ij(N) = e^{u_ij} /
    (1 + Σ_{s ≤ j} e^{u_is}), s running over the members of N up to j in ascending index
    order. P̄_ii = 0; rows of the full form sum to E^{Neg(i)}[1 − p_i0(N)] < 1.
    Scatter-add of the per-set weights into the n × n matrix, divided by C(n−1, k).
    """
    return _weights(q, k, _checked_sets(q, k, n_negatives, sets), form)


def _weights(q: Tensor, k: Tensor, sets: Tensor, form: str = "full") -> Tensor:
    """:func:`negative_weights` over the negative sets ``sets`` (n, C, k), on arguments
    its caller has checked."""
    n = q.shape[-2]
    u, index = _set_logits(q, k, sets)
    if form == "full":
        weights = torch.softmax(_with_zero(u), dim=-1)[..., 1:]
    else:
        weights = torch.exp(u - torch.logcumsumexp(_with_zero(u), dim=-1)[..., 1:])
    flat = weights.reshape(index.shape)
    total = torch.zeros(
        *u.shape[:-3], n, n, dtype=u.dtype, device=u.device
    ).scatter_add(-1, index, flat)
    return total / sets.shape[1]


@checked(**OUTPUTS_AND_SETS, form=Choice(FACT1_FORMS))
def loss_tilde(
    q: Tensor,
    k: Tensor,
    n_negatives: int,
    *,
    form: str = "corrected",
    sets: Tensor | None = None,
) -> Tensor:
    """The loss~ vectors (..., n, d) of Fact 1 in one of the forms :data:`FACT1_FORMS`.

    ``"corrected"``: loss~_i = (1/n) E^{Neg(i)}[Σ_{j∈N} e^{u_ij}/(1 + Σ_{s∈N} e^{u_is})
    · z_ij] = ∂L_S/∂q_i; ``"appendix"`` (C.1): the same without 1/n; ``"main_text"``
    (Section 5.1): denominator 1 + Σ_{s=1}^{j} e^{u_is}, without 1/n. Here z_ij = k_j −
    k_i, evaluated as (P̄ k)_i − (Σ_j P̄_ij) k_i.
    """
    return _tilde(q, k, _checked_sets(q, k, n_negatives, sets), form)


def _tilde(q: Tensor, k: Tensor, sets: Tensor, form: str) -> Tensor:
    """:func:`loss_tilde` over the negative sets ``sets``, on arguments its caller has
    checked."""
    weights = _weights(q, k, sets, "partial" if form == "main_text" else "full")
    vectors = weights @ k - weights.sum(-1, keepdim=True) * k
    return vectors / q.shape[-2] if form == "corrected" else vectors


@checked(**OUTPUTS_AND_SETS)
def loss_vectors(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(loss~, loss^) of Definition 4.1 by the closed forms of Facts 1 and 2 (with the
    1/n of L_S), each (..., n, d).

    loss~_i = ∂L_S/∂q_i = (1/n) Σ_j P̄_ij (k_j − k_i); loss^_i = ∂L_S/∂k_i = (1/n)
    Σ_{j≠i} (loss^(x_j, x_i) − loss^(x_i, x_j)) = (1/n) [Σ_j P̄_ji q_j − (Σ_j P̄_ij)
    q_i], with loss^(x_i, x_j) = P̄_ij q_i and P̄ from :func:`negative_weights`.
    """
    return _vectors(q, k, _checked_sets(q, k, n_negatives, sets))


def _vectors(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`loss_vectors` over the negative sets ``sets``, on arguments its caller has
    checked."""
    weights = _weights(q, k, sets)
    n = q.shape[-2]
    row = weights.sum(-1, keepdim=True)
    tilde = (weights @ k - row * k) / n
    hat = (weights.transpose(-1, -2) @ q - row * q) / n
    return tilde, hat


@checked(**OUTPUTS_AND_SETS)
def loss_vectors_autograd(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(∂L_S/∂q, ∂L_S/∂k), each (..., n, d), by autograd through
    :func:`contrastive_loss` — Definition 4.1 itself. With batch axes, each batch
    element's L_S is differentiated separately."""
    return _autograd_vectors(q, k, _checked_sets(q, k, n_negatives, sets))


def _autograd_vectors(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`loss_vectors_autograd` over the negative sets ``sets``, on arguments its
    caller has checked."""
    with torch.enable_grad():
        q_, k_ = q.detach().requires_grad_(True), k.detach().requires_grad_(True)
        loss = _exact_loss(q_, k_, sets)
        return torch.autograd.grad(loss.sum(), (q_, k_))


@checked(**OUTPUTS_AND_SETS)
def fact1_comparison(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> pd.DataFrame:
    """One row per form of Fact 1 (:data:`FACT1_FORMS`): its relative error ‖form −
    ∂L_S/∂q‖_F / ‖∂L_S/∂q‖_F against autograd and the least-squares factor c minimising
    ‖form − c·∂L_S/∂q‖ (n for a missing 1/n).
    q, k: (n, d) (one network's outputs)."""
    sets = _checked_sets(q, k, n_negatives, sets)
    if q.ndim != 2:
        raise ValueError(f"q and k must have shape (n, d), got {tuple(q.shape)}")
    reference, _ = _autograd_vectors(q, k, sets)
    rows = []
    for form in FACT1_FORMS:
        value = _tilde(q, k, sets, form)
        factor = float((value * reference).sum() / reference.square().sum())
        rows.append(
            {
                "form": form,
                "relative_error": float((value - reference).norm() / reference.norm()),
                "factor": factor,
                "relative_error_after_factor": float(
                    (value - factor * reference).norm() / reference.norm()
                ),
            }
        )
    return pd.DataFrame(rows)
