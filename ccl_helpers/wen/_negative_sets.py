"""The negative sets of eq. (3.2): every k-subset of each anchor's others.

It also gives the logits over them."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..checks import (
    BadValue,
    Device,
    Estimate,
    Int,
    Optional,
    Sized,
    TensorOf,
    check_planned,
    checked,
)
from ..losses import widen_float16


class NegativeCount(Int):
    """The rule of k, the number of negatives per anchor: an integer 1 ≤ k ≤ n − 1, n
    the argument ``of`` (an integer n, or a tensor (..., n, d) of n points); passed on
    as ``int``."""

    def __init__(self, of: str):
        super().__init__(1)
        self.of = of

    def check(self, name, value, arguments):
        value = super().check(name, value, arguments)
        reference = arguments.get(self.of)
        n = reference.shape[-2] if isinstance(reference, Tensor) else reference
        if isinstance(n, int) and n < 2:
            raise ValueError(
                f"{self.of} must hold n ≥ 2 points for {name} = {value}, got n = {n}"
            )
        if isinstance(n, int) and value > n - 1:
            raise ValueError(
                f"{name} must be an integer 1..n − 1 = {n - 1} (n from {self.of}), "
                f"got {value}"
            )
        return value

    def bad_values(self, valid):
        return [*super().bad_values(valid), BadValue("n or more", 10**6, (self.of,))]


OUTPUTS = {
    "q": TensorOf(min_ndim=2, floating=True),
    "k": TensorOf(min_ndim=2, floating=True, like="q", same_dtype_as="q"),
}
"""The rules of the outputs q, k (..., n, d) of the two encoders: floating tensors of
one shape (metadata only: a per-step loss's values are not read)."""

OUTPUTS_AND_SETS = {
    **OUTPUTS,
    "n_negatives": NegativeCount(of="q"),
    "sets": Optional(TensorOf(ndim=3, integer=True)),
}
"""The rules of q, k, k = ``n_negatives`` ≤ n − 1 and the optional index tensor of
negative sets (n, C, k)."""


def _check_outputs(q: Tensor, k: Tensor, *, minimum_n: int = 2) -> int:
    """Check that q, k (..., n, d) (of one shape, :data:`OUTPUTS`) share a device and
    hold n ≥ ``minimum_n`` points; return n."""
    if q.device != k.device:
        raise ValueError(
            f"q and k must be on the same device, got {q.device} and {k.device}"
        )
    n = q.shape[-2]
    if n < minimum_n:
        raise ValueError(
            f"q must hold n ≥ {minimum_n} points (shape (..., n, d)), got n = {n}"
        )
    return n


def _checked_sets(
    q: Tensor, k: Tensor, n_negatives: int, sets: Tensor | None
) -> Tensor:
    """Check q, k (:func:`_check_outputs`; their rules and n_negatives' are
    :data:`OUTPUTS_AND_SETS`); return the given negative sets (n, C, k), checked against
    n and k, or all of them (:func:`negative_sets`) when ``sets`` is None."""
    n = _check_outputs(q, k)
    if sets is None:
        return negative_sets(n, n_negatives, q.device)
    if sets.shape[0] != n or sets.shape[2] != n_negatives:
        raise ValueError(
            f"sets must have shape (n, C, k) = ({n}, C, {n_negatives}) from "
            f"negative_sets, got {tuple(sets.shape)}"
        )
    return sets


@checked(n=Int(2), n_negatives=NegativeCount(of="n"))
def n_negative_sets(n: int, n_negatives: int) -> int:
    """C(n − 1, k): the number of negative sets {x_{i,1} … x_{i,k}} ⊂ S∖{x_i} of one
    anchor."""
    return math.comb(n - 1, n_negatives)


def _sets_bytes(arguments: dict) -> int:
    """The bytes of :func:`negative_sets`'s index tensor n · C(n−1, k) · k (int64), and
    of the copy its level-by-level build makes."""
    n, k = arguments["n"], arguments["n_negatives"]
    return 2 * 8 * n * math.comb(n - 1, k) * k


SETS = Estimate("wen.negative_sets's index tensor", ("n", "n_negatives"), _sets_bytes)
"""The memory of every negative set of every anchor (:func:`negative_sets`)."""


def _combinations(size: int, r: int, device) -> Tensor:
    """All r-subsets of range(size) in lexicographic order, (C(size, r), r), built level
    by level (a loop over the r positions, never over the subsets)."""
    combos = torch.arange(size, device=device).unsqueeze(1)
    candidates = torch.arange(size, device=device)
    for _ in range(r - 1):
        rows, cols = torch.nonzero(candidates[None, :] > combos[:, -1:], as_tuple=True)
        combos = torch.cat([combos[rows], candidates[cols].unsqueeze(1)], dim=1)
    return combos


@checked(
    n=Sized(Int(2), SETS),
    n_negatives=Sized(NegativeCount(of="n"), SETS),
    device=Device(),
)
def negative_sets(
    n: int, n_negatives: int, device: torch.device | str = "cpu"
) -> Tensor:
    """Every negative set of every anchor: a LongTensor (n, C, k), C = C(n − 1, k).

    ``sets[i, c]`` lists the k indices (ascending) of the c-th k-subset of [n]∖{i}, in
    lexicographic order; built by vectorised index arithmetic (position p among the
    others is index p + [p ≥ i]); its memory is checked first (:data:`SETS`).
    """
    positions = _combinations(n - 1, n_negatives, device)  # (C, k) among the others
    anchors = torch.arange(n, device=device).view(n, 1, 1)
    return positions.unsqueeze(0) + (positions.unsqueeze(0) >= anchors).long()


@checked(**OUTPUTS)
def pairwise_logits(q: Tensor, k: Tensor) -> Tensor:
    """u_ij = q_iᵀ(k_j − k_i) = q_iᵀk_j − q_iᵀk_i for q, k (..., n, d) → (..., n, n)
    (u_ii = 0), in the dtype of q (float32 for float16: its range cannot hold them)."""
    _check_outputs(q, k)
    products = widen_float16(q) @ widen_float16(k).transpose(-1, -2)
    return products - products.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)


def _set_logits(q: Tensor, k: Tensor, sets: Tensor) -> tuple[Tensor, Tensor]:
    """(u over every negative set (..., n, C, k), the gather index (..., n, C·k))."""
    u = pairwise_logits(q, k)
    n, count, size = sets.shape
    members = math.prod(u.shape[:-2])
    check_planned(
        "the logits of every negative set",
        f"{members:,} member(s) × n={n} × {count:,} sets of n_negatives={size}",
        members * sets.numel() * u.element_size(),
        ("n", "n_negatives"),
    )
    index = sets.reshape(n, count * size).expand(*u.shape[:-2], n, count * size)
    return torch.gather(u, -1, index).reshape(*u.shape[:-2], n, count, size), index


@checked(**OUTPUTS_AND_SETS)
def negative_set_logits(
    q: Tensor, k: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> Tensor:
    """The logits u_ij = q_iᵀ(k_j − k_i) of every negative set: (..., n, C, k), entry
    [i, c, s] for the s-th member j of anchor i's c-th set (:func:`negative_sets`);
    ℓ_i(N) = log(1 + Σ_s e^{u[i, c, s]})."""
    sets = _checked_sets(q, k, n_negatives, sets)
    return _set_logits(q, k, sets)[0]


@checked(u=TensorOf(min_ndim=1, floating=True))
def log_one_plus_sum_exp(u: Tensor) -> Tensor:
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
