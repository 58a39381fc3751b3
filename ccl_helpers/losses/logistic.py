"""The logistic (triplet) loss: the contrastive loss with one negative."""

from __future__ import annotations

import torch

from .._checks import check_choice, check_same_dtype, check_same_shape, check_tensor
from .._precision import at_least_float32, result_dtype, softplus, widen_float16
from ._reduction import REDUCTIONS, reduce

__all__ = ["logistic_loss"]


def logistic_loss(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The logistic loss of Arora et al. (2019), eq. (1), on embeddings.

    With :math:`f(x)` the anchor, :math:`f(x^+)` the positive and :math:`f(x^-)` the
    negative,

    .. math::
        \ell = \log\bigl(1 + \exp(f(x)^\top f(x^-) - f(x)^\top f(x^+))\bigr)
             = \operatorname{softplus}\bigl(f(x)^\top f(x^-) - f(x)^\top f(x^+)\bigr),

    with unnormalised inner products and no temperature. It is :func:`info_nce_loss`
    with one negative (:math:`N = 1`, temperature 1). Computed by the exact softplus of
    the gap :math:`g`: finite for any finite inner products (:math:`\ell \approx \max(0,
    g)` for large :math:`|g|`) and exact to rounding at every :math:`g`, derivatives
    included.

    Args:
        anchor: :math:`f(x)`, shape ``(..., d)``.
        positive: :math:`f(x^+)`, same shape as ``anchor``.
        negative: :math:`f(x^-)`, same shape as ``anchor``.
        reduction: ``"mean"`` or ``"sum"`` over all samples, or ``"none"``.

    Returns:
        The per-sample losses, shape ``(...)``, if ``reduction="none"``; otherwise a
        0-dim tensor. In the dtype of the inputs (float32 for float16 inputs); the
        inner products are computed in it, the softplus and the reduction in at least
        float32.

    Reference:
        S. Arora, H. Khandeparkar, M. Khodak, O. Plevrakis, N. Saunshi. *A Theoretical
        Analysis of Contrastive Unsupervised Representation Learning*. ICML 2019, eq.
        (1).
    """
    check_tensor("anchor", anchor, min_ndim=1, floating=True)
    for name, other in (("positive", positive), ("negative", negative)):
        check_tensor(name, other, min_ndim=1, floating=True)
        check_same_dtype(name, other, "anchor", anchor)
        check_same_shape(name, other, "anchor", anchor)
    check_choice("reduction", reduction, REDUCTIONS)
    anchor, positive, negative = map(widen_float16, (anchor, positive, negative))
    gap = at_least_float32(torch.linalg.vecdot(anchor, negative)) - at_least_float32(
        torch.linalg.vecdot(anchor, positive)
    )
    return reduce(softplus(gap), reduction).to(result_dtype(anchor))
