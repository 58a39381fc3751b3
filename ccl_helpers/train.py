"""The one training loop of the book, and several seeds trained at once.

:func:`loop` runs gradient descent or Adam for every chapter: minibatch or full
batch, a piecewise-constant schedule of the step size and of the inverse temperature β
(with Ren & Li's 1/β step rescaling), per-step and checkpoint records, a stopping
target, several seeds at once. It returns the book's one history format: a long frame
(step, seed, quantity, value), with a β column under a β schedule and the runs'
configuration columns where runs differ in more than their seed (:func:`wide` is its
one view for plotting).
Seeds are stacked along a leading axis (:class:`StackedModel`, forward passes
vectorised with ``torch.func.vmap``); because the seeds' losses are summed and the
optimiser acts elementwise, each seed follows exactly the trajectory it would follow
if trained alone.

:func:`train` (minibatch, freshly sampled batches) and :func:`gradient_descent` (full
batch on a fixed training set: loss, gradient norm, movement from initialisation) are
its two uses on a :class:`StackedModel`; Wen's Algorithm 1, Ren & Li's Algorithm 3.1
and the DDP path drive it with their own :class:`Evaluation`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .checks import (
    check_callable,
    check_device,
    check_finite,
    check_frame,
    check_instance,
    check_int,
    check_positive,
    check_steps,
    check_tensor,
)
from .losses import at_least_float32
from .runtime import autocast, progress

Forward = Callable[[Tensor], Tensor]

OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}
"""The optimisers :func:`train` offers by name (``"sgd"``: plain gradient descent with
step size ``lr``)."""


class StackedModel:
    """``n_seeds`` independently initialised copies of one architecture.

    Copy ``i`` is ``make_module()`` built right after ``torch.manual_seed(seed + i)``,
    so it equals the model a single run with that seed would start from. Parameters:
    dict name → (S, ...).
    """

    def __init__(
        self,
        make_module: Callable[[], nn.Module],
        n_seeds: int,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ):
        check_callable("make_module", make_module)
        n_seeds = check_int("n_seeds", n_seeds)
        device = check_device("device", device)
        copies = []
        for i in range(n_seeds):
            torch.manual_seed(seed + i)
            copies.append(make_module().to(device))
        params, buffers = stack_module_state(copies)
        self.template = copies[0]
        self.params: dict[str, Tensor] = params
        self.buffers: dict[str, Tensor] = buffers
        self.n_seeds = n_seeds
        self.seeds = list(range(seed, seed + n_seeds))

    def functional(
        self, submodule: str | None = None
    ) -> Callable[[dict, dict, Tensor], Tensor]:
        """The per-seed function (params, buffers, x) ↦ module(x) (or the named
        submodule's)."""
        module = self.template.get_submodule(submodule) if submodule else self.template
        prefix = f"{submodule}." if submodule else ""

        def call(params: dict, buffers: dict, x: Tensor) -> Tensor:
            own = {
                k[len(prefix) :]: v for k, v in params.items() if k.startswith(prefix)
            }
            own_buffers = {
                k[len(prefix) :]: v for k, v in buffers.items() if k.startswith(prefix)
            }
            return functional_call(module, (own, own_buffers), (x,))

        return call

    def __call__(
        self, x: Tensor, *, shared: bool = True, submodule: str | None = None
    ) -> Tensor:
        """Evaluate every seed. ``shared``: x (n, ...) is fed to all seeds → (S, n,
        out); otherwise x (S, n, ...) holds one input batch per seed."""
        if not shared and x.shape[0] != self.n_seeds:
            raise ValueError(
                f"x must have leading dimension n_seeds={self.n_seeds}, got "
                f"{tuple(x.shape)}"
            )
        return vmap(self.functional(submodule), in_dims=(0, 0, None if shared else 0))(
            self.params, self.buffers, x
        )

    def seed_module(self, index: int) -> nn.Module:
        """A stand-alone module holding the parameters of seed ``index`` (a copy)."""
        import copy

        module = copy.deepcopy(self.template)
        module.load_state_dict(
            {k: v[index] for k, v in {**self.params, **self.buffers}.items()}
        )
        return module


def _batched_loss(
    model: StackedModel,
    loss_fn: Callable[[Forward, Any], Tensor],
    data_dims: int | None = 0,
) -> Callable[[dict, dict, Any], Tensor]:
    """(params, buffers, data) ↦ (S,) losses, seed i's loss ``loss_fn(forward_i,
    data_i)``; ``data_dims``: 0 when the data carry a leading seed axis, None when all
    seeds share them."""
    call = model.functional()

    def seed_loss(p: dict, b: dict, batch: Any) -> Tensor:
        return loss_fn(lambda x: call(p, b, x), batch)

    return vmap(seed_loss, in_dims=(0, 0, data_dims))


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


class Evaluation(NamedTuple):
    """The objective at the parameters W^(t) of step t, for every seed at once.

    losses: (S,) L_s(W_s^(t)) on the step's data, detached; grads: one gradient per
    trained tensor, in the order of ``params``, each (S, ...); quantities: per-step
    records {name: (S,)} (e.g. a gradient norm or the loss vectors' norms).
    """

    losses: Tensor
    grads: Sequence[Tensor]
    quantities: Mapping[str, Tensor] = {}


Stages = Sequence[tuple[float, int]]
"""A piecewise-constant schedule [(value, steps), …], stage by stage."""


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


class _Records:
    """(step, quantity, values (S,)) triples, turned into one long frame at the end;
    ``betas``: β at each step 0 … T, recorded as a column when given."""

    def __init__(self, seeds: Sequence[int], betas: Sequence[float] | None = None):
        self.seeds, self.betas, self.rows = list(seeds), betas, []

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

    Returns the long history: columns step (int64), beta (float64, β_t; only with a
    ``beta`` schedule), seed (int64), quantity, value (float64), one row per recorded
    (step, seed, quantity). In full batch, raises
    FloatingPointError at the first checkpoint after a loss or a quantity of an
    evaluation stopped being finite (the step size is too large), naming that step.
    The steps read nothing back from the device (no host synchronisation) except
    with a ``target`` (twice a step) and at the checkpoints.
    """
    n_steps = check_int("n_steps", n_steps, 0)
    if not isinstance(params, Mapping) or not params:
        raise ValueError(f"params must map names to trained tensors, got {params!r}")
    check_callable("gradient", gradient)
    if optimizer not in OPTIMIZERS:
        raise ValueError(
            f"optimizer must be one of {sorted(OPTIMIZERS)}, got {optimizer!r}"
        )
    weight_decay = check_positive("weight_decay", weight_decay, allow_zero=True)
    seeds = [check_int(f"seeds[{i}]", s, 0) for i, s in enumerate(seeds)]
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
    records = _Records(seeds, betas)
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


def _check_seed_axis(batch, n_seeds: int) -> None:
    """ValueError unless every tensor of ``batch`` (a pytree) has the leading seed axis
    S = ``n_seeds`` that the vmapped loss maps over."""
    from torch.utils._pytree import tree_leaves

    for leaf in tree_leaves(batch):
        if isinstance(leaf, Tensor) and (leaf.ndim == 0 or leaf.shape[0] != n_seeds):
            raise ValueError(
                f"every tensor of a batch needs a leading seed axis of size S = "
                f"{n_seeds}, one batch per seed; got shape {tuple(leaf.shape)} (for "
                "one model: a StackedModel with n_seeds=1 and batch[None])"
            )


def stacked_gradient(
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
    check_instance("model", model, StackedModel)
    check_callable("loss_fn", loss_fn)
    check_callable("data", data)
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
            quantities["grad_norm"] = combined_norm(member_norms(g) for g in grads)
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
    Records ``train_loss`` (mean minibatch loss since the last checkpoint) and every
    quantity of ``evaluate``. Each step's forward pass and loss run under
    :func:`~ccl_helpers.runtime.autocast` (bfloat16 when
    :func:`~ccl_helpers.runtime.precision` is ``"bf16"``); the losses are summed and
    back-propagated in at least float32, the parameters stay in their dtype, and
    ``evaluate`` runs outside autocast, in full precision. For full-batch gradient
    descent on a fixed training set, see :func:`gradient_descent`.
    """
    n_steps = check_int("n_steps", n_steps)
    eval_steps = check_steps("eval_steps", eval_steps, n_steps)
    check_callable("sample_batch", sample_batch)
    gradient = stacked_gradient(
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
    return sorted({0, n_steps, *(int(round(s)) for s in inner)})


TARGETS = ("loss", "grad_norm")
"""The quantities :func:`gradient_descent` can stop on (they are computed at every
step)."""


class Descent(NamedTuple):
    """The outcome of :func:`gradient_descent`.

    history: tidy (step, seed, quantity, value) records at the checkpoints;
    first_step: per seed (index), the first step t at which the target held (pandas
    ``Int64``, ``<NA>`` for a seed that never reached it; all ``<NA>`` without a
    target);
    n_steps: the number of gradient steps taken (the last recorded step).
    """

    history: pd.DataFrame
    first_step: pd.Series
    n_steps: int


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


def member_norms(tensor: Tensor) -> Tensor:
    """‖t_s‖_F, the Frobenius norm of each member s of a stacked tensor: (S, ...) →
    (S,). One reduction in the tensor's own memory order, with no copy (a gradient
    of a stacked layer is often not contiguous)."""
    check_tensor(
        "tensor (with a leading member axis S)", tensor, min_ndim=1, floating=True
    )
    return torch.linalg.vector_norm(tensor, dim=tuple(range(1, tensor.ndim)))


def combined_norm(norms: Iterable[Tensor]) -> Tensor:
    """(Σ_i ‖t_i‖²)^{1/2}, the norm of several tensors taken together, from their
    norms: each (S,) → (S,)."""
    return torch.linalg.vector_norm(torch.stack(list(norms)), dim=0)


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
    leaves = [v for v in torch.utils._pytree.tree_leaves(data) if isinstance(v, Tensor)]
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

    Raises FloatingPointError when a loss or gradient becomes non-finite (step size too
    large).
    """
    max_steps = check_int("max_steps", max_steps)
    check_instance("model", model, StackedModel)
    check_callable("loss_fn", loss_fn)
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
        stacked_gradient(model, loss_fn, lambda t: data, shared=shared, grad_norm=True),
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
    """The long history (step, seed or run, quantity, value, configuration columns) as
    one row per (step, seed, configuration), one column per quantity, rows in their
    order of first appearance; a quantity missing at a step (recorded only at the
    checkpoints) is NaN there."""
    check_frame("history", history, ["step", "quantity", "value"])
    keys = [c for c in history.columns if c not in ("quantity", "value")]
    table = history.pivot_table(
        index=keys, columns="quantity", values="value", sort=False
    )
    return table.reset_index().rename_axis(columns=None)
