"""Training several seeds at once: parameters stacked along a leading seed axis, forward
passes vectorised with ``torch.func.vmap``, histories recorded as tidy data frames.

Because the seeds' losses are summed and the optimiser (Adam or SGD) acts elementwise,
each seed follows exactly the trajectory it would follow if trained alone.

:func:`train` runs minibatch training on freshly sampled batches; :func:`gradient_descent` runs
full-batch gradient descent on a fixed training set (the setting of the convergence theorems),
recording the loss, the gradient norm and the weight movement from initialisation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .checks import check_int, check_positive
from .losses._reduction import at_least_float32
from .runtime import autocast, progress

Forward = Callable[[Tensor], Tensor]

OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}
"""The optimisers :func:`train` offers by name (``"sgd"``: plain gradient descent with step size ``lr``)."""


class StackedModel:
    """``n_seeds`` independently initialised copies of one architecture.

    Copy ``i`` is ``make_module()`` built right after ``torch.manual_seed(seed + i)``, so it equals
    the model a single run with that seed would start from. Parameters: dict name → (S, ...).
    """

    def __init__(
        self,
        make_module: Callable[[], nn.Module],
        n_seeds: int,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ):
        n_seeds = check_int("n_seeds", n_seeds)
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
        """The per-seed function (params, buffers, x) ↦ module(x) (or the named submodule's)."""
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
        """Evaluate every seed. ``shared``: x (n, ...) is fed to all seeds → (S, n, out);
        otherwise x (S, n, ...) holds one input batch per seed."""
        if not shared and x.shape[0] != self.n_seeds:
            raise ValueError(
                f"x must have leading dimension n_seeds={self.n_seeds}, got {tuple(x.shape)}"
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
    """(params, buffers, data) ↦ (S,) losses, seed i's loss ``loss_fn(forward_i, data_i)``; ``data_dims``:
    0 when the data carry a leading seed axis, None when all seeds share them."""
    call = model.functional()

    def seed_loss(p: dict, b: dict, batch: Any) -> Tensor:
        return loss_fn(lambda x: call(p, b, x), batch)

    return vmap(seed_loss, in_dims=(0, 0, data_dims))


def _tidy(
    step: int, seeds: list[int], quantities: dict[str, Tensor]
) -> list[pd.DataFrame]:
    """The rows (step, seed, quantity, value) of one checkpoint, values as float64 on the CPU."""
    return [
        pd.DataFrame(
            {
                "step": step,
                "seed": seeds,
                "quantity": name,
                "value": values.detach().double().cpu().numpy(),
            }
        )
        for name, values in quantities.items()
    ]


def _evaluate(
    model: StackedModel, evaluate: Callable[[StackedModel], dict[str, Tensor]] | None
) -> dict[str, Tensor]:
    if evaluate is None:
        return {}
    with torch.no_grad():
        return dict(evaluate(model))


def train(
    model: StackedModel,
    loss_fn: Callable[[Forward, Any], Tensor],
    sample_batch: Callable[[int], Any],
    n_steps: int,
    *,
    lr: float = 1e-3,
    optimizer: str = "adam",
    evaluate: Callable[[StackedModel], dict[str, Tensor]] | None = None,
    eval_steps: Iterable[int] = (),
    desc: str = "training",
) -> pd.DataFrame:
    """Train all seeds of ``model`` in place; return the tidy history (step, seed, quantity, value).

    Args:
        loss_fn: (forward, batch) ↦ scalar loss of one seed, ``forward`` being that seed's model.
        sample_batch: step ↦ a batch (any pytree of tensors) with leading dimension S = n_seeds.
        evaluate: model ↦ {quantity: (S,) tensor}, called at step 0, at ``eval_steps`` and at the end.
        optimizer: ``"adam"`` or ``"sgd"`` (plain gradient descent with step size ``lr``).
    Records ``train_loss`` (mean minibatch loss since the last checkpoint) and every quantity of ``evaluate``.
    Each step's forward pass and loss run under :func:`~ccl_helpers.runtime.autocast` (bfloat16 when
    :func:`~ccl_helpers.runtime.precision` is ``"bf16"``); the losses are summed and back-propagated in at least
    float32, the parameters stay in their dtype, and ``evaluate`` runs outside autocast, in full precision.
    For full-batch gradient descent on a fixed training set, see :func:`gradient_descent`.
    """
    n_steps = check_int("n_steps", n_steps)
    check_positive("lr", lr)
    if optimizer not in OPTIMIZERS:
        raise ValueError(
            f"optimizer must be one of {sorted(OPTIMIZERS)}, got {optimizer!r}"
        )
    checkpoints = sorted({0, n_steps, *(s for s in eval_steps if 0 <= s <= n_steps)})
    params = list(model.params.values())
    opt = OPTIMIZERS[optimizer](params, lr=lr)
    batched_loss = _batched_loss(model, loss_fn)
    records: list[pd.DataFrame] = []
    running = torch.zeros(model.n_seeds, device=params[0].device)
    since = 0
    mixed_precision = autocast(params[0].device)

    def record(step: int) -> None:
        nonlocal running, since
        quantities = {"train_loss": running / since} if since else {}
        quantities.update(_evaluate(model, evaluate))
        records.extend(_tidy(step, model.seeds, quantities))
        running, since = torch.zeros_like(running), 0

    record(0)
    for step in progress(range(1, n_steps + 1), desc=desc):
        opt.zero_grad(set_to_none=True)
        batch = sample_batch(step)
        with mixed_precision:
            losses = batched_loss(model.params, model.buffers, batch)
        losses = at_least_float32(losses)
        losses.sum().backward()
        opt.step()
        running, since = running + losses.detach(), since + 1
        if step in checkpoints:
            record(step)
    return pd.concat(records, ignore_index=True)


def log_spaced_steps(n_steps: int, n_points: int) -> list[int]:
    """About ``n_points`` integer steps in [0, n_steps], log-spaced: 0, then the distinct roundings of
    geomspace(1, n_steps, n_points − 1); always contains 0, 1 and n_steps (for n_points ≥ 3)."""
    n_steps = check_int("n_steps", n_steps)
    n_points = check_int("n_points", n_points)
    inner = (
        np.geomspace(1, n_steps, max(n_points - 1, 1)) if n_points > 1 else np.array([])
    )
    return sorted({0, n_steps, *(int(round(s)) for s in inner)})


TARGETS = ("loss", "grad_norm")
"""The quantities :func:`gradient_descent` can stop on (they are computed at every step)."""


class Descent(NamedTuple):
    """The outcome of :func:`gradient_descent`.

    history: tidy (step, seed, quantity, value) records at the checkpoints;
    first_step: per seed (index), the first step t at which the target held (pandas ``Int64``,
    ``<NA>`` for a seed that never reached it; all ``<NA>`` without a target);
    n_steps: the number of gradient steps taken (the last recorded step).
    """

    history: pd.DataFrame
    first_step: pd.Series
    n_steps: int


def _prefix_values(
    names: Iterable[str], values: Mapping[str, Any], argument: str
) -> dict[str, Any]:
    """For each parameter name, the value of the longest key of ``values`` that prefixes it."""
    chosen = {}
    for name in names:
        keys = [k for k in values if name.startswith(k)]
        if not keys:
            raise ValueError(
                f"{argument} must have a key prefixing every parameter name; none for {name!r} "
                f"(keys {sorted(values)})"
            )
        chosen[name] = values[max(keys, key=len)]
    return chosen


def _movement(
    params: dict[str, Tensor],
    initial: dict[str, Tensor],
    initial_sq: dict[str, Tensor],
    groups: Mapping[str, str],
) -> dict[str, Tensor]:
    """movement/<name> = ‖W^(t) − W^(0)‖_F and relative_movement/<name> = that / ‖W^(0)‖_F, per seed (S,),
    for every parameter, every group (name ↦ prefix) and in total (``movement``, ``relative_movement``)."""
    squared = {
        name: (p.detach() - initial[name]).flatten(1).square().sum(1)
        for name, p in params.items()
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
        moved = torch.stack([squared[n] for n in members]).sum(0).sqrt()
        size = torch.stack([initial_sq[n] for n in members]).sum(0).sqrt()
        suffix = f"/{label}" if label else ""
        out[f"movement{suffix}"] = moved
        if bool((size > 0).all()):
            out[f"relative_movement{suffix}"] = moved / size
    return out


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
    """Full-batch gradient descent on a fixed training set, all seeds of ``model`` at once (in place).

    Every seed s follows W_s^(t+1) = W_s^(t) − lr · ∇L̂_s(W_s^(t)), t = 0, 1, …, exactly its own
    single-seed trajectory (the seeds' losses are summed, so the gradients do not mix). Only
    ``model.params`` move; buffers (e.g. :class:`~ccl_helpers.models.DeepReLU`'s fixed A, B) stay.

    Args:
        loss_fn: (forward, data) ↦ scalar L̂ of one seed on the whole training set.
        data: the training set (any pytree of tensors), shared by all seeds; with ``shared=False`` it has a
            leading seed axis S.
        max_steps: the largest number of gradient steps T (≥ 1).
        lr: the step size, or a mapping parameter-name prefix ↦ step size (longest prefix wins; e.g.
            {"query.": η, "key.": γ} for Wen's Algorithm 1); every parameter needs one.
        target: (quantity, ε) with quantity in :data:`TARGETS`: seed s reaches it at the first step t with
            quantity_s(W^(t)) ≤ ε. With ``stop_at_target``, descent stops once every seed has reached it.
        checkpoints: an int k (≈ k log-spaced steps, :func:`log_spaced_steps`) or explicit steps. Step 0, the
            last step and every step at which some seed first reaches the target are recorded too.
        evaluate: model ↦ {quantity: (S,) tensor}, called at every checkpoint under ``torch.no_grad()``
            (wrap its body in ``torch.enable_grad()`` to differentiate, e.g. for loss vectors ∂ℓ/∂z).
        groups: name ↦ parameter-name prefix; movement is also recorded per group (e.g. {"W": "query."}).

    Recorded at each checkpoint t, per seed, all at the parameters W^(t) (before step t + 1):
        ``loss`` L̂(W^(t)); ``grad_norm`` ‖∇L̂(W^(t))‖₂ over all trained parameters;
        ``movement/<name>`` ‖W^(t) − W^(0)‖_F and ``relative_movement/<name>`` (divided by ‖W^(0)‖_F,
        omitted when ‖W^(0)‖_F = 0) per parameter, per group, and in total (``movement``,
        ``relative_movement``, over the concatenation of all trained parameters); and ``evaluate``'s.

    Raises FloatingPointError when a loss or gradient becomes non-finite (step size too large).
    """
    max_steps = check_int("max_steps", max_steps)
    names = list(model.params)
    if isinstance(lr, Mapping):
        rates = {
            name: check_positive(f"lr[{name!r}]", value)
            for name, value in _prefix_values(names, lr, "lr").items()
        }
    else:
        rates = dict.fromkeys(names, check_positive("lr", lr))
    if target is not None:
        if not (
            isinstance(target, tuple) and len(target) == 2 and target[0] in TARGETS
        ):
            raise ValueError(
                f"target must be (quantity, threshold) with quantity in {TARGETS}, got {target!r}"
            )
        if not math.isfinite(float(target[1])):
            raise ValueError(f"target threshold must be finite, got {target[1]!r}")
    if isinstance(checkpoints, int):
        schedule = set(log_spaced_steps(max_steps, checkpoints))
    else:
        schedule = {int(s) for s in checkpoints if 0 <= int(s) <= max_steps} | {0}
    groups = dict(groups or {})
    for group, prefix in groups.items():
        if not any(name.startswith(prefix) for name in names):
            raise ValueError(
                f"groups[{group!r}] = {prefix!r} prefixes no parameter name ({names})"
            )

    params = model.params
    initial = {name: p.detach().clone() for name, p in params.items()}
    initial_sq = {name: p.flatten(1).square().sum(1) for name, p in initial.items()}
    batched_loss = _batched_loss(model, loss_fn, None if shared else 0)
    device = next(iter(params.values())).device
    first = torch.full((model.n_seeds,), -1, dtype=torch.long, device=device)
    records: list[pd.DataFrame] = []
    step = 0
    bar = progress(range(max_steps + 1), desc=desc)
    try:
        for step in bar:
            losses = batched_loss(params, model.buffers, data)
            grads = torch.autograd.grad(losses.sum(), [params[name] for name in names])
            losses = losses.detach()
            grad_norm = (
                torch.stack([g.flatten(1).square().sum(1) for g in grads]).sum(0).sqrt()
            )
            finite = torch.isfinite(losses) & torch.isfinite(grad_norm)
            if not bool(finite.all()):
                bad = [seed for seed, ok in zip(model.seeds, finite.tolist()) if not ok]
                raise FloatingPointError(
                    f"the loss or its gradient is not finite at step {step} for seeds {bad}; "
                    f"lower lr"
                )
            newly = False
            if target is not None:
                value = losses if target[0] == "loss" else grad_norm
                hit = (value <= float(target[1])) & (first < 0)
                newly = bool(hit.any())
                first = torch.where(hit, step, first)
            done = target is not None and stop_at_target and bool((first >= 0).all())
            last = done or step == max_steps
            if step in schedule or newly or last:
                quantities = {
                    "loss": losses,
                    "grad_norm": grad_norm,
                    **_movement(params, initial, initial_sq, groups),
                    **_evaluate(model, evaluate),
                }
                records.extend(_tidy(step, model.seeds, quantities))
            if last:
                break
            with torch.no_grad():
                for name, g in zip(names, grads):
                    params[name].sub_(rates[name] * g)
    finally:
        getattr(bar, "close", lambda: None)()
    first_step = pd.Series(
        [None if s < 0 else s for s in first.tolist()],
        index=pd.Index(model.seeds, name="seed"),
        dtype="Int64",
        name="first_step",
    )
    return Descent(pd.concat(records, ignore_index=True), first_step, step)


def wide(history: pd.DataFrame) -> pd.DataFrame:
    """One row per (step, seed), one column per quantity."""
    return history.pivot_table(
        index=["step", "seed"], columns="quantity", values="value"
    ).reset_index()
