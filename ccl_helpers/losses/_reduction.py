"""What the losses share: the reduction of per-sample losses and their precision.

The public functions check their argument; the losses, which check theirs once at
their entry, call the private bodies."""

from __future__ import annotations

import torch

from .._checks import check_choice, check_tensor

REDUCTIONS = ("mean", "sum", "none")
"""The allowed values of every loss's ``reduction`` argument."""


def reduce(per_sample: torch.Tensor, reduction: str) -> torch.Tensor:
    """Reduce per-sample losses: their ``"mean"``, their ``"sum"``, or ``"none"``
    (unchanged).

    The mean and the sum run over every element of ``per_sample`` and return a 0-dim
    tensor. The mean of no element is a ``ValueError`` (not NaN); the sum of none is 0.
    ``per_sample`` must be a floating-point tensor.
    """
    check_choice("reduction", reduction, REDUCTIONS)
    check_tensor("per_sample", per_sample, floating=True)
    return _reduce(per_sample, reduction)


def _reduce(per_sample: torch.Tensor, reduction: str) -> torch.Tensor:
    if reduction == "mean":
        if per_sample.numel() == 0:
            raise ValueError(
                "reduction='mean' of an empty batch: the inputs hold no sample "
                f"(per-sample losses of shape {tuple(per_sample.shape)})"
            )
        return per_sample.mean()
    if reduction == "sum":
        return per_sample.sum()
    return per_sample


def at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 if it is in a narrower dtype (float16, bfloat16), else
    unchanged.

    The losses compute logits in the caller's dtype, then divide by the temperature and
    take the log-sum-exp in this wider dtype (as autocast does), and cast the result to
    :func:`result_dtype`.
    """
    check_tensor("tensor", tensor)
    return _at_least_float32(tensor)


def _at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))


def widen_float16(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 if it is float16, else unchanged.

    float16's range (±65504) cannot hold inner products of embeddings of norm above
    ≈ 250, nor the losses built from them: the losses take float16 inputs to float32
    before any product (autocast, if on, still chooses the products' dtype). bfloat16
    has float32's range; its products stay in bfloat16.
    """
    check_tensor("tensor", tensor)
    return _widen_float16(tensor)


def _widen_float16(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.float() if tensor.dtype == torch.float16 else tensor


def _autocast_state(device_type: str) -> tuple[torch.dtype, bool]:
    """(autocast's dtype, whether autocast is on) for ``device_type``; off for types
    autocast does not know (meta). Under ``torch.compile`` (a real device) the
    availability check, which the compiler cannot trace, is skipped."""
    if not torch.compiler.is_compiling() and not torch.amp.is_autocast_available(
        device_type
    ):
        return torch.float32, False
    return torch.get_autocast_dtype(device_type), torch.is_autocast_enabled(device_type)


def result_dtype(tensor: torch.Tensor) -> torch.dtype:
    """The dtype of a loss computed from inputs like ``tensor``: their own dtype, except
    float32 for float16 inputs (a loss ≈ norm² / t may exceed float16's range, see
    :func:`widen_float16`) and under autocast on their device, where a narrow dtype is
    autocast's choice for the matrix products, not the caller's, and the loss keeps the
    at least float32 of its log-sum-exp (so a training loop records it unrounded)."""
    check_tensor("tensor", tensor)
    return _result_dtype(tensor)


def _result_dtype(tensor: torch.Tensor) -> torch.dtype:
    if tensor.dtype == torch.float16 or _autocast_state(tensor.device.type)[1]:
        return torch.promote_types(tensor.dtype, torch.float32)
    return tensor.dtype
