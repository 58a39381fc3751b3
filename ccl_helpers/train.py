"""Training several seeds at once: parameters stacked along a leading seed axis, forward
passes vectorised with ``torch.func.vmap``, histories recorded as tidy data frames.

Because the seeds' losses are summed and the optimiser (Adam or SGD) acts elementwise,
each seed follows exactly the trajectory it would follow if trained alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .runtime import progress

Forward = Callable[[Tensor], Tensor]


class StackedModel:
    """``n_seeds`` independently initialised copies of one architecture.

    Copy ``i`` is ``make_module()`` built right after ``torch.manual_seed(seed + i)``, so it equals
    the model a single run with that seed would start from. Parameters: dict name → (S, ...).
    """

    def __init__(self, make_module: Callable[[], nn.Module], n_seeds: int, seed: int = 0,
                 device: torch.device | str = "cpu"):
        if n_seeds < 1:
            raise ValueError(f"n_seeds must be ≥ 1, got {n_seeds}")
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

    def functional(self, submodule: str | None = None) -> Callable[[dict, dict, Tensor], Tensor]:
        """The per-seed function (params, buffers, x) ↦ module(x) (or the named submodule's)."""
        module = self.template.get_submodule(submodule) if submodule else self.template
        prefix = f"{submodule}." if submodule else ""

        def call(params: dict, buffers: dict, x: Tensor) -> Tensor:
            own = {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}
            own_buffers = {k[len(prefix):]: v for k, v in buffers.items() if k.startswith(prefix)}
            return functional_call(module, (own, own_buffers), (x,))

        return call

    def __call__(self, x: Tensor, *, shared: bool = True, submodule: str | None = None) -> Tensor:
        """Evaluate every seed. ``shared``: x (n, ...) is fed to all seeds → (S, n, out);
        otherwise x (S, n, ...) holds one input batch per seed."""
        if not shared and x.shape[0] != self.n_seeds:
            raise ValueError(f"x must have leading dimension n_seeds={self.n_seeds}, got {tuple(x.shape)}")
        return vmap(self.functional(submodule), in_dims=(0, 0, None if shared else 0))(self.params, self.buffers, x)

    def seed_module(self, index: int) -> nn.Module:
        """A stand-alone module holding the parameters of seed ``index`` (a copy)."""
        import copy

        module = copy.deepcopy(self.template)
        module.load_state_dict({k: v[index] for k, v in {**self.params, **self.buffers}.items()})
        return module


def train(model: StackedModel, loss_fn: Callable[[Forward, Any], Tensor], sample_batch: Callable[[int], Any],
          n_steps: int, *, lr: float = 1e-3, optimizer: str = "adam",
          evaluate: Callable[[StackedModel], dict[str, Tensor]] | None = None,
          eval_steps: Iterable[int] = (), desc: str = "training") -> pd.DataFrame:
    """Train all seeds of ``model`` in place; return the tidy history (step, seed, quantity, value).

    Args:
        loss_fn: (forward, batch) ↦ scalar loss of one seed, ``forward`` being that seed's model.
        sample_batch: step ↦ a batch (any pytree of tensors) with leading dimension S = n_seeds.
        evaluate: model ↦ {quantity: (S,) tensor}, called at step 0, at ``eval_steps`` and at the end.
        optimizer: ``"adam"`` or ``"sgd"`` (plain gradient descent with step size ``lr``).
    Records ``train_loss`` (mean minibatch loss since the last checkpoint) and every quantity of ``evaluate``.
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    optimizers = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}
    if optimizer not in optimizers:
        raise ValueError(f"optimizer must be one of {sorted(optimizers)}, got {optimizer!r}")
    checkpoints = sorted({0, n_steps, *(s for s in eval_steps if 0 <= s <= n_steps)})
    params = list(model.params.values())
    opt = optimizers[optimizer](params, lr=lr)
    call = model.functional()

    def seed_loss(p: dict, b: dict, batch: Any) -> Tensor:
        return loss_fn(lambda x: call(p, b, x), batch)

    batched_loss = vmap(seed_loss, in_dims=(0, 0, 0))
    records: list[pd.DataFrame] = []
    running = torch.zeros(model.n_seeds, device=params[0].device)
    since = 0

    def record(step: int) -> None:
        nonlocal running, since
        quantities = {"train_loss": running / since} if since else {}
        if evaluate is not None:
            with torch.no_grad():
                quantities.update(evaluate(model))
        for name, values in quantities.items():
            records.append(pd.DataFrame({"step": step, "seed": model.seeds, "quantity": name,
                                         "value": values.detach().double().cpu().numpy()}))
        running, since = torch.zeros_like(running), 0

    record(0)
    for step in progress(range(1, n_steps + 1), desc=desc):
        opt.zero_grad(set_to_none=True)
        losses = batched_loss(model.params, model.buffers, sample_batch(step))
        losses.sum().backward()
        opt.step()
        running, since = running + losses.detach(), since + 1
        if step in checkpoints:
            record(step)
    return pd.concat(records, ignore_index=True)


def wide(history: pd.DataFrame) -> pd.DataFrame:
    """One row per (step, seed), one column per quantity."""
    return history.pivot_table(index=["step", "seed"], columns="quantity", values="value").reset_index()
