r"""Contrastive losses across processes: gradient-keeping gathers, global NT-Xent, DDP.

The gather keeps gradients; NT-Xent runs against the global batch; a small
DistributedDataParallel (DDP) training path serves ``torchrun``.

With data parallelism over :math:`W` ranks, rank :math:`r` holds a local batch
:math:`x_r` of :math:`b` samples and their embeddings :math:`z_r = f(x_r)`. A
contrastive loss wants each anchor to be contrasted with the negatives of the *global*
batch :math:`Z = (z_0; \dots; z_{W-1})` of :math:`B = W b` samples, as on one device.
Two things go wrong with plain ``torch.distributed.all_gather``:

1. the tensors it fills carry no autograd history, so the loss does not reach the other
   ranks' encoders through the negatives (at best, a rank that writes its own
   :math:`z_r` back into its slot gets the gradient of its own anchors only, a biased
   gradient);
2. the gradient of a rank's loss with respect to *another* rank's embeddings is never
   sent back.

:func:`gather_with_grad` fixes both: its forward is ``all_gather``; its backward
all-reduces (sums) the incoming gradients over the ranks and returns each rank the slice
of its own input. With :func:`nt_xent_loss_distributed` the mean of the ranks' losses
equals :func:`ccl_helpers.losses.nt_xent_loss` on the concatenated batch, and, after DDP
averages the parameter gradients, so do the gradients (tested against the single-process
run in ``tests/test_distributed.py``).

Typical use under ``torchrun --nproc_per_node=G script.py``::

    from ccl_helpers import distributed

    # NCCL on GPUs, gloo on CPUs; no-op without torchrun
    device = distributed.init_from_env()

    def views(step):
        # (B, ...) each, drawn with a seed shared by all ranks
        x1, x2 = two_views_of_the_global_batch(step)
        return distributed.local_shard(x1), distributed.local_shard(x2)

    encoder, history = distributed.ddp_train(
        make_encoder(), views, n_steps, temperature=0.5, device=device
    )
    distributed.cleanup()

For a loop of one's own, :func:`nt_xent_loss_distributed` is the loss of a model
wrapped in ``torch.nn.parallel.DistributedDataParallel``.

``python -m ccl_helpers.launch`` is such a script for Chapter 5's encoder (see the
README).

Every function works unchanged in a single process (``torch.distributed`` not
initialised, or world size 1): then the gather is the identity and the loss is
``nt_xent_loss``.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable

import pandas as pd
import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.distributed import _functional_collectives as functional_collectives

from . import runtime
from ._checks import (
    check_callable,
    check_choice,
    check_device,
    check_instance,
    check_int,
    check_positive,
    check_same_shape,
    check_tensor,
)
from ._precision import result_dtype
from .losses import REDUCTIONS, nt_xent_per_anchor, reduce
from .train import Evaluation, loop

MAX_DIMS = 16
"""The most dimensions a tensor given to :func:`gather_with_grad` may have (its shape is
checked across ranks with a fixed-size message)."""

__all__ = [
    "MAX_DIMS",
    "cleanup",
    "ddp_train",
    "gather_with_grad",
    "init_from_env",
    "local_shard",
    "nt_xent_loss_distributed",
    "rank",
    "world_size",
]


# --------------------------------------------------------------------------------------
# Small helpers


def _is_distributed() -> bool:
    """True when ``torch.distributed`` is available and its default process group is
    initialised."""
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    """This process's rank in the default group, 0 when not distributed."""
    return dist.get_rank() if _is_distributed() else 0


def world_size() -> int:
    """The number of processes :math:`W` in the default group, 1 when not
    distributed."""
    return dist.get_world_size() if _is_distributed() else 1


def _check_dim(name: str, dim, tensor_name: str, tensor: Tensor) -> int:
    """``dim`` as an int in −ndim … ndim − 1 of ``tensor`` (negative counts from the
    end), which must have 1 to :data:`MAX_DIMS` dimensions; else ValueError naming
    ``tensor_name`` or ``name``. The private checker of the dimension arguments."""
    if tensor.ndim > MAX_DIMS:
        raise ValueError(
            f"{tensor_name} must have 1 to {MAX_DIMS} dimensions, got "
            f"{tuple(tensor.shape)}"
        )
    return check_int(name, dim, -tensor.ndim, tensor.ndim - 1)


def _check_same_shape_on_all_ranks(tensor: Tensor) -> None:
    """Raise ``ValueError`` (on every rank alike) unless every rank holds a tensor of
    this shape.

    ``all_gather`` needs equal shapes; a mismatch (typically a smaller last batch) would
    otherwise fail deep inside the backend, or hang it.
    """
    message = torch.full((MAX_DIMS + 1,), -1, dtype=torch.long, device=tensor.device)
    message[0] = tensor.ndim
    message[1 : tensor.ndim + 1] = torch.tensor(tensor.shape, dtype=torch.long)
    messages = [torch.empty_like(message) for _ in range(world_size())]
    dist.all_gather(messages, message)
    shapes = [tuple(m[1 : int(m[0]) + 1].tolist()) for m in messages]
    if any(shape != shapes[0] for shape in shapes):
        raise ValueError(
            "tensor must have the same shape on every rank (use "
            "drop_last=True or pad the "
            f"last batch), got shapes by rank {shapes}"
        )


def local_shard(batch: Tensor, dim: int = 0) -> Tensor:
    r"""This rank's shard of a global batch: block :math:`r` of :math:`W` equal
    contiguous blocks along ``dim``.

    When every rank draws the same global batch of :math:`B` samples (a generator seeded
    alike on all ranks), the shards partition it in rank order, the order in which
    :func:`gather_with_grad` reassembles it; so the training run is that of one process
    on the global batch, for any :math:`W` dividing :math:`B` (up to rounding).

    Args:
        batch: the global batch, shape ``(..., B, ...)`` with :math:`B` at ``dim``, 1 to
            :data:`MAX_DIMS` dimensions; :math:`B` a multiple of the world size
            :math:`W`.
        dim: the batch dimension (default 0).

    Returns:
        Rows :math:`r b, \dots, r b + b - 1` along ``dim``, :math:`b = B / W`, as a view
        (the whole batch when not distributed).
    """
    check_tensor("batch", batch, min_ndim=1)
    dim = _check_dim("dim", dim, "batch", batch)
    dim %= batch.ndim
    total, n_ranks = batch.shape[dim], world_size()
    if total % n_ranks:
        raise ValueError(
            f"batch must split into world_size = {n_ranks} equal shards "
            f"along dim {dim}, got "
            f"{total} samples (shape {tuple(batch.shape)}); make the "
            "global batch a multiple of "
            f"{n_ranks}"
        )
    local = total // n_ranks
    return batch.narrow(dim, rank() * local, local)


# --------------------------------------------------------------------------------------
# The gather


def gather_with_grad(tensor: Tensor, dim: int = 0) -> Tensor:
    r"""Concatenate every rank's ``tensor`` along ``dim``, keeping gradients to every
    rank's input.

    Forward: rank :math:`q` holds :math:`x_q`; every rank gets :math:`Y = (x_0; x_1;
    \dots; x_{W-1})` (``torch.cat`` along ``dim``, in rank order).

    Backward: each rank's loss :math:`L_r` depends, through :math:`Y`, on *all* ranks'
    inputs, so the gradient of the objective :math:`\sum_r L_r` with respect to rank
    :math:`q`'s input is

    .. math::
        \frac{\partial \sum_r L_r}{\partial x_q}
            = \Bigl(\sum_{r=0}^{W-1} G_r\Bigr)_{[q]},
        \qquad G_r = \frac{\partial L_r}{\partial Y} \text{ (held by rank } r\text{)},

    the :math:`q`-th block of the sum over ranks of the incoming gradients: the backward
    all-reduces (sums) :math:`G_r` and returns the local slice, a reduce-scatter: the
    backward of torch's functional all-gather (``all_gather_single``). (Plain
    ``torch.distributed.all_gather`` returns tensors without autograd history, and so
    drops every term :math:`r \ne q`.) This is the gradient of the *sum* of the ranks'
    losses; DistributedDataParallel then *averages* the parameter gradients over the
    ranks, so the parameters get the gradient of the mean of the ranks' losses, the
    single-process gradient when that mean is the single-process loss.

    The backward is a collective: every rank must call ``backward`` through the gather,
    in the same order (as DDP training does).

    Args:
        tensor: :math:`x_q`, any shape with 1 to :data:`MAX_DIMS` dimensions; the same
            shape on every rank (checked: ``ValueError`` otherwise).
        dim: the dimension to concatenate along (default 0, the batch dimension).

    Returns:
        :math:`Y`, shape ``tensor.shape`` with ``dim`` multiplied by :math:`W`;
        ``tensor`` itself when ``torch.distributed`` is not initialised or :math:`W =
        1`.
    """
    check_tensor("tensor", tensor, min_ndim=1)
    dim = _check_dim("dim", dim, "tensor", tensor)
    dim %= tensor.ndim
    if world_size() == 1:
        return tensor
    _check_same_shape_on_all_ranks(tensor)
    # torch's functional collective with autograd (its backward is the reduce-scatter
    # above): all_gather_single from torch 2.13, all_gather_tensor_autograd before
    gather = getattr(
        functional_collectives,
        "all_gather_single",
        getattr(functional_collectives, "all_gather_tensor_autograd", None),
    )
    stacked = gather(tensor.unsqueeze(0).contiguous(), 0, dist.group.WORLD)
    return torch.cat(stacked.unbind(0), dim=dim)  # (W, *shape) → along dim


# --------------------------------------------------------------------------------------
# The loss


def nt_xent_loss_distributed(
    z1: Tensor, z2: Tensor, temperature: float = 0.5, reduction: str = "mean"
) -> Tensor:
    r"""NT-Xent of this rank's anchors against the global batch of all ranks (negatives
    with gradients).

    Rank :math:`r` holds :math:`b` samples (rows :math:`rb, \dots, rb + b - 1` of the
    global batch of :math:`B = W b`). Both views are gathered with
    :func:`gather_with_grad` and stacked as in :func:`ccl_helpers.losses.nt_xent_loss`,
    :math:`z = (z^{(1)}_1, \dots, z^{(1)}_B, z^{(2)}_1, \dots, z^{(2)}_B)`, with
    :math:`s_{ij}` the cosine similarity and :math:`\operatorname{pos}(i) = i \pm B`.
    Rank :math:`r` computes the :math:`2b` per-anchor losses of its own anchors
    :math:`A_r = \{rb + k\}_{k<b} \cup \{B + rb + k\}_{k<b}`,

    .. math::
        \ell_i = \operatorname{logsumexp}_{j \ne i}(s_{ij} / t)
            - s_{i,\operatorname{pos}(i)} / t,
        \qquad i \in A_r,\; j \in \{0, \dots, 2B - 1\},

    so each anchor is contrasted with the :math:`2B - 2` other samples of the *global*
    batch. The anchor sets :math:`A_0, \dots, A_{W-1}` partition the :math:`2B` anchors,
    hence

    .. math::
        \frac{1}{W} \sum_{r} L_r^{\text{mean}}
            = \text{nt\_xent\_loss}(Z^{(1)}, Z^{(2)}),
        \qquad \sum_r L_r^{\text{sum}}
            = \text{nt\_xent\_loss}(Z^{(1)}, Z^{(2)}, \text{reduction="sum"}).

    Gradients: calling ``backward`` on every rank gives each rank's ``z1``, ``z2`` the
    gradient of :math:`\sum_r L_r` (see :func:`gather_with_grad`), i.e. :math:`W` times
    the single-process gradient of the mean loss; DistributedDataParallel's averaging
    over ranks divides by :math:`W`, so the encoder's parameter gradients equal the
    single-process ones. Precision as in ``nt_xent_loss``. Compute: :math:`O(b \cdot B
    \cdot d)` per rank (the :math:`2b \times 2B` similarities), memory :math:`O(B d + b
    B)`. Not distributed: exactly ``nt_xent_loss``.

    Args:
        z1: this rank's first views, shape ``(..., b, d)`` with ``b >= 1`` and a global
            ``B = W b >= 2``; the same shape on every rank.
        z2: this rank's second views, same shape as ``z1``; ``z2[..., k, :]`` is the
            positive of ``z1[..., k, :]``.
        temperature: :math:`t`, a finite real number > 0.
        reduction: ``"mean"`` or ``"sum"`` over this rank's :math:`2b` anchors (and
            leading dimensions), or ``"none"``.

    Returns:
        The per-anchor losses of this rank, shape ``(..., 2b)`` ordered ``[z1 rows, z2
        rows]``, if ``reduction="none"``; otherwise a 0-dim tensor (this rank's
        :math:`L_r`).

    Per step: shapes, dtypes and the hyperparameters are checked, never values (no
    device synchronisation).
    """
    check_tensor("z1", z1, min_ndim=2, floating=True)
    check_tensor("z2", z2, min_ndim=2, floating=True)
    check_same_shape("z2", z2, "z1", z1)
    check_positive("temperature", temperature)
    check_choice("reduction", reduction, REDUCTIONS)
    local = z1.shape[-2]
    n_ranks, me = world_size(), rank()
    if local < 1 or n_ranks * local < 2:
        raise ValueError(
            "z1 and z2 must hold b >= 1 samples per rank and B = "
            "world_size * b >= 2 in all "
            f"(shape (..., b, d)), got shape {tuple(z1.shape)} with "
            f"world_size {n_ranks}"
        )
    views = gather_with_grad(
        torch.cat([z1, z2], dim=-2), dim=-2
    )  # (..., W * 2b, d): rank blocks [z1_r, z2_r]
    views = (
        views.unflatten(-2, (n_ranks, 2, local)).transpose(-4, -3).flatten(-4, -2)
    )  # (..., 2B, d): [Z1, Z2]
    total = n_ranks * local
    anchor_index = torch.cat(
        [
            torch.arange(me * local, (me + 1) * local),
            torch.arange(total + me * local, total + (me + 1) * local),
        ]
    ).to(z1.device)
    per_sample = nt_xent_per_anchor(views, anchor_index, temperature)  # (..., 2b)
    return reduce(per_sample, reduction).to(result_dtype(z1))


# --------------------------------------------------------------------------------------
# DDP training under torchrun


def init_from_env(
    backend: str | None = None, timeout_s: float = 1800.0
) -> torch.device:
    """Initialise the default process group from ``torchrun``'s environment; return this
    rank's device.

    Reads ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``
    (set by ``torchrun``). Without ``WORLD_SIZE`` (a plain ``python`` run) nothing is
    initialised and :func:`~ccl_helpers.runtime.device` is returned, so a script runs
    unchanged with and without ``torchrun``.

    Args:
        backend: ``"nccl"`` or ``"gloo"``; default NCCL when CUDA is available, gloo
            otherwise.
        timeout_s: how long a collective may wait for the other ranks, seconds > 0.

    Returns:
        ``cuda:LOCAL_RANK`` (made the current CUDA device) with NCCL, the CPU with gloo.
    """
    if backend is not None:
        check_choice("backend", backend, ("nccl", "gloo"))
    check_positive("timeout_s", timeout_s)
    if "WORLD_SIZE" not in os.environ:
        return runtime.device()
    _torchrun_integer("WORLD_SIZE", 1)
    local_rank = _torchrun_integer("LOCAL_RANK", 0)
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    if not _is_distributed():
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    return device


def _torchrun_integer(variable: str, minimum: int) -> int:
    """The integer ≥ ``minimum`` in the environment variable ``variable`` (0 if unset);
    else ValueError naming the variable."""
    text = os.environ.get(variable, "0")
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ValueError(
            f"{variable} must be an integer ≥ {minimum} (as torchrun sets it), got "
            f"{text!r}"
        )
    return value


def cleanup() -> None:
    """Destroy the default process group if there is one (call at the end of a
    ``torchrun`` script)."""
    if _is_distributed():
        dist.destroy_process_group()


def _wrap_ddp(model: nn.Module, device: torch.device | None = None) -> nn.Module:
    """Move ``model`` to ``device`` and wrap it in DistributedDataParallel; unchanged
    when not distributed (arguments checked by :func:`ddp_train`).

    DDP broadcasts rank 0's parameters at construction, so every rank starts from the
    same model, and averages the parameter gradients over the ranks during ``backward``;
    a CUDA device is passed to DDP as ``device_ids``.
    """
    if device is not None:
        model = model.to(device)
    if not _is_distributed():
        return model
    device = (
        torch.device(device) if device is not None else next(model.parameters()).device
    )
    device_ids = (
        [device.index if device.index is not None else torch.cuda.current_device()]
        if device.type == "cuda"
        else None
    )
    return nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def _ddp_backward(
    model: nn.Module, x1: Tensor, x2: Tensor, temperature: float
) -> Tensor:
    """Zero the gradients, forward both views, back-propagate the distributed NT-Xent
    (DDP averages the gradients over the ranks); the global loss, detached, 0-dim."""
    for p in model.parameters():
        p.grad = None
    z1, z2 = model(torch.cat([x1, x2])).chunk(2)
    loss = nt_xent_loss_distributed(z1, z2, temperature)
    loss.backward()
    total = loss.detach().clone()
    if _is_distributed():
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total / world_size()


def ddp_train(
    model: nn.Module,
    sample_views: Callable[[int], tuple[Tensor, Tensor]],
    n_steps: int,
    *,
    temperature: float = 0.5,
    lr: float = 1e-3,
    device: torch.device | str | None = None,
    desc: str | None = None,
) -> tuple[nn.Module, pd.DataFrame]:
    """Train ``model`` with Adam for ``n_steps``; the whole ``torchrun`` path.

    Each step is one SimCLR step with negatives from all ranks: the two views go
    through the encoder in one forward pass, :math:`(z^{(1)}; z^{(2)}) = f((x^{(1)};
    x^{(2)}))`, the loss is :func:`nt_xent_loss_distributed` (mean over this rank's
    :math:`2b` anchors), and DDP averages the gradients, so the update equals one
    single-process step of ``nt_xent_loss`` on the concatenated global batch; the steps
    are driven by :func:`ccl_helpers.train.loop` (Adam, per-step loss records).

    Moves the model to ``device`` and wraps it in DistributedDataParallel when
    distributed (DDP broadcasts rank 0's parameters, so every rank starts from the same
    model), then for ``step = 1 .. n_steps`` calls ``sample_views(step)`` for this
    rank's two views ``(x1, x2)`` (each ``(b, ...)``, the same ``b`` on every rank, a
    different shard of the global batch on each rank, e.g. via ``DistributedSampler``
    or :func:`local_shard` of a batch drawn with a seed shared by all ranks) and takes
    one step; the views' shapes and dtypes are checked at every step.

    Args:
        model: the encoder, an ``nn.Module`` with at least one trained parameter,
            mapping ``(2b, ...)`` inputs to ``(2b, d)`` embeddings.
        sample_views: step ↦ (x1, x2), this rank's views.
        n_steps: number of steps, an int ≥ 1.
        temperature: :math:`t` of NT-Xent, > 0.
        lr: Adam's learning rate, a finite number > 0.
        device: where to train (default: the model's device; use :func:`init_from_env`'s
            result).
        desc: the label of a progress bar (:func:`~ccl_helpers.runtime.progress`)
            shown by rank 0 only; None: no bar.

    Returns:
        ``(model, history)``: the trained encoder ``model`` itself (not the DDP
        wrapper; it is trained in place) and the book's long history (step, seed,
        quantity, value) of :func:`ccl_helpers.train.loop`: the global loss
        (quantity ``"loss"``) of every step 0 … n_steps − 1, one run (seed 0),
        identical on all ranks.
    """
    check_instance("model", model, nn.Module)
    check_callable("sample_views", sample_views)
    n_steps = check_int("n_steps", n_steps)
    check_positive("temperature", temperature)
    check_positive("lr", lr)
    if device is not None:
        device = check_device("device", device)
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model must have at least one parameter that requires grad")
    wrapped = _wrap_ddp(model, device)
    params = dict(wrapped.named_parameters())
    target = next(iter(params.values())).device

    def gradient(step: int, beta: float) -> Evaluation:
        x1, x2 = sample_views(step + 1)
        check_tensor("sample_views(step)[0]", x1, min_ndim=1, floating=True)
        check_tensor("sample_views(step)[1]", x2, min_ndim=1, floating=True)
        check_same_shape("sample_views(step)[1]", x2, "[0]", x1)
        loss = _ddp_backward(wrapped, x1.to(target), x2.to(target), temperature)
        return Evaluation(loss.reshape(1), [p.grad for p in params.values()])

    history = loop(
        params,
        gradient,
        n_steps,
        seeds=[0],
        lr=lr,
        optimizer="adam",
        every_step=["loss"],
        bar=(lambda steps: runtime.progress(steps, desc=desc))
        if desc is not None and rank() == 0
        else None,
    )
    history = history[history["quantity"] == "loss"].reset_index(drop=True)
    return model, history  # nn.Module.to moves in place: the trained encoder
