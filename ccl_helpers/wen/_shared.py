"""Chapter 2's single shared encoder on the same data.

All the triplets, their loss and its loss vectors."""

from __future__ import annotations

import torch
from torch import Tensor

from ..checks import (
    Device,
    Function,
    Int,
    Optional,
    TensorOf,
    check_batch,
    check_int,
    checked,
)
from ..losses import logistic_loss
from ..train import (
    Forward,
)
from ._loss import _exact_loss
from ._loss_vectors import _vectors, loss_vectors
from ._negative_sets import NegativeCount, negative_sets


@checked(n=Int(2), device=Device())
def all_triplets(n: int, device: torch.device | str = "cpu") -> Tensor:
    """The n(n − 1) fixed triplets (x_i, x_i⁺, x_i⁻) = (x_i, x_i, x_j), j ≠ i, as a
    LongTensor (n(n−1), 3) of
    indices into S: instance discrimination with one negative, written as Merad et al.'s
        fixed triplets."""
    pairs = negative_sets(n, 1, device).reshape(n * (n - 1))
    anchors = torch.arange(n, device=device).repeat_interleave(n - 1)
    return torch.stack([anchors, anchors, pairs], dim=1)


@checked(forward=Function())
def triplet_loss(forward: Forward, data: tuple[Tensor, Tensor]) -> Tensor:
    """Merad et al.'s eq. (11) for one encoder f, divided by the number of triplets:
    (1/M) Σ_t log(1 + exp(f(x_t)ᵀ(f(x_t⁻) − f(x_t⁺))))
    (:func:`ccl_helpers.losses.logistic_loss`).

    data: (x (n, b), triplets (M, 3) of indices, e.g. :func:`all_triplets`). One forward
    pass over the n inputs of x, then ``logistic_loss(..., reduction="mean")`` on the
    indexed outputs: the same value as :func:`ccl_helpers.multineg.triplet_objective`
    (the sum, one forward pass over 3M inputs) of (x[triplets[:, 0]], x[triplets[:, 1]],
    x[triplets[:, 2]]), divided by M. With :func:`all_triplets` it equals L_S(f, f) with
    k = 1 (:func:`contrastive_loss` of (f(x), f(x), 1)). A ``loss_fn`` for
    :func:`ccl_helpers.train.gradient_descent` (shape checks only, so it runs under
    vmap)."""
    x, triplets = check_batch("data", data, ("floating", "integer"))
    if triplets.ndim != 2 or triplets.shape[1] != 3:
        raise ValueError(
            "data[1], the triplets, must have shape (M, 3), got "
            f"{tuple(triplets.shape)}"
        )
    out = forward(x)
    return logistic_loss(out[triplets[:, 0]], out[triplets[:, 1]], out[triplets[:, 2]])


@checked(
    f=TensorOf(min_ndim=2, floating=True),
    n_negatives=NegativeCount(of="f"),
    sets=Optional(TensorOf(ndim=3, integer=True)),
)
def shared_loss_vectors(
    f: Tensor, n_negatives: int, *, sets: Tensor | None = None
) -> Tensor:
    """∂L_S(f, f)/∂f_i (..., n, d) for one shared encoder (f^q = f^k = f, outputs f
    (..., n, d)): by the chain rule the sum loss~_i + loss^_i of the two closed forms at
    q = k = f."""
    tilde, hat = loss_vectors(f, f, n_negatives, sets=sets)
    return tilde + hat


def _shared_vectors(f: Tensor, sets: Tensor) -> Tensor:
    """:func:`shared_loss_vectors` over the negative sets ``sets``, on arguments its
    caller has checked."""
    tilde, hat = _vectors(f, f, sets)
    return tilde + hat


@checked(
    x=TensorOf(ndim=2, floating=True, finite=True), n_negatives=NegativeCount(of="x")
)
def shared_evaluator(x: Tensor, n_negatives: int):
    """An ``evaluate`` for :func:`ccl_helpers.train.gradient_descent` of one shared
    encoder f on S = x (n, b): model ↦ {``loss_norm``: ‖(∂L_S(f, f)/∂f_i)_i‖₂
    (:func:`shared_loss_vectors`), ``L_S``: L_S(f, f), ``output_norm_max``: max_i
    ‖f(x_i)‖}, each (S,) over the stacked seeds."""
    n = check_int("x: the number of rows n", x.shape[0], 2)
    sets = negative_sets(n, n_negatives, x.device)

    def evaluate(model) -> dict[str, Tensor]:
        f = model(x)
        vectors = _shared_vectors(f, sets)
        return {
            "loss_norm": vectors.square().sum((-2, -1)).sqrt(),
            "L_S": _exact_loss(f, f, sets),
            "output_norm_max": f.norm(dim=-1).amax(-1),
        }

    return evaluate
