"""L_S of eq. (3.2): the exact expectation over the negative sets, computed two ways.

One way is vectorised, the other the direct loop."""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from .._checks import check_choice
from .._precision import at_least_float32, result_dtype, widen_float16
from ._negative_sets import (
    _check_outputs,
    _check_set_count,
    _log_one_plus_sum_exp,
    _negative_sets,
    _set_logits,
)

_MAX_LOOP_SETS = 10**6
"""The most negative sets n·C(n − 1, k) that :func:`contrastive_loss_loop` visits: it
makes one Python iteration, with a handful of tensor operations, per set, so its count,
combinatorial in k, has no allocation to fail on; the book and its benchmarks loop over
at most 7,280 sets (n = 16, k = 3)."""


def contrastive_loss(
    q: Tensor, k: Tensor, n_negatives: int, *, reduction: str = "mean"
) -> Tensor:
    """L_S of eq. (3.2), the expectation over negatives computed exactly.

    L_S = (1/n) Σ_i C(n−1, k)^{-1} Σ_{N} log(1 + Σ_{j∈N} exp(q_iᵀ(k_j − k_i))), N over
    all k-subsets of [n]∖{i} — eq. (3.1) rewritten as log(1 + Σ e^{u}) (no overflow, and
    full relative precision when the loss is tiny), vectorised with an index tensor of
    every negative set (:func:`negative_set_logits`).

    Args:
        q: query outputs q_i = f^q_W(x_i), shape (..., n, d); k: key outputs k_i =
            f^k_θ(x_i), same shape and dtype.
        n_negatives: k, the number of negatives per anchor, 1 ≤ k ≤ n − 1.
        reduction: ``"mean"`` → L_S, shape (...); ``"none"`` → E^{Neg(i)} ℓ_i per
            anchor, shape (..., n).

    Precision as :func:`ccl_helpers.losses.info_nce_loss`: log(1 + Σ e^u) in at least
    float32, the result in the dtype of q (float32 for float16). Checks shapes, dtypes
    and devices only, never values: a NaN in q or k propagates.
    """
    n_negatives = _check_outputs(q, k, n_negatives)
    check_choice("reduction", reduction, ("mean", "none"))
    sets = _negative_sets(q.shape[-2], n_negatives, q.device)
    return _exact_loss(q, k, sets, reduction)


def _exact_loss(q: Tensor, k: Tensor, sets: Tensor, reduction: str = "mean") -> Tensor:
    """:func:`contrastive_loss` over the negative sets ``sets`` (n, C, k)."""
    u, _ = _set_logits(q, k, sets)
    per_anchor = _log_one_plus_sum_exp(at_least_float32(u)).mean(-1)
    result = per_anchor.mean(-1) if reduction == "mean" else per_anchor
    return result.to(result_dtype(q))


def contrastive_loss_loop(q: Tensor, k: Tensor, n_negatives: int) -> Tensor:
    """L_S of eq. (3.2) by the direct loop (the reference for tests and the speed
    comparison).

    For each anchor i and each k-subset N of [n]∖{i} (``itertools.combinations``), eq.
    (3.1) as printed: −log softmax(q_iᵀk_i, q_iᵀk_{j₁}, …, q_iᵀk_{j_k})₀; then the mean
    over N and over i.
    q, k: (n, d) (no batch axes). Returns a 0-dim tensor (differentiable), in the
    precision of :func:`contrastive_loss`. At most 10⁶ sets n·C(n − 1, k) (by count).
    """
    n_negatives = _check_outputs(q, k, n_negatives)
    if q.ndim != 2:
        raise ValueError(
            f"q and k must have shape (n, d) for the loop, got {tuple(q.shape)}"
        )
    n = q.shape[0]
    _check_set_count(n, n_negatives, _MAX_LOOP_SETS)
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
