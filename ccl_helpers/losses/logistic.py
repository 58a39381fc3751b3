"""The logistic (triplet) loss: the contrastive loss with one negative."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._reduction import (
    at_least_float32,
    check_embeddings,
    check_reduction,
    check_same_shape,
    reduce,
    result_dtype,
)


def logistic_loss(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The logistic loss of Arora et al. (2019), eq. (1), on embeddings.

    With :math:`f(x)` the anchor, :math:`f(x^+)` the positive and :math:`f(x^-)` the negative,

    .. math::
        \ell = \log\bigl(1 + \exp(f(x)^\top f(x^-) - f(x)^\top f(x^+))\bigr)
             = \operatorname{softplus}\bigl(f(x)^\top f(x^-) - f(x)^\top f(x^+)\bigr),

    with unnormalised inner products and no temperature. It is :func:`info_nce_loss` with one
    negative (:math:`N = 1`, temperature 1). Computed with softplus, so it stays finite for any
    finite inner products: for a gap :math:`g` of large magnitude, :math:`\ell \approx \max(0, g)`.

    Args:
        anchor: :math:`f(x)`, shape ``(..., d)``.
        positive: :math:`f(x^+)`, same shape as ``anchor``.
        negative: :math:`f(x^-)`, same shape as ``anchor``.
        reduction: ``"mean"`` or ``"sum"`` over all samples, or ``"none"``.

    Returns:
        The per-sample losses, shape ``(...)``, if ``reduction="none"``; otherwise a 0-dim tensor.
        In the dtype of the inputs; the inner products are computed in it, the softplus and the
        reduction in at least float32.

    Reference:
        S. Arora, H. Khandeparkar, M. Khodak, O. Plevrakis, N. Saunshi. *A Theoretical Analysis
        of Contrastive Unsupervised Representation Learning*. ICML 2019, eq. (1).
    """
    check_embeddings("anchor", anchor)
    check_embeddings("positive", positive)
    check_embeddings("negative", negative)
    check_same_shape("positive", positive, "anchor", anchor)
    check_same_shape("negative", negative, "anchor", anchor)
    check_reduction(reduction)
    gap = at_least_float32(torch.linalg.vecdot(anchor, negative)) - at_least_float32(
        torch.linalg.vecdot(anchor, positive)
    )
    return reduce(F.softplus(gap), reduction).to(result_dtype(anchor))
