"""Several seeds of one architecture as one stacked model, and its per-member norms.

:class:`StackedModel` (members from consecutive seeds, from any list of seeds with
:meth:`StackedModel.from_seeds`, a subset of them with :meth:`StackedModel.subset`);
:func:`member_norms` and :func:`combined_norm`, the norms of stacked tensors per
member."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .._checks import (
    check_callable,
    check_count,
    check_device,
    check_int,
    check_same_shape,
    check_tensor,
)
from ._loop import _check_seeds

Forward = Callable[[Tensor], Tensor]
"""An encoder or a forward pass: inputs (n, ...) → outputs (..., n, d)."""


#: inputs per chunk, summed over the members, of a call without gradients
_CHUNK_INPUTS = 1000

_MAX_MEMBERS = 100_000
"""The most members a stacked model holds. They are built one by one in a Python loop
(``make_module()`` after ``torch.manual_seed``) before any stacked tensor is allocated,
so a huge count (10⁷ seeds) would run for minutes to hours before the allocator fails;
10⁵ small modules build in seconds, and the book's largest stack holds a few hundred."""


def _check_members(count: int, names: str) -> None:
    """ValueError unless a stacked model of ``count`` members stays within
    :data:`_MAX_MEMBERS` (``names``: the arguments that give the count)."""
    check_count("members", count, _MAX_MEMBERS, names)


class StackedModel:
    """Independently initialised copies of one architecture, stacked (the members).

    Copy ``i`` is ``make_module()`` built right after ``torch.manual_seed(seed + i)``,
    so it equals the model a single run with that seed would start from
    (:meth:`from_seeds`: any list of seeds, repeats allowed). Parameters: dict name →
    (S, ...); ``seeds``: the seed of each member, the labels of the training history.
    At most 100,000 members (they are built one by one): more is a ValueError naming
    the count.
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
        _check_members(n_seeds, f"n_seeds={n_seeds:,}")
        device = check_device("device", device)
        self._build(make_module, list(range(seed, seed + n_seeds)), device)

    def _build(
        self,
        make_module: Callable[[], nn.Module],
        seeds: list[int],
        device: torch.device,
    ) -> None:
        copies = []
        for seed in seeds:
            torch.manual_seed(seed)
            copies.append(make_module().to(device))
        params, buffers = stack_module_state(copies)
        self.template = copies[0]
        self.params: dict[str, Tensor] = params
        self.buffers: dict[str, Tensor] = buffers
        self.n_seeds = len(seeds)
        self.seeds = seeds

    @classmethod
    def from_seeds(
        cls,
        make_module: Callable[[], nn.Module],
        seeds: Sequence[int],
        device: torch.device | str = "cpu",
    ) -> StackedModel:
        """Member i starts from the initialisation of seed ``seeds[i]``
        (``make_module()`` right after ``torch.manual_seed(seeds[i])``, as a single run
        with that seed): members given one seed start equal, so configurations can be
        paired by seed. Its ``seeds`` are ``seeds``."""
        check_callable("make_module", make_module)
        if isinstance(seeds, Sequence):  # the count, before the seeds one by one
            _check_members(len(seeds), f"len(seeds)={len(seeds):,}")
        seeds = _check_seeds("seeds", seeds)
        device = check_device("device", device)
        model = cls.__new__(cls)
        model._build(make_module, seeds, device)
        return model

    @classmethod
    def tiled(
        cls,
        make_module: Callable[[], nn.Module],
        n_seeds: int,
        n_configs: int,
        device: torch.device | str = "cpu",
    ) -> StackedModel:
        """:meth:`from_seeds` of ``n_configs × n_seeds`` copies, config-major: copy
        ``c · n_seeds + s`` starts from seed ``s``'s initialisation, so the
        configurations share their starts."""
        check_callable("make_module", make_module)
        n_seeds = check_int("n_seeds", n_seeds)
        n_configs = check_int("n_configs", n_configs)
        _check_members(
            n_seeds * n_configs, f"n_seeds={n_seeds:,}, n_configs={n_configs:,}"
        )
        return cls.from_seeds(make_module, list(range(n_seeds)) * n_configs, device)

    def subset(self, indices: Sequence[int]) -> StackedModel:
        """The members ``indices`` (in that order) as a stacked model of their own: a
        copy of their parameters and buffers as they are now, with their seeds (a
        model x ↦ (len(indices), n, d) that evaluates only those)."""
        if isinstance(indices, Sequence):
            _check_members(len(indices), f"len(indices)={len(indices):,}")
        indices = _check_seeds("indices", indices)
        if max(indices) >= self.n_seeds:
            raise ValueError(
                f"indices must be model indices in 0..{self.n_seeds - 1}, got {indices}"
            )
        device = next(iter(self.params.values())).device
        index = torch.tensor(indices, dtype=torch.long, device=device)
        chosen = self.__class__.__new__(self.__class__)
        chosen.template = self.template
        chosen.params = {
            k: v.detach()[index].requires_grad_(v.requires_grad)
            for k, v in self.params.items()
        }
        chosen.buffers = {k: v[index] for k, v in self.buffers.items()}
        chosen.n_seeds = len(indices)
        chosen.seeds = [self.seeds[i] for i in indices]
        return chosen

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
        out); otherwise x (S, n, ...) holds one input batch per seed.

        Without gradients, a shared x goes through in chunks of ⌈1000 / S⌉ inputs: the
        same result, with each chunk's activations under 32 MB for the book's conv net
        at 20 seeds. Blocks that small the allocator can keep for reuse (glibc's
        ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``, set by the
        Makefile), where larger ones are mapped and zeroed by the kernel anew at
        every call."""
        if not shared and x.shape[0] != self.n_seeds:
            raise ValueError(
                f"x must have leading dimension n_seeds={self.n_seeds}, got "
                f"{tuple(x.shape)}"
            )
        call = vmap(self.functional(submodule), in_dims=(0, 0, None if shared else 0))
        chunk = -(-_CHUNK_INPUTS // self.n_seeds)
        if not shared or torch.is_grad_enabled() or x.shape[0] <= chunk:
            return call(self.params, self.buffers, x)
        return torch.cat(
            [
                call(self.params, self.buffers, x[start : start + chunk])
                for start in range(0, x.shape[0], chunk)
            ],
            dim=1,
        )

    def seed_module(self, index: int) -> nn.Module:
        """A stand-alone module holding the parameters of seed ``index`` (a copy),
        ``index`` in 0..n_seeds − 1 (no negative index)."""
        index = check_int("index", index, 0, self.n_seeds - 1)
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
    norms: each (S,) → (S,). Shapes and dtypes checked, values not."""
    norms = list(norms)
    if not norms:
        raise ValueError("norms must hold at least one tensor of member norms (S,)")
    for i, norm in enumerate(norms):
        check_tensor(f"norms[{i}]", norm, ndim=1, floating=True)
        check_same_shape(f"norms[{i}]", norm, "norms[0]", norms[0])
    return torch.linalg.vector_norm(torch.stack(list(norms)), dim=0)
