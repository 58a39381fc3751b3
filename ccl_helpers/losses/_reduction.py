"""What the losses share: the reduction of per-sample losses.

Their precision policy is the package's, in :mod:`ccl_helpers._precision`."""

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
