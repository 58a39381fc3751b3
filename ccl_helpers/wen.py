"""Chapter 3: Wen, *Convergence of End-to-End Training in Deep Unsupervised Contrastive
Learning* (arXiv 2002.06979).

Setting. A training set S = {x_1 … x_n} on the unit sphere (Assumption 1) with
separation δ = min_{i≠j} ‖x_i − x_j‖₂ > 0 (Assumption 2); two (L+1)-layer ReLU networks,
the query encoder f^q_W and the key encoder f^k_θ (Definition 3.1), each W_L σ(… W_1
σ(W_0 x)) with the initialisation of Definition 3.2 (:class:`TwoEncoders`). With q_i =
f^q_W(x_i), k_i = f^k_θ(x_i) and u_ij = q_iᵀ(k_j − k_i), the loss of anchor i against a
set N ⊂ [n]∖{i} of k negatives is

    ℓ_i(N) = −log( e^{q_iᵀk_i} / (e^{q_iᵀk_i} + Σ_{j∈N} e^{q_iᵀk_j}) )
           = log(1 + Σ_{j∈N} e^{u_ij})                                        (3.1)

and the objective is its exact expectation over the C(n−1, k) equally likely negative
sets,

    L_S(W, θ) = (1/n) Σ_i E^{Neg(i)} ℓ_i(N)
              = (1/n) Σ_i C(n−1, k)^{-1} Σ_{N ⊂ [n]∖{i}, |N| = k} ℓ_i(N)      (3.2)

(:func:`contrastive_loss`, vectorised with an index tensor of all negative sets
(:func:`negative_sets`, :func:`negative_set_logits`) and :func:`log_one_plus_sum_exp`;
:func:`contrastive_loss_loop` is the direct loop, :func:`time_exact_expectation` times
the two side by side).

Loss vectors (Definition 4.1): loss~_i = ∂L_S/∂q_i, loss^_i = ∂L_S/∂k_i, loss = (loss~,
loss^). With p_ij(N) = e^{u_ij} / (1 + Σ_{s∈N} e^{u_is}) and P̄_ij = E^{Neg(i)}[1{j ∈ N}
p_ij(N)] (:func:`negative_weights`), the closed forms are (:func:`loss_vectors`)

    loss~_i = (1/n) E^{Neg(i)}[ Σ_{j∈N} p_ij(N) (k_j − k_i) ]
            = (1/n) Σ_j P̄_ij (k_j − k_i)                                      (Fact 1)
    loss^_i = (1/n) Σ_{j≠i} ( loss^(x_j, x_i) − loss^(x_i, x_j) ),
            loss^(x_i, x_j) = P̄_ij q_i                                        (Fact 2)

The main text prints Fact 1 with the denominator 1 + Σ_{s=1}^{j} e^{u_is} (a partial
sum) and without the 1/n of L_S; Appendix C.1 has the full denominator, still without
1/n, i.e. n·∂L_S/∂q_i; Fact 2 also omits the 1/n. :func:`loss_tilde` computes all three
forms, :func:`loss_vectors_autograd` the definition itself.

Algorithm 1 (:func:`algorithm1`): simultaneous full-batch gradient descent W ← W − η∇_W
L_S, θ ← θ − γ∇_θ L_S, for several seeds at once (a
:class:`~ccl_helpers.train.StackedModel` of :class:`TwoEncoders`), recording at every
step the loss, the loss-vector norms and the output norms, and at log-spaced checkpoints
the gradient norms of Lemma 4.3 and the movement from initialisation. Theorem 4.2's step
sizes are Θ(d ε² δ² / (n⁷ L² k m)); :func:`step_size` keeps their width dependence η, γ
∝ d/m.

Analysis of the histories: :func:`running_average` (Theorem 4.2's left side),
:func:`descent_constant` (the proof's one-step descent), :func:`lemma43_ratios`,
:func:`theorem42_orders` (the theorem's sizes with constants 1),
:func:`movement_radius`, :func:`lemma44_radius_range` and :func:`radius_meeting_width`
(the lemmas' radii), :func:`late_slopes` (the log-log slope of a quantity against T late
in each run, one per seed); the movement's slope against m is fitted per seed by
:func:`ccl_helpers.verdicts.per_seed_slopes`. :data:`CLAIMS` holds the claims of the
source that the chapter tests, for its verdict table (:mod:`ccl_helpers.verdicts`).

Chapter 2's single shared encoder on the same data: :func:`all_triplets` and
:func:`triplet_loss` (Merad et al., eq. (11), on the fixed triplets (x_i, x_i, x_j), j ≠
i, which is L_S with k = 1 and f^q = f^k), :func:`shared_loss_vectors` and
:func:`shared_evaluator`.
"""

from __future__ import annotations

import itertools
import math
import numbers
import statistics
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from .checks import (
    check_batch,
    check_callable,
    check_device,
    check_finite,
    check_frame,
    check_tensor,
)
from .checks import check_int as _check_int
from .checks import check_positive as _check_positive
from .losses import at_least_float32, logistic_loss, result_dtype, widen_float16
from .models import DeepReLU
from .runtime import progress
from .train import (
    Evaluation,
    Forward,
    StackedModel,
    combined_norm,
    log_spaced_steps,
    loop,
    member_norms,
)
from .verdicts import Claim, claims_by_key, power_law_fit

MAX_SET_ELEMENTS = 2**27
"""Largest n · C(n−1, k) · k (entries of the index tensor of all negative sets)
:func:`negative_sets` builds; beyond it the exact expectation needs more memory than it
is worth (raise ValueError)."""

FACT1_FORMS = ("corrected", "appendix", "main_text")
"""The forms of Fact 1 :func:`loss_tilde` computes: ``"corrected"`` (1/n, full
denominator) = ∂L_S/∂q_i; ``"appendix"`` (Appendix C.1: full denominator, no 1/n) =
n·∂L_S/∂q_i; ``"main_text"`` (Section 5.1: denominator 1 + Σ_{s=1}^{j} e^{u_is}, no 1/n,
negatives of a set in ascending index order)."""


# ---------------------------------------------------------------- argument checks


def _check_outputs(
    q: Tensor, k: Tensor, n_negatives: int, *, minimum_n: int = 2
) -> int:
    """Validate q, k (..., n, d), of one shape and device, and 1 ≤ n_negatives ≤ n − 1;
    return n."""
    check_tensor("q", q, min_ndim=2, floating=True)
    check_tensor("k", k, min_ndim=2, floating=True)
    if q.shape != k.shape or q.device != k.device:
        raise ValueError(
            f"q and k must have the same shape (..., n, d) and device, got "
            f"{tuple(q.shape)} on {q.device} and {tuple(k.shape)} on {k.device}"
        )
    n = q.shape[-2]
    if n < minimum_n:
        raise ValueError(
            f"q must hold n ≥ {minimum_n} points (shape (..., n, d)), got n = {n}"
        )
    _check_int("n_negatives", n_negatives, 1, n - 1)
    return n


def _sets_or_all(sets: Tensor | None, n: int, n_negatives: int, device) -> Tensor:
    """The given negative sets (n, C, k), validated, or all of them
    (:func:`negative_sets`) when ``sets`` is None."""
    if sets is None:
        return negative_sets(n, n_negatives, device)
    check_tensor("sets", sets, ndim=3, integer=True)
    if sets.shape[0] != n or sets.shape[2] != n_negatives:
        raise ValueError(
            f"sets must have shape (n, C, k) = ({n}, C, {n_negatives}) from "
            f"negative_sets, got {tuple(sets.shape)}"
        )
    return sets


# ---------------------------------------------------------------- the negative sets


def n_negative_sets(n: int, n_negatives: int) -> int:
    """C(n − 1, k): the number of negative sets {x_{i,1} … x_{i,k}} ⊂ S∖{x_i} of one
    anchor."""
    n = _check_int("n", n, 2)
    n_negatives = _check_int("n_negatives", n_negatives, 1, n - 1)
    return math.comb(n - 1, n_negatives)


def _combinations(size: int, r: int, device) -> Tensor:
    """All r-subsets of range(size) in lexicographic order, (C(size, r), r), built level
    by level (a loop over the r positions, never over the subsets)."""
    combos = torch.arange(size, device=device).unsqueeze(1)
    candidates = torch.arange(size, device=device)
    for _ in range(r - 1):
        rows, cols = torch.nonzero(candidates[None, :] > combos[:, -1:], as_tuple=True)
        combos = torch.cat([combos[rows], candidates[cols].unsqueeze(1)], dim=1)
    return combos


def negative_sets(
    n: int, n_negatives: int, device: torch.device | str = "cpu"
) -> Tensor:
    """Every negative set of every anchor: a LongTensor (n, C, k), C = C(n − 1, k).

    ``sets[i, c]`` lists the k indices (ascending) of the c-th k-subset of [n]∖{i}, in
    lexicographic order; built by vectorised index arithmetic (position p among the
    others is index p + [p ≥ i]). Raises ValueError when n·C·k exceeds
    :data:`MAX_SET_ELEMENTS`.
    """
    device = check_device("device", device)
    count = n_negative_sets(n, n_negatives)
    if n * count * n_negatives > MAX_SET_ELEMENTS:
        raise ValueError(
            f"n_negatives = {n_negatives} with n = {n} gives n·C(n−1, k)·k = "
            f"{n * count * n_negatives:,} index entries (> "
            f"{MAX_SET_ELEMENTS:,}); lower n or n_negatives"
        )
    positions = _combinations(
        n - 1, n_negatives, device
    )  # (C, k) positions among the others
    anchors = torch.arange(n, device=device).view(n, 1, 1)
    return positions.unsqueeze(0) + (positions.unsqueeze(0) >= anchors).long()


def pairwise_logits(q: Tensor, k: Tensor) -> Tensor:
    """u_ij = q_iᵀ(k_j − k_i) = q_iᵀk_j − q_iᵀk_i for q, k (..., n, d) → (..., n, n)
    (u_ii = 0), in the dtype of q (float32 for float16: its range cannot hold them)."""
    _check_outputs(q, k, 1, minimum_n=2)
    products = widen_float16(q) @ widen_float16(k).transpose(-1, -2)
    return products - products.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)


def _set_logits(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """(u over every negative set (..., n, C, k), the gather index (..., n, C·k))."""
    u = pairwise_logits(q, k)
    n, count, size = sets.shape
    index = sets.reshape(n, count * size).expand(*u.shape[:-2], n, count * size)
    return torch.gather(u, -1, index).reshape(*u.shape[:-2], n, count, size), index


def negative_set_logits(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> Tensor:
    """The logits u_ij = q_iᵀ(k_j − k_i) of every negative set: (..., n, C, k), entry
    [i, c, s] for the s-th member j of anchor i's c-th set (:func:`negative_sets`);
    ℓ_i(N) = log(1 + Σ_s e^{u[i, c, s]})."""
    n = _check_outputs(q, k, n_negatives)
    sets = _sets_or_all(sets, n, n_negatives, q.device)
    return _set_logits(q, k, sets)[0]


def log_one_plus_sum_exp(u: Tensor) -> Tensor:
    """g(u) = log(1 + Σ_j e^{u_j}) over the last axis of u (..., k) → (...,), accurate
    at both ends.

    With M = max(0, max_j u_j): M + log(e^{−M} + Σ_j e^{u_j − M}) when M > 0 (no
    overflow), and log1p(Σ_j e^{u_j}) when every u_j ≤ 0, so that values as small as
    e^{u} (≪ machine epsilon) keep their relative precision — a plain log-sum-exp of [0,
    u] rounds them to 0. Exact gradients.
    """
    if not isinstance(u, Tensor) or u.ndim < 1 or not u.is_floating_point():
        raise ValueError(
            f"u must be a floating-point tensor (..., k), got "
            f"{tuple(u.shape) if isinstance(u, Tensor) else type(u).__name__}"
        )
    top = u.amax(-1, keepdim=True).clamp_min(0)
    shifted = top.squeeze(-1) + torch.log(
        torch.exp(-top).squeeze(-1) + torch.exp(u - top).sum(-1)
    )
    small = torch.log1p(torch.exp(u.clamp_max(0)).sum(-1))
    return torch.where(top.squeeze(-1) > 0, shifted, small)


def _with_zero(u: Tensor) -> Tensor:
    """[0, u_1 … u_k] along the last axis (the positive's logit u_ii = 0 first)."""
    return torch.cat([torch.zeros_like(u[..., :1]), u], dim=-1)


# ---------------------------------------------------------------- L_S, eq. (3.2)


def contrastive_loss(
    q: Tensor,
    k: Tensor,
    n_negatives: int,
    *,
    reduction: str = "mean",
    sets: Tensor | None = None,
) -> Tensor:
    """L_S of eq. (3.2), the expectation over negatives computed exactly.

    L_S = (1/n) Σ_i C(n−1, k)^{-1} Σ_{N} log(1 + Σ_{j∈N} exp(q_iᵀ(k_j − k_i))), N over
    all k-subsets of [n]∖{i} — eq. (3.1) rewritten as log(1 + Σ e^{u})
    (:func:`log_one_plus_sum_exp`: no overflow, and full relative precision when the
    loss is tiny).

    Args:
        q: query outputs q_i = f^q_W(x_i), shape (..., n, d); k: key outputs k_i =
            f^k_θ(x_i), same shape.
        n_negatives: k, the number of negatives per anchor, 1 ≤ k ≤ n − 1.
        reduction: ``"mean"`` → L_S, shape (...); ``"none"`` → E^{Neg(i)} ℓ_i per
            anchor, shape (..., n).
        sets: the index tensor of :func:`negative_sets` (built if None; pass it to reuse
            it).

    Precision as :func:`ccl_helpers.losses.info_nce_loss`: log(1 + Σ e^u) in at least
    float32, the result in the dtype of q (float32 for float16). A NaN propagates.
    """
    n = _check_outputs(q, k, n_negatives)
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}")
    sets = _sets_or_all(sets, n, n_negatives, q.device)
    u, _ = _set_logits(q, k, sets)
    per_anchor = log_one_plus_sum_exp(at_least_float32(u)).mean(-1)
    result = per_anchor.mean(-1) if reduction == "mean" else per_anchor
    return result.to(result_dtype(q))


def contrastive_loss_loop(q: Tensor, k: Tensor, n_negatives: int) -> Tensor:
    """L_S of eq. (3.2) by the direct loop (the reference for tests and the speed
    comparison).

    For each anchor i and each k-subset N of [n]∖{i} (``itertools.combinations``), eq.
    (3.1) as printed: −log softmax(q_iᵀk_i, q_iᵀk_{j₁}, …, q_iᵀk_{j_k})₀; then the mean
    over N and over i.
    q, k: (n, d) (no batch axes). Returns a 0-dim tensor (differentiable), in the
    precision of :func:`contrastive_loss`.
    """
    n = _check_outputs(q, k, n_negatives)
    if q.ndim != 2:
        raise ValueError(
            f"q and k must have shape (n, d) for the loop, got {tuple(q.shape)}"
        )
    total = q.new_zeros(())
    count = math.comb(n - 1, n_negatives)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        for negatives in itertools.combinations(others, n_negatives):
            logits = at_least_float32(
                widen_float16(k[[i, *negatives]]) @ widen_float16(q[i])
            )
            total = total - torch.log_softmax(logits, dim=0)[0]
    return (total / (n * count)).to(result_dtype(q))


# ---------------------------------------------------------------- loss vectors, Facts 1
# and 2


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
    n = _check_outputs(q, k, n_negatives)
    if form not in ("full", "partial"):
        raise ValueError(f"form must be 'full' or 'partial', got {form!r}")
    sets = _sets_or_all(sets, n, n_negatives, q.device)
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
    if form not in FACT1_FORMS:
        raise ValueError(f"form must be one of {FACT1_FORMS}, got {form!r}")
    weights = negative_weights(
        q, k, n_negatives, sets=sets, form="partial" if form == "main_text" else "full"
    )
    vectors = weights @ k - weights.sum(-1, keepdim=True) * k
    return vectors / q.shape[-2] if form == "corrected" else vectors


def loss_vectors(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(loss~, loss^) of Definition 4.1 by the closed forms of Facts 1 and 2 (with the
    1/n of L_S), each (..., n, d).

    loss~_i = ∂L_S/∂q_i = (1/n) Σ_j P̄_ij (k_j − k_i); loss^_i = ∂L_S/∂k_i = (1/n)
    Σ_{j≠i} (loss^(x_j, x_i) − loss^(x_i, x_j)) = (1/n) [Σ_j P̄_ji q_j − (Σ_j P̄_ij)
    q_i], with loss^(x_i, x_j) = P̄_ij q_i and P̄ from :func:`negative_weights`.
    """
    weights = negative_weights(q, k, n_negatives, sets=sets)
    n = q.shape[-2]
    row = weights.sum(-1, keepdim=True)
    tilde = (weights @ k - row * k) / n
    hat = (weights.transpose(-1, -2) @ q - row * q) / n
    return tilde, hat


def loss_vectors_autograd(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(∂L_S/∂q, ∂L_S/∂k), each (..., n, d), by autograd through
    :func:`contrastive_loss` — Definition 4.1 itself. With batch axes, each batch
    element's L_S is differentiated separately."""
    _check_outputs(q, k, n_negatives)
    with torch.enable_grad():
        q_, k_ = q.detach().requires_grad_(True), k.detach().requires_grad_(True)
        loss = contrastive_loss(q_, k_, n_negatives, sets=sets)
        return torch.autograd.grad(loss.sum(), (q_, k_))


def fact1_comparison(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> pd.DataFrame:
    """One row per form of Fact 1 (:data:`FACT1_FORMS`): its relative error ‖form −
    ∂L_S/∂q‖_F / ‖∂L_S/∂q‖_F against autograd and the least-squares factor c minimising
    ‖form − c·∂L_S/∂q‖ (n for a missing 1/n).
    q, k: (n, d) (one network's outputs)."""
    _check_outputs(q, k, n_negatives)
    if q.ndim != 2:
        raise ValueError(f"q and k must have shape (n, d), got {tuple(q.shape)}")
    reference, _ = loss_vectors_autograd(q, k, n_negatives, sets=sets)
    rows = []
    for form in FACT1_FORMS:
        value = loss_tilde(q, k, n_negatives, form=form, sets=sets)
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


# ---------------------------------------------------------------- the two encoders,
# Definitions 3.1–3.2


class TwoEncoders(nn.Module):
    """Wen's query encoder f^q_W and key encoder f^k_θ (Definition 3.1) with the
    initialisation of Definition 3.2: two independent (L+1)-layer bias-free ReLU
    networks

        f(x) = W_L σ(W_{L−1} … σ(W_1 σ(W_0 x))),
            (W_0)_ij, (W_l)_ij ~ N(0, 2/m),   (W_L)_ij ~ N(0, 1/d),

    W_0 ∈ R^{m×b}, W_l ∈ R^{m×m} (1 ≤ l ≤ L−1), W_L ∈ R^{d×m}: each a
    :class:`~ccl_helpers.models.DeepReLU` of depth L − 1 with every layer trained
    (``trainable="all"``, Algorithm 1 updates all of W and θ). Parameter names
    ``query.A``, ``query.W1`` …, ``query.B`` (W) and ``key.A`` … (θ); A = W_0, B = W_L.
    ``forward``: x (n, b) → (q, k), each (n, d).
    """

    def __init__(self, in_features: int, width: int, n_layers: int, out_features: int):
        super().__init__()
        _check_int("in_features", in_features, 1)
        _check_int("width", width, 1)
        _check_int("n_layers", n_layers, 1)
        _check_int("out_features", out_features, 1)
        self.n_layers, self.width, self.out_features = n_layers, width, out_features
        self.query = DeepReLU(
            in_features, width, n_layers - 1, out_features, trainable="all"
        )
        self.key = DeepReLU(
            in_features, width, n_layers - 1, out_features, trainable="all"
        )

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.query(x), self.key(x)


def step_size(width: int, out_features: int, scale: float = 1.0) -> float:
    """η = γ = scale · d / m: Theorem 4.2's Θ(d ε² δ² / (n⁷ L² k m)) with ε²δ²/(n⁷L²k)
    folded into ``scale``.

    With it the function-space step η‖∇_W f‖² ~ scale is the same for every width (Lemma
    4.3: ‖∇_W L_S‖²_F ∝ m/d), so the trajectory radius ‖W^(t) − W^(0)‖_F ~ η ‖∇_W L_S‖_F
    · t shrinks like m^{−1/2}.
    """
    return (
        _check_positive("scale", scale)
        * _check_int("out_features", out_features, 1)
        / _check_int("width", width, 1)
    )


HISTORY_COLUMNS = (
    "loss",
    "loss_norm",
    "tilde_sq",
    "hat_sq",
    "output_norm_max",
    "logit_max",
)
"""Quantities :func:`algorithm1` records at every step (see its docstring)."""

CHECKPOINT_COLUMNS = ("grad_W_sq", "grad_theta_sq", "movement_W", "movement_theta")
"""Quantities :func:`algorithm1` records at its checkpoints only (NaN at the other
steps)."""

FINAL_COLUMNS = ("spectral_W", "spectral_theta")
"""Quantities :func:`algorithm1` records at the last step T only: the largest per-layer
spectral norm max_l ‖W_l^(T) − W_l^(0)‖₂ of the query encoder's movement (the distance
of Lemma B.4, which defines the balls B(W^(0), ω) of Lemmas 4.3–4.4), and the same for
θ."""


def algorithm1(
    model: StackedModel,
    x: Tensor,
    n_negatives: int,
    n_steps: int,
    *,
    eta: float,
    gamma: float,
    checkpoints: int | Sequence[int] = 60,
    desc: str = "Algorithm 1",
) -> pd.DataFrame:
    """Algorithm 1 (end-to-end training by gradient descent) for every seed of ``model``
    at once (in place).

    W^(t+1) = W^(t) − η ∇_W L_S(W^(t), θ^(t)),  θ^(t+1) = θ^(t) − γ ∇_θ L_S(W^(t),
    θ^(t)),  t = 0 … T − 1,

    with L_S exact (:func:`contrastive_loss`). The seeds' losses are summed, so each
    seed follows its own trajectory. One forward and one backward per step give L_S, its
    parameter gradients and the loss vectors ∂L_S/∂q_i, ∂L_S/∂k_i (Definition 4.1, by
    autograd w.r.t. the outputs).

    Args:
        model: a StackedModel of :class:`TwoEncoders` (parameters ``query.*`` = W,
            ``key.*`` = θ).
        x: the training set S, (n, b), on the model's device (unit norm rows for
            Assumption 1).
        n_negatives: k; n_steps: T ≥ 1; eta, gamma: the step sizes η (query) and γ
            (key), > 0.
        checkpoints: an int (≈ that many log-spaced steps,
            :func:`~ccl_helpers.train.log_spaced_steps`) or explicit steps at which the
            parameter-sized quantities are computed too; 0 and T always are.

    Returns the long history (step, seed, quantity, value and the constants ``width``,
    ``out_features``, ``eta``, ``gamma``; :func:`~ccl_helpers.train.wide` gives one row
    per step and seed), all at (W^(t), θ^(t)):
        at every step: ``loss`` L_S; ``tilde_sq`` Σ_i‖loss~_i‖²; ``hat_sq``
        Σ_i‖loss^_i‖²; ``loss_norm`` ‖loss‖₂ = (tilde_sq + hat_sq)^{1/2};
        ``output_norm_max`` max_i max(‖q_i‖, ‖k_i‖); ``logit_max`` max_{i≠j} u_ij (all u
        < 0: every query ranks its own key first);
        at the checkpoints only: ``grad_W_sq`` ‖∇_W L_S‖²_F; ``grad_theta_sq`` ‖∇_θ
        L_S‖²_F; ``movement_W`` ‖W^(t) − W^(0)‖_F; ``movement_theta`` ‖θ^(t) − θ^(0)‖_F;
        at T only: ``spectral_W`` max_l ‖W_l^(T) − W_l^(0)‖₂, ``spectral_theta`` the
        same for θ (:data:`FINAL_COLUMNS`).

    Raises FloatingPointError when L_S or a loss vector becomes non-finite (lower η, γ).
    """
    if not isinstance(model, StackedModel) or not isinstance(
        model.template, TwoEncoders
    ):
        raise ValueError("model must be a StackedModel of TwoEncoders")
    n_steps = _check_int("n_steps", n_steps, 1)
    eta, gamma = _check_positive("eta", eta), _check_positive("gamma", gamma)
    if not isinstance(x, Tensor) or x.ndim != 2 or not x.is_floating_point():
        raise ValueError(
            f"x must be a floating-point tensor (n, b), got "
            f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}"
        )
    check_finite("x", x)
    n = x.shape[0]
    _check_int("n_negatives", n_negatives, 1, n - 1)
    if isinstance(checkpoints, numbers.Integral) and not isinstance(checkpoints, bool):
        schedule = set(
            log_spaced_steps(n_steps, _check_int("checkpoints", checkpoints, 1))
        )
    elif isinstance(checkpoints, Sequence):
        schedule = {int(s) for s in checkpoints if 0 <= int(s) <= n_steps} | {
            0,
            n_steps,
        }
    else:
        raise ValueError(
            "checkpoints must be an int ≥ 1 or a sequence of steps, got "
            f"{checkpoints!r}"
        )
    names = list(model.params)
    params = [model.params[name] for name in names]
    if x.device != params[0].device:
        raise ValueError(
            f"x must be on the model's device {params[0].device}, got {x.device}"
        )
    query = [name.startswith("query.") for name in names]
    initial = [p.detach().clone() for p in params]
    sets = negative_sets(n, n_negatives, x.device)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=x.device)

    def split_norms(norms: list[Tensor]) -> tuple[Tensor, Tensor]:
        """The norms of the query's and of the key's tensors taken together."""
        return (
            combined_norm(v for v, is_q in zip(norms, query) if is_q),
            combined_norm(v for v, is_q in zip(norms, query) if not is_q),
        )

    def gradient(step: int, beta: float) -> Evaluation:
        q, k = model(x)
        loss = contrastive_loss(q, k, n_negatives, sets=sets)
        grads = torch.autograd.grad(loss.sum(), [q, k, *params])
        tilde, hat = grads[0], grads[1]
        with torch.no_grad():
            tilde_sq, hat_sq = tilde.square().sum((1, 2)), hat.square().sum((1, 2))
            quantities = {
                "loss_norm": (tilde_sq + hat_sq).sqrt(),
                "tilde_sq": tilde_sq,
                "hat_sq": hat_sq,
                "output_norm_max": torch.maximum(q.norm(dim=-1), k.norm(dim=-1)).amax(
                    -1
                ),
                "logit_max": pairwise_logits(q, k)
                .masked_fill(~off_diagonal, -math.inf)
                .flatten(-2)
                .amax(-1),
            }
        return Evaluation(loss.detach(), grads[2:], quantities)

    def at_checkpoint(step: int, evaluation: Evaluation) -> dict[str, Tensor]:
        grad_w, grad_t = split_norms([member_norms(g) for g in evaluation.grads])
        move_w, move_t = split_norms(
            [member_norms(p - p0) for p, p0 in zip(params, initial)]
        )
        found = dict(
            zip(CHECKPOINT_COLUMNS, (grad_w.square(), grad_t.square(), move_w, move_t))
        )
        if step == n_steps:
            spectral = [
                torch.linalg.matrix_norm(p - p0, ord=2)
                for p, p0 in zip(params, initial)
            ]
            for column, side in zip(FINAL_COLUMNS, (True, False)):
                found[column] = torch.stack(
                    [s for s, is_q in zip(spectral, query) if is_q == side]
                ).amax(0)
        return found

    history = loop(
        model.params,
        gradient,
        n_steps,
        seeds=model.seeds,
        lr={"query.": eta, "key.": gamma},
        full_batch=True,
        checkpoints=schedule,
        on_checkpoint=at_checkpoint,
        every_step=HISTORY_COLUMNS,
        bar=lambda steps: progress(steps, desc=desc),
    )
    template = model.template
    recorded = history[
        history["quantity"].isin(HISTORY_COLUMNS + CHECKPOINT_COLUMNS + FINAL_COLUMNS)
    ]
    return recorded.assign(
        width=template.width, out_features=template.out_features, eta=eta, gamma=gamma
    ).reset_index(drop=True)


def run_widths(
    x: Tensor,
    widths: Sequence[int],
    *,
    n_layers: int,
    out_features: int,
    n_negatives: int,
    n_steps: int,
    n_seeds: int,
    step_scale: float = 1.0,
    seed: int = 0,
    checkpoints: int | Sequence[int] = 60,
) -> pd.DataFrame:
    """:func:`algorithm1` for each width m (η = γ = ``step_size(m, d, step_scale)``,
    :func:`step_size`), ``n_seeds`` seeds each (seeds ``seed`` …, the same for every
    width), L = ``n_layers``, d = ``out_features``, k = ``n_negatives``; the
    concatenated histories (column ``width``)."""
    if not isinstance(widths, Sequence) or not widths:
        raise ValueError(
            f"widths must be a non-empty sequence of ints ≥ 1, got {widths!r}"
        )
    for i, width in enumerate(widths):
        _check_int(f"widths[{i}]", width, 1)
    _check_positive("step_scale", step_scale)
    _check_int("seed", seed, 0)
    frames = []
    for width in widths:
        model = StackedModel(
            lambda width=width: TwoEncoders(x.shape[1], width, n_layers, out_features),
            n_seeds,
            seed=seed,
            device=x.device,
        )
        rate = step_size(width, out_features, step_scale)
        frames.append(
            algorithm1(
                model,
                x,
                n_negatives,
                n_steps,
                eta=rate,
                gamma=rate,
                checkpoints=checkpoints,
                desc=f"m = {width}",
            )
        )
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------- analysis of the
# histories


def running_average(
    history: pd.DataFrame,
    column: str = "loss_norm",
    by: Sequence[str] = ("width", "seed"),
) -> pd.Series:
    """(1/T) Σ_{t=0}^{T−1} value^(t) at T = step + 1, per group ``by`` (the left side of
    Theorem 4.2 for ``column="loss_norm"``); aligned with ``history``'s index."""
    check_frame("history", history, ["step"])
    check_frame("history", history, [column], columns_from="column")
    check_frame("history", history, list(by), columns_from="by")
    ordered = history.sort_values([*by, "step"])
    sums = ordered.groupby(list(by))[column].cumsum()
    return (sums / (ordered["step"] + 1)).reindex(history.index)


def descent_constant(
    history: pd.DataFrame, by: Sequence[str] = ("width", "seed")
) -> pd.Series:
    """c = min_t (L_S^(t) − L_S^(t+1)) / ‖loss^(t)‖² per group: the measured constant of
    the proof's one-step descent L_S^(t+1) ≤ L_S^(t) − c‖loss^(t)‖² (Theorem 4.2's
    Ω(min(η, γ) δ m / (n³ d))). With c > 0, Cauchy–Schwarz and telescoping give (1/T)
    Σ_{t<T} ‖loss^(t)‖ ≤ (L_S^(0) / (c T))^{1/2}."""
    check_frame("history", history, ["loss", "loss_norm", "step"])
    check_frame("history", history, list(by), columns_from="by")

    def one(group: pd.DataFrame) -> float:
        group = group.sort_values("step")
        decrease = group["loss"].to_numpy()[:-1] - group["loss"].to_numpy()[1:]
        return float(np.min(decrease / group["loss_norm"].to_numpy()[:-1] ** 2))

    return (
        history.groupby(list(by))[["step", "loss", "loss_norm"]]
        .apply(one)
        .rename("descent_constant")
    )


def lemma43_ratios(history: pd.DataFrame) -> pd.DataFrame:
    """Lemma 4.3's ratios divided by m/d: ``ratio_W`` = ‖∇_W L_S‖²_F / Σ_i‖loss~_i‖² /
    (m/d) and ``ratio_theta`` = ‖∇_θ L_S‖²_F / Σ_i‖loss^_i‖² / (m/d), for every row of
    an :func:`algorithm1` history (Definition 4.1's loss vectors, with the 1/n; the
    source's bounds then read Ω(δ/n) ≤ ratio ≤ O(L n))."""
    check_frame(
        "history",
        history,
        ["grad_W_sq", "tilde_sq", "grad_theta_sq", "hat_sq", "width", "out_features"],
    )
    scale = history["width"] / history["out_features"]
    return pd.DataFrame(
        {
            "ratio_W": history["grad_W_sq"] / history["tilde_sq"] / scale,
            "ratio_theta": history["grad_theta_sq"] / history["hat_sq"] / scale,
        },
        index=history.index,
    )


def late_slopes(
    history: pd.DataFrame,
    column: str = "running_average",
    *,
    decades: float = 1.0,
    offset: float = 0.0,
    n_points: int = 25,
    by: Sequence[str] = ("width", "seed"),
) -> pd.Series:
    """The log-log slope of ``column`` against T = step + 1 late in each run: one slope
    per group ``by`` (a Series indexed by ``by``), each fitted to its own run alone.

    The window spans ``decades`` decades and ends ``offset`` decades before the run's
    last T: T from T_max·10^{−(offset + decades)} to T_max·10^{−offset}, at ``n_points``
    log-spaced values of T (rounded, duplicates dropped; ≥ 3 needed), OLS of log value
    on log T (:func:`ccl_helpers.verdicts.power_law_fit`). On the running average
    (Theorem 4.2's left side, :func:`running_average`) a slope ≤ −1/2 is the proof's
    rate T^{−1/2}. Values must be > 0 on the window.
    """
    check_frame("history", history, ["step"])
    check_frame("history", history, [column], columns_from="column")
    check_frame("history", history, list(by), columns_from="by")
    decades = _check_positive("decades", decades)
    offset = _check_positive("offset", offset, allow_zero=True)
    n_points = _check_int("n_points", n_points, 3)
    slopes = {}
    for key, group in history.groupby(list(by), sort=True):
        last = float(group["step"].max()) + 1
        grid = np.unique(
            np.round(
                np.geomspace(
                    last * 10 ** -(offset + decades), last * 10**-offset, n_points
                )
            )
        )
        window = group[group["step"].isin(grid - 1)]
        if len(window) < 3:
            raise ValueError(
                f"the window of decades = {decades}, offset = {offset} holds "
                f"{len(window)} recorded steps of the run {key}; it needs ≥ 3"
            )
        slopes[key] = power_law_fit(
            window["step"].to_numpy() + 1.0, window[column].to_numpy()
        ).slope
    index = pd.MultiIndex.from_tuples(list(slopes), names=list(by))
    if index.nlevels == 1:
        index = index.get_level_values(0)
    return pd.Series(list(slopes.values()), index=index, name=f"late slope of {column}")


def theorem42_orders(
    n: int, n_layers: int, n_negatives: int, delta: float, epsilon: float
) -> dict[str, float]:
    """Theorem 4.2's requirements with every hidden constant set to 1 and log m dropped
    (log10 of each): ``log10_m`` of m ≥ n¹⁵ L¹² δ⁻⁵ ε⁻² (main text; the appendix has
    n¹²: ``log10_m_appendix``), ``log10_T`` of T = n¹⁰ L² k δ⁻³ ε⁻⁴, and
    ``log10_eta_m_over_d`` of η·m/d = ε² δ² / (n⁷ L² k)."""
    n = _check_int("n", n, 2)
    n_layers = _check_int("n_layers", n_layers, 1)
    n_negatives = _check_int("n_negatives", n_negatives, 1, n - 1)
    delta, epsilon = (
        _check_positive("delta", delta),
        _check_positive("epsilon", epsilon),
    )
    lg = math.log10
    return {
        "log10_m": 15 * lg(n) + 12 * lg(n_layers) - 5 * lg(delta) - 2 * lg(epsilon),
        "log10_m_appendix": 12 * lg(n)
        + 12 * lg(n_layers)
        - 5 * lg(delta)
        - 2 * lg(epsilon),
        "log10_T": 10 * lg(n)
        + 2 * lg(n_layers)
        + lg(n_negatives)
        - 3 * lg(delta)
        - 4 * lg(epsilon),
        "log10_eta_m_over_d": 2 * lg(epsilon)
        + 2 * lg(delta)
        - 7 * lg(n)
        - 2 * lg(n_layers)
        - lg(n_negatives),
    }


def proof_descent_constant(step_scale: float, delta: float, n: int) -> float:
    """The proof's one-step descent constant c of L_S^(t+1) ≤ L_S^(t) − c‖loss^(t)‖²,
    Ω(min(η, γ) δ m / (n³ d)) for loss vectors without the 1/n of L_S, in Definition
    4.1's units (with it): min(η, γ)(m/d) δ / n = ``step_scale`` · δ / n for
    η = γ = step_scale · d/m, every hidden constant set to 1."""
    return (
        _check_positive("step_scale", step_scale)
        * _check_positive("delta", delta)
        / _check_int("n", n, 2)
    )


def movement_radius(n: int, n_layers: int, delta: float, width: int) -> float:
    """Lemma 4.3's radius ω = δ^{3/2} / (n³ L⁶ log^{3/2} m) of the ball around
    initialisation (per-layer spectral norm, Lemma B.4) in which its gradient bounds
    hold, every hidden constant set to 1 (natural log)."""
    width = _check_int("width", width, 2)
    return _check_positive("delta", delta) ** 1.5 / (
        _check_int("n", n, 2) ** 3
        * _check_int("n_layers", n_layers, 1) ** 6
        * math.log(width) ** 1.5
    )


def lemma44_radius_range(
    width: int, out_features: int, n_layers: int
) -> tuple[float, float]:
    """Lemma 4.4's interval for its radius, ω, τ ∈ [Ω(√(d/m)), O(1/(L^{9/2} log^{3/2}
    m))], every hidden constant set to 1 (natural log): (√(d/m), 1/(L^{9/2} log^{3/2}
    m)). The interval is empty where the first exceeds the second."""
    width = _check_int("width", width, 2)
    low = math.sqrt(_check_int("out_features", out_features, 1) / width)
    high = 1 / (_check_int("n_layers", n_layers, 1) ** 4.5 * math.log(width) ** 1.5)
    return low, high


def radius_meeting_width(out_features: int, prefactor: float) -> float:
    """The width m* from which √(d/m) ≤ prefactor / log^{3/2} m holds: where Lemma
    4.4's lower end √(d/m) meets an upper end of that form (1/L^{9/2}, Lemma 4.4's own,
    or δ^{3/2}/(n³L⁶), Lemma 4.3's radius :func:`movement_radius`), constants 1.

    Solves log m = log d + 3 log log m − 2 log(prefactor) for its largest root by
    fixed-point iteration from above (it contracts there, the slope 3/log m < 1);
    returns 1.0 where the inequality holds at every width m > 1 (no root)."""
    d = _check_int("out_features", out_features, 1)
    log_a = math.log(_check_positive("prefactor", prefactor))

    def gap(y: float) -> float:  # > 0 where the inequality fails at m = e^y
        return math.log(d) + 3 * math.log(y) - 2 * log_a - y

    if gap(3.0) <= 0:  # the largest value of the gap, at log m = 3
        return 1.0
    y = max(3.0, gap(3.0) + 3.0) * 10
    for _ in range(1000):
        updated = math.log(d) + 3 * math.log(y) - 2 * log_a
        if abs(updated - y) <= 1e-13 * y:
            return math.exp(updated)
        y = updated
    raise ArithmeticError("the fixed-point iteration did not converge")  # unreachable


# ---------------------------------------------------------------- the single shared
# encoder (Chapter 2)


def all_triplets(n: int, device: torch.device | str = "cpu") -> Tensor:
    """The n(n − 1) fixed triplets (x_i, x_i⁺, x_i⁻) = (x_i, x_i, x_j), j ≠ i, as a
    LongTensor (n(n−1), 3) of
    indices into S: instance discrimination with one negative, written as Merad et al.'s
        fixed triplets."""
    n = _check_int("n", n, 2)
    device = check_device("device", device)
    pairs = negative_sets(n, 1, device).reshape(n * (n - 1))
    anchors = torch.arange(n, device=device).repeat_interleave(n - 1)
    return torch.stack([anchors, anchors, pairs], dim=1)


def triplet_loss(forward: Forward, data: tuple[Tensor, Tensor]) -> Tensor:
    """Merad et al.'s eq. (11) for one encoder f, divided by the number of triplets:
    (1/M) Σ_t log(1 + exp(f(x_t)ᵀ(f(x_t⁻) − f(x_t⁺))))
    (:func:`ccl_helpers.losses.logistic_loss`).

    data: (x (n, b), triplets (M, 3) of indices, e.g. :func:`all_triplets`). One forward
    pass over the n inputs of x, then ``logistic_loss(..., reduction="mean")`` on the
    indexed outputs: the same value as :func:`ccl_helpers.multineg.triplet_objective`
    (the sum, one forward pass over 3M inputs) of (x[triplets[:, 0]], x[triplets[:, 1]],
    x[triplets[:, 2]]), divided by M. With :func:`all_triplets` it equals L_S(f, f) with
    k = 1 (:func:`contrastive_loss` of (f(x), f(x), 1)). A ``loss_fn`` for
    :func:`ccl_helpers.train.gradient_descent` (shape checks only, so it runs under
    vmap)."""
    check_callable("forward", forward)
    x, triplets = check_batch("data", data, ("floating", "integer"))
    if triplets.ndim != 2 or triplets.shape[1] != 3:
        raise ValueError(
            "data[1], the triplets, must have shape (M, 3), got "
            f"{tuple(triplets.shape)}"
        )
    out = forward(x)
    return logistic_loss(out[triplets[:, 0]], out[triplets[:, 1]], out[triplets[:, 2]])


def shared_loss_vectors(
    f: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> Tensor:
    """∂L_S(f, f)/∂f_i (..., n, d) for one shared encoder (f^q = f^k = f, outputs f
    (..., n, d)): by the chain rule the sum loss~_i + loss^_i of the two closed forms at
    q = k = f."""
    tilde, hat = loss_vectors(f, f, n_negatives, sets=sets)
    return tilde + hat


def shared_evaluator(x: Tensor, n_negatives: int):
    """An ``evaluate`` for :func:`ccl_helpers.train.gradient_descent` of one shared
    encoder f on S = x (n, b): model ↦ {``loss_norm``: ‖(∂L_S(f, f)/∂f_i)_i‖₂
    (:func:`shared_loss_vectors`), ``L_S``: L_S(f, f), ``output_norm_max``: max_i
    ‖f(x_i)‖}, each (S,) over the stacked seeds."""
    check_tensor("x", x, ndim=2, floating=True)
    check_finite("x", x)
    n = _check_int("x: the number of rows n", x.shape[0], 2)
    sets = negative_sets(n, _check_int("n_negatives", n_negatives, 1, n - 1), x.device)

    def evaluate(model) -> dict[str, Tensor]:
        f = model(x)
        vectors = shared_loss_vectors(f, n_negatives, sets=sets)
        return {
            "loss_norm": vectors.square().sum((-2, -1)).sqrt(),
            "L_S": contrastive_loss(f, f, n_negatives, sets=sets),
            "output_norm_max": f.norm(dim=-1).amax(-1),
        }

    return evaluate


# ---------------------------------------------------------------- speed of the exact
# expectation


def time_exact_expectation(
    q: Tensor, k: Tensor, n_negatives: int, *, repeats: int = 5, loop_repeats: int = 3
) -> dict[str, float]:
    """Median wall-clock seconds of :func:`contrastive_loss` (vectorised, index tensor
    built each call) and of :func:`contrastive_loss_loop` on the same q, k (n, d),
    measured side by side (no gradient).

    Returns ``vectorised_s``, ``loop_s``, ``ratio`` = loop_s / vectorised_s,
    ``abs_difference`` of the two values, ``n_sets`` = n·C(n−1, k)."""
    n = _check_outputs(q, k, n_negatives)
    repeats, loop_repeats = (
        _check_int("repeats", repeats, 1),
        _check_int("loop_repeats", loop_repeats, 1),
    )

    def timed(function, times):
        values, seconds = [], []
        for _ in range(times):
            if q.is_cuda:
                torch.cuda.synchronize(q.device)
            start = time.perf_counter()
            value = function()
            if q.is_cuda:
                torch.cuda.synchronize(q.device)
            seconds.append(time.perf_counter() - start)
            values.append(value)
        return values[-1], statistics.median(seconds)

    with torch.no_grad():
        contrastive_loss(q, k, n_negatives)  # warm-up
        fast, fast_s = timed(lambda: contrastive_loss(q, k, n_negatives), repeats)
        slow, slow_s = timed(
            lambda: contrastive_loss_loop(q, k, n_negatives), loop_repeats
        )
    return {
        "vectorised_s": fast_s,
        "loop_s": slow_s,
        "ratio": slow_s / fast_s,
        "abs_difference": float((fast - slow).abs()),
        "n_sets": n * math.comb(n - 1, n_negatives),
    }


# ---------------------------------------------------------------- the chapter's claims

_CONSTANTS_MARGIN = math.log10(2.0)
_CONSTANTS_REASON = (
    "a factor 2 (log10 2): the source's orders hide constants of order 1, so with "
    "every constant set to 1 a bound met or missed by less than a factor 2 says "
    "nothing either way"
)

_CLAIM_LIST = (
    Claim(
        key="fact1_main_text",
        source="Wen (2020), Fact 1 (Section 5.1)",
        statement=(
            "∂L_S/∂q_i = E^{Neg(i)}[Σ_j e^{q_iᵀz_ij} / (1 + Σ_{s≤j} e^{q_iᵀz_is}) "
            "z_ij], with a partial sum in the denominator"
        ),
        metric="relative error against autograd's ∂L_S/∂q_i (float64)",
        section="wen-loss-vectors",
    ),
    Claim(
        key="facts_one_over_n",
        source="Wen (2020), Fact 1 (Appendix C.1) and Fact 2",
        statement=(
            "the closed forms are the loss vectors ∂L_S/∂q_i and ∂L_S/∂k_i of "
            "Definition 4.1"
        ),
        metric="least-squares factor between each form and autograd's derivative",
        section="wen-loss-vectors",
    ),
    Claim(
        key="theorem_4_2",
        source="Wen (2020), Theorem 4.2",
        statement=(
            "for m ≥ Ω(n¹⁵L¹²(log m)⁵δ⁻⁵ε⁻²), d ≥ Ω(log² m) and η, γ = "
            "Θ(dε²δ²/(n⁷L²km)), (1/T)Σ_{t<T}‖loss^(t)‖₂ ≤ ε after "
            "T = Θ(n¹⁰L²k/(δ³ε⁴)) steps"
        ),
        metric="the running average of ‖loss^(t)‖₂ at the theorem's sizes",
        section="wen-theorem-and-lemmas",
    ),
    Claim(
        key="lemma_4_3_lower",
        source="Wen (2020), Lemma 4.3 (lower bounds) and the proof of Theorem 4.2",
        statement=(
            "‖∇_W L_S‖²_F ≥ Ω(mδ/(n³d)) Σ_i‖loss~_i‖², and the same for θ with "
            "loss^; carried through one step, the descent L_S^(t+1) ≤ L_S^(t) − "
            "c‖loss^(t)‖₂² with c = Ω(min(η, γ)δm/(n³d))"
        ),
        metric=(
            "log10 of the smallest ratio ‖∇L_S‖²_F/((m/d)‖loss‖²) over the bound "
            "δ/n (Definition 4.1's units, constants 1), over the checkpoints, both "
            "encoders and the widths m > d of a seed"
        ),
        expected="greater",
        null=0.0,
        margin=_CONSTANTS_MARGIN,
        margin_reason=_CONSTANTS_REASON,
        scope="the chapter's runs at the widths m > d",
        section="wen-gradient-bounds",
    ),
    Claim(
        key="running_average_rate",
        source="Wen (2020), Theorem 4.2 and its proof, eq. (A.3)",
        statement=(
            "at fixed step sizes the running average (1/T)Σ_{t<T}‖loss^(t)‖₂ is "
            "O(T^{−1/2}): it falls like T^{−1/2} or faster"
        ),
        metric=(
            "log-log slope of the running average against T over the last decade "
            "of the run (T_max/10 ≤ T ≤ T_max), per seed"
        ),
        expected="less",
        null=-0.5,
        scope="m = 100, η = γ = d/m, T = 1200 (the long run); otherwise as the "
        "chapter's runs",
        section="wen-rate",
    ),
    Claim(
        key="lazy_movement",
        source="Wen (2020), proof of Theorem 4.2 (Section 5.3)",
        statement=(
            "the iterates stay within ω, τ = O(n^{3.5}√d/(δε√m)) of their "
            "initialisation: the movement scales as m^{−1/2}"
        ),
        metric="log-log slope of ‖W^(T) − W^(0)‖_F against m, per seed",
        expected="equal",
        null=-0.5,
        margin=0.1,
        margin_reason=(
            "a fifth of the exponent: over the decade of widths tested, a slope "
            "0.1 away from −1/2 changes the ratio of the movements at its ends by "
            "10^0.1 ≈ 1.26, the smallest change a reader would call another law"
        ),
        scope="the chapter's runs at the widths m ≥ 10d",
        section="wen-lazy-regime",
    ),
    Claim(
        key="lemma_hypotheses",
        source="Wen (2020), Lemmas 4.3 and 4.4",
        statement=(
            "the gradient bounds hold within ω, τ ≤ O(δ^{3/2}/(n³L⁶ log^{3/2} m)) "
            "of the initialisation, the semi-smoothness for ω, τ ∈ [Ω(√(d/m)), "
            "O(1/(L^{9/2} log^{3/2} m))]"
        ),
        metric=(
            "the radii (constants 1) against the distance the runs travel, "
            "max_l ‖W_l^(T) − W_l^(0)‖₂ (Lemma B.4's per-layer spectral norm)"
        ),
        section="wen-hypotheses",
    ),
    Claim(
        key="lemma_4_3_lower_large_d",
        source="Wen (2020), Lemma 4.3, with Theorem 4.2's d ≥ Ω(log² m)",
        statement=(
            "with d ≥ Ω(log² m), as Theorem 4.2 asks, the same lower bound "
            "‖∇L_S‖²_F ≥ Ω(mδ/(n³d))‖loss‖² (and with it the one-step descent)"
        ),
        metric=(
            "log10 of the smallest ratio ‖∇L_S‖²_F/((m/d)‖loss‖²) over δ/n, over "
            "the checkpoints and both encoders of a seed"
        ),
        expected="greater",
        null=0.0,
        margin=_CONSTANTS_MARGIN,
        margin_reason=_CONSTANTS_REASON,
        scope="m = 316 with d = 34 ≥ log² m; otherwise as the chapter's runs",
        section="wen-hypotheses",
    ),
    Claim(
        key="lemma_4_3_upper",
        source="Wen (2020), Lemma 4.3",
        statement=(
            "‖∇_W L_S‖²_F ≤ O(Lm/(nd)) Σ_i‖loss~_i‖², and the same for θ with "
            "loss^ (source's units, without the 1/n of L_S)"
        ),
        metric=(
            "log10 of the bound Ln over the largest ratio ‖∇L_S‖²_F/((m/d)"
            "‖loss‖²) (Definition 4.1's units, constants 1), over the checkpoints, "
            "both encoders and the widths m > d of a seed"
        ),
        expected="greater",
        null=0.0,
        margin=_CONSTANTS_MARGIN,
        margin_reason=_CONSTANTS_REASON,
        scope="the chapter's runs at the widths m > d",
        section="wen-gradient-bounds",
    ),
    Claim(
        key="no_minimiser",
        source="Wen (2020), abstract and Section 1",
        statement="the contrastive loss generally has no optimal solution",
        metric="L_S of the trained outputs scaled by s ≥ 1",
        section="wen-no-minimiser",
    ),
    Claim(
        key="outputs_grow",
        source="Wen (2020), abstract and Theorem 4.2",
        statement=(
            "gradient descent finds an approximate stationary point, not a "
            "minimiser: the loss vectors vanish while the outputs keep growing"
        ),
        metric="log10 of the largest output norm at T over that at T/4, per seed",
        expected="greater",
        null=0.0,
        margin=math.log10(1.1),
        margin_reason=(
            "10 % growth over the last three quarters of the run: below it the "
            "outputs could be settling at a finite point"
        ),
        scope="m = 100, η = γ = d/m, the long run",
        section="wen-no-minimiser",
    ),
    Claim(
        key="lemma_d1",
        source="Wen (2020), Lemma D.1",
        statement=(
            "g(u) = log(1 + Σ_j e^{u_j}) is 1-smooth: g(u + u') ≤ g(u) + "
            "∇g(u)ᵀu' + ½‖u'‖²"
        ),
        metric="the largest eigenvalue of ∇²g",
        section="wen-smoothness",
    ),
)

CLAIMS: dict[str, Claim] = claims_by_key(*_CLAIM_LIST)
"""The claims of Wen (2020) that Chapter 3 tests, by key, in the order of its verdict
table: the theorem rows (the corrected Facts, the sharpened Lemma D.1, the absence of a
minimiser), the claims not run at the theorem's sizes, and the empirical claims, each
with its primary metric (one number per seed), the side the source expects, the null
and the margin with its reason. The empirical claims test the mechanisms of the proof
with every hidden constant set to 1, outside the theorem's hypotheses; the rate is read
on the long run, where the running average has left its first transient."""
