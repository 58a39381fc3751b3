"""Evaluations of trained members: downstream accuracy, the bounds and the bias.

The standard downstream evaluations (:func:`downstream`), both bounds at once
(:func:`bound_terms`) and their summaries along training (:func:`bound_evaluator`), and
the bias of each member under its own strategy (:func:`bias_by_member`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from .._checks import (
    check_callable,
    check_choice,
    check_frame,
    check_instance,
    check_int,
    check_positive,
)
from ..data import STRATEGIES, augment
from ..metrics import (
    all_tasks,
    encode,
    fit_linear_classifiers,
    knn_accuracy,
    linear_probe,
    standardise,
)
from ..train import Forward, StackedModel
from ._bounds import (
    _AttractingTerms,
    _check_images,
    _check_view_classes,
    _encode_views,
    _eq51_bias,
    _plugin_bias,
    _plugin_prototypes,
    _repelling_chain,
    _RepellingChain,
    _RepellingTerms,
    _spread,
    attracting_terms,
    repelling_terms,
)

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "trouser",
    "pullover",
    "dress",
    "coat",
    "sandal",
    "shirt",
    "sneaker",
    "bag",
    "ankle boot",
)
"""FashionMNIST's class names, by label."""


def downstream(
    encoder: Forward,
    fit_images: Tensor,
    fit_labels: Tensor,
    test_images: Tensor,
    test_labels: Tensor,
    *,
    k: Sequence[int] = (5,),
    max_iter: int = 100,
    chunk_size: int = 1000,
    per_class: bool = False,
) -> pd.DataFrame:
    """The standard evaluations of a representation, one row per member: the accuracy
    of the linear probe over all classes (fitted on the fit images' features
    standardised by :func:`~ccl_helpers.metrics.standardise`, evaluated on the test
    images), the cosine k-NN accuracy for each k (on the raw features), the mean feature
    norm on the fit images, and ``finite``. A member whose features are not all finite
    (a diverged run) is kept, with ``finite`` False and NaN accuracies. With
    ``per_class``, also the probe's accuracy on the test images of each class c,
    ``linear_probe_class_<c>`` (on a balanced test set their mean is ``linear_probe``).

    fit_images (n, ...), fit_labels (n,); test_images (n', ...), test_labels (n',):
    finite images, int64 classes; k: the k of each k-NN accuracy, integers ≥ 1.
    """
    check_callable("encoder", encoder)
    _check_images("fit_images", fit_images, fit_labels, "fit_labels", min_ndim=2)
    _check_images("test_images", test_images, test_labels, "test_labels", min_ndim=2)
    max_iter = check_int("max_iter", max_iter)
    chunk_size = check_int("chunk_size", chunk_size)
    if isinstance(k, (str, bytes)) or not hasattr(k, "__iter__"):
        raise ValueError(f"k must be a sequence of integers ≥ 1, got {k!r}")
    k = [check_int(f"k[{i}]", n) for i, n in enumerate(k)]
    if not isinstance(per_class, bool):
        raise ValueError(f"per_class must be True or False, got {per_class!r}")

    fit = encode(encoder, fit_images, chunk_size=chunk_size)
    test = encode(encoder, test_images, chunk_size=chunk_size)
    if fit.ndim == 2:
        fit, test = fit[None], test[None]
    finite = (
        torch.isfinite(fit).all((-2, -1)) & torch.isfinite(test).all((-2, -1))
    ).cpu()
    table = pd.DataFrame(
        {"finite": finite.numpy(), "norm_mean": fit.norm(dim=-1).mean(-1).cpu().numpy()}
    )
    columns = ["linear_probe", *(f"knn_{n}" for n in k)]
    table[columns] = np.nan
    if bool(finite.any()):
        ok = finite.to(fit.device)
        fit_s, test_s = standardise(fit[ok], test[ok])
        probe = linear_probe(
            fit_s,
            fit_labels,
            test_s,
            test_labels,
            task_size=int(torch.unique(fit_labels).numel()),
            max_iter=max_iter,
        )["accuracy"]
        table.loc[finite.numpy(), "linear_probe"] = probe.cpu().numpy()
        if per_class:
            n_classes = int(max(fit_labels.max(), test_labels.max())) + 1
            tasks = all_tasks(n_classes, n_classes, fit.device)
            rows = fit_linear_classifiers(fit_s, fit_labels, tasks, max_iter=max_iter)[
                ..., 0, :, :
            ]  # (S, C, d): the one task of all classes
            predicted = (test_s @ rows.transpose(-1, -2)).argmax(-1)  # (S, n)
            hit = (predicted == test_labels).to(torch.float64)
            for c in range(n_classes):
                column = f"linear_probe_class_{c}"
                chosen = test_labels == c
                table[column] = np.nan
                if bool(chosen.any()):
                    found = hit[:, chosen].mean(-1).cpu().numpy()
                    table.loc[finite.numpy(), column] = found
        for n in k:
            accuracy = knn_accuracy(fit[ok], fit_labels, test[ok], test_labels, k=n)
            table.loc[finite.numpy(), f"knn_{n}"] = accuracy.cpu().numpy()
    return table.rename_axis("member")


def bias_by_member(
    model,
    runs: pd.DataFrame,
    images: Tensor,
    labels: Tensor,
    seed: int,
    *,
    n_transforms: int = 8,
) -> pd.DataFrame:
    """The prototype representation bias, eq. (16), E_{(X0,Y0)} ‖E_{T,X|Y0} f(T(X)) −
    E_T f(T(X0))‖, of the members of ``runs`` (its index: the members of the stacked
    ``model``), each under its own strategy, and the scale it can be read against, one
    row per member.

    ``bias_eq51``: the source's estimator, eq. (51) (A.3.2): for each (x_i, y_i) draw
    x'_i uniformly among the images of class y_i and one t_i, and average
    ‖f(t_i(x'_i)) − f(t_i(x_i))‖ (the same t_i on both: the crop, rotation, jitter and
    blur; a cutout square or a noise field, which mask or perturb the image rather
    than transform it, is drawn for each of the two views); by Jensen's inequality its
    expectation is ≥ eq. (16). ``bias_plugin``: eq. (16) with the expectations replaced
    by K = ``n_transforms`` views per image, ‖µ̂_{y_i} − m̂_i‖ averaged over i, µ̂ the
    class mean of all views. ``prototype_spread``: the mean distance between the
    prototypes of two distinct classes, mean_{c ≠ c'} ‖µ̂_c − µ̂_{c'}‖, on the
    plug-in's views. Representations are normalised. The members of one strategy share
    the draws (a generator seeded by ``seed``).

    images (n, C, H, W) with labels (n,), every class 0..C−1 present, at least two.
    """
    check_instance("model", model, StackedModel)
    check_frame("runs", runs, ["strategy"])
    for name in runs["strategy"].unique():
        check_choice("runs['strategy']", name, STRATEGIES)
    _check_images("images", images, labels, min_size=1)
    if bool((torch.bincount(labels) == 0).any()) or int(labels.max()) < 1:
        raise ValueError("labels must hold every class 0..C-1, at least two classes")
    seed = check_int("seed", seed, 0)
    n_transforms = check_int("n_transforms", n_transforms)
    frames = []
    for name, rows in runs.groupby("strategy", sort=False):
        encoder = model.subset(rows.index.tolist())
        with torch.no_grad():
            eq51 = _eq51_bias(
                encoder,
                images,
                labels,
                name,
                torch.Generator(device=images.device).manual_seed(seed),
            )
            # the plug-in bias and the spread share their views (one draw)
            surrogate, prototypes = _plugin_prototypes(
                encoder,
                images,
                labels,
                name,
                torch.Generator(device=images.device).manual_seed(seed),
                n_transforms,
            )
            plugin = _plugin_bias(surrogate, prototypes, labels)
        values = {
            "bias_eq51": eq51,
            "bias_plugin": plugin,
            "prototype_spread": _spread(prototypes),
        }
        values = {key: value.cpu().numpy() for key, value in values.items()}
        frames.append(pd.DataFrame(values, index=rows.index))
    return pd.concat(frames).sort_index().rename_axis("member")


def bound_evaluator(
    members: Sequence[int],
    alphas: Sequence[float],
    images: Tensor,
    labels: Tensor,
    pool_images: Tensor,
    pool_labels: Tensor,
    strategy: str,
    seed: int,
    *,
    n_transforms_attract: int = 16,
    n_transforms_repel: int = 4,
    norm_members: Sequence[int] | None = None,
):
    """An ``evaluate`` for :func:`train_runs`: model ↦ quantities (S,) at a checkpoint.

    For the members ``members``, each with the α of Theorem 4.6 in ``alphas`` (its
    training α), summaries of :func:`bound_terms` on ``images`` and the pool (NaN for
    the other members): the mean gaps (Figure 6 of the source) ``attract_gap`` and
    ``repel_gap``; the smallest per-sample gaps, ``attract_min_gap`` (Theorem 4.4: over
    the samples that satisfy Assumption 4.3, f(t(x))·m̂ ≥ 0) and ``repel_min_gap``; the
    fraction of samples satisfying Assumption 4.3, ``hemisphere_fraction``, and its
    smallest value, ``hemisphere_min``; the smallest gap of the corrected repelling
    form, ``repel_corrected_min_gap``; ``smooth_min`` (B) and ``nu_mean`` (ν); and the
    mean slack of each step of the repelling bound, ``repel_slack_<step>`` (they sum to
    ``repel_gap``). For the members ``norm_members`` (default every member; NaN for the
    others), ``norm_mean``, the mean norm of the unnormalised representations of
    ``images`` (the dot product and the Euclidean distance see it). The draws are the
    same at every checkpoint (a generator seeded by ``seed``), so the checkpoints differ
    only by the encoder. The arguments are validated here, once, not at each
    checkpoint."""
    _check_images("images", images, labels)
    _check_images("pool_images", pool_images, pool_labels, "pool_labels")
    check_choice("strategy", strategy, STRATEGIES)
    seed = check_int("seed", seed, 0)
    n_transforms_attract = check_int("n_transforms_attract", n_transforms_attract, 2)
    n_transforms_repel = check_int("n_transforms_repel", n_transforms_repel)
    _check_view_classes(labels, pool_labels, ("labels", "pool_labels"))
    members = [check_int("members[i]", m, 0) for m in members]
    if not members or len(alphas) != len(members):
        raise ValueError(
            f"members and alphas must be non-empty and of one length, got "
            f"{len(members)} and {len(alphas)}"
        )
    alphas = torch.tensor([check_positive("alphas[i]", a) for a in alphas])
    if norm_members is not None:
        norm_members = [check_int("norm_members[i]", m, 0) for m in norm_members]
        if not norm_members:
            raise ValueError("norm_members must be None or a non-empty list of members")

    draws = _Draws(
        images=images,
        labels=labels,
        pool_images=pool_images,
        pool_labels=pool_labels,
        strategy=strategy,
        n_transforms_attract=n_transforms_attract,
        n_transforms_repel=n_transforms_repel,
    )

    def evaluate(model) -> dict[str, Tensor]:
        generator = torch.Generator(device=images.device).manual_seed(seed)
        with torch.no_grad():
            attract, repel, steps = _bound_terms(
                model.subset(members), draws, generator, alphas, chain=True
            )
            if norm_members is None:
                norms = encode(model, images).norm(dim=-1).mean(-1)
            else:
                chosen_norms = encode(model.subset(norm_members), images)
                norms = torch.full(
                    (model.n_seeds,), math.nan, device=chosen_norms.device
                ).index_copy(
                    0,
                    torch.tensor(norm_members, device=chosen_norms.device),
                    chosen_norms.norm(dim=-1).mean(-1),
                )
        out = {"norm_mean": norms}
        chosen = torch.tensor(members, device=norms.device)
        for name, values in _summarise_bounds(attract, repel, steps).items():
            full = torch.full_like(norms, math.nan)
            out[name] = full.index_copy(0, chosen, values.to(full.dtype))
        return out

    return evaluate


# ---------------------------------------------------------------- both bounds at once
# (trained encoders)


def bound_terms(
    encoder: Forward,
    images: Tensor,
    labels: Tensor,
    pool_images: Tensor,
    pool_labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    alphas: Tensor | float,
    *,
    n_transforms_attract: int = 16,
    n_transforms_repel: int = 4,
    chain: bool = False,
):
    """Theorem 4.4 and Theorem 4.6 per sample for an encoder with leading model
    dimension S.

    One anchor view t(x) per image serves both theorems. ``alphas``: the α of Theorem
    4.6, a float or one per model (S,) (e.g. each model's training α). Returns
    (attracting terms, repelling terms), the fields of
    :func:`attracting_terms` and :func:`repelling_terms`, each (S, n); with ``chain``,
    the steps of the proof of Theorem 4.6 (Appendix A.1.2) on the same draws as a
    third: ``lhs``, ``m_max`` M = max_{y'≠y} E_{T',X'|y'} g, ``m_bound`` max(M, M/ν)
    (eqs. (33)–(41)), ``lse_others`` (1/α) log Σ_{y'≠y} exp(α E_{T',X'|y'} g) (eq.
    (42)), ``lse_all`` the same over every class (eq. (43)), ``jensen_t`` (eq. (45)),
    ``jensen_x`` (eq. (46)), ``smooth`` B (eqs. (47)–(50)) and ``nu``, with g =
    s(f(t(x)), f(T'(X'))); each step bounds the one before, and its ``slacks()`` split
    the gap B/ν − lhs into the slack of each step.

    The images (n, C, H, W) with labels (n,) are the anchors; the pool (M, C, H, W)
    with ``pool_labels`` (M,) is X' (at least two classes, every class of ``labels``);
    ``n_transforms_attract`` ≥ 2 views per anchor (Theorem 4.4),
    ``n_transforms_repel`` ≥ 1 transformations of the pool (Theorem 4.6).
    """
    check_callable("encoder", encoder)
    _check_images("images", images, labels)
    _check_images("pool_images", pool_images, pool_labels, "pool_labels")
    check_choice("strategy", strategy, STRATEGIES)
    check_instance("generator", generator, torch.Generator)
    n_transforms_attract = check_int("n_transforms_attract", n_transforms_attract, 2)
    n_transforms_repel = check_int("n_transforms_repel", n_transforms_repel)
    _check_view_classes(labels, pool_labels, ("labels", "pool_labels"))
    if not isinstance(chain, bool):
        raise ValueError(f"chain must be True or False, got {chain!r}")
    draws = _Draws(
        images,
        labels,
        pool_images,
        pool_labels,
        strategy,
        n_transforms_attract,
        n_transforms_repel,
    )
    return _bound_terms(encoder, draws, generator, alphas, chain=chain)


class _Draws(NamedTuple):
    """What :func:`bound_terms` draws its views from (validated): the anchors' images
    and labels, the pool's, the strategy and the numbers of transformations."""

    images: Tensor
    labels: Tensor
    pool_images: Tensor
    pool_labels: Tensor
    strategy: str
    n_transforms_attract: int
    n_transforms_repel: int


def _bound_terms(
    encoder: Forward,
    draws: _Draws,
    generator: torch.Generator,
    alphas: Tensor | float,
    *,
    chain: bool,
) -> (
    tuple[_AttractingTerms, _RepellingTerms]
    | tuple[_AttractingTerms, _RepellingTerms, _RepellingChain]
):
    """:func:`bound_terms` on validated ``draws``, for it and :func:`bound_evaluator`
    (``alphas`` is validated here: its length needs the encoder's)."""
    views = _encode_views(
        encoder,
        augment(
            draws.images.expand(draws.n_transforms_attract + 1, *draws.images.shape),
            draws.strategy,
            generator,
        ),
    )
    if views.ndim == 3:
        views = views.unsqueeze(0)
    anchors = views[:, 0]
    attract = attracting_terms(anchors, views[:, 1:])
    pool = augment(
        draws.pool_images.expand(draws.n_transforms_repel, *draws.pool_images.shape),
        draws.strategy,
        generator,
        param_shape=(draws.n_transforms_repel, 1),
    )
    pool_z = _encode_views(encoder, pool)
    if pool_z.ndim == 3:
        pool_z = pool_z.unsqueeze(0)
    n_models = anchors.shape[0]
    alphas = torch.as_tensor(alphas, dtype=torch.float64).flatten().cpu()
    if alphas.numel() == 1:
        alphas = alphas.expand(n_models)
    if (
        alphas.numel() != n_models
        or not bool((alphas > 0).all())
        or not bool(torch.isfinite(alphas).all())
    ):
        raise ValueError(
            "alphas must be finite, > 0, one or one per model "
            f"({n_models}), got {alphas.tolist()}"
        )
    repel = steps = None
    for alpha in alphas.unique().tolist():
        chosen = (alphas == alpha).to(anchors.device)[:, None]

        def pick(kind, new, old, chosen=chosen):
            if old is None:
                return new
            return kind(*(torch.where(chosen, a, b) for a, b in zip(new, old)))

        terms = repelling_terms(anchors, draws.labels, pool_z, draws.pool_labels, alpha)
        repel = pick(_RepellingTerms, terms, repel)
        if chain:
            found = _repelling_chain(
                anchors, draws.labels, pool_z, draws.pool_labels, alpha
            )
            steps = pick(_RepellingChain, found, steps)
    return (attract, repel, steps) if chain else (attract, repel)


def _summarise_bounds(
    attract: _AttractingTerms,
    repel: _RepellingTerms,
    chain: _RepellingChain | None = None,
) -> dict[str, Tensor]:
    """Per-model summaries (S,) of :func:`bound_terms`: mean gaps (Figure 6 of the
    source), smallest
    per-sample gaps (Theorem 4.4: over the samples that satisfy Assumption 4.3,
    f(t(x))·m̂ ≥ 0), the fraction of samples satisfying it and its smallest value, and
    the smallest gap of the corrected repelling form, the mean ν; with ``chain`` (the
    same draws), the mean slack of each step of the repelling bound,
    ``repel_slack_<step>`` (the chain's ``slacks()``; they sum to ``repel_gap``).
    """
    holds = attract.hemisphere >= 0
    slacks = {} if chain is None else chain.slacks()
    return {
        **{f"repel_slack_{name}": value.mean(-1) for name, value in slacks.items()},
        "attract_gap": attract.gap.mean(-1),
        "attract_min_gap": attract.gap.masked_fill(~holds, torch.inf).amin(-1),
        "hemisphere_fraction": holds.to(attract.gap.dtype).mean(-1),
        "hemisphere_min": attract.hemisphere.amin(-1),
        "repel_gap": repel.gap.mean(-1),
        "repel_min_gap": repel.gap.amin(-1),
        "repel_corrected_min_gap": (repel.rhs_corrected - repel.lhs).amin(-1),
        "smooth_min": repel.smooth.amin(-1),
        "nu_mean": repel.nu.mean(-1),
    }
