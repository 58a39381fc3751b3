"""Chapter 2's single shared encoder on index triplets: the triplets and their loss.

Chapter 3 trains it on Wen's data beside Wen's two encoders."""

from __future__ import annotations

import torch
from torch import Tensor

from .._checks import check_batch, check_callable, check_device, check_int
from ..losses import logistic_loss
from ..train import Forward


def all_triplets(n: int, device: torch.device | str = "cpu") -> Tensor:
    """The n(n − 1) fixed triplets (x_i, x_i⁺, x_i⁻) = (x_i, x_i, x_j), j ≠ i, as a
    LongTensor (n(n−1), 3) of indices into S (anchor i, then its others j in ascending
    order): instance discrimination with one negative, written as Merad et al.'s fixed
    triplets. n ≥ 2; ``device``: where the indices are built."""
    n = check_int("n", n, 2)
    device = check_device("device", device)
    others = torch.arange(n - 1, device=device).repeat(n)  # position among the others
    anchors = torch.arange(n, device=device).repeat_interleave(n - 1)
    negatives = others + (others >= anchors).long()  # position p is index p + [p ≥ i]
    return torch.stack([anchors, anchors, negatives], dim=1)


def triplet_loss(forward: Forward, data: tuple[Tensor, Tensor]) -> Tensor:
    """Merad et al.'s eq. (11) for one encoder f, divided by the number of triplets:
    (1/M) Σ_t log(1 + exp(f(x_t)ᵀ(f(x_t⁻) − f(x_t⁺))))
    (:func:`ccl_helpers.losses.logistic_loss`).

    data: (x (n, b), triplets (M, 3) of indices, e.g. :func:`all_triplets`). One forward
    pass over the n inputs of x, then ``logistic_loss(..., reduction="mean")`` on the
    indexed outputs: the same value as :func:`triplet_objective` (the sum, one forward
    pass over 3M inputs) of (x[triplets[:, 0]], x[triplets[:, 1]], x[triplets[:, 2]]),
    divided by M. With :func:`all_triplets` it equals Wen's L_S(f, f) with k = 1
    (:func:`ccl_helpers.wen.contrastive_loss` of (f(x), f(x), 1)). A ``loss_fn`` for
    :func:`ccl_helpers.train.gradient_descent` (shape checks only, so it runs under
    vmap)."""
    check_callable("forward", forward)
    x, triplets = check_batch("data", data, ("floating", "integer"))
    if triplets.ndim != 2 or triplets.shape[1] != 3:
        raise ValueError(
            "data[1], the triplets, must have shape (M, 3), got "
            f"{tuple(triplets.shape)}"
        )
    out = forward(x)
    return logistic_loss(out[triplets[:, 0]], out[triplets[:, 1]], out[triplets[:, 2]])
