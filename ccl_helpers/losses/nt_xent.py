"""NT-Xent, SimCLR's normalised-temperature cross-entropy over the 2B views of a batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._reduction import at_least_float32, check_reduction, check_temperature, check_two_views, reduce

NORM_EPS = 1e-12
"""Norms below this are replaced by it when normalising (a zero vector stays zero, no NaN)."""


def nt_xent_loss(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5,
                 reduction: str = "mean") -> torch.Tensor:
    r"""NT-Xent (Chen et al., 2020): InfoNCE over the :math:`2B` views of a batch, cosine similarities.

    Stack the views as :math:`z = (z^{(1)}_1, \dots, z^{(1)}_B, z^{(2)}_1, \dots, z^{(2)}_B)`,
    let :math:`s_{ij} = z_i^\top z_j / (\lVert z_i\rVert \lVert z_j\rVert)` and let
    :math:`\operatorname{pos}(i) = i \pm B` be the other view of sample :math:`i`. Then

    .. math::
        \ell_i = -\log \frac{e^{s_{i,\operatorname{pos}(i)} / t}}{\sum_{j \ne i} e^{s_{ij} / t}}
               = \operatorname{logsumexp}_{j \ne i}(s_{ij} / t) - s_{i,\operatorname{pos}(i)} / t .

    For each of the :math:`2B` anchors the positive is its other view and is in the denominator;
    the negatives are the :math:`2B - 2` other samples of the batch (both views), whatever their
    class; the anchor itself is excluded. Norms are clamped below at ``NORM_EPS``, so a zero
    embedding gives similarities 0 and a finite gradient, not NaN.

    Precision: the normalisation, the division by :math:`t`, the log-sum-exp and the reduction
    run in at least float32, the similarities in the inputs' dtype; the result is cast back to
    the inputs' dtype.

    Args:
        z1: the first views, shape ``(..., B, d)`` with ``B >= 2``.
        z2: the second views, same shape as ``z1``; ``z2[..., k, :]`` is the positive of ``z1[..., k, :]``.
        temperature: :math:`t`, a finite real number > 0.
        reduction: ``"mean"`` or ``"sum"`` over all :math:`2B` anchors (and leading dimensions),
            or ``"none"``.

    Returns:
        The per-anchor losses, shape ``(..., 2B)`` ordered ``[z1 rows, z2 rows]``, if
        ``reduction="none"``; otherwise a 0-dim tensor.

    Reference:
        T. Chen, S. Kornblith, M. Norouzi, G. Hinton. *A Simple Framework for Contrastive
        Learning of Visual Representations*. ICML 2020, eq. (1) and Algorithm 1.
    """
    batch_size = check_two_views(z1, z2)
    check_temperature(temperature)
    check_reduction(reduction)
    views = torch.cat([z1, z2], dim=-2)                                    # (..., 2B, d)
    views = F.normalize(at_least_float32(views), dim=-1, eps=NORM_EPS).to(z1.dtype)
    logits = at_least_float32(views @ views.transpose(-2, -1)) / temperature  # (..., 2B, 2B)
    positive_logits = torch.cat([logits.diagonal(offset=batch_size, dim1=-2, dim2=-1),
                                 logits.diagonal(offset=-batch_size, dim1=-2, dim2=-1)], dim=-1)
    self_mask = torch.eye(2 * batch_size, dtype=torch.bool, device=logits.device)
    logits = logits.masked_fill(self_mask, -torch.inf)
    per_sample = torch.logsumexp(logits, dim=-1) - positive_logits
    return reduce(per_sample, reduction).to(z1.dtype)
