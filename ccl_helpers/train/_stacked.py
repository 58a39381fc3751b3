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

from ..checks import (
    HUGE,
    BadValue,
    Device,
    Estimate,
    Function,
    Int,
    Sized,
    check_int,
    check_tensor,
    checked,
)
from ._loop import Seeds

Forward = Callable[[Tensor], Tensor]
"""An encoder or a forward pass: inputs (n, ...) → outputs (..., n, d)."""


class _MemberIndex(Int):
    """The rule of a member's index: an integer in 0..n_seeds − 1 of the model (the
    call's ``self``); no negative index (−1 is not "the last")."""

    def __init__(self):
        super().__init__(0)

    def check(self, name, value, arguments):
        return check_int(name, value, 0, arguments["self"].n_seeds - 1)

    def bad_values(self, valid):
        # no stacked model holds 10⁹ members: out of range for every model
        return [*super().bad_values(valid), BadValue("out of range", 10**9)]


def member_bytes(make_module: Callable[[], nn.Module]) -> int | None:
    """The bytes of one member's parameters and buffers: ``make_module()`` built on
    the meta device (shapes and dtypes only: nothing is allocated, no random number is
    drawn, the random state is kept); ``None`` for a module that cannot be built
    there."""
    try:
        with torch.random.fork_rng(devices=[]), torch.device("meta"):
            module = make_module()
        tensors = [*module.parameters(), *module.buffers()]
    except Exception:  # noqa: BLE001 - no estimate; the build itself says what fails
        return None
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def _members_bytes(arguments: dict) -> int | None:
    """The bytes of the stacked members: n_seeds (× n_configs) × one member's."""
    one = member_bytes(arguments["make_module"])
    if one is None:
        return None
    return arguments["n_seeds"] * arguments.get("n_configs", 1) * one


def _members_bytes(arguments: dict) -> int | None:
    """The bytes of the stacked members: n_seeds (× n_configs) × one member's."""
    one = member_bytes(arguments["make_module"])
    if one is None:
        return None
    return arguments["n_seeds"] * arguments.get("n_configs", 1) * one


def _seeded_members_bytes(arguments: dict) -> int | None:
    """The bytes of the members :meth:`StackedModel.from_seeds` builds, one per seed,
    from its unchecked arguments (``None`` where they cannot be read)."""
    try:
        n_seeds = len(arguments["seeds"])
    except TypeError:
        return None
    one = member_bytes(arguments.get("make_module"))
    return None if one is None else n_seeds * one


#: inputs per chunk, summed over the members, of a call without gradients
_CHUNK_INPUTS = 1000

MEMBERS = Estimate("train.StackedModel's members", ("n_seeds",), _members_bytes)
"""The memory of a stacked model's members (built one by one: also its time)."""

TILED_MEMBERS = Estimate(
    "train.StackedModel.tiled's members", ("n_seeds", "n_configs"), _members_bytes
)
"""The memory of :meth:`StackedModel.tiled`'s ``n_configs × n_seeds`` members."""

SEEDED_MEMBERS = Estimate(
    "train.StackedModel.from_seeds's members",
    ("seeds",),
    _seeded_members_bytes,
    early=True,  # before the seeds are checked one by one
)
"""The memory of :meth:`StackedModel.from_seeds`'s members, one per seed."""


class StackedModel:
    """Independently initialised copies of one architecture, stacked (the members).

    Copy ``i`` is ``make_module()`` built right after ``torch.manual_seed(seed + i)``,
    so it equals the model a single run with that seed would start from
    (:meth:`from_seeds`: any list of seeds, repeats allowed). Parameters: dict name →
    (S, ...); ``seeds``: the seed of each member, the labels of the training history.
    """

    @checked(make_module=Function(), n_seeds=Sized(Int(), MEMBERS), device=Device())
    def __init__(
        self,
        make_module: Callable[[], nn.Module],
        n_seeds: int,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ):
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
    @checked(
        make_module=Function(),
        seeds=Sized(Seeds(), SEEDED_MEMBERS, make_huge=lambda valid: range(HUGE)),
        device=Device(),
    )
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
        model = cls.__new__(cls)
        model._build(make_module, seeds, device)
        return model

    @classmethod
    @checked(
        make_module=Function(),
        n_seeds=Sized(Int(), TILED_MEMBERS),
        n_configs=Sized(Int(), TILED_MEMBERS),
    )
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
        seeds = list(range(n_seeds))
        return cls.from_seeds(make_module, seeds * n_configs, device)

    @checked(indices=Seeds())
    def subset(self, indices: Sequence[int]) -> StackedModel:
        """The members ``indices`` (in that order) as a stacked model of their own: a
        copy of their parameters and buffers as they are now, with their seeds (a
        model x ↦ (len(indices), n, d) that evaluates only those)."""
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

    @checked(index=_MemberIndex())
    def seed_module(self, index: int) -> nn.Module:
        """A stand-alone module holding the parameters of seed ``index`` (a copy),
        ``index`` in 0..n_seeds − 1 (no negative index)."""
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
    norms: each (S,) → (S,)."""
    return torch.linalg.vector_norm(torch.stack(list(norms)), dim=0)
