"""Training many configurations of Lee (2025)'s losses in one stacked model.

Their batches (:func:`two_view_batches`, :func:`run_batches`), the loss of each member
(:func:`member_loss`, :func:`run_loss`) and the run (:func:`train_runs`). The loss and
the training step check shapes and dtypes only, never values (they run under ``vmap``,
without a device synchronisation): a NaN propagates to the loss."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from .._checks import (
    check_batch,
    check_callable,
    check_choice,
    check_frame,
    check_instance,
    check_int,
    check_positive_or_scalar_tensor,
    check_same_shape,
    check_tensor,
)
from .._precision import result_dtype
from ..data import STRATEGIES, augment
from ..losses import SIMILARITIES, balanced_terms, pairwise_similarity
from ..train import Forward, StackedModel, train
from ._bounds import _check_images


def _check_code(name: str, value, kinds: tuple[str, ...]):
    """``value`` if it is a 0-dim integer tensor in 0..len(kinds)−1, the code of
    ``kinds[value]``; else ``ValueError`` naming ``name``, the code and the known ones.
    The value is read (one device synchronisation) except inside a ``torch.func``
    transform (``vmap``, ``grad``): there the codes were validated where the batch was
    built (:func:`run_batches`)."""
    check_tensor(name, value, ndim=0, integer=True)
    if not torch._C._functorch.is_functorch_wrapped_tensor(value):
        code = int(value)
        if not 0 <= code < len(kinds):
            known = ", ".join(f"{i} ({kind})" for i, kind in enumerate(kinds))
            raise ValueError(f"{name} must be one of the codes {known}, got {code}")
    return value


def two_view_batches(
    images: Tensor,
    n_models: int,
    batch_size: int,
    strategy: str | list[str],
    generator: torch.Generator,
    *,
    n_streams: int | None = None,
) -> Callable[[int], tuple[Tensor, Tensor]]:
    """step ↦ (view1, view2), each (n_models, batch_size, C, H, W): ``batch_size``
    distinct images drawn uniformly from ``images``, each transformed twice,
    independently.

    ``n_streams`` (dividing ``n_models``; default ``n_models``) independent batches are
    drawn and tiled config-major (model i gets stream i mod n_streams), matching
    :meth:`~ccl_helpers.train.StackedModel.tiled`. ``strategy`` may be a list with one
    strategy name (:data:`ccl_helpers.data.STRATEGIES`) per stream.
    """
    _check_images("images", images)
    n_models = check_int("n_models", n_models)
    batch_size = check_int("batch_size", batch_size, 2, images.shape[0])
    check_instance("generator", generator, torch.Generator)
    if n_streams is not None:
        n_streams = check_int("n_streams", n_streams)
    n_streams = n_models if n_streams is None else n_streams
    if n_models % n_streams:
        raise ValueError(
            f"n_streams must divide n_models = {n_models}, got {n_streams}"
        )
    if isinstance(strategy, list):
        if len(strategy) != n_streams:
            raise ValueError(
                f"strategy must be one strategy name or a list of n_streams = "
                f"{n_streams}, got {len(strategy)}"
            )
        for name in strategy:
            check_choice("strategy", name, STRATEGIES)
        groups = {}
        for i, s in enumerate(strategy):
            groups.setdefault(s, []).append(i)
        groups = [
            (s, torch.tensor(rows, device=images.device)) for s, rows in groups.items()
        ]
    else:  # one strategy: every stream, without a Python loop over them
        check_choice("strategy", strategy, STRATEGIES)
        groups = [(strategy, torch.arange(n_streams, device=images.device))]

    def sample(step: int) -> tuple[Tensor, Tensor]:
        index = torch.rand(
            n_streams, images.shape[0], generator=generator, device=images.device
        ).argsort(-1)
        batch = images[index[:, :batch_size]]  # (streams, B, C, H, W)
        views = []
        for _ in range(2):
            view = torch.empty_like(batch)
            for s, rows in groups:  # one call per distinct strategy
                view[rows] = augment(batch[rows], s, generator)
            views.append(view)
        reps = n_models // n_streams
        return tuple(v.repeat(reps, *([1] * (v.ndim - 1))) for v in views)

    return sample


MEMBER_LOSSES = ("generalized", "balanced", "cross_view")
"""Loss kinds of :func:`member_loss`, by code 0, 1, 2: generalized NT-Xent (positive
among the negatives), the balanced loss eq. (17) and eq. (14) (negatives from the other
view only)."""


def member_loss(
    z1: Tensor, z2: Tensor, alpha, lam, loss_code: Tensor, similarity_code: Tensor
) -> Tensor:
    r"""The losses of Lee (2025), Section 6, with the kind and the similarity chosen by
    integer codes, so that members of one stacked model (vmapped) can differ in them.

    .. math::
        \ell_i = -s(z_i, z_{\operatorname{pos}(i)})
                 + \lambda\,\frac{1}{\alpha}\log\sum_{j \in N_i} e^{\alpha s(z_i, z_j)},

    mean over the 2m anchors of the views z1, z2 (m, d), with N_i every other view
    ``generalized`` (code 0, :func:`~ccl_helpers.losses.generalized_nt_xent_loss`),
    every other view but the positive ``balanced`` (1, eq. (17),
    :func:`~ccl_helpers.losses.balanced_contrastive_loss`), or the other view's
    samples but the positive ``cross_view`` (2, eq. (14) divided by α, symmetrised:
    the mean of :func:`~ccl_helpers.losses.bound_derived_loss` from each view). s is
    ``SIMILARITIES[similarity_code]``. The similarity matrix is selected (by
    ``torch.where``, so that the codes may be batched under vmap and grad) before the
    log-sum-exp (:func:`~ccl_helpers.losses.balanced_terms`, the losses' own), so an
    unselected similarity never enters the loss or its gradient;
    a code out of range is a ``ValueError`` naming it and the known codes, validated
    outside ``torch.func`` transforms only (no data-dependent control flow under vmap:
    there :func:`run_batches` validated them where the batch was built). Shapes, dtypes
    and real α, λ are validated (a tensor's value only outside vmap and grad).

    Args:
        z1, z2: the two views' representations (m, d), floating, of one shape.
        alpha, lam: α, λ > 0 (reals or 0-dim tensors).
        loss_code, similarity_code: 0-dim integer tensors (under vmap, one per member).

    Returns the mean loss, 0-dim, in the dtype of z1 (float32 for float16; similarities
    and log-sum-exp in at least float32, as the losses').
    """
    check_tensor("z1", z1, min_ndim=2, floating=True)
    check_tensor("z2", z2, min_ndim=2, floating=True)
    check_same_shape("z2", z2, "z1", z1)
    alpha = check_positive_or_scalar_tensor("alpha", alpha)
    lam = check_positive_or_scalar_tensor("lam", lam)
    _check_code("loss_code", loss_code, MEMBER_LOSSES)
    _check_code("similarity_code", similarity_code, SIMILARITIES)
    m = z1.shape[-2]
    views = torch.cat([z1, z2], dim=-2)  # (2m, d)
    sims = pairwise_similarity(views, views, SIMILARITIES[-1])
    for code in range(len(SIMILARITIES) - 2, -1, -1):  # torch.where: vmap-safe
        chosen = pairwise_similarity(views, views, SIMILARITIES[code])
        sims = torch.where(similarity_code == code, chosen, sims)
    eye = torch.eye(2 * m, dtype=torch.bool, device=sims.device)
    positive_mask = eye.roll(m, dims=-1)
    block = torch.ones(m, m, dtype=torch.bool, device=sims.device)
    same_view = torch.block_diag(block, block)
    excluded = torch.where(
        loss_code == 0,
        eye,
        torch.where(loss_code == 1, eye | positive_mask, same_view | positive_mask),
    )
    per_anchor = balanced_terms(sims, alpha, lam, excluded)  # positives: two views
    return per_anchor.mean().to(result_dtype(z1))


RUN_COLUMNS = ("pool", "seed", "strategy", "loss", "similarity", "alpha", "lam")
"""The columns of a runs table (one row per stacked member): the image pool's name, the
seed (initialisation and image stream), the augmentation strategy, the loss kind
(:data:`MEMBER_LOSSES`), the similarity (:data:`~ccl_helpers.losses.SIMILARITIES`), α
and λ."""


def _step_seed(*keys: int) -> int:
    """A 63-bit seed that is a function of ``keys`` only."""
    state = np.random.SeedSequence(list(keys)).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(1))


def run_batches(
    pools: Mapping[str, Tensor], runs: pd.DataFrame, batch_size: int, seed: int = 0
) -> Callable[[int], tuple[Tensor, ...]]:
    """step ↦ (view1, view2, alpha, lam, loss_code, similarity_code), each with the
    leading dimension S = ``len(runs)``: the batch of every member of a stacked model.

    A pure function of the step. The members that share (pool, seed) see the same
    ``batch_size`` distinct images of the pool (drawn uniformly, by a generator seeded
    from ``seed``, the step, the pool and the member's seed); those that also share the
    strategy see the same two views (:func:`~ccl_helpers.data.augment`, one call per
    strategy and view). So configurations that differ only in the loss, the similarity,
    α or λ are paired by seed.

    Args:
        pools: image pools by name, each (n, C, H, W) with one image shape, on one
            device.
        runs: one row per member with the columns :data:`RUN_COLUMNS`.
    """
    check_frame("runs", runs, RUN_COLUMNS)
    batch_size = check_int("batch_size", batch_size, 2)
    seed = check_int("seed", seed, 0)
    if not isinstance(pools, Mapping) or not pools:
        raise ValueError(f"pools must map names to image pools, got {pools!r}")
    shapes = {tuple(pool.shape[1:]) for pool in pools.values()}
    if len(shapes) > 1:
        raise ValueError(f"pools must hold images of one shape, got {sorted(shapes)}")
    for name, pool in pools.items():
        check_tensor(f"pools[{name!r}]", pool, min_ndim=4, floating=True)
        if not 2 <= batch_size <= pool.shape[0]:
            raise ValueError(
                f"batch_size must be in 2..{pool.shape[0]} (pool {name!r}), got "
                f"{batch_size}"
            )
    for column, names in (
        ("pool", list(pools)),
        ("strategy", STRATEGIES),
        ("loss", MEMBER_LOSSES),
        ("similarity", SIMILARITIES),
    ):
        unknown = sorted(set(runs[column]) - set(names))
        if unknown:
            raise ValueError(
                f"runs[{column!r}] must be in {tuple(names)}, got {unknown}"
            )
    for column in ("alpha", "lam"):
        if not (runs[column] > 0).all():
            raise ValueError(f"runs[{column!r}] must be > 0, got {list(runs[column])}")
    device = next(iter(pools.values())).device
    image_streams = runs[["pool", "seed"]].drop_duplicates().reset_index(drop=True)
    view_streams = runs[["pool", "seed", "strategy"]].drop_duplicates()
    view_streams = view_streams.reset_index(drop=True)

    def position(table, keys):
        lookup = {tuple(row): i for i, row in enumerate(table.itertuples(index=False))}
        return torch.tensor([lookup[tuple(k)] for k in keys], device=device)

    view_image = position(
        image_streams, view_streams[["pool", "seed"]].itertuples(index=False)
    )
    member_view = position(
        view_streams, runs[["pool", "seed", "strategy"]].itertuples(index=False)
    )
    by_strategy = {
        name: torch.tensor(rows.index.tolist(), device=device)
        for name, rows in view_streams.groupby("strategy", sort=True)
    }
    pool_index = {name: i for i, name in enumerate(pools)}
    constants = (
        torch.tensor(runs["alpha"].to_numpy(), dtype=torch.float32, device=device),
        torch.tensor(runs["lam"].to_numpy(), dtype=torch.float32, device=device),
        torch.tensor([MEMBER_LOSSES.index(v) for v in runs["loss"]], device=device),
        torch.tensor(
            [SIMILARITIES.index(v) for v in runs["similarity"]], device=device
        ),
    )

    def sample(step: int) -> tuple[Tensor, ...]:
        images = []
        for pool, member_seed in image_streams.itertuples(index=False):
            images_of = pools[pool]
            g = torch.Generator(device=device).manual_seed(
                _step_seed(seed, step, 0, pool_index[pool], int(member_seed))
            )
            pick = torch.randperm(images_of.shape[0], generator=g, device=device)
            images.append(images_of[pick[:batch_size]])
        batch = torch.stack(images)[view_image]  # (view streams, B, C, H, W)
        views = []
        for view in range(2):
            out = torch.empty_like(batch)
            for index, (name, rows) in enumerate(by_strategy.items()):
                g = torch.Generator(device=device).manual_seed(
                    _step_seed(seed, step, 1, view, index)
                )
                out[rows] = augment(batch[rows], name, g)
            views.append(out[member_view])
        return (*views, *constants)

    return sample


def run_loss(forward: Forward, batch: tuple[Tensor, ...]) -> Tensor:
    """The training loss of one member on its slice of a :func:`run_batches` batch
    (view1, view2, α, λ, loss_code, similarity_code): :func:`member_loss` of
    f(view1), f(view2) (m, d). A ``loss_fn`` for :func:`~ccl_helpers.train.train`
    (shape and dtype checks only, here and in :func:`member_loss`: it runs under vmap,
    at every step; the codes are validated once, by :func:`run_batches`, which builds
    them from the names; a direct call outside vmap checks them too)."""
    check_callable("forward", forward)
    view1, view2, *rest = check_batch(
        "batch", batch, ("floating",) * 4 + ("integer",) * 2
    )
    return member_loss(forward(view1), forward(view2), *rest)


def train_runs(
    runs: pd.DataFrame,
    pools: Mapping[str, Tensor],
    make_module: Callable[[], torch.nn.Module],
    n_steps: int,
    *,
    batch_size: int,
    lr: float = 1e-3,
    seed: int = 0,
    evaluate=None,
    eval_steps=(),
    desc: str | None = "runs",
):
    """Every member of ``runs`` trained together (vmapped) by
    :func:`~ccl_helpers.train.train` on :func:`run_loss` with :func:`run_batches`,
    from the initialisations of :meth:`~ccl_helpers.train.StackedModel.from_seeds`
    (member i from seed ``runs.seed[i]``).

    Returns the trained :class:`~ccl_helpers.train.StackedModel` and its history, the
    long frame of :func:`~ccl_helpers.train.loop` (step, seed, quantity, value) with the
    runs table's other columns (its configuration: pool, strategy, loss, similarity,
    α, λ and any column the caller added) as columns: :func:`~ccl_helpers.train.wide`
    gives one row per (step, seed, configuration). The runs, the pools, the batch size
    and the seed are validated by :func:`run_batches`, the rest by
    :func:`~ccl_helpers.train.train`."""
    check_callable("make_module", make_module)
    n_steps = check_int("n_steps", n_steps)
    sample = run_batches(pools, runs, batch_size, seed)
    device = next(iter(pools.values())).device
    model = StackedModel.from_seeds(make_module, [int(v) for v in runs["seed"]], device)
    return model, train(
        model,
        run_loss,
        sample,
        n_steps,
        lr=lr,
        evaluate=evaluate,
        eval_steps=eval_steps,
        desc=desc,
        configuration=runs.drop(columns="seed").reset_index(drop=True),
    )
