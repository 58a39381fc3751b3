"""The losses (A.8)–(A.10) and their gradients (A.12)–(A.13).

On features (:func:`contrastive_loss`, :func:`non_contrastive_loss`), on a batch through
the d×d Gram matrices (:func:`batch_loss`), by autograd (``_loss_and_gradients``) and in
closed form (``_closed_form_gradients``, the test oracle, and the Gram-block form that
:func:`train` steps with).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .._checks import (
    check_choice,
    check_instance,
    check_positive,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)
from .._precision import at_least_float32, result_dtype, widen_float16
from ._data_model import (
    NORMALISATIONS,
    DataModel,
    Pairs,
    _check_input_dim,
    _check_weights,
    _population_norm,
)

LOSSES = ("contrastive", "non_contrastive")
"""The losses: contrastive L_C (A.8) or (A.9), non-contrastive L_NC (A.10)."""

FORMS = ("primary", "alternative")
"""The forms of the contrastive loss: primary (A.8), alternative (A.9)."""


def _contrastive_from_similarities(
    s: Tensor, *, beta: float, tau: float, form: str
) -> Tensor:
    n = s.shape[-1]
    s = beta * s
    diag = torch.diagonal(s, dim1=-2, dim2=-1)
    off = ~torch.eye(n, dtype=torch.bool, device=s.device)
    if form == "primary":
        shift = off.to(s.dtype) * math.log(tau / (n - 1))
        terms = (
            torch.logsumexp(s + shift, -1)
            + torch.logsumexp(s.mT + shift, -1)
            - 2 * diag
        )
    else:
        masked = s.masked_fill(~off, float("-inf"))
        negatives = (
            torch.logsumexp(masked, -1)
            + torch.logsumexp(masked.mT, -1)
            - 2 * math.log(n - 1)
        )
        terms = -2 * diag + tau * negatives
    return terms.mean(-1)


def _check_outputs(f_A: Tensor, f_B: Tensor) -> None:
    """The features f_A, f_B (..., n, m): floating, of one shape and dtype (shapes and
    dtypes only: a loss)."""
    check_tensor("f_A", f_A, min_ndim=2, floating=True)
    check_tensor("f_B", f_B, min_ndim=2, floating=True)
    check_same_dtype("f_B", f_B, "f_A", f_A)
    check_same_shape("f_B", f_B, "f_A", f_A)


def _check_negatives(name: str, n: int) -> None:
    """A contrastive batch holds n ≥ 2 pairs: each pair's negatives are the other
    rows."""
    if n < 2:
        raise ValueError(
            f"{name} must hold n ≥ 2 pairs (the other rows are the negatives), got {n}"
        )


def contrastive_loss(
    f_A: Tensor, f_B: Tensor, *, beta: float, tau: float, form: str = "primary"
) -> Tensor:
    """Batch L̂_C = (1/n) Σ_i (ℓ_AB^i + ℓ_BA^i) of (A.8) or (A.9), shape (R,).

    Rows of f_A, f_B (R, n, m) are the pairs.

    primary: ℓ_AB^i = logsumexp_j(βs_ij + [j≠i] log(τ/(n−1))) − βs_ii;
    alternative: ℓ_AB^i = −βs_ii + τ (logsumexp_{j≠i} βs_ij − log(n−1)).

    Precision as :func:`ccl_helpers.losses.info_nce_loss`: s in the inputs' dtype
    (float16 in float32), the log-sum-exp in at least float32, the result in the
    inputs' dtype (float32 for float16).
    """
    _check_outputs(f_A, f_B)
    beta = check_positive("beta", beta)
    tau = check_positive("tau", tau)
    check_choice("form", form, FORMS)
    _check_negatives("f_A", f_A.shape[-2])
    similarities = at_least_float32(widen_float16(f_A) @ widen_float16(f_B).mT)
    return _contrastive_from_similarities(
        similarities, beta=beta, tau=tau, form=form
    ).to(result_dtype(f_A))


def non_contrastive_loss(f_A: Tensor, f_B: Tensor) -> Tensor:
    """Batch L̂_NC = (1/n) Σ_i ‖f_A^i − f_B^i‖² (A.10), shape (R,); float16 inputs give
    float32 (the squares may exceed its range)."""
    _check_outputs(f_A, f_B)
    return widen_float16(f_A - f_B).pow(2).sum(-1).mean(-1)


def batch_loss(
    W_A: Tensor,
    W_B: Tensor,
    model: DataModel,
    pairs: Pairs,
    *,
    loss: str = "contrastive",
    beta: float = 1.0,
    tau: float = 1.0,
    form: str = "primary",
    normalisation: str = "population",
) -> Tensor:
    """The empirical loss of Algorithm 3.1 on one batch, per run (R,).

    Computed through the d×d Gram matrices W_AᵀW_B, W_AᵀW_A, W_BᵀW_B (cost O(md² + n²d),
    not O(n²m)): s_ij = x_A^iᵀ W_AᵀW_B x_B^j / (N_A N_B); equal to
    :func:`contrastive_loss` of the features f = W x / N (A.6). Checks shapes and
    dtypes only (a loss): a NaN in the weights propagates to the loss.
    """
    _check_weights(W_A, W_B)
    check_instance("model", model, DataModel)
    check_instance("pairs", pairs, Pairs)
    check_choice("loss", loss, LOSSES)
    beta = check_positive("beta", beta)
    tau = check_positive("tau", tau)
    check_choice("form", form, FORMS)
    check_choice("normalisation", normalisation, NORMALISATIONS)
    _check_input_dim(W_A, model)
    if loss == "contrastive":
        _check_negatives("pairs", pairs.x_A.shape[-2])
    gram_AB = W_A.mT @ W_B
    gram_AA, gram_BB = W_A.mT @ W_A, W_B.mT @ W_B
    if normalisation == "population":
        cov_A, cov_B = model.covariances()
        norm2_A, norm2_B = (
            (gram_AA * cov_A).sum((-2, -1)),
            (gram_BB * cov_B).sum((-2, -1)),
        )
    sq_A = ((pairs.x_A @ gram_AA) * pairs.x_A).sum(-1)
    sq_B = ((pairs.x_B @ gram_BB) * pairs.x_B).sum(-1)
    if normalisation == "batch":
        norm2_A, norm2_B = sq_A.mean(-1), sq_B.mean(-1)
    scale = (norm2_A * norm2_B).sqrt()[:, None, None]
    if loss == "contrastive":
        s = pairs.x_A @ gram_AB @ pairs.x_B.mT / scale
        return _contrastive_from_similarities(s, beta=beta, tau=tau, form=form)
    cross = ((pairs.x_A @ gram_AB) * pairs.x_B).sum(-1) / scale[:, :, 0]
    return (sq_A / norm2_A[:, None] + sq_B / norm2_B[:, None] - 2 * cross).mean(-1)


def _loss_and_gradients(
    W_A: Tensor, W_B: Tensor, model: DataModel, pairs: Pairs, **loss_options
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """(L̂ (R,) detached, (∇_{W_A} L̂, ∇_{W_B} L̂)) by autograd of :func:`batch_loss`
    (each run's gradient of its own loss), shapes (R, m, d); ``loss_options`` those of
    :func:`batch_loss`."""
    W_A = W_A.detach().requires_grad_(True)
    W_B = W_B.detach().requires_grad_(True)
    with torch.enable_grad():
        losses = batch_loss(W_A, W_B, model, pairs, **loss_options)
        return losses.detach(), torch.autograd.grad(losses.sum(), (W_A, W_B))


def _gram_loss_and_gradients(
    W_A: Tensor,
    W_B: Tensor,
    covariances: tuple[Tensor, Tensor],
    pairs: Pairs,
    *,
    loss: str,
    beta: float,
    tau: float,
    similarity_dtype: torch.dtype | None = None,
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """(L̂ (R,), (∇_{W_A} L̂, ∇_{W_B} L̂)) in closed form through the d×d Gram blocks:
    population normalisation, primary form; the same values as autograd of
    :func:`batch_loss`, at about half the cost (what :func:`train` uses).

    ``similarity_dtype`` (default: the inputs' dtype) is the dtype of the contrastive
    n×n block: the logits, both softmaxes, dS and D_AB = x_Aᵀ dS x_B, which is cast
    back. float32 with float64 weights makes a step of the book's runs (R = 25,
    n = 128, d = 32) about 3× cheaper on the CPU; its rounding, about 3·10⁻⁷ of D_AB,
    lies far below the minibatch noise of a step (of order n^{−1/2}).

    L̂ depends on W only through G_AB = W_AᵀW_B, G_AA, G_BB, with N_A² = ⟨G_AA, Σ_A⟩.
    With D = ∂L̂/∂G: ∇_{W_A} = 2 W_A D_AA + W_B D_ABᵀ, ∇_{W_B} = 2 W_B D_BB + W_A D_AB.
    Contrastive (s = x_A G_AB x_Bᵀ/(N_A N_B)): dS = β(P^{AB} − I + (P^{BA} − I)ᵀ)/n,
    D_AB = x_Aᵀ dS x_B/(N_A N_B), D_AA = −⟨dS, s⟩ Σ_A/(2N_A²). Non-contrastive
    (L̂ = q_A/N_A² + q_B/N_B² − 2c/(N_A N_B) with the batch second moments C):
    D_AB = −2C_AB/(N_A N_B), D_AA = C_AA/N_A² + (∂L̂/∂N_A²) Σ_A."""
    cov_A, cov_B = covariances
    gram_AB, gram_AA, gram_BB = W_A.mT @ W_B, W_A.mT @ W_A, W_B.mT @ W_B
    norm2_A = (gram_AA * cov_A).sum((-2, -1))
    norm2_B = (gram_BB * cov_B).sum((-2, -1))
    scale = (norm2_A * norm2_B).sqrt()
    x_A, x_B = pairs.x_A, pairs.x_B
    n = x_A.shape[-2]
    if loss == "contrastive":
        block = similarity_dtype or x_A.dtype
        a, b = x_A.to(block), x_B.to(block)
        # logits βs_ij + [i ≠ j] log(τ/(n−1)) in one product; few n×n temporaries
        eye = torch.eye(n, dtype=block, device=x_A.device)
        shift = (1 - eye) * math.log(tau / (n - 1))
        logits = torch.baddbmm(
            shift, (x_A @ (gram_AB * (beta / scale)[:, None, None])).to(block), b.mT
        )
        d_s = torch.softmax(logits, -1)  # P^{AB}
        p_BA = torch.softmax(logits, -2)  # (P^{BA})ᵀ
        losses = (
            -(
                torch.diagonal(d_s, dim1=-2, dim2=-1).log()
                + torch.diagonal(p_BA, dim1=-2, dim2=-1).log()
            )
            .mean(-1)
            .to(x_A.dtype)
        )
        d_s += p_BA
        torch.diagonal(d_s, dim1=-2, dim2=-1).sub_(2)
        d_s *= beta / n
        d_AB = (a.mT @ d_s @ b).to(x_A.dtype) / scale[:, None, None]
        inner = (d_AB * gram_AB).sum((-2, -1))  # ⟨dS, s⟩ = ⟨D_AB, G_AB⟩
        d_AA = -(inner / (2 * norm2_A))[:, None, None] * cov_A
        d_BB = -(inner / (2 * norm2_B))[:, None, None] * cov_B
    else:
        C_AA, C_BB, C_AB = (x_A.mT @ x_A / n, x_B.mT @ x_B / n, x_A.mT @ x_B / n)
        q_A = (gram_AA * C_AA).sum((-2, -1))
        q_B = (gram_BB * C_BB).sum((-2, -1))
        cross = (gram_AB * C_AB).sum((-2, -1)) / scale
        losses = q_A / norm2_A + q_B / norm2_B - 2 * cross
        d_AB = -2 * C_AB / scale[:, None, None]
        slope_A = -q_A / norm2_A**2 + cross / norm2_A
        slope_B = -q_B / norm2_B**2 + cross / norm2_B
        d_AA = C_AA / norm2_A[:, None, None] + slope_A[:, None, None] * cov_A
        d_BB = C_BB / norm2_B[:, None, None] + slope_B[:, None, None] * cov_B
    grad_A = torch.baddbmm(W_B @ d_AB.mT, W_A, d_AA, alpha=2)
    grad_B = torch.baddbmm(W_A @ d_AB, W_B, d_BB, alpha=2)
    return losses, (grad_A, grad_B)


def _closed_form_gradients(
    W_A: Tensor,
    W_B: Tensor,
    model: DataModel,
    pairs: Pairs,
    *,
    loss: str = "contrastive",
    beta: float = 1.0,
    tau: float = 1.0,
) -> tuple[Tensor, Tensor]:
    """The closed-form gradient (A.12)–(A.13), the test oracle of the autograd one
    (``_loss_and_gradients``).

    Population normalisation, primary form of the contrastive loss.

    ∇_W L̂ = (1/N)[Σ_i G^i x^iᵀ − (Σ_i⟨G^i, f^i⟩) WΣ/N]; InfoNCE: G_A = β dS F_B, G_B =
    β dSᵀ F_A with dS = (P^{AB} − I + (P^{BA} − I)ᵀ)/n; L_NC: G_A = 2(F_A − F_B)/n =
    −G_B.
    """
    cov_A, cov_B = model.covariances()
    N_A, N_B = _population_norm(W_A, cov_A), _population_norm(W_B, cov_B)
    F_A = pairs.x_A @ W_A.mT / N_A[:, None, None]
    F_B = pairs.x_B @ W_B.mT / N_B[:, None, None]
    n = F_A.shape[-2]
    if loss == "contrastive":
        eye = torch.eye(n, dtype=F_A.dtype, device=F_A.device)
        weights = eye + (1 - eye) * (tau / (n - 1))
        s = beta * (F_A @ F_B.mT)
        P_AB = torch.softmax(s + weights.log(), -1)
        P_BA = torch.softmax(s.mT + weights.log(), -1)
        dS = (P_AB - eye + (P_BA - eye).mT) / n
        G_A, G_B = beta * dS @ F_B, beta * dS.mT @ F_A
    else:
        G_A = 2 * (F_A - F_B) / n
        G_B = -G_A

    def one(G, F, x, W, N, cov):
        inner = (G * F).sum((-2, -1))
        return (G.mT @ x - inner[:, None, None] * (W @ cov) / N[:, None, None]) / N[
            :, None, None
        ]

    return one(G_A, F_A, pairs.x_A, W_A, N_A, cov_A), one(
        G_B, F_B, pairs.x_B, W_B, N_B, cov_B
    )
