"""Shared by the balanced-contrastive family: pairwise similarities of embeddings."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._checks import check_choice, check_same_dtype, check_size_along, check_tensor
from .._precision import at_least_float32

SIMILARITIES = ("cosine", "dot", "neg_euclidean")
"""``cosine``: s(a, b) = aᵀb/(‖a‖‖b‖); ``dot``: s(a, b) = aᵀb; ``neg_euclidean``: s(a,
b) = −‖a − b‖."""

_NORM_EPS = 1e-12
"""Norms below this are replaced by it when normalising (a zero vector gives similarity
0, no NaN)."""

_SQUARED_DISTANCE_EPS = 1e-12
"""Squared distances are clamped below at this before the square root (finite gradient
at a = b)."""


def pairwise_similarity(
    a: torch.Tensor, b: torch.Tensor, similarity: str
) -> torch.Tensor:
    """s(a_i, b_j) for a (..., n, d), b (..., m, d) → (..., n, m), in at least float32
    (under autocast the matrix product runs in autocast's dtype, and its result is
    widened again). a and b floating-point with the same d."""
    check_choice("similarity", similarity, SIMILARITIES)
    check_tensor("a", a, min_ndim=2, floating=True)
    check_tensor("b", b, min_ndim=2, floating=True)
    check_same_dtype("b", b, "a", a)
    check_size_along("b", b, "a", a, -1)
    a, b = at_least_float32(a), at_least_float32(b)
    if similarity == "cosine":
        a, b = (
            F.normalize(a, dim=-1, eps=_NORM_EPS),
            F.normalize(b, dim=-1, eps=_NORM_EPS),
        )
    if similarity != "neg_euclidean":
        return at_least_float32(a @ b.transpose(-2, -1))
    squared = (
        (a * a).sum(-1, keepdim=True)
        + (b * b).sum(-1).unsqueeze(-2)
        - at_least_float32(2 * a @ b.transpose(-2, -1))
    )
    return -squared.clamp_min(_SQUARED_DISTANCE_EPS).sqrt()
