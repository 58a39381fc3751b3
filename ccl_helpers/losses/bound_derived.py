"""The loss derived from the upper bounds of Lee (2025), eq. (12)–(13).

It carries the prototype-norm factor ν."""

from __future__ import annotations

import torch

from .._checks import (
    check_choice,
    check_min_size,
    check_positive_or_scalar_tensor,
    check_same_dtype,
    check_tensor,
)
from .._precision import result_dtype
from ._masked import balanced_terms
from ._reduction import REDUCTIONS, reduce
from ._similarity import SIMILARITIES, pairwise_similarity

__all__ = ["bound_derived_loss"]


def bound_derived_loss(
    anchors: torch.Tensor,
    views: torch.Tensor,
    alpha=1.0,
    lam=1.0,
    nu=1.0,
    *,
    include_positive: bool = False,
    similarity: str = "cosine",
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The bound-derived loss of Lee (2025), eq. (13) (equivalently eq. (12)).

    For anchor :math:`z_i = f(t(x_i))` and :math:`K = |\hat{\mathcal T}|` transformed
    batches :math:`v_{kj} = f(t'_k(x_j))`:

    .. math::
        \ell_i = \frac{1}{\alpha K} \sum_{k=1}^{K}
                 -\log \frac{e^{\alpha s(z_i, v_{ki})}}
                            {\Bigl(\sum_{j \in \hat{\mathcal X}_i}
                                   e^{\alpha s(z_i, v_{kj})}\Bigr)^{\lambda/\nu}}
               = \frac{1}{K} \sum_{k} \Bigl[-s(z_i, v_{ki})
                 + \frac{\lambda}{\nu} \frac{1}{\alpha}
                   \log \sum_{j \in \hat{\mathcal X}_i} e^{\alpha s(z_i, v_{kj})}\Bigr],

    with :math:`\hat{\mathcal X}_i = [m] \setminus \{i\}` as in eq. (14)
    (``include_positive=False``) or :math:`[m]` (``include_positive=True``). With K = 1
    and λ = ν it is eq. (14) divided by α. ν ∈ (0, 1] is the smallest norm of the other
    classes' prototypes (Theorem 4.6); it only rescales λ.

    Args:
        anchors: :math:`z`, shape ``(..., m, d)``, ``m >= 2``.
        views: :math:`v`, shape ``(..., K, m, d)``; ``views[..., k, i, :]`` is the
            positive of anchor ``i`` under the k-th transformation.
        alpha, lam, nu: α, λ, ν > 0 (reals or 0-dim tensors).
        similarity: ``"cosine"``, ``"dot"`` or ``"neg_euclidean"``.
        reduction: ``"mean"``, ``"sum"`` over anchors (and leading dimensions) or
            ``"none"``.

    Returns:
        Per-anchor losses ``(..., m)`` if ``reduction="none"``, else 0-dim; in the
        inputs' dtype, float32 for float16 inputs (similarities and log-sum-exp in at
        least float32). The gradients of float16 inputs are float16, of order ‖z‖ at
        most (the 1/α cancels the α of the scores; the package's text).

    Reference:
        S. Lee, TMLR 2025 (arXiv 2510.10572), Section 4.3, eq. (12)–(14).
    """
    check_tensor("anchors", anchors, min_ndim=2, floating=True)
    check_tensor("views", views, min_ndim=3, floating=True)
    check_same_dtype("views", views, "anchors", anchors)
    alpha = check_positive_or_scalar_tensor("alpha", alpha)
    lam = check_positive_or_scalar_tensor("lam", lam)
    nu = check_positive_or_scalar_tensor("nu", nu)
    check_choice("similarity", similarity, SIMILARITIES)
    check_choice("reduction", reduction, REDUCTIONS)
    if views.shape[:-3] != anchors.shape[:-2] or views.shape[-2:] != anchors.shape[-2:]:
        raise ValueError(
            "views must have shape (..., K, m, d) with (..., m, d) = the shape of "
            f"anchors, {tuple(anchors.shape)}, "
            f"got {tuple(views.shape)}"
        )
    check_min_size("anchors", anchors, 2, -2)  # m >= 2
    batch_size = anchors.shape[-2]
    sims = pairwise_similarity(
        anchors.unsqueeze(-3), views, similarity
    )  # (..., K, m, m)
    positive = sims.diagonal(dim1=-2, dim2=-1)  # (..., K, m)
    excluded = (
        None
        if include_positive
        else torch.eye(batch_size, dtype=torch.bool, device=sims.device)
    )
    per_transform = balanced_terms(sims, alpha, lam / nu, excluded, positive=positive)
    return reduce(per_transform.mean(-2), reduction).to(result_dtype(anchors))
