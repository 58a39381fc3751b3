"""The loop's uses on a stacked model: minibatch training and full-batch descent.

:func:`train` (minibatch), :func:`gradient_descent` (full batch on a fixed training
set), both through one vmapped gradient of the seeds' losses; :func:`wide`, the one
view of a history for plotting."""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch.utils._pytree import tree_leaves

from .._checks import (
    check_callable,
    check_finite,
    check_frame,
    check_instance,
    check_int,
    check_steps,
)
from .._precision import at_least_float32
from ..runtime import autocast, progress
from ._loop import Evaluation, Stages, loop
from ._stacked import Forward, StackedModel, _batched_loss, combined_norm, member_norms


def _evaluate(
    model: StackedModel, evaluate: Callable[[StackedModel], dict[str, Tensor]] | None
) -> dict[str, Tensor]:
    if evaluate is None:
        return {}
    with torch.no_grad():
        return dict(evaluate(model))


def _bar(desc: str | None) -> Callable[[Iterable[int]], Iterable[int]] | None:
    """A progress-bar wrapper labelled ``desc`` (None: no bar)."""
    return None if desc is None else lambda steps: progress(steps, desc=desc)


def _check_seed_axis(batch, n_seeds: int) -> None:
    """ValueError unless every tensor of ``batch`` (a pytree) has the leading seed axis
    S = ``n_seeds`` that the vmapped loss maps over."""
    for leaf in tree_leaves(batch):
        if isinstance(leaf, Tensor) and (leaf.ndim == 0 or leaf.shape[0] != n_seeds):
            raise ValueError(
                f"every tensor of a batch needs a leading seed axis of size S = "
                f"{n_seeds}, one batch per seed; got shape {tuple(leaf.shape)} (for "
                "one model: a StackedModel with n_seeds=1 and batch[None])"
            )


def _stacked_gradient(
    model: StackedModel,
    loss_fn: Callable[[Forward, Any], Tensor],
    data: Callable[[int], Any],
    *,
    shared: bool = False,
    mixed_precision: bool = False,
    grad_norm: bool = False,
) -> Callable[[int, float], Evaluation]:
    """The ``gradient`` of :func:`loop` for a :class:`StackedModel`: (t, β) ↦ the
    seeds' losses L_s = ``loss_fn(forward_s, data(t))`` (vmapped; β unused) and ∇L_s.

    ``data(t)``: the data of step t (any pytree of tensors), with a leading seed axis
    S, or shared by all seeds when ``shared``. ``mixed_precision``: forward and loss
    under :func:`~ccl_helpers.runtime.autocast`, the losses back-propagated in at least
    float32. ``grad_norm``: also the per-step quantity ``grad_norm`` ‖∇L_s‖₂ over all
    trained tensors.
    """
    names = list(model.params)
    batched_loss = _batched_loss(model, loss_fn, None if shared else 0)
    device = next(iter(model.params.values())).device
    check_first = not shared  # the seed axis of the first step's data, checked once

    def gradient(step: int, beta: float) -> Evaluation:
        nonlocal check_first
        batch = data(step)
        if check_first:
            _check_seed_axis(batch, len(model.seeds))
            check_first = False
        with autocast(device) if mixed_precision else contextlib.nullcontext():
            losses = batched_loss(model.params, model.buffers, batch)
        losses = at_least_float32(losses)
        grads = torch.autograd.grad(losses.sum(), [model.params[n] for n in names])
        quantities = {}
        if grad_norm:
            # (Σ_i ‖g_i‖²)^{1/2} per member: combined_norm of the member_norms,
            # unchecked (every step)
            norms = [
                torch.linalg.vector_norm(g, dim=tuple(range(1, g.ndim))) for g in grads
            ]
            quantities["grad_norm"] = torch.linalg.vector_norm(
                torch.stack(norms), dim=0
            )
        return Evaluation(losses.detach(), grads, quantities)

    return gradient


def train(
    model: StackedModel,
    loss_fn: Callable[[Forward, Any], Tensor],
    sample_batch: Callable[[int], Any],
    n_steps: int,
    *,
    lr: float = 1e-3,
    optimizer: str = "adam",
    weight_decay: float = 0.0,
    lr_factor: Stages | None = None,
    evaluate: Callable[[StackedModel], dict[str, Tensor]] | None = None,
    eval_steps: Iterable[int] = (),
    desc: str | None = "training",
    configuration: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Train all seeds of ``model`` in place on minibatches; return the tidy history.

    Args:
        loss_fn: (forward, batch) ↦ scalar loss of one seed, ``forward`` being that
            seed's model.
        sample_batch: step ↦ the batch of update step 1 … n_steps (any pytree of
            tensors) with leading dimension S = n_seeds.
        evaluate: model ↦ {quantity: (S,) tensor}, called at step 0, at ``eval_steps``
            and at the end.
        optimizer: ``"adam"`` or ``"sgd"`` (plain gradient descent with step size
            ``lr``).
        weight_decay: λ ≥ 0, the L2 penalty's gradient λW added (see :func:`loop`).
        lr_factor: :data:`Stages` a_t multiplying ``lr`` at step t (see :func:`loop`).
        configuration: the members' configuration columns, one row per member, added
            to the history (see :func:`loop`).
    Records ``train_loss`` (mean minibatch loss since the last checkpoint) and every
    quantity of ``evaluate``. Each step's forward pass and loss run under
    :func:`~ccl_helpers.runtime.autocast` (bfloat16 when
    :func:`~ccl_helpers.runtime.precision` is ``"bf16"``); the losses are summed and
    back-propagated in at least float32, the parameters stay in their dtype, and
    ``evaluate`` runs outside autocast, in full precision. For full-batch gradient
    descent on a fixed training set, see :func:`gradient_descent`.
    """
    check_instance("model", model, StackedModel)
    check_callable("loss_fn", loss_fn)
    check_callable("sample_batch", sample_batch)
    n_steps = check_int("n_steps", n_steps)
    eval_steps = check_steps("eval_steps", eval_steps, n_steps)
    gradient = _stacked_gradient(
        model, loss_fn, lambda t: sample_batch(t + 1), mixed_precision=True
    )
    return loop(
        model.params,
        gradient,
        n_steps,
        seeds=model.seeds,
        lr=lr,
        optimizer=optimizer,
        weight_decay=weight_decay,
        lr_factor=lr_factor,
        checkpoints=eval_steps,
        on_checkpoint=lambda t, _: _evaluate(model, evaluate),
        bar=_bar(desc),
        configuration=configuration,
    )


def log_spaced_steps(n_steps: int, n_points: int) -> list[int]:
    """About ``n_points`` integer steps in [0, n_steps], log-spaced: 0, then the
    distinct roundings of geomspace(1, n_steps, n_points − 1); always contains 0, 1 and
    n_steps (for n_points ≥ 3)."""
    n_steps = check_int("n_steps", n_steps)
    n_points = check_int("n_points", n_points)
    inner = (
        np.geomspace(1, n_steps, max(n_points - 1, 1)) if n_points > 1 else np.array([])
    )
    rounded = np.unique(np.rint(inner)).astype(np.int64)  # half to even, as round()
    return sorted({0, n_steps, *rounded.tolist()})


TARGETS = ("loss", "grad_norm")
"""The quantities :func:`gradient_descent` can stop on (they are computed at every
step)."""


class Descent(NamedTuple):
    """The outcome of :func:`gradient_descent` (returned, not exported).

    history: tidy (step, seed, quantity, value) records at the checkpoints;
    first_step: per seed (index), the first step t at which the target held (pandas
    ``Int64``, ``<NA>`` for a seed that never reached it; all ``<NA>`` without a
    target);
    n_steps: the number of gradient steps taken (the last recorded step).
    """

    history: pd.DataFrame
    first_step: pd.Series
    n_steps: int


def _movement(
    params: dict[str, Tensor],
    initial: dict[str, Tensor],
    initial_norms: dict[str, Tensor],
    groups: Mapping[str, str],
) -> dict[str, Tensor]:
    """movement/<name> = ‖W^(t) − W^(0)‖_F and relative_movement/<name> = that /
    ‖W^(0)‖_F, per seed (S,), for every parameter, every group (name ↦ prefix) and in
    total (``movement``, ``relative_movement``)."""
    moved = {
        name: member_norms(p.detach() - initial[name]) for name, p in params.items()
    }
    sets = {name: [name] for name in params}
    sets.update(
        {
            group: [n for n in params if n.startswith(prefix)]
            for group, prefix in groups.items()
        }
    )
    out: dict[str, Tensor] = {}
    for label, members in [*sets.items(), ("", list(params))]:
        distance = combined_norm(moved[n] for n in members)
        size = combined_norm(initial_norms[n] for n in members)
        suffix = f"/{label}" if label else ""
        out[f"movement{suffix}"] = distance
        if bool((size > 0).all()):
            out[f"relative_movement{suffix}"] = distance / size
    return out


def _check_data(name: str, data: Any) -> None:
    """ValueError unless the pytree ``data`` holds a floating-point tensor and all its
    floating-point tensors are finite (read once per call, before training)."""
    leaves = [v for v in tree_leaves(data) if isinstance(v, Tensor)]
    floating = [v for v in leaves if v.is_floating_point()]
    if not floating:
        raise ValueError(
            f"{name} must hold a floating-point tensor (the inputs), got "
            f"{[v.dtype for v in leaves] or type(data).__name__}"
        )
    for v in floating:
        check_finite(name, v)


def gradient_descent(
    model: StackedModel,
    loss_fn: Callable[[Forward, Any], Tensor],
    data: Any,
    max_steps: int,
    *,
    lr: float | Mapping[str, float],
    target: tuple[str, float] | None = None,
    stop_at_target: bool = True,
    checkpoints: int | Iterable[int] = 50,
    evaluate: Callable[[StackedModel], dict[str, Tensor]] | None = None,
    groups: Mapping[str, str] | None = None,
    shared: bool = True,
    desc: str = "gradient descent",
) -> Descent:
    """Full-batch gradient descent on a fixed training set, all seeds of ``model`` at
    once (in place).

    Every seed s follows W_s^(t+1) = W_s^(t) − lr · ∇L̂_s(W_s^(t)), t = 0, 1, …, exactly
    its own single-seed trajectory (the seeds' losses are summed, so the gradients do
    not mix). Only ``model.params`` move; buffers (e.g.
    :class:`~ccl_helpers.models.DeepReLU`'s fixed A, B) stay.

    Args:
        loss_fn: (forward, data) ↦ scalar L̂ of one seed on the whole training set.
        data: the training set (any pytree of tensors), shared by all seeds; with
            ``shared=False`` it has a leading seed axis S.
        max_steps: the largest number of gradient steps T (≥ 1).
        lr: the step size, or a mapping parameter-name prefix ↦ step size (longest
            prefix wins; e.g. {"query.": η, "key.": γ} for Wen's Algorithm 1); every
            parameter needs one.
        target: (quantity, ε) with quantity in :data:`TARGETS`: seed s reaches it at the
            first step t with quantity_s(W^(t)) ≤ ε. With ``stop_at_target``, descent
            stops once every seed has reached it.
        checkpoints: an int k (≈ k log-spaced steps, :func:`log_spaced_steps`) or
            explicit steps. Step 0, the last step and every step at which some seed
            first reaches the target are recorded too.
        evaluate: model ↦ {quantity: (S,) tensor}, called at every checkpoint under
            ``torch.no_grad()`` (wrap its body in ``torch.enable_grad()`` to
            differentiate, e.g. for loss vectors ∂ℓ/∂z).
        groups: name ↦ parameter-name prefix; movement is also recorded per group (e.g.
            {"W": "query."}).

    Recorded at each checkpoint t, per seed, all at the parameters W^(t) (before step
    t + 1): ``loss`` L̂(W^(t)); ``grad_norm`` ‖∇L̂(W^(t))‖₂ over all trained parameters;
    ``movement/<name>`` ‖W^(t) − W^(0)‖_F and ``relative_movement/<name>`` (divided by
    ‖W^(0)‖_F, omitted when ‖W^(0)‖_F = 0) per parameter, per group, and in total
    (``movement``, ``relative_movement``, over the concatenation of all trained
    parameters); and ``evaluate``'s.

    Returns the named tuple (history, first_step, n_steps): the tidy (step, seed,
    quantity, value) records at the checkpoints; per seed, the first step at which
    the target held (pandas ``Int64``, ``<NA>`` where never, all ``<NA>`` without a
    target); the number of gradient steps taken (the last recorded step).
    Raises FloatingPointError when a loss or gradient becomes non-finite (step size too
    large).
    """
    check_instance("model", model, StackedModel)
    check_callable("loss_fn", loss_fn)
    max_steps = check_int("max_steps", max_steps)
    names = list(model.params)
    if target is not None and not (
        isinstance(target, tuple) and len(target) == 2 and target[0] in TARGETS
    ):
        raise ValueError(
            f"target must be (quantity, threshold) with quantity in {TARGETS}, "
            f"got {target!r}"
        )
    _check_data("data", data)
    if isinstance(checkpoints, numbers.Real):
        schedule = log_spaced_steps(max_steps, check_int("checkpoints", checkpoints))
    else:
        schedule = check_steps("checkpoints", checkpoints, max_steps)
    groups = dict(groups or {})
    for group, prefix in groups.items():
        if not any(name.startswith(prefix) for name in names):
            raise ValueError(
                f"groups[{group!r}] = {prefix!r} prefixes no parameter name ({names})"
            )
    initial = {name: p.detach().clone() for name, p in model.params.items()}
    initial_norms = {name: member_norms(p) for name, p in initial.items()}
    history = loop(
        model.params,
        _stacked_gradient(
            model, loss_fn, lambda t: data, shared=shared, grad_norm=True
        ),
        max_steps,
        seeds=model.seeds,
        lr=lr,
        full_batch=True,
        checkpoints=schedule,
        on_checkpoint=lambda t, _: {
            **_movement(model.params, initial, initial_norms, groups),
            **_evaluate(model, evaluate),
        },
        target=target,
        stop_at_target=stop_at_target,
        bar=_bar(desc),
    )
    first = pd.Series(pd.NA, index=pd.Index(model.seeds, name="seed"), dtype="Int64")
    if target is not None:
        reached = history[
            (history.quantity == target[0]) & (history.value <= float(target[1]))
        ]
        first.update(reached.groupby("seed")["step"].min())
    return Descent(history, first.rename("first_step"), int(history.step.max()))


def wide(history: pd.DataFrame) -> pd.DataFrame:
    """The long history (step, [beta], seed, quantity, value, configuration columns) as
    one row per (step, seed, configuration), one column per quantity, rows in their
    order of first appearance; a quantity missing at a step (recorded only at the
    checkpoints) is NaN there."""
    check_frame("history", history, ["step", "quantity", "value"])
    keys = [c for c in history.columns if c not in ("quantity", "value")]
    table = history.pivot_table(
        index=keys, columns="quantity", values="value", sort=False
    )
    first = history[keys].drop_duplicates()  # the keys in their order of appearance
    order = table.index.get_indexer(
        pd.MultiIndex.from_frame(first) if len(keys) > 1 else first[keys[0]]
    )
    table = table.iloc[order[order >= 0]]
    return table.reset_index().rename_axis(columns=None)
