"""Batched, seeded augmentations of grey images (kornia), on the images' device.

A strategy is a name in :data:`STRATEGIES`. ``"base"`` is SimCLR's recipe for small
grey images, applied in this order:

- random resized crop keeping a fraction U(0.5, 1) of the area, aspect ratio
  log-uniform in [3/4, 4/3], resized back to the full size (bilinear);
- with probability 0.8, brightness and contrast jitter by factors in [0.6, 1.4]
  (the grey-scale part of SimCLR's colour distortion);
- with probability 0.5, a Gaussian blur, 3×3 kernel, σ ~ U(0.1, 1).

The others change one part of it, as in Lee (2025), Figure 3: ``"-blur"``,
``"-jitter"`` (for "-color_distortion") drop one; ``"+rotation"`` (U(−30°, 30°),
after the crop), ``"+cutout"`` (a zeroed square of 10–20 % of the area) and
``"+noise"`` (additive Gaussian noise, standard deviation 0.2) add one; ``"none"`` is
the identity. Every result is clamped to [0, 1]. The same recipe serves 8×8 digits
and 28×28 images.
"""

from __future__ import annotations

import functools
import math

import torch
from torch import Tensor

from .._checks import check_choice, check_int, check_tensor

STRATEGIES = ("base", "-blur", "-jitter", "+cutout", "+rotation", "+noise", "none")
"""The augmentation strategies, by name (see the module's text)."""

BASE = "base"
"""The SimCLR-like base strategy."""

_SHARED_PARAMETERS = ("forward_input_shape", "order")
"""kornia parameters that describe the whole batch, not one image."""


@functools.cache
def pipeline(strategy: str, height: int, width: int):
    """The kornia ``AugmentationSequential`` of ``strategy`` for images of the given
    size (random parameters drawn on the CPU, from torch's global generator); one per
    (strategy, height, width), cached once its arguments have passed their checks."""
    check_choice("strategy", strategy, [s for s in STRATEGIES if s != "none"])
    height = check_int("height", height)
    width = check_int("width", width)
    import kornia.augmentation as K

    parts = [
        K.RandomResizedCrop(
            (height, width), scale=(0.5, 1.0), p=1.0, cropping_mode="resample"
        )
    ]
    if strategy == "+rotation":
        parts.append(K.RandomRotation(30.0, p=1.0))
    if strategy != "-jitter":
        parts.append(K.ColorJitter(brightness=0.4, contrast=0.4, p=0.8))
    if strategy != "-blur":
        parts.append(K.RandomGaussianBlur((3, 3), (0.1, 1.0), p=0.5))
    if strategy == "+cutout":
        parts.append(K.RandomErasing(scale=(0.1, 0.2), ratio=(1.0, 1.0), p=1.0))
    if strategy == "+noise":
        parts.append(K.RandomGaussianNoise(std=0.2, p=1.0))
    return K.AugmentationSequential(*parts)


def _expand(params: list, index: Tensor, batch_shape: torch.Size) -> list:
    """kornia's parameters for P transformations → for N images, image i taking
    transformation ``index[i]``."""
    expanded = []
    for item in params:
        data = {
            key: value
            if key in _SHARED_PARAMETERS or not isinstance(value, Tensor)
            else value[index.to(value.device)]
            for key, value in item.data.items()
        }
        if "forward_input_shape" in data:
            data["forward_input_shape"] = torch.tensor(batch_shape)
        expanded.append(type(item)(item.name, data))
    return expanded


def augment(
    images: Tensor,
    strategy: str,
    generator: torch.Generator,
    *,
    param_shape: tuple[int, ...] | None = None,
) -> Tensor:
    """Apply the random transformation ``strategy`` to images (..., C, H, W) → the same
    shape, on the same device, with values in [0, 1].

    Args:
        strategy: a name in :data:`STRATEGIES`.
        generator: a ``torch.Generator`` (on any device); the result is a function of
            its state, which advances by one draw (the seed of the call).
        param_shape: the shape of the random parameters, broadcast against the
            leading shape ``...`` of the images (default: that shape, i.e. an
            independent transformation per image). A 1 shares one transformation
            along that dimension, e.g. ``(K, 1)`` for images (K, M, C, H, W) applies
            transformation t_k to all M images of row k.

    Runs inside training steps: the images' shape and dtype are checked, never their
    values (no device synchronisation), so a NaN in ``images`` propagates.
    """
    check_tensor("images", images, min_ndim=3, floating=True)
    check_choice("strategy", strategy, STRATEGIES)
    if not isinstance(generator, torch.Generator):
        raise ValueError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    lead, image_shape = tuple(images.shape[:-3]), tuple(images.shape[-3:])
    param_shape = lead if param_shape is None else tuple(param_shape)
    try:
        if torch.broadcast_shapes(param_shape, lead) != lead:
            raise RuntimeError
    except RuntimeError:
        raise ValueError(
            f"param_shape {param_shape} must broadcast to the images' leading shape "
            f"{lead}"
        ) from None
    seed = int(torch.randint(2**62, (), generator=generator, device=generator.device))
    if strategy == "none":
        return images.clone()
    flat = images.reshape(-1, *image_shape)
    transforms = pipeline(strategy, *image_shape[1:])
    n_params = math.prod(param_shape)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        params = transforms.forward_parameters(torch.Size((n_params, *image_shape)))
    if n_params != flat.shape[0]:
        index = torch.arange(n_params).reshape(param_shape).expand(lead).reshape(-1)
        params = _expand(params, index, flat.shape)
    return transforms(flat, params=params).clamp(0.0, 1.0).reshape(images.shape)
