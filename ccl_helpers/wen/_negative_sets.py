"""The negative sets of eq. (3.2): every k-subset of each anchor's others.

It also gives the logits over them."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .._checks import (
    check_count,
    check_int,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)
from .._precision import widen_float16

_MAX_SETS = 10**7
"""The most negative sets n·C(n − 1, k) that :func:`_negative_sets` enumerates. The
count grows combinatorially in k (C(59, 8) ≈ 2·10⁹ sets per anchor at n = 60), and the
level-by-level build of the subsets has no single allocation that would refuse it
first; the book enumerates 7,280 (n = 16, k = 3), its benchmarks at most that many."""


def _check_set_count(n: int, n_negatives: int, limit: int = _MAX_SETS) -> None:
    """``ValueError`` unless the n·C(n − 1, k) negative sets are at most ``limit``."""
    check_count(
        "negative sets",
        n * math.comb(n - 1, n_negatives),
        limit,
        f"n={n}, n_negatives={n_negatives}",
    )


def _check_negative_count(n_negatives, n: int, of: str) -> int:
    """k = ``n_negatives`` as an int if it is an integer 1 ≤ k ≤ n − 1, n the points of
    the argument ``of`` (≥ 2); else ``ValueError`` naming both."""
    n_negatives = check_int("n_negatives", n_negatives, 1)
    if n < 2:
        raise ValueError(
            f"{of} must hold n ≥ 2 points for n_negatives = {n_negatives}, got n = {n}"
        )
    if n_negatives > n - 1:
        raise ValueError(
            f"n_negatives must be an integer 1..n − 1 = {n - 1} (n from {of}), "
            f"got {n_negatives}"
        )
    return n_negatives


def _check_outputs(q, k, n_negatives) -> int:
    """Check the outputs q, k (..., n, d) of the two encoders (floating tensors of one
    shape, dtype and device; metadata only: a per-step loss's values are not read),
    k = ``n_negatives`` ≤ n − 1 and the count of their negative sets
    (:data:`_MAX_SETS`); return k."""
    check_tensor("q", q, min_ndim=2, floating=True)
    check_tensor("k", k, min_ndim=2, floating=True)
    check_same_dtype("k", k, "q", q)
    check_same_shape("k", k, "q", q)
    n_negatives = _check_negative_count(n_negatives, q.shape[-2], "q")
    _check_set_count(q.shape[-2], n_negatives)
    if q.device != k.device:
        raise ValueError(
            f"q and k must be on the same device, got {q.device} and {k.device}"
        )
    return n_negatives


def _combinations(size: int, r: int, device) -> Tensor:
    """All r-subsets of range(size) in lexicographic order, (C(size, r), r), built level
    by level (a loop over the r positions, never over the subsets)."""
    combos = torch.arange(size, device=device).unsqueeze(1)
    candidates = torch.arange(size, device=device)
    for _ in range(r - 1):
        rows, cols = torch.nonzero(candidates[None, :] > combos[:, -1:], as_tuple=True)
        combos = torch.cat([combos[rows], candidates[cols].unsqueeze(1)], dim=1)
    return combos


def _negative_sets(n: int, n_negatives: int, device="cpu") -> Tensor:
    """Every negative set of every anchor: a LongTensor (n, C, k), C = C(n − 1, k).

    ``sets[i, c]`` lists the k indices (ascending) of the c-th k-subset of [n]∖{i}, in
    lexicographic order; built by vectorised index arithmetic (position p among the
    others is index p + [p ≥ i]); its callers check their count
    (:func:`_check_set_count`).
    """
    positions = _combinations(n - 1, n_negatives, device)  # (C, k) among the others
    anchors = torch.arange(n, device=device).view(n, 1, 1)
    return positions.unsqueeze(0) + (positions.unsqueeze(0) >= anchors).long()


def _pairwise_logits(q: Tensor, k: Tensor) -> Tensor:
    """u_ij = q_iᵀ(k_j − k_i) = q_iᵀk_j − q_iᵀk_i for q, k (..., n, d) → (..., n, n)
    (u_ii = 0), in the dtype of q (float32 for float16: its range cannot hold them)."""
    products = widen_float16(q) @ widen_float16(k).transpose(-1, -2)
    return products - products.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)


def _set_logits(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """(u over every negative set (..., n, C, k), the gather index (..., n, C·k))."""
    u = _pairwise_logits(q, k)
    n, count, size = sets.shape
    index = sets.reshape(n, count * size).expand(*u.shape[:-2], n, count * size)
    return torch.gather(u, -1, index).reshape(*u.shape[:-2], n, count, size), index


def negative_set_logits(q: Tensor, k: Tensor, n_negatives: int) -> Tensor:
    """The logits u_ij = q_iᵀ(k_j − k_i) of every negative set: (..., n, C, k), entry
    [i, c, s] for the s-th member j of anchor i's c-th set (the c-th k-subset of
    [n]∖{i} in lexicographic order, its members ascending), C = C(n − 1, k);
    ℓ_i(N) = log(1 + Σ_s e^{u[i, c, s]}).

    q, k: the outputs (..., n, d) of the two encoders, of one shape and dtype;
    n_negatives: k, 1 ≤ k ≤ n − 1."""
    n_negatives = _check_outputs(q, k, n_negatives)
    sets = _negative_sets(q.shape[-2], n_negatives, q.device)
    return _set_logits(q, k, sets)[0]


def _log_one_plus_sum_exp(u: Tensor) -> Tensor:
    """g(u) = log(1 + Σ_j e^{u_j}) over the last axis of u (..., k) → (...,), accurate
    at both ends.

    With M = max(0, max_j u_j): M + log(e^{−M} + Σ_j e^{u_j − M}) when M > 0 (no
    overflow), and log1p(Σ_j e^{u_j}) when every u_j ≤ 0, so that values as small as
    e^{u} (≪ machine epsilon) keep their relative precision — a plain log-sum-exp of [0,
    u] rounds them to 0. Exact gradients.
    """
    top = u.amax(-1, keepdim=True).clamp_min(0)
    shifted = top.squeeze(-1) + torch.log(
        torch.exp(-top).squeeze(-1) + torch.exp(u - top).sum(-1)
    )
    small = torch.log1p(torch.exp(u.clamp_max(0)).sum(-1))
    return torch.where(top.squeeze(-1) > 0, shifted, small)


def _with_zero(u: Tensor) -> Tensor:
    """[0, u_1 … u_k] along the last axis (the positive's logit u_ii = 0 first)."""
    return torch.cat([torch.zeros_like(u[..., :1]), u], dim=-1)
