"""InfoNCE with N explicit negatives and unnormalised inner products.

It is the theory's loss."""

from __future__ import annotations

import contextlib

import torch

from .._checks import (
    check_choice,
    check_int,
    check_positive,
    check_same_dtype,
    check_same_shape,
    check_size_along,
    check_tensor,
)
from .._precision import (
    at_least_float32,
    autocast_state,
    result_dtype,
    widen_float16,
)
from ._reduction import REDUCTIONS, reduce

__all__ = ["info_nce_loss"]


def info_nce_loss(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negatives: torch.Tensor,
    temperature: float = 1.0,
    reduction: str = "mean",
    chunk_size: int | None = None,
) -> torch.Tensor:
    r"""InfoNCE with :math:`N` explicit negatives per anchor.

    With :math:`a = f(x)`, :math:`p = f(x^+)`, :math:`n_i = f(x_i^-)` and temperature
    :math:`t`,

    .. math::
        \ell = -\log \frac{e^{a^\top p / t}}
                          {e^{a^\top p / t} + \sum_{i=1}^{N} e^{a^\top n_i / t}}
             = \operatorname{logsumexp}\bigl(a^\top p, a^\top n_1, \dots,
                                            a^\top n_N\bigr) / t
               - a^\top p / t,

    the multi-negative logistic loss of Arora et al. (2019, Section 6) and Merad et al.
    (2020), with unnormalised inner products (no cosine similarity). **The positive is
    in the denominator**, so :math:`\ell \ge 0` and :math:`\ell = \log(N + 1)` when all
    scores are equal. **The negatives are exactly the ones given**: nothing else in the
    batch is used, and a negative of the anchor's own class (a class collision, the
    :math:`\tau` of the CURL framework) counts as a negative, visibly. With ``N = 1``
    and ``temperature=1`` this is :func:`logistic_loss`.

    Precision: the inner products are computed in the inputs' dtype (float16 inputs in
    float32, whose range holds them); the division by :math:`t`, the log-sum-exp and the
    reduction in at least float32, so a low temperature does not overflow
    float16/bfloat16 logits; the result is cast back to the inputs' dtype, float32 for
    float16 inputs (a loss ≈ norm² / t exceeds float16's 65504). The gradients of
    float16 inputs are float16 (autograd returns a tensor's gradient in its dtype): the
    anchor's, (Σ_j w_j k_j − p)/t, is up to 2‖z‖/t (4·10⁵ at norm 10⁴ and t = 0.05)
    and overflows to inf beyond 65504; use bfloat16, normalised embeddings or a
    ``GradScaler`` (the package's text).

    Chunking (``chunk_size``, for a very large :math:`N`, e.g. a MoCo queue of 65,536
    keys): the log-sum-exp over the negatives is taken over blocks of ``chunk_size``
    negatives at a time and the blocks are combined exactly,
    :math:`\operatorname{logsumexp}_i s_i = \operatorname{logaddexp}_c
    \operatorname{logsumexp}_{i \in c} s_i` (each block's maximum is subtracted before
    it is exponentiated, so logits of any size stay finite). The value equals the
    unchunked loss up to rounding, and so does the gradient. What is bounded: every
    temporary tensor of the forward and the backward pass has at most ``chunk_size``
    negatives, i.e. size ``(..., chunk_size)`` or ``(..., chunk_size, d)``, instead of
    ``(..., N)`` and ``(..., N, d)``; between the forward and the backward pass only the
    inputs and one float per anchor (the log-sum-exp) are kept, not the ``(..., N)``
    scores (a custom autograd function recomputes each block's scores in the backward
    pass, under the forward pass's autocast). Not bounded: the gradient with respect to
    ``negatives`` itself has their shape ``(..., N, d)`` (filled block by block; it is
    not computed when ``negatives`` does not require a gradient, the usual case for a
    queue), and so do the negatives given. It costs one more pass over the negatives in
    the backward pass (the recomputation). Works under ``torch.func.vmap`` (forward and
    first-order gradients) and under ``torch.autocast`` (e.g. bfloat16 anchors against a
    float32 queue).

    Args:
        anchor: :math:`a`, shape ``(..., d)``.
        positive: :math:`p`, same shape as ``anchor``.
        negatives: :math:`n_1, \dots, n_N`, shape ``(..., N, d)`` with ``N >= 1``.
        temperature: :math:`t`, a finite real number > 0.
        reduction: ``"mean"`` or ``"sum"`` over all samples, or ``"none"``.
        chunk_size: ``None`` (default) for the direct computation, or an int ``>= 1``:
            the number of negatives per block of the chunked log-sum-exp (a value ``>=
            N`` gives a single block).

    Returns:
        The per-sample losses, shape ``(...)``, if ``reduction="none"``; otherwise a
        0-dim tensor.

    References:
        S. Arora et al. *A Theoretical Analysis of Contrastive Unsupervised
        Representation Learning*. ICML 2019. — N. Merad, Y. Yu, E. Bacry, S. Gaïffas.
        *About contrastive unsupervised representation learning for classification and
        its convergence*. arXiv:2012.01064. — A. van den Oord, Y. Li, O. Vinyals.
        *Representation Learning with Contrastive Predictive Coding*. arXiv:1807.03748.
    """
    check_tensor("anchor", anchor, min_ndim=1, floating=True)
    check_tensor("positive", positive, min_ndim=1, floating=True)
    check_same_dtype("positive", positive, "anchor", anchor)
    check_same_shape("positive", positive, "anchor", anchor)
    check_tensor("negatives", negatives, min_ndim=2, floating=True)
    check_same_dtype("negatives", negatives, "anchor", anchor)
    check_size_along("negatives", negatives, "anchor", anchor, -1)
    check_positive("temperature", temperature)
    check_choice("reduction", reduction, REDUCTIONS)
    if chunk_size is not None:
        chunk_size = check_int("chunk_size", chunk_size, 1)
    expected = (*anchor.shape[:-1], "N", anchor.shape[-1])
    if (
        negatives.shape[:-2] != anchor.shape[:-1]
        or negatives.shape[-1] != anchor.shape[-1]
    ):
        raise ValueError(
            f"negatives must have shape {expected} for anchor of shape "
            f"{tuple(anchor.shape)}, got {tuple(negatives.shape)}"
        )
    if negatives.shape[-2] < 1:
        raise ValueError(
            f"negatives must hold N >= 1 negatives (shape {expected}), "
            f"got shape {tuple(negatives.shape)}"
        )
    anchor, positive, negatives = map(widen_float16, (anchor, positive, negatives))
    if chunk_size is not None:
        positive_logit = (
            at_least_float32(torch.linalg.vecdot(anchor, positive)) / temperature
        )
        negative_lse = _ChunkedNegativeLogSumExp.apply(
            anchor, negatives, float(temperature), chunk_size
        )
        per_sample = torch.logaddexp(positive_logit, negative_lse) - positive_logit
        return reduce(per_sample, reduction).to(result_dtype(anchor))
    positive_score = torch.linalg.vecdot(anchor, positive).unsqueeze(-1)  # (..., 1)
    negative_scores = _scores(anchor, negatives)  # (..., N)
    logits = (
        at_least_float32(torch.cat([positive_score, negative_scores], dim=-1))
        / temperature
    )
    per_sample = torch.logsumexp(logits, dim=-1) - logits[..., 0]
    return reduce(per_sample, reduction).to(result_dtype(anchor))


def _scores(anchor: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
    """The inner products a^T n_i, (..., N), for anchor (..., d) and negatives (..., N,
    d): a batched matmul, so neither pass builds an (..., N, d) product temporary."""
    return (anchor.unsqueeze(-2) @ negatives.transpose(-2, -1)).squeeze(-2)


def _chunk_scores(
    anchor: torch.Tensor, negatives_chunk: torch.Tensor, temperature: float
) -> torch.Tensor:
    """The logits a^T n_i / t of one block of negatives, (..., c), in at least
    float32."""
    return at_least_float32(_scores(anchor, negatives_chunk)) / temperature


class _ChunkedNegativeLogSumExp(torch.autograd.Function):
    """logsumexp_i(a^T n_i / t) over the N negatives, (...), taken block by block; the
    backward pass recomputes each block's scores instead of keeping the (..., N)
    scores."""

    @staticmethod
    def forward(anchor, negatives, temperature, chunk_size):
        result = None
        for start in range(0, negatives.shape[-2], chunk_size):
            block = torch.logsumexp(
                _chunk_scores(
                    anchor, negatives[..., start : start + chunk_size, :], temperature
                ),
                dim=-1,
            )
            result = block if result is None else torch.logaddexp(result, block)
        return result

    @staticmethod
    def setup_context(ctx, inputs, output):
        anchor, negatives, temperature, chunk_size = inputs
        ctx.save_for_backward(anchor, negatives, output)
        ctx.temperature, ctx.chunk_size = temperature, chunk_size
        device_type = (
            anchor.device.type
        )  # the backward recomputes under the forward's autocast
        ctx.autocast = (device_type, *autocast_state(device_type))

    @staticmethod
    def backward(ctx, grad_output):
        # d lse / d s_i = softmax_i = exp(s_i - lse); s_i = a^T n_i / t, recomputed
        # exactly as the forward pass computed it (same autocast), so that the weights
        # of every anchor sum to 1.
        anchor, negatives, lse = ctx.saved_tensors
        need_anchor, need_negatives = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        device_type, autocast_dtype, autocast_enabled = ctx.autocast
        grad_anchor = torch.zeros_like(anchor, dtype=lse.dtype) if need_anchor else None
        grad_negatives = torch.empty_like(negatives) if need_negatives else None
        recompute = (
            torch.autocast(device_type, dtype=autocast_dtype)
            if autocast_enabled
            else contextlib.nullcontext()
        )
        with recompute:
            for start in range(0, negatives.shape[-2], ctx.chunk_size):
                chunk = negatives[..., start : start + ctx.chunk_size, :]
                weights = torch.exp(
                    _chunk_scores(anchor, chunk, ctx.temperature) - lse.unsqueeze(-1)
                )
                weights = weights * (grad_output / ctx.temperature).unsqueeze(
                    -1
                )  # (..., c), float32+
                if need_anchor:
                    grad_anchor += (
                        weights.unsqueeze(-2) @ chunk.to(weights.dtype)
                    ).squeeze(-2)
                if need_negatives:
                    grad_negatives[..., start : start + ctx.chunk_size, :] = (
                        weights.unsqueeze(-1) * anchor.unsqueeze(-2)
                    )
        return (
            (grad_anchor.to(anchor.dtype) if need_anchor else None),
            grad_negatives,
            None,
            None,
        )

    @staticmethod
    def vmap(info, in_dims, anchor, negatives, temperature, chunk_size):
        # The function already broadcasts over leading dimensions: move the vmapped one
        # to the front.
        def front(tensor, dim):
            return (
                tensor.movedim(dim, 0)
                if dim is not None
                else tensor.expand(info.batch_size, *tensor.shape)
            )

        anchor, negatives = front(anchor, in_dims[0]), front(negatives, in_dims[1])
        return _ChunkedNegativeLogSumExp.apply(
            anchor, negatives, temperature, chunk_size
        ), 0
