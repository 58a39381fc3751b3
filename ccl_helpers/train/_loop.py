"""The one training loop of the book: its schedules, records and update.

:func:`loop` with its piecewise-constant schedules (:data:`Stages`,
:func:`check_stages`), the long history it records (step, [beta], seed, quantity,
value, configuration columns) and the SGD or Adam update."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from .._checks import (
    check_callable,
    check_choice,
    check_frame,
    check_int,
    check_positive,
    check_steps,
)

OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}
"""The optimisers :func:`train` offers by name (``"sgd"``: plain gradient descent with
step size ``lr``)."""


class Evaluation(NamedTuple):
    """The objective at the parameters W^(t) of step t, for every seed at once.

    losses: (S,) L_s(W_s^(t)) on the step's data, detached; grads: one gradient per
    trained tensor, in the order of ``params``, each (S, ...); quantities: per-step
    records {name: (S,)} (e.g. a gradient norm or the loss vectors' norms).
    """

    losses: Tensor
    grads: Sequence[Tensor]
    quantities: Mapping[str, Tensor] = {}


Stages = Sequence[tuple[float, int]]  # [(value, steps), …], stage by stage


def _check_seeds(name: str, value, *, sequence: bool = True) -> list[int]:
    """``value`` as a list of ints ≥ 0 (seeds, or member indices); with ``sequence``, a
    non-empty sequence (not a string), else any iterable; else ValueError naming
    ``name``. The private checker of :func:`loop` and
    :class:`~ccl_helpers.train.StackedModel`'s seeds."""
    if sequence and (
        isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value
    ):
        raise ValueError(
            f"{name} must be a non-empty sequence of ints ≥ 0, got {value!r}"
        )
    try:
        entries = list(enumerate(value))
    except TypeError:
        raise ValueError(
            f"{name} must be a sequence of ints ≥ 0, got {value!r}"
        ) from None
    return [check_int(f"{name}[{i}]", s, 0) for i, s in entries]


def check_stages(name: str, stages: Stages) -> list[tuple[float, int]]:
    """``stages`` as [(value > 0, steps ≥ 0), …], not empty; else ValueError."""
    try:
        out = [
            (check_positive("value", float(value)), check_int("steps", steps, 0))
            for value, steps in stages
        ]
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be a list of (value > 0, steps ≥ 0) pairs: {error}"
        ) from None
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def _per_step(name: str, stages: Stages | None, n_steps: int) -> list[float] | None:
    """The value at each step 0 … n_steps − 1, then the last stage's at n_steps."""
    if stages is None:
        return None
    stages = check_stages(name, stages)
    values = [value for value, steps in stages for _ in range(steps)]
    if len(values) != n_steps:
        raise ValueError(
            f"{name} must cover n_steps = {n_steps} steps, its stages hold "
            f"{len(values)}"
        )
    return [*values, stages[-1][0]]


def _rates(names: Sequence[str], lr: float | Mapping[str, float]) -> dict[str, float]:
    """η per trained tensor: one step size, or the longest matching name prefix's."""
    if not isinstance(lr, Mapping):
        return dict.fromkeys(names, check_positive("lr", lr))
    return {
        name: check_positive(f"lr[{name!r}]", value)
        for name, value in _prefix_values(names, lr, "lr").items()
    }


def _prefix_values(
    names: Iterable[str], values: Mapping[str, Any], argument: str
) -> dict[str, Any]:
    """For each parameter name, the value of the longest key of ``values`` that prefixes
    it."""
    chosen = {}
    for name in names:
        keys = [k for k in values if name.startswith(k)]
        if not keys:
            raise ValueError(
                f"{argument} must have a key prefixing every parameter name; "
                f"none for {name!r} "
                f"(keys {sorted(values)})"
            )
        chosen[name] = values[max(keys, key=len)]
    return chosen


class _Records:
    """(step, quantity, values (S,)) triples, turned into one long frame at the end;
    ``betas``: β at each step 0 … T, recorded as a column when given;
    ``configuration``: one row per seed, its columns repeated on each record."""

    def __init__(
        self,
        seeds: Sequence[int],
        betas: Sequence[float] | None = None,
        configuration: pd.DataFrame | None = None,
    ):
        self.seeds, self.betas, self.rows = list(seeds), betas, []
        self.configuration = configuration

    def add(self, step: int, quantities: Mapping[str, Tensor]) -> None:
        self.rows.extend((step, name, v.detach()) for name, v in quantities.items())

    def frame(self) -> pd.DataFrame:
        n = len(self.seeds)
        values = [v.reshape(-1).to("cpu", torch.float64) for _, _, v in self.rows]
        steps = np.repeat(np.array([s for s, _, _ in self.rows], "int64"), n)
        columns = {"step": steps}
        if self.betas is not None:
            columns["beta"] = np.asarray(self.betas, "float64")[steps]
        return pd.DataFrame(
            {
                **columns,
                "seed": np.tile(np.array(self.seeds, "int64"), len(self.rows)),
                "quantity": np.repeat([q for _, q, _ in self.rows], n),
                "value": torch.cat(values).numpy() if values else np.empty(0),
                **{
                    column: np.tile(values.to_numpy(), len(self.rows))
                    for column, values in (
                        {} if self.configuration is None else self.configuration
                    ).items()
                },
            }
        )


class _Target:
    """Which seeds have reached :func:`loop`'s ``target`` (quantity ≤ ε) so far."""

    def __init__(self, target: tuple[str, float] | None, stop: bool):
        self.target, self.stop, self.first = target, stop, None

    def update(self, measured: Mapping[str, Tensor]) -> tuple[bool, bool]:
        """(some seed reached it just now, every seed has and the loop should stop)."""
        if self.target is None:
            return False, False
        name, threshold = self.target
        if name not in measured:
            raise ValueError(
                f"target quantity must be one of {sorted(measured)}, got {name!r}"
            )
        hit = measured[name] <= float(threshold)
        first = torch.zeros_like(hit) if self.first is None else self.first
        self.first = first | hit
        return bool((hit & ~first).any()), self.stop and bool(self.first.all())


def _update(
    tensors: Sequence[Tensor],
    grads: Sequence[Tensor],
    rates: Sequence[float],
    factor: float,
    beta: float,
    adam: torch.optim.Adam | None,
    weight_decay: float = 0.0,
) -> None:
    """W ← W − (η a / β)(g + λW) in place (SGD), or one Adam step with learning rates
    η a / β and weight decay λ (Adam's parameter groups: one per distinct η, holding it
    as ``"eta"``)."""
    if adam is None:
        with torch.no_grad():
            for p, g, rate in zip(tensors, grads, rates):
                step = g + weight_decay * p if weight_decay else g
                p.add_(step, alpha=-(rate * factor / beta))
        return
    for p, g in zip(tensors, grads):
        p.grad = g
    for group in adam.param_groups:
        group["lr"] = group["eta"] * factor / beta
    adam.step()


def _first_non_finite(
    step: int, measured: dict[str, Tensor], first: Tensor | None
) -> Tensor:
    """(S,) per seed the first step so far at which a measured value is not finite, −1
    where none is; on the device, without waiting for it."""
    finite = torch.stack([torch.isfinite(v) for v in measured.values()]).all(0)
    if first is None:
        first = torch.full(finite.shape, -1, dtype=torch.long, device=finite.device)
    return torch.where((first < 0) & ~finite, step, first)


def _check_finite(seeds: Sequence[int], first: Tensor) -> None:
    """FloatingPointError if a seed's measured values stopped being finite (``first``:
    :func:`_first_non_finite`); the one host read of it, at a checkpoint."""
    if not bool((first >= 0).any()):
        return
    step = int(first[first >= 0].min())
    bad = [s for s, at in zip(seeds, first.tolist()) if at == step]
    cause = (
        "before any update: the data or the loss are not finite"
        if step == 0
        else "lower the step size (lr)"
    )
    raise FloatingPointError(
        f"the loss or a recorded quantity is not finite at step {step} for seeds "
        f"{bad}; {cause}"
    )


def loop(
    params: Mapping[str, Tensor],
    gradient: Callable[[int, float], Evaluation],
    n_steps: int,
    *,
    seeds: Sequence[int],
    lr: float | Mapping[str, float] = 1e-3,
    optimizer: str = "sgd",
    weight_decay: float = 0.0,
    full_batch: bool = False,
    lr_factor: Stages | None = None,
    beta: Stages | None = None,
    checkpoints: Iterable[int] = (),
    on_checkpoint: Callable[[int, Evaluation | None], Mapping[str, Tensor]]
    | None = None,
    every_step: Iterable[str] = (),
    target: tuple[str, float] | None = None,
    stop_at_target: bool = True,
    bar: Callable[[Iterable[int]], Iterable[int]] | None = None,
    configuration: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The one training loop: W^(t+1) = W^(t) − η_t ∇L(W^(t)) (or Adam), all seeds.

    For t = 0, 1, …, T (T = ``n_steps``, W^(0) the current ``params``):

    1. ``gradient(t, β_t)`` evaluates the objective at W^(t) → :class:`Evaluation`.
       Full batch: at every t ≤ T, on the fixed training set. Minibatch: at t < T
       only, on step t + 1's batch (T batches in all).
    2. Records at W^(t): the quantities named in ``every_step`` at every t; at the
       checkpoints (``checkpoints`` ∪ {0, last step}) the loss — ``loss`` L(W^(t)) in
       full batch, ``train_loss`` (the mean minibatch loss of the steps since the
       previous checkpoint) in minibatch —, the other quantities of the evaluation and
       those of ``on_checkpoint(t, evaluation)`` (under ``torch.no_grad()``; its
       evaluation is None at the last minibatch step).
    3. Stops after t = T, or once every seed has reached the ``target``.
    4. Updates every trained tensor with the step size η_t = ``lr`` · a_t / β_t
       (a_t: ``lr_factor``, β_t: ``beta``, each 1 when not given; the 1/β
       rescaling of Ren & Li's Algorithm 3.1): ``"sgd"`` W ← W − η_t g in place,
       ``"adam"`` Adam with learning rate η_t.

    Args:
        params: the trained tensors (leaves with a leading seed axis S = len(seeds)),
            updated in place.
        gradient: (t, β_t) ↦ the :class:`Evaluation` at W^(t) (β_t = 1 without
            ``beta``).
        lr: η, or a mapping name prefix ↦ η (longest prefix wins; each tensor needs
            one).
        optimizer: ``"sgd"`` or ``"adam"`` (:data:`OPTIMIZERS`).
        weight_decay: λ ≥ 0, the gradient λW of the penalty λ‖W‖²/2 added to every
            trained tensor's gradient before the update (Adam's ``weight_decay``).
        lr_factor, beta: :data:`Stages` covering the T steps; the value at t = T is
            the last stage's. β is an inverse temperature (it multiplies the
            similarities, like open_clip's ``logit_scale``), where the losses'
            ``temperature`` t divides them.
        target: (quantity, ε): seed s reaches it at the first evaluated t with
            quantity_s ≤ ε (``"loss"`` or a quantity of the evaluations); that step
            is recorded. With ``stop_at_target``, the loop stops once every seed has.
        bar: a wrapper of the iterator of the n_steps update steps 0 … n_steps − 1
            (e.g. a progress bar, which then counts to n_steps); the last pass, t =
            n_steps, only evaluates and comes after it.
        configuration: the runs' configuration, one row per seed in the order of
            ``seeds`` (columns other than those of the history), for runs that differ
            in more than their seed (several may then share a seed).

    Returns the long history: columns step (int64), beta (float64, β_t; only with a
    ``beta`` schedule), seed (int64), quantity, value (float64), then the columns of
    ``configuration``, one row per recorded (step, seed, configuration, quantity). In
    full batch, raises FloatingPointError at the first checkpoint after a loss or a
    quantity of an evaluation stopped being finite (the step size is too large),
    naming that step.
    The steps read nothing back from the device (no host synchronisation) except
    with a ``target`` (twice a step) and at the checkpoints.
    """
    check_callable("gradient", gradient)
    n_steps = check_int("n_steps", n_steps, 0)
    seeds = _check_seeds("seeds", seeds, sequence=False)
    check_choice("optimizer", optimizer, OPTIMIZERS)
    weight_decay = check_positive("weight_decay", weight_decay, allow_zero=True)
    if not isinstance(params, Mapping) or not params:
        raise ValueError(f"params must map names to trained tensors, got {params!r}")
    if configuration is not None:
        check_frame("configuration", configuration)
        taken = {"step", "beta", "seed", "quantity", "value"} & set(configuration)
        if len(configuration) != len(seeds) or taken:
            raise ValueError(
                f"configuration must have one row per seed ({len(seeds)}) and no "
                f"column of the history, got {len(configuration)} rows and "
                f"{sorted(taken)}"
            )
    names = list(params)
    rates = _rates(names, lr)
    factors = _per_step("lr_factor", lr_factor, n_steps)
    betas = _per_step("beta", beta, n_steps)
    if target is not None and not (
        isinstance(target, tuple)
        and len(target) == 2
        and isinstance(target[0], str)
        and isinstance(target[1], numbers.Real)
        and math.isfinite(target[1])
    ):
        raise ValueError(f"target must be (quantity, finite threshold), got {target!r}")
    schedule = {0, n_steps, *check_steps("checkpoints", checkpoints, n_steps)}
    every = set(every_step)
    tensors = [params[name] for name in names]
    adam = None
    if optimizer == "adam":
        groups: dict[float, list[Tensor]] = {}
        for name, p in zip(names, tensors):
            groups.setdefault(rates[name], []).append(p)
        adam = torch.optim.Adam(
            [{"params": ps, "lr": eta, "eta": eta} for eta, ps in groups.items()],
            weight_decay=weight_decay,
        )
    records = _Records(seeds, betas, configuration)
    reached = _Target(target, stop_at_target)
    running, since, first_bad = None, 0, None
    iterator = (
        itertools.chain(bar(range(n_steps)), [n_steps])
        if bar is not None
        else range(n_steps + 1)
    )
    try:
        for t in iterator:
            beta_t = betas[t] if betas is not None else 1.0
            evaluation = gradient(t, beta_t) if full_batch or t < n_steps else None
            newly = done = False
            quantities: dict[str, Tensor] = {}
            if evaluation is not None:
                measured = {"loss": evaluation.losses, **evaluation.quantities}
                for name, value in measured.items():
                    if value.shape != (len(seeds),):
                        raise ValueError(
                            f"gradient must give {name} of shape (len(seeds),) = "
                            f"({len(seeds)},), got {tuple(value.shape)}"
                        )
                if full_batch:
                    first_bad = _first_non_finite(t, measured, first_bad)
                records.add(t, {k: v for k, v in measured.items() if k in every})
                newly, done = reached.update(measured)
                kept = measured if full_batch else evaluation.quantities
                quantities = {k: v for k, v in kept.items() if k not in every}
            last = done or t == n_steps
            if t in schedule or newly or last:
                if first_bad is not None:
                    _check_finite(seeds, first_bad)
                if since:
                    quantities = {"train_loss": running / since, **quantities}
                if on_checkpoint is not None:
                    with torch.no_grad():
                        quantities.update(on_checkpoint(t, evaluation))
                records.add(t, quantities)
                running, since = None, 0
            if last:
                break
            if not full_batch:
                losses = evaluation.losses
                running = losses if running is None else running + losses
                since += 1
            factor = factors[t] if factors is not None else 1.0
            etas = [rates[name] for name in names]
            _update(tensors, evaluation.grads, etas, factor, beta_t, adam, weight_decay)
    finally:
        getattr(iterator, "close", lambda: None)()
    return records.frame()
