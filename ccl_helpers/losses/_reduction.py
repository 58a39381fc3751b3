"""Shared by the losses: the reduction of per-sample losses and the argument checks."""

from __future__ import annotations

import torch

from ..checks import check_positive

REDUCTIONS = ("mean", "sum", "none")
"""The allowed values of every loss's ``reduction`` argument."""


def check_reduction(reduction: str) -> None:
    """Raise ``ValueError`` unless ``reduction`` is one of :data:`REDUCTIONS`."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")


def reduce(per_sample: torch.Tensor, reduction: str) -> torch.Tensor:
    """Reduce per-sample losses: their ``"mean"``, their ``"sum"``, or ``"none"`` (unchanged).

    The mean and the sum run over every element of ``per_sample`` and return a 0-dim tensor.
    """
    check_reduction(reduction)
    if reduction == "mean":
        return per_sample.mean()
    if reduction == "sum":
        return per_sample.sum()
    return per_sample


def check_temperature(temperature: float) -> None:
    """Raise ``ValueError`` unless ``temperature`` is a finite real number > 0."""
    check_positive("temperature", temperature)


def check_embeddings(name: str, tensor: torch.Tensor, min_ndim: int = 1) -> None:
    """Raise ``ValueError`` unless ``tensor`` is a floating-point tensor with ``ndim >= min_ndim``."""
    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
        raise ValueError(
            f"{name} must be a floating-point torch.Tensor, got {type(tensor).__name__}"
            + (f" of dtype {tensor.dtype}" if isinstance(tensor, torch.Tensor) else "")
        )
    if tensor.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(tensor.shape)}"
        )


def check_same_shape(
    name: str, tensor: torch.Tensor, reference_name: str, reference: torch.Tensor
) -> None:
    """Raise ``ValueError`` unless ``tensor`` has the shape of ``reference``."""
    if tensor.shape != reference.shape:
        raise ValueError(
            f"{name} must have the shape of {reference_name}, {tuple(reference.shape)}, "
            f"got {tuple(tensor.shape)}"
        )


def at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 if it is in a narrower dtype (float16, bfloat16), else unchanged.

    The losses compute logits in the caller's dtype, then divide by the temperature and take
    the log-sum-exp in this wider dtype (as autocast does), and cast the result to :func:`result_dtype`.
    """
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))


def autocast_state(device_type: str) -> tuple[torch.dtype, bool]:
    """(autocast's dtype, whether autocast is on) for ``device_type``; off for types autocast does not know (meta)."""
    if not torch.amp.is_autocast_available(device_type):
        return torch.float32, False
    return torch.get_autocast_dtype(device_type), torch.is_autocast_enabled(device_type)


def result_dtype(tensor: torch.Tensor) -> torch.dtype:
    """The dtype of a loss computed from inputs like ``tensor``: their own dtype, except under autocast on their
    device, where a narrow dtype is autocast's choice for the matrix products, not the caller's, and the loss
    keeps the at least float32 of its log-sum-exp (so a training loop records it unrounded)."""
    if autocast_state(tensor.device.type)[1]:
        return torch.promote_types(tensor.dtype, torch.float32)
    return tensor.dtype


def check_two_views(z1: torch.Tensor, z2: torch.Tensor) -> int:
    """Validate two views (..., B, d) of one batch (floating point, same shape, B ≥ 2); return B."""
    check_embeddings("z1", z1, min_ndim=2)
    check_embeddings("z2", z2, min_ndim=2)
    check_same_shape("z2", z2, "z1", z1)
    batch_size = z1.shape[-2]
    if batch_size < 2:
        raise ValueError(
            f"z1 and z2 must hold B >= 2 samples (shape (..., B, d)), got shape {tuple(z1.shape)}"
        )
    return batch_size
