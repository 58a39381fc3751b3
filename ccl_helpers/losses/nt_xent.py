"""NT-Xent: SimCLR's normalised-temperature cross-entropy over 2B views.

The 2B views are the two views of each of the B samples of a batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._checks import (
    check_choice,
    check_min_size,
    check_positive,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)
from .._precision import at_least_float32, result_dtype, widen_float16
from ._masked import masked_logsumexp
from ._reduction import REDUCTIONS, reduce

__all__ = ["nt_xent_loss", "nt_xent_per_anchor"]

_NORM_EPS = 1e-12
"""Norms below this are replaced by it when normalising (a zero vector stays zero, no
NaN)."""


def nt_xent_loss(
    z1: torch.Tensor,
    z2: torch.Tensor,
    temperature: float = 0.5,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""NT-Xent (Chen et al., 2020): InfoNCE over the :math:`2B` views of a batch,
    cosine similarities.

    Stack the views as :math:`z = (z^{(1)}_1, \dots, z^{(1)}_B, z^{(2)}_1, \dots,
    z^{(2)}_B)`, let :math:`s_{ij} = z_i^\top z_j / (\lVert z_i\rVert \lVert z_j\rVert)`
    and let :math:`\operatorname{pos}(i) = i \pm B` be the other view of sample
    :math:`i`. Then

    .. math::
        \ell_i = -\log \frac{e^{s_{i,\operatorname{pos}(i)} / t}}
                            {\sum_{j \ne i} e^{s_{ij} / t}}
               = \operatorname{logsumexp}_{j \ne i}(s_{ij} / t)
                 - s_{i,\operatorname{pos}(i)} / t .

    For each of the :math:`2B` anchors the positive is its other view and is in the
    denominator; the negatives are the :math:`2B - 2` other samples of the batch (both
    views), whatever their class; the anchor itself is excluded. Norms are clamped below
    at 1e-12, so a zero embedding gives similarities 0 and a finite gradient, not
    NaN.

    Precision: the normalisation, the division by :math:`t`, the log-sum-exp and the
    reduction run in at least float32, the similarities in the inputs' dtype (float16
    in float32); the result is cast back to the inputs' dtype, float32 for float16
    inputs. The gradients of float16 inputs are float16 (autograd returns a tensor's
    gradient in its dtype); through the cosines they are of order 1/(t‖z‖): finite at
    large norms, overflowing only for embeddings of norm near 0 (the package's text).

    Args:
        z1: the first views, shape ``(..., B, d)`` with ``B >= 2``.
        z2: the second views, same shape as ``z1``; ``z2[..., k, :]`` is the positive of
            ``z1[..., k, :]``.
        temperature: :math:`t`, a finite real number > 0.
        reduction: ``"mean"`` or ``"sum"`` over all :math:`2B` anchors (and leading
            dimensions), or ``"none"``.

    Returns:
        The per-anchor losses, shape ``(..., 2B)`` ordered ``[z1 rows, z2 rows]``, if
        ``reduction="none"``; otherwise a 0-dim tensor.

    Reference:
        T. Chen, S. Kornblith, M. Norouzi, G. Hinton. *A Simple Framework for
        Contrastive Learning of Visual Representations*. ICML 2020, eq. (1) and
        Algorithm 1.
    """
    check_tensor("z1", z1, min_ndim=2, floating=True)
    check_tensor("z2", z2, min_ndim=2, floating=True)
    check_same_dtype("z2", z2, "z1", z1)
    check_same_shape("z2", z2, "z1", z1)
    check_positive("temperature", temperature)
    check_choice("reduction", reduction, REDUCTIONS)
    check_min_size("z1", z1, 2, -2)  # B >= 2: the other samples are the negatives
    batch_size = z1.shape[-2]
    views = torch.cat([z1, z2], dim=-2)  # (..., 2B, d)
    every_anchor = torch.arange(2 * batch_size, device=views.device)
    per_sample = nt_xent_per_anchor(views, every_anchor, temperature)
    return reduce(per_sample, reduction).to(result_dtype(z1))


def nt_xent_per_anchor(
    views: torch.Tensor, anchor_index: torch.Tensor, temperature: float
) -> torch.Tensor:
    r"""The NT-Xent terms :math:`\ell_i` of the anchors ``anchor_index`` among the
    :math:`2B` views of a batch.

    views: :math:`z`, shape ``(..., 2B, d)``, ordered ``[z1 rows, z2 rows]`` (the
    positive of view :math:`i` is view :math:`(i + B) \bmod 2B`); anchor_index:
    :math:`A` distinct view indices, shape ``(A,)``, on the views' device. Returns
    :math:`\operatorname{logsumexp}_{j \ne i}(s_{ij} / t) - s_{i,\operatorname{pos}(i)}
    / t` for :math:`i` in ``anchor_index``, shape ``(..., A)``, in at least float32
    (:func:`nt_xent_loss` takes every anchor,
    :func:`ccl_helpers.distributed.nt_xent_loss_distributed` a rank's anchors).
    """
    check_tensor("views", views, min_ndim=2, floating=True)
    check_tensor("anchor_index", anchor_index, ndim=1, integer=True)
    check_positive("temperature", temperature)
    if views.shape[-2] % 2:
        raise ValueError(
            "views must stack two views of B samples, shape (..., 2B, d), got shape "
            f"{tuple(views.shape)}"
        )
    total = views.shape[-2] // 2
    views = widen_float16(views)
    views = F.normalize(at_least_float32(views), dim=-1, eps=_NORM_EPS).to(views.dtype)
    anchors = views.index_select(-2, anchor_index)  # (..., A, d)
    logits = (
        at_least_float32(anchors @ views.transpose(-2, -1)) / temperature
    )  # (..., A, 2B)
    positive_index = (anchor_index + total) % (2 * total)
    positive_logits = logits.gather(
        -1, positive_index[:, None].expand(*logits.shape[:-1], 1)
    ).squeeze(-1)
    rows = torch.arange(len(anchor_index), device=views.device)
    self_mask = torch.zeros(
        len(anchor_index), 2 * total, dtype=torch.bool, device=views.device
    )
    self_mask[rows, anchor_index] = True
    return masked_logsumexp(logits, self_mask) - positive_logits
