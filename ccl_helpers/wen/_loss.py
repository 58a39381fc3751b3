"""L_S of eq. (3.2): the exact expectation over the negative sets, computed two ways.

One way is vectorised, the other the direct loop."""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from ..checks import Choice, checked
from ..losses import at_least_float32, result_dtype, widen_float16
from ._negative_sets import (
    OUTPUTS,
    OUTPUTS_AND_SETS,
    NegativeCount,
    _check_outputs,
    _checked_sets,
    _set_logits,
    log_one_plus_sum_exp,
)


@checked(**OUTPUTS_AND_SETS, reduction=Choice(("mean", "none")))
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
    float32, the result in the dtype of q (float32 for float16).
    """
    return _exact_loss(q, k, _checked_sets(q, k, n_negatives, sets), reduction)


def _exact_loss(q: Tensor, k: Tensor, sets: Tensor, reduction: str = "mean") -> Tensor:
    """:func:`contrastive_loss` over the negative sets ``sets`` (n, C, k), on arguments
    its caller has checked."""
    u, _ = _set_logits(q, k, sets)
    per_anchor = log_one_plus_sum_exp(at_least_float32(u)).mean(-1)
    result = per_anchor.mean(-1) if reduction == "mean" else per_anchor
    return result.to(result_dtype(q))


@checked(**OUTPUTS, n_negatives=NegativeCount(of="q"))
def contrastive_loss_loop(q: Tensor, k: Tensor, n_negatives: int) -> Tensor:
    """L_S of eq. (3.2) by the direct loop (the reference for tests and the speed
    comparison).

    For each anchor i and each k-subset N of [n]∖{i} (``itertools.combinations``), eq.
    (3.1) as printed: −log softmax(q_iᵀk_i, q_iᵀk_{j₁}, …, q_iᵀk_{j_k})₀; then the mean
    over N and over i.
    q, k: (n, d) (no batch axes). Returns a 0-dim tensor (differentiable), in the
    precision of :func:`contrastive_loss`.
    """
    n = _check_outputs(q, k)
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
