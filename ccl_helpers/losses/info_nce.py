"""InfoNCE with N explicit negatives and unnormalised inner products (the theory's loss)."""

from __future__ import annotations

import torch

from ._reduction import (at_least_float32, check_embeddings, check_reduction, check_same_shape,
                         check_temperature, reduce)


def info_nce_loss(anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor,
                  temperature: float = 1.0, reduction: str = "mean") -> torch.Tensor:
    r"""InfoNCE with :math:`N` explicit negatives per anchor.

    With :math:`a = f(x)`, :math:`p = f(x^+)`, :math:`n_i = f(x_i^-)` and temperature :math:`t`,

    .. math::
        \ell = -\log \frac{e^{a^\top p / t}}{e^{a^\top p / t} + \sum_{i=1}^{N} e^{a^\top n_i / t}}
             = \operatorname{logsumexp}\bigl(a^\top p, a^\top n_1, \dots, a^\top n_N\bigr) / t
               - a^\top p / t,

    the multi-negative logistic loss of Arora et al. (2019, Section 6) and Merad et al. (2020),
    with unnormalised inner products (no cosine similarity). **The positive is in the
    denominator**, so :math:`\ell \ge 0` and :math:`\ell = \log(N + 1)` when all scores are equal.
    **The negatives are exactly the ones given**: nothing else in the batch is used, and a
    negative of the anchor's own class (a class collision, the :math:`\tau` of the CURL
    framework) counts as a negative, visibly. With ``N = 1`` and ``temperature=1`` this is
    :func:`logistic_loss`.

    Precision: the inner products are computed in the inputs' dtype; the division by :math:`t`,
    the log-sum-exp and the reduction in at least float32, so a low temperature does not
    overflow float16/bfloat16 logits; the result is cast back to the inputs' dtype (a loss
    beyond that dtype's range, e.g. above 65504 in float16, becomes ``inf``).

    Args:
        anchor: :math:`a`, shape ``(..., d)``.
        positive: :math:`p`, same shape as ``anchor``.
        negatives: :math:`n_1, \dots, n_N`, shape ``(..., N, d)`` with ``N >= 1``.
        temperature: :math:`t`, a finite real number > 0.
        reduction: ``"mean"`` or ``"sum"`` over all samples, or ``"none"``.

    Returns:
        The per-sample losses, shape ``(...)``, if ``reduction="none"``; otherwise a 0-dim tensor.

    References:
        S. Arora et al. *A Theoretical Analysis of Contrastive Unsupervised Representation
        Learning*. ICML 2019. — N. Merad, Y. Yu, E. Bacry, S. Gaïffas. *About contrastive
        unsupervised representation learning for classification and its convergence*.
        arXiv:2012.01064. — A. van den Oord, Y. Li, O. Vinyals. *Representation Learning with
        Contrastive Predictive Coding*. arXiv:1807.03748.
    """
    check_embeddings("anchor", anchor)
    check_embeddings("positive", positive)
    check_embeddings("negatives", negatives, min_ndim=2)
    check_same_shape("positive", positive, "anchor", anchor)
    expected = (*anchor.shape[:-1], "N", anchor.shape[-1])
    if negatives.shape[:-2] != anchor.shape[:-1] or negatives.shape[-1] != anchor.shape[-1]:
        raise ValueError(f"negatives must have shape {expected} for anchor of shape "
                         f"{tuple(anchor.shape)}, got {tuple(negatives.shape)}")
    if negatives.shape[-2] < 1:
        raise ValueError(f"negatives must hold N >= 1 negatives (shape {expected}), "
                         f"got shape {tuple(negatives.shape)}")
    check_temperature(temperature)
    check_reduction(reduction)
    positive_score = torch.linalg.vecdot(anchor, positive).unsqueeze(-1)   # (..., 1)
    negative_scores = torch.linalg.vecdot(anchor.unsqueeze(-2), negatives)  # (..., N)
    logits = at_least_float32(torch.cat([positive_score, negative_scores], dim=-1)) / temperature
    per_sample = torch.logsumexp(logits, dim=-1) - logits[..., 0]
    return reduce(per_sample, reduction).to(anchor.dtype)
