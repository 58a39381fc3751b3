"""The logistic (triplet) loss: the contrastive loss with one negative."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._checks import check_choice, check_same_dtype, check_same_shape, check_tensor
from ._reduction import (
    REDUCTIONS,
    _at_least_float32,
    _reduce,
    _result_dtype,
    _widen_float16,
)

__all__ = ["logistic_loss", "softplus"]

_SOFTPLUS_THRESHOLD = 20.0
"""Above this, torch's softplus returns its argument; :func:`softplus` adds the tail."""


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
    with one negative (:math:`N = 1`, temperature 1). Computed by :func:`softplus` of
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
    anchor, positive, negative = map(_widen_float16, (anchor, positive, negative))
    gap = _at_least_float32(torch.linalg.vecdot(anchor, negative)) - _at_least_float32(
        torch.linalg.vecdot(anchor, positive)
    )
    return _reduce(_softplus(gap), reduction).to(_result_dtype(anchor))


def softplus(gap: torch.Tensor) -> torch.Tensor:
    r""":math:`\log(1 + e^g)` elementwise, exact to rounding at every :math:`g`.

    torch's softplus up to :math:`g = 20` (so values and gradients are its own there),
    and :math:`g + \log(1 + e^{-g})` above, where torch's softplus returns :math:`g`
    (an error of :math:`e^{-g}`, which would bias second derivatives). ``gap`` must be
    a floating-point tensor."""
    check_tensor("gap", gap, floating=True)
    return _softplus(gap)


def _softplus(gap: torch.Tensor) -> torch.Tensor:
    tail = gap + torch.log1p(torch.exp(-gap.clamp_min(_SOFTPLUS_THRESHOLD)))
    return torch.where(gap > _SOFTPLUS_THRESHOLD, tail, F.softplus(gap))
