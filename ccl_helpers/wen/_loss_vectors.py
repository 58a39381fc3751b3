"""The loss vectors of Definition 4.1: Facts 1 and 2 in closed form.

The closed forms are given as printed and as corrected, and checked against autograd."""

from __future__ import annotations

import pandas as pd
import torch
from torch import Tensor

from .._checks import check_choice, check_finite, check_tensor
from ._loss import _exact_loss
from ._negative_sets import (
    _check_negative_count,
    _check_outputs,
    _check_set_count,
    _negative_sets,
    _set_logits,
    _with_zero,
)

FACT1_FORMS = ("corrected", "appendix", "main_text")
"""The forms of Fact 1 that :func:`fact1_comparison` compares: ``"corrected"`` (1/n,
full denominator) = ∂L_S/∂q_i; ``"appendix"`` (Appendix C.1: full denominator, no
1/n) = n·∂L_S/∂q_i; ``"main_text"`` (Section 5.1: denominator 1 + Σ_{s=1}^{j}
e^{u_is}, no 1/n, negatives of a set in ascending index order)."""


def _weights(q: Tensor, k: Tensor, sets: Tensor, form: str = "full") -> Tensor:
    """P̄ (..., n, n): P̄_ij = E^{Neg(i)}[1{j ∈ N} p_ij(N)], the expected softmax weight
    of negative j for anchor i, over the negative sets ``sets`` (n, C, k).

    ``form="full"``: p_ij(N) = e^{u_ij} / (1 + Σ_{s∈N} e^{u_is}) (the derivative of
    log(1 + Σ_{s∈N} e^{u_is})); ``form="partial"``: the main text's p_ij(N) = e^{u_ij} /
    (1 + Σ_{s ≤ j} e^{u_is}), s running over the members of N up to j in ascending index
    order. P̄_ii = 0; rows of the full form sum to E^{Neg(i)}[1 − p_i0(N)] < 1.
    Scatter-add of the per-set weights into the n × n matrix, divided by C(n−1, k).
    """
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


def _tilde(q: Tensor, k: Tensor, sets: Tensor, form: str) -> Tensor:
    """The loss~ vectors (..., n, d) of Fact 1 in one of the forms :data:`FACT1_FORMS`,
    over the negative sets ``sets``.

    ``"corrected"``: loss~_i = (1/n) E^{Neg(i)}[Σ_{j∈N} e^{u_ij}/(1 + Σ_{s∈N} e^{u_is})
    · z_ij] = ∂L_S/∂q_i; ``"appendix"`` (C.1): the same without 1/n; ``"main_text"``
    (Section 5.1): denominator 1 + Σ_{s=1}^{j} e^{u_is}, without 1/n. Here z_ij = k_j −
    k_i, evaluated as (P̄ k)_i − (Σ_j P̄_ij) k_i.
    """
    weights = _weights(q, k, sets, "partial" if form == "main_text" else "full")
    vectors = weights @ k - weights.sum(-1, keepdim=True) * k
    return vectors / q.shape[-2] if form == "corrected" else vectors


_METHODS = ("closed_form", "autograd")
"""How :func:`loss_vectors` computes the loss vectors: by the closed forms of Facts 1
and 2, or by autograd through L_S (Definition 4.1 itself)."""


def loss_vectors(
    q: Tensor, k: Tensor, n_negatives: int, *, method: str = "closed_form"
) -> tuple[Tensor, Tensor]:
    """(loss~, loss^) of Definition 4.1, ∂L_S/∂q and ∂L_S/∂k, each (..., n, d).

    ``method="closed_form"``: by the closed forms of Facts 1 and 2 (with the 1/n of
    L_S): loss~_i = ∂L_S/∂q_i = (1/n) Σ_j P̄_ij (k_j − k_i); loss^_i = ∂L_S/∂k_i = (1/n)
    Σ_{j≠i} (loss^(x_j, x_i) − loss^(x_i, x_j)) = (1/n) [Σ_j P̄_ji q_j − (Σ_j P̄_ij)
    q_i], with loss^(x_i, x_j) = P̄_ij q_i and P̄_ij = E^{Neg(i)}[1{j ∈ N} p_ij(N)],
    p_ij(N) = e^{u_ij} / (1 + Σ_{s∈N} e^{u_is}). ``method="autograd"``: by autograd
    through :func:`contrastive_loss` — Definition 4.1 itself; with batch axes, each
    batch element's L_S is differentiated separately.

    q, k: the outputs (..., n, d) of the two encoders; n_negatives: k, 1 ≤ k ≤ n − 1.
    """
    n_negatives = _check_outputs(q, k, n_negatives)
    check_choice("method", method, _METHODS)
    sets = _negative_sets(q.shape[-2], n_negatives, q.device)
    if method == "autograd":
        return _autograd_vectors(q, k, sets)
    return _vectors(q, k, sets)


def _vectors(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`loss_vectors` by the closed forms, over the negative sets ``sets``."""
    weights = _weights(q, k, sets)
    n = q.shape[-2]
    row = weights.sum(-1, keepdim=True)
    tilde = (weights @ k - row * k) / n
    hat = (weights.transpose(-1, -2) @ q - row * q) / n
    return tilde, hat


def _autograd_vectors(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`loss_vectors` by autograd, over the negative sets ``sets``."""
    with torch.enable_grad():
        q_, k_ = q.detach().requires_grad_(True), k.detach().requires_grad_(True)
        loss = _exact_loss(q_, k_, sets)
        return torch.autograd.grad(loss.sum(), (q_, k_))


def fact1_comparison(q: Tensor, k: Tensor, n_negatives: int) -> pd.DataFrame:
    """One row per form of Fact 1 (:data:`FACT1_FORMS`): its relative error ‖form −
    ∂L_S/∂q‖_F / ‖∂L_S/∂q‖_F against autograd and the least-squares factor c minimising
    ‖form − c·∂L_S/∂q‖ (n for a missing 1/n).

    The forms: ``"corrected"``: loss~_i = (1/n) E^{Neg(i)}[Σ_{j∈N} e^{u_ij}/(1 +
    Σ_{s∈N} e^{u_is}) · z_ij] = ∂L_S/∂q_i; ``"appendix"`` (C.1): the same without 1/n;
    ``"main_text"`` (Section 5.1): denominator 1 + Σ_{s=1}^{j} e^{u_is}, without 1/n;
    z_ij = k_j − k_i.
    q, k: (n, d) (one network's outputs); n_negatives: k, 1 ≤ k ≤ n − 1."""
    n_negatives = _check_outputs(q, k, n_negatives)
    if q.ndim != 2:
        raise ValueError(f"q and k must have shape (n, d), got {tuple(q.shape)}")
    sets = _negative_sets(q.shape[-2], n_negatives, q.device)
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


def _shared_vectors(f: Tensor, sets: Tensor) -> Tensor:
    """∂L_S(f, f)/∂f_i (..., n, d) for one shared encoder (f^q = f^k = f, outputs f
    (..., n, d)): by the chain rule the sum loss~_i + loss^_i of the two closed forms at
    q = k = f, over the negative sets ``sets``."""
    tilde, hat = _vectors(f, f, sets)
    return tilde + hat


def shared_evaluator(x: Tensor, n_negatives: int):
    """An ``evaluate`` for :func:`ccl_helpers.train.gradient_descent` of one shared
    encoder f (Chapter 2's, f^q = f^k = f) on S = x (n, b): model ↦ {``loss_norm``:
    ‖(∂L_S(f, f)/∂f_i)_i‖₂, ∂L_S(f, f)/∂f_i = loss~_i + loss^_i at q = k = f (the
    chain rule), ``L_S``: L_S(f, f), ``output_norm_max``: max_i ‖f(x_i)‖}, each (S,)
    over the stacked seeds. With k = 1, L_S(f, f) is
    :func:`ccl_helpers.multineg.triplet_loss` on
    :func:`ccl_helpers.multineg.all_triplets`. n_negatives: k, 1 ≤ k ≤ n − 1."""
    check_tensor("x", x, ndim=2, floating=True)
    check_finite("x", x)
    n_negatives = _check_negative_count(n_negatives, x.shape[0], "x")
    _check_set_count(x.shape[0], n_negatives)
    sets = _negative_sets(x.shape[0], n_negatives, x.device)

    def evaluate(model) -> dict[str, Tensor]:
        f = model(x)
        vectors = _shared_vectors(f, sets)
        return {
            "loss_norm": vectors.square().sum((-2, -1)).sqrt(),
            "L_S": _exact_loss(f, f, sets),
            "output_norm_max": f.norm(dim=-1).amax(-1),
        }

    return evaluate
