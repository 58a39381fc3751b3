"""Section 4: gradient descent on fixed triplets toward Theorem 1's targets.

It takes the steps to Theorem 1's targets and computes Lemma 4's quantities."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import pandas as pd
import torch
from torch import Tensor

from .._checks import (
    check_batch,
    check_callable,
    check_finite,
    check_finite_real,
    check_int,
    check_positive,
    check_sizes,
)
from ..losses import logistic_loss
from ..models import DeepReLU
from ..train import Forward, StackedModel, gradient_descent, wide


def triplet_objective(
    forward: Forward, triplets: tuple[Tensor, Tensor, Tensor]
) -> Tensor:
    r"""L̂_un(f) = Σ_{i=1}^n ζ(f(xᵢ)ᵀ(f(xᵢ⁻) − f(xᵢ⁺))), ζ(u) = log(1 + eᵘ) — eq. (11),
    a *sum* over the n
    fixed triplets. triplets: (anchor, positive, negative), each (n, …) → a 0-dim
    tensor. A ``loss_fn`` for :func:`ccl_helpers.train.gradient_descent`.

    One forward pass over the 3n inputs, then :func:`ccl_helpers.losses.logistic_loss`
    with ``reduction="sum"`` (it takes ζ(f(xᵢ)ᵀf(xᵢ⁻) − f(xᵢ)ᵀf(xᵢ⁺)), the same
    argument). :func:`triplet_loss` is the same loss on index triplets, divided by
    their number. Checks shapes and dtypes only, once (a NaN propagates)."""
    check_callable("forward", forward)
    _check_triplets(triplets)
    inputs, n = _stack_triplets(triplets)
    return logistic_loss(*_split_triplets(forward(inputs), n), reduction="sum")


def _check_triplets(triplets) -> None:
    """``ValueError`` unless ``triplets`` are (anchor, positive, negative), three
    floating tensors of one shape (n, …)."""
    anchor, positive, negative = check_batch("triplets", triplets, ("floating",) * 3)
    if not (anchor.shape == positive.shape == negative.shape) or anchor.ndim < 2:
        raise ValueError(
            "triplets must be three tensors of one shape (n, …), got "
            f"{tuple(anchor.shape)}, "
            f"{tuple(positive.shape)}, {tuple(negative.shape)}"
        )


def _stack_triplets(triplets: tuple[Tensor, Tensor, Tensor]) -> tuple[Tensor, int]:
    """(the 3n inputs: anchors, then positives, then negatives; n) for one forward
    pass."""
    anchor, positive, negative = triplets
    return torch.cat([anchor, positive, negative]), anchor.shape[0]


def _split_triplets(outputs: Tensor, n: int) -> tuple[Tensor, Tensor, Tensor]:
    """Outputs (…, 3n, d) of :func:`_stack_triplets`'s inputs → (z₁, z₂, z₃) = (f(xᵢ),
    f(xᵢ⁺), f(xᵢ⁻)), each (…, n, d)."""
    return outputs.unflatten(-2, (3, n)).unbind(-3)


def _triplet_evaluator(
    triplets: tuple[Tensor, Tensor, Tensor],
) -> Callable[[Callable[[Tensor], Tensor]], dict[str, Tensor]]:
    r"""An ``evaluate`` for :func:`ccl_helpers.train.gradient_descent` on fixed triplets
    (Lemma 4, Assumption 2).

    With zᵢ = (f(xᵢ), f(xᵢ⁺), f(xᵢ⁻)), uᵢ = z_{i,1}ᵀ(z_{i,3} − z_{i,2}) and ℓ(zᵢ) =
    ζ(uᵢ) (per triplet, :func:`ccl_helpers.losses.logistic_loss` with
    ``reduction="none"``, as in :func:`triplet_objective`), the loss vector of triplet i
    is ∇_{zᵢ}ℓ = σ(uᵢ)(z_{i,3} − z_{i,2}, −z_{i,1}, z_{i,1}) (σ the logistic function,
    taken as σ(uᵢ) = 1 − e^{−ℓ(zᵢ)} since ℓ = log(1 + eᵘ)). As the 3n inputs are
    distinct (Assumption 1), the gradient of L̂_un with respect to all outputs stacks
    them. Computed in float64. Returns, per seed (S,):

    - ``loss_max`` max_i ℓ(zᵢ); ``output_grad_norm`` ε = ‖∇_z L̂_un‖ = (Σᵢ
      ‖∇_{zᵢ}ℓ‖²)^{1/2};
    - ``norm_min`` η and ``norm_max`` C: the min and max of ‖f(x)‖ over the 3n inputs
      (Assumption 2);
    - ``lemma4_bound`` 2ε/η, which bounds every ℓ(zᵢ) when ε < η/2 (Lemma 4);
      ``lemma4_applies`` 1.0 where ε < η/2, else 0.0.
    """
    inputs, n = _stack_triplets(triplets)

    def evaluate(model: Callable[[Tensor], Tensor]) -> dict[str, Tensor]:
        outputs = model(inputs).double()  # (S, 3n, d)
        z1, z2, z3 = _split_triplets(outputs, n)
        loss = logistic_loss(z1, z2, z3, reduction="none")  # ℓ(zᵢ), (S, n)
        sigma = -torch.expm1(-loss)  # σ(uᵢ)
        vector_sq = sigma**2 * ((z3 - z2).square().sum(-1) + 2 * z1.square().sum(-1))
        epsilon = vector_sq.sum(-1).sqrt()
        norms = outputs.norm(dim=-1)
        eta = norms.amin(-1)
        return {
            "loss_max": loss.amax(-1),
            "output_grad_norm": epsilon,
            "norm_min": eta,
            "norm_max": norms.amax(-1),
            "lemma4_bound": 2 * epsilon / eta,
            "lemma4_applies": (epsilon < eta / 2).double(),
        }

    return evaluate


class _TargetDescent(NamedTuple):
    """The outcome of :func:`descent_sweep`.

    steps: one row per (seed, target, threshold): ``target`` ``"loss"`` (L̂_un ≤ ε,
    Theorem 1) or ``"output_grad_norm"`` (‖∇_z L̂_un‖ ≤ ε', Lemma 6), ``threshold``
    ε, ``steps`` the first recorded step at which it held (NaN if never) and
    ``relative_movement`` ‖W^(t) − W^(0)‖_F / ‖W^(0)‖_F at that step.
    history: the descent's history in the book's one format (long: step, seed,
    quantity, value; :func:`descent_sweep` adds its configuration columns;
    :func:`ccl_helpers.train.wide` gives one row per checkpoint and seed), with
    :func:`_triplet_evaluator`'s quantities.
    """

    steps: pd.DataFrame
    history: pd.DataFrame


def _first_steps(
    history: pd.DataFrame, thresholds: dict[str, list[float]]
) -> pd.DataFrame:
    """Per seed, target quantity and threshold ε (``thresholds``: target ↦ its ε's),
    the first recorded step with target ≤ ε and the relative movement there (NaN
    when never)."""
    rows = []
    for target, threshold in (
        (target, threshold)
        for target, values in thresholds.items()
        for threshold in values
    ):
        below = history[history[target] <= threshold]
        first = below.loc[below.groupby("seed")["step"].idxmin()].set_index("seed")
        found = first.reindex(sorted(history["seed"].unique()))
        rows.append(
            pd.DataFrame(
                {
                    "seed": found.index.to_numpy(),
                    "target": target,
                    "threshold": float(threshold),
                    "steps": found["step"].to_numpy(dtype=float),
                    "relative_movement": found["relative_movement"].to_numpy(),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _check_thresholds(
    name: str, values: Sequence[float], allow_empty: bool = False
) -> list[float]:
    values = [check_positive(name, v) for v in values]
    if not values and not allow_empty:
        raise ValueError(f"{name} must hold at least one value > 0")
    return values


def _descent_to_targets(
    triplets: tuple[Tensor, Tensor, Tensor],
    width: int,
    *,
    lr_constant: float,
    epsilons: Sequence[float],
    grad_epsilons: Sequence[float] = (),
    max_steps: int,
    n_seeds: int = 3,
    depth: int = 1,
    out_features: int = 16,
    checkpoints: int = 100,
    seed: int = 0,
):
    r"""Full-batch gradient descent on L̂_un (eq. (11), :func:`triplet_objective`) as
    in Theorem 1: the encoder :class:`~ccl_helpers.models.DeepReLU` (D, m, L, d) with
    A, B fixed and W_1 … W_L trained, step size ν = c/m (c = ``lr_constant``), all
    ``n_seeds`` initialisations at once, until L̂_un ≤ min ε for every seed or
    ``max_steps``.

    triplets: (anchor, positive, negative), each (n, D) on the unit sphere. Records
    ``checkpoints`` log-spaced steps (plus the step reaching min ε): the steps to each
    ε of ``epsilons`` (Theorem 1) and to each ε' of ``grad_epsilons`` on ‖∇_z L̂_un‖
    (Lemma 6) are the first checkpoints below them, so they are resolved to the
    checkpoints' spacing (a factor T^{1/checkpoints}), except min ε, which is exact.
    """
    inputs, _ = _stack_triplets(triplets)
    model = StackedModel(
        lambda: DeepReLU(inputs.shape[1], width, depth, out_features),
        n_seeds,
        seed=seed,
        device=inputs.device,
    )
    outcome = gradient_descent(
        model,
        triplet_objective,
        triplets,
        max_steps,
        lr=lr_constant / width,
        target=("loss", min(epsilons)),
        checkpoints=checkpoints,
        evaluate=_triplet_evaluator(triplets),
        desc=None,
    )
    steps = _first_steps(
        wide(outcome.history), {"loss": epsilons, "output_grad_norm": grad_epsilons}
    )
    return _TargetDescent(steps, outcome.history)


def descent_sweep(
    parameter: str,
    values: Sequence[float],
    case: Callable[[float], tuple[tuple[Tensor, Tensor, Tensor], int, float]],
    *,
    epsilons: Sequence[float],
    grad_epsilons: Sequence[float] = (),
    max_steps: int,
    n_seeds: int = 3,
    depth: int = 1,
    out_features: int = 16,
    checkpoints: int = 100,
    seed: int = 0,
):
    r"""Theorem 1's experiment for each value v of a swept ``parameter`` (width m,
    number of triplets n, separation δ, …): ``case(v)`` gives (triplets, width m,
    lr_constant c), and full-batch gradient descent on L̂_un (eq. (11),
    :func:`triplet_objective`) runs as in Theorem 1: the encoder
    :class:`~ccl_helpers.models.DeepReLU` (D, m, L = ``depth``, d = ``out_features``)
    with A, B fixed and W_1 … W_L trained, step size ν = c/m, all ``n_seeds``
    initialisations at once (seeds ``seed`` …), until L̂_un ≤ min ε for every seed or
    ``max_steps``.

    triplets: (anchor, positive, negative), each (n, D) on the unit sphere. Each run
    records ``checkpoints`` log-spaced steps (plus the step reaching min ε): the steps
    to each ε of ``epsilons`` (Theorem 1) and to each ε' of ``grad_epsilons`` on
    ‖∇_z L̂_un‖ (Lemma 6) are the first checkpoints below them, so they are resolved to
    the checkpoints' spacing (a factor T^{1/checkpoints}), except min ε, which is
    exact.

    Returns (steps, history), a NamedTuple of two frames, each with the columns
    ``parameter`` and ``lr_constant``: ``steps`` one row per (value, seed, target,
    threshold): ``target`` ``"loss"`` (L̂_un ≤ ε, Theorem 1) or ``"output_grad_norm"``
    (‖∇_z L̂_un‖ ≤ ε', Lemma 6), ``threshold`` ε, ``steps`` the first recorded step at
    which it held (NaN if never) and ``relative_movement`` ‖W^(t) − W^(0)‖_F /
    ‖W^(0)‖_F at that step; ``history`` the descents in the book's one format (long:
    step, seed, quantity, value; :func:`ccl_helpers.train.wide` gives one row per
    checkpoint and seed) with, per seed, ``loss``, ``relative_movement``,
    ``loss_max`` max_i ℓ(zᵢ), ``output_grad_norm`` ε = ‖∇_z L̂_un‖, ``norm_min`` η and
    ``norm_max`` C (the range of ‖f(x)‖ over the 3n inputs, Assumption 2),
    ``lemma4_bound`` 2ε/η (Lemma 4's bound on every ℓ(zᵢ) when ε < η/2) and
    ``lemma4_applies`` (1.0 where ε < η/2, else 0.0).
    """
    if not values:
        raise ValueError("values must hold at least one value of the parameter")
    for i, value in enumerate(values):
        check_finite_real(f"values[{i}]", value)
    check_callable("case", case)
    epsilons = _check_thresholds("epsilons", epsilons)
    grad_epsilons = _check_thresholds("grad_epsilons", grad_epsilons, True)
    descent = dict(
        epsilons=epsilons,
        grad_epsilons=grad_epsilons,
        max_steps=check_int("max_steps", max_steps, 1),
        n_seeds=check_int("n_seeds", n_seeds, 1),
        depth=check_int("depth", depth, 1),
        out_features=check_sizes("out_features", out_features),
        checkpoints=checkpoints,
        seed=check_int("seed", seed, 0),
    )
    outcomes = []
    for value in values:
        triplets, width, lr_constant = case(value)
        _check_triplets(triplets)
        check_finite("triplets", _stack_triplets(triplets)[0])
        width = check_int("width", width, 1)
        rate = check_positive("lr_constant", lr_constant)
        outcome = _descent_to_targets(triplets, width, lr_constant=rate, **descent)
        outcomes.append(
            [
                frame.assign(**{parameter: value, "lr_constant": lr_constant})
                for frame in outcome
            ]
        )
    return _TargetDescent(
        *(pd.concat(frames, ignore_index=True) for frames in zip(*outcomes))
    )
