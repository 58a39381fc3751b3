"""The package's precision policy: the dtypes its losses compute in and return.

float16's range (±65504) cannot hold inner products of embeddings of norm above ≈ 250,
nor the losses built from them: the losses take float16 inputs to float32 before any
product (:func:`widen_float16`; autocast, if on, still chooses the products' dtype),
compute logits in the caller's dtype, then divide by the temperature and take the
log-sum-exp in at least float32 (:func:`at_least_float32`, as autocast does), and cast
the result to :func:`result_dtype`. bfloat16 has float32's range; its products stay in
bfloat16. Unchecked: the callers have checked their arguments.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SOFTPLUS_THRESHOLD = 20.0
"""Above this, torch's softplus returns its argument; :func:`softplus` adds the tail."""


def at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 if it is in a narrower dtype (float16, bfloat16), else
    unchanged."""
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))


def widen_float16(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 if it is float16, else unchanged (float16's range cannot
    hold the products of embeddings of norm above ≈ 250; bfloat16's can)."""
    return tensor.float() if tensor.dtype == torch.float16 else tensor


def autocast_state(device_type: str) -> tuple[torch.dtype, bool]:
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
    if tensor.dtype == torch.float16 or autocast_state(tensor.device.type)[1]:
        return torch.promote_types(tensor.dtype, torch.float32)
    return tensor.dtype


def softplus(gap: torch.Tensor) -> torch.Tensor:
    r""":math:`\log(1 + e^g)` elementwise, exact to rounding at every :math:`g`.

    torch's softplus up to :math:`g = 20` (so values and gradients are its own there),
    and :math:`g + \log(1 + e^{-g})` above, where torch's softplus returns :math:`g`
    (an error of :math:`e^{-g}`, which would bias second derivatives)."""
    tail = gap + torch.log1p(torch.exp(-gap.clamp_min(SOFTPLUS_THRESHOLD)))
    return torch.where(gap > SOFTPLUS_THRESHOLD, tail, F.softplus(gap))
