"""The balanced contrastive loss of Lee (2025), eq. (17), and its NT-Xent variant.

The variant is a generalized NT-Xent."""

from __future__ import annotations

import torch

from .._checks import (
    check_choice,
    check_min_size,
    check_positive_or_scalar_tensor,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)
from .._precision import result_dtype
from ._masked import _two_view_positive, balanced_terms
from ._reduction import REDUCTIONS, reduce
from ._similarity import SIMILARITIES, pairwise_similarity

__all__ = ["balanced_contrastive_loss", "generalized_nt_xent_loss"]


def _check_two_views(z1, z2, alpha, lam, similarity, reduction):
    """The checks of both losses' arguments, at their entry: the views z1, z2 (..., m,
    d), m ≥ 2, of one dtype and shape; α, λ > 0 (returned checked); the choices.
    Shapes, dtypes and scalars: no value read."""
    check_tensor("z1", z1, min_ndim=2, floating=True)
    check_tensor("z2", z2, min_ndim=2, floating=True)
    check_same_dtype("z2", z2, "z1", z1)
    check_same_shape("z2", z2, "z1", z1)
    alpha = check_positive_or_scalar_tensor("alpha", alpha)
    lam = check_positive_or_scalar_tensor("lam", lam)
    check_choice("similarity", similarity, SIMILARITIES)
    check_choice("reduction", reduction, REDUCTIONS)
    check_min_size("z1", z1, 2, -2)  # m >= 2: the other samples are the negatives
    return alpha, lam


def _balanced(z1, z2, alpha, lam, similarity, reduction, include_positive):
    batch_size = z1.shape[-2]
    views = torch.cat([z1, z2], dim=-2)  # (..., 2m, d)
    sims = pairwise_similarity(views, views, similarity)  # (..., 2m, 2m)
    eye = torch.eye(2 * batch_size, dtype=torch.bool, device=sims.device)
    excluded = eye if include_positive else eye | eye.roll(batch_size, dims=-1)
    per_sample = balanced_terms(
        sims, alpha, lam, excluded, positive=_two_view_positive(sims)
    )
    return reduce(per_sample, reduction).to(result_dtype(z1))


def balanced_contrastive_loss(
    z1: torch.Tensor,
    z2: torch.Tensor,
    alpha=1.0,
    lam=1.0,
    *,
    similarity: str = "cosine",
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The balanced contrastive loss (Lee 2025, eq. (17)) over the :math:`2m` views of
    a batch.

    Stack the views as :math:`z = (z^{(1)}_1, \dots, z^{(1)}_m, z^{(2)}_1, \dots,
    z^{(2)}_m)`, :math:`\operatorname{pos}(i) = i \pm m` the other view of sample
    :math:`i`. For each anchor

    .. math::
        \ell_i = -s(z_i, z_{\operatorname{pos}(i)})
                 + \lambda \, \frac{1}{\alpha}
                   \log \sum_{j \notin \{i, \operatorname{pos}(i)\}}
                        e^{\alpha s(z_i, z_j)} ,

    the :math:`2(m-1)` negatives being both views of the other samples; the positive is
    **not** in the repelling term (the "decoupled" form of eq. (14)). α balances the
    negatives among themselves (the log-sum-exp → max as α → ∞, eq. (18)); λ balances
    attraction and repulsion.
    The similarities and the log-sum-exp run in at least float32: finite for embeddings
    of norm up to 1e4 (``dot``: similarities up to 1e8). Returned in the inputs' dtype,
    float32 for float16 inputs. The gradients of float16 inputs are float16 (autograd
    returns a tensor's gradient in its dtype): of order 1/‖z‖ with ``cosine`` and ‖z‖
    with ``dot`` (the 1/α cancels the α of the scores), finite at norm 1e4 (the
    package's text).

    Args:
        z1, z2: the two views' embeddings, shape ``(..., m, d)``, ``m >= 2``.
        alpha: α > 0 (a real, or a 0-dim tensor so that it can vary under ``vmap``).
        lam: λ > 0 (idem).
        similarity: ``"cosine"`` (normalised, the source's choice), ``"dot"`` or
            ``"neg_euclidean"`` (both unnormalised, Table 1 of the source).
        reduction: ``"mean"``, ``"sum"`` (over the :math:`2m` anchors and leading
            dimensions) or ``"none"``.

    Returns:
        Per-anchor losses ``(..., 2m)`` ordered ``[z1 rows, z2 rows]`` if
        ``reduction="none"``, else 0-dim.

    Reference:
        S. Lee. *Understanding Self-supervised Contrastive Learning through Supervised
        Objectives*. TMLR 2025 (arXiv 2510.10572), Section 6, eq. (17).
    """
    alpha, lam = _check_two_views(z1, z2, alpha, lam, similarity, reduction)
    return _balanced(z1, z2, alpha, lam, similarity, reduction, include_positive=False)


def generalized_nt_xent_loss(
    z1: torch.Tensor,
    z2: torch.Tensor,
    alpha=2.0,
    lam=1.0,
    *,
    similarity: str = "cosine",
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The generalized NT-Xent loss (Lee 2025, Section 6): eq. (17) with the positive
    in the repelling term.

    .. math::
        \ell_i = -s(z_i, z_{\operatorname{pos}(i)})
                 + \lambda \, \frac{1}{\alpha}
                   \log \sum_{j \ne i} e^{\alpha s(z_i, z_j)} ,

    over the :math:`2m - 1` other views (positive included, anchor excluded). At λ = 1
    it is NT-Xent at temperature :math:`t = 1/\alpha` divided by α: ``alpha *
    generalized_nt_xent_loss(z1, z2, alpha, 1) == nt_xent_loss(z1, z2, 1 / alpha)`` (the
    factor 1/α rescales the gradient only; Adam is invariant to it).

    Args and returns as :func:`balanced_contrastive_loss`.

    Reference:
        S. Lee, TMLR 2025 (arXiv 2510.10572), Section 6; NT-Xent: Chen et al., ICML
        2020, eq. (1).
    """
    alpha, lam = _check_two_views(z1, z2, alpha, lam, similarity, reduction)
    return _balanced(z1, z2, alpha, lam, similarity, reduction, include_positive=True)
