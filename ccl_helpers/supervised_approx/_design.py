"""The experiment's design and statistics: arms of runs and contrasts per seed.

The runs table of arms and seeds (:func:`design_runs`); the source's empirical claims
as contrasts of arms, one number per seed (:func:`arm_values`,
:func:`contrast_values`, :func:`estimates_table`); rank correlations within seeds
(:func:`seed_rank_correlations`); the shape of a curve (:func:`curve_shape`); the
spread of one run (:func:`pooled_seed_sd`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from torch import Tensor

from .._checks import (
    check_choice,
    check_count,
    check_frame,
    check_instance,
    check_int,
    check_positive,
)
from ..data import STRATEGIES
from ..losses import SIMILARITIES
from ..verdicts import estimate
from ._training import MEMBER_LOSSES, RUN_COLUMNS

_ARM_KEYS = tuple(c for c in RUN_COLUMNS if c != "seed")
"""The columns that define an arm: every column of a run but its seed."""


def _check_metric(results: pd.DataFrame, metric) -> None:
    """``ValueError`` unless ``metric`` names a column of ``results``."""
    if not isinstance(metric, str) or metric not in results.columns:
        raise ValueError(
            f"metric must name a column of results, got {metric!r} (columns "
            f"{list(results.columns)})"
        )


def _arm_values(
    results: pd.DataFrame, metric: str, arm: Mapping, name: str = "arm"
) -> np.ndarray:
    """The values of ``metric`` of the members of one arm, one per seed in seed order;
    ``ValueError`` naming ``name`` unless the arm names columns of ``results`` and
    selects one member per seed (a check of the data that only the selection makes)."""
    if not isinstance(arm, Mapping):
        raise ValueError(f"{name} must be a mapping column → value, got {arm!r}")
    unknown = set(arm) - set(results.columns)
    if unknown:
        raise ValueError(
            f"{name} must name columns of results, got {sorted(unknown)} (columns "
            f"{list(results.columns)})"
        )
    chosen = results
    for column, value in arm.items():
        chosen = chosen[chosen[column] == value]
    if chosen.empty or chosen["seed"].duplicated().any():
        raise ValueError(
            f"{name} {dict(arm)} must select one member per seed, got seeds "
            f"{chosen['seed'].tolist()}"
        )
    return chosen.sort_values("seed")[metric].to_numpy(dtype=np.float64)


def _seed_matrix(
    results: pd.DataFrame, metric: str, arms: Sequence[Mapping], name: str = "arms"
) -> np.ndarray:
    """:func:`_arm_values` of each of ``arms``, stacked: (len(arms), n_seeds);
    ``ValueError`` naming ``name`` unless every arm holds the same seeds."""
    seeds = [
        _arm_values(results, "seed", arm, f"{name}[{i}]") for i, arm in enumerate(arms)
    ]
    if any(not np.array_equal(seeds[0], other) for other in seeds[1:]):
        raise ValueError(f"{name} must hold the same seeds, got {seeds}")
    return np.stack(
        [
            _arm_values(results, metric, arm, f"{name}[{i}]")
            for i, arm in enumerate(arms)
        ]
    )


def arm_values(
    results: pd.DataFrame, metric: str, arms: Mapping | Sequence[Mapping]
) -> np.ndarray:
    """The values of ``metric`` of the members of one arm, one per seed in seed order,
    (n_seeds,); for a list of arms, each arm's, stacked: (len(arms), n_seeds), every arm
    holding the same seeds.

    results: one row per member with the columns :data:`RUN_COLUMNS` and ``metric``;
    an arm: column → value for the columns that define the arm (the others are free,
    but the arm must hold one member per seed)."""
    check_frame("results", results, ["seed"])
    _check_metric(results, metric)
    if isinstance(arms, Mapping):
        return _arm_values(results, metric, arms, "arms")
    if isinstance(arms, str | bytes) or not isinstance(arms, Sequence) or not arms:
        raise ValueError(
            f"arms must be an arm (a mapping column → value) or a non-empty list of "
            f"them, got {arms!r}"
        )
    return _seed_matrix(results, metric, arms)


def _check_terms(name: str, terms) -> None:
    """``ValueError`` naming ``name`` unless ``terms`` is a non-empty list of (arm,
    coefficient), each arm a mapping, each coefficient a finite real number."""
    if isinstance(terms, str | bytes) or not isinstance(terms, Sequence) or not terms:
        raise ValueError(
            f"{name} must be a non-empty list of (arm, coefficient), got {terms!r}"
        )
    for i, term in enumerate(terms):
        if not (isinstance(term, tuple) and len(term) == 2):
            raise ValueError(f"{name}[{i}] must be (arm, coefficient), got {term!r}")
        check_instance(f"{name}[{i}][0]", term[0], Mapping)
        coefficient = term[1]
        if (
            isinstance(coefficient, bool)
            or not isinstance(coefficient, int | float | np.integer | np.floating)
            or not math.isfinite(coefficient)
        ):
            raise ValueError(
                f"{name}[{i}][1] must be a finite real number, got {coefficient!r}"
            )


def _arm_contrast(
    results: pd.DataFrame, metric: str, terms: Sequence[tuple[Mapping, float]], name
) -> np.ndarray:
    """A contrast of arms, one number per seed: d_s = Σ_j c_j · value_j,s over the
    ``terms`` (arm, coefficient c_j), e.g. [(A, 1), (B, −1)] for "A beats B", four
    terms for an interaction, [(A, 1)] + [(B_j, −1/5)] for "A beats the mean of five".
    Every arm must hold the same seeds; returns (n_seeds,) in seed order."""
    matrix = _seed_matrix(results, metric, [arm for arm, _ in terms], name)
    coefficients = np.array([float(c) for _, c in terms], dtype=np.float64)
    return coefficients @ matrix


def contrast_values(
    results: pd.DataFrame,
    contrasts: Mapping[str, Sequence[tuple[Mapping, float]]],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """Contrasts of arms, one number per seed, for each named contrast (name → terms)
    and each of ``metrics``: a frame indexed by (contrast, metric), one column per seed.

    A contrast's terms are (arm, coefficient c_j) pairs, an arm a mapping column →
    value that selects one member per seed (every arm of a contrast holding the same
    seeds); its value for seed s is d_s = Σ_j c_j · value_j,s, e.g. [(A, 1), (B, −1)]
    for "A beats B", four terms for an interaction, [(A, 1)] + [(B_j, −1/5)] for "A
    beats the mean of five". results: one row per member with the columns
    :data:`RUN_COLUMNS` and the metrics."""
    check_frame("results", results, ["seed"])
    if not isinstance(contrasts, Mapping) or not contrasts:
        raise ValueError(
            f"contrasts must be a non-empty mapping name → terms, got {contrasts!r}"
        )
    if (
        isinstance(metrics, str | bytes)
        or not isinstance(metrics, Sequence)
        or not metrics
    ):
        raise ValueError(
            f"metrics must be a non-empty list of columns, got {metrics!r}"
        )
    unknown = [m for m in metrics if m not in results.columns]
    if unknown:
        raise ValueError(f"metrics must name columns of results, got {unknown}")
    for name, terms in contrasts.items():
        _check_terms(f"contrasts[{name!r}]", terms)
    rows = {
        (name, metric): _arm_contrast(results, metric, terms, f"contrasts[{name!r}]")
        for name, terms in contrasts.items()
        for metric in metrics
    }
    first = next(iter(contrasts.values()))[0][0]
    seeds = _arm_values(results, "seed", first).astype(int)
    frame = pd.DataFrame(list(rows.values()), columns=pd.Index(seeds, name="seed"))
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["contrast", "metric"])
    return frame


def estimates_table(values: pd.DataFrame) -> pd.DataFrame:
    """:func:`ccl_helpers.verdicts.estimate` of each row of ``values`` (one value per
    seed in each column, e.g. :func:`contrast_values`): a frame with the same index
    and the columns estimate, se, low, high (the 95 % t interval) and n."""
    check_frame("values", values)
    found = [estimate(row.to_numpy(dtype=np.float64)) for _, row in values.iterrows()]
    columns = ["estimate", "se", "low", "high", "n"]
    table = pd.DataFrame([[getattr(f, c) for c in columns] for f in found])
    table.columns, table.index = columns, values.index
    return table


def seed_rank_correlations(x, y) -> np.ndarray:
    """Spearman's rank correlation of x and y across the groups (e.g. augmentation
    strategies), computed within each seed: one number per seed.

    x, y: arrays (groups ≥ 3, seeds ≥ 2) of finite values, the same seed in the same
    column of both (e.g. :func:`arm_values` of the groups' arms); within each seed
    neither may be constant over the groups (the correlation would be undefined).
    Returns (seeds,)."""
    a, b = (
        np.asarray(v.cpu() if isinstance(v, Tensor) else v, dtype=np.float64)
        for v in (x, y)
    )
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 3 or a.shape[1] < 2:
        raise ValueError(
            "x and y must be arrays (groups ≥ 3, seeds ≥ 2) of one shape, got "
            f"{a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must be finite")
    if (np.ptp(a, axis=0) == 0).any() or (np.ptp(b, axis=0) == 0).any():
        raise ValueError("x and y must not be constant over the groups of a seed")
    return np.array(
        [stats.spearmanr(a[:, s], b[:, s]).statistic for s in range(a.shape[1])]
    )


class _CurveShape(NamedTuple):
    """The shape of one curve per seed (arrays (seeds,)), each change divided by the
    seed's largest value ``scale``: ``peak`` (index of the checkpoint where the mean
    curve of the *other* seeds peaks), ``drop`` ((last value − value at ``peak``) /
    scale), ``late_change`` ((last value − the value at checkpoint ``settle_from``) /
    scale) and ``overall`` ((last value − the value at checkpoint ``first``) /
    scale)."""

    peak: np.ndarray
    drop: np.ndarray
    late_change: np.ndarray
    scale: np.ndarray
    overall: np.ndarray


def curve_shape(curves, *, first: int = 0, settle_from: int = -2):
    """The source's "decrease, then stabilise" (its Figure 6) as numbers per seed, all
    as fractions of the seed's largest value: the change over the whole curve, from
    checkpoint ``first`` to the end (``overall``); the change over its last stretch,
    from checkpoint ``settle_from`` to the end (``late_change``); and the fall from the
    peak to the end (``drop``). The peak of seed s is located on the mean curve of the
    other seeds (leave one seed out), so that seed s's own noise does not choose the
    point its fall is measured from (the maximum of one noisy curve is biased upwards).

    curves: array (seeds ≥ 2, checkpoints ≥ 2) of finite values, each seed's largest
    value > 0 (a gap Δ = RHS − LHS at the checkpoints, in order); first, settle_from:
    indices of checkpoints before the last (negative counts from the end).

    Returns arrays (seeds,): ``peak`` (the index of the checkpoint where the mean curve
    of the other seeds peaks), ``drop`` ((last value − value at ``peak``) / scale),
    ``late_change`` ((last value − value at ``settle_from``) / scale), ``scale`` (the
    seed's largest value) and ``overall`` ((last value − value at ``first``) /
    scale)."""
    c = np.asarray(
        curves.cpu() if isinstance(curves, Tensor) else curves, dtype=np.float64
    )
    if c.ndim != 2 or c.shape[0] < 2 or c.shape[1] < 2 or not np.isfinite(c).all():
        raise ValueError(
            "curves must be a finite array (seeds ≥ 2, checkpoints ≥ 2), got shape "
            f"{c.shape}"
        )
    n_points = c.shape[1]
    for name, index in (("first", first), ("settle_from", settle_from)):
        if (
            isinstance(index, bool)
            or not isinstance(index, int | np.integer)
            or not -n_points <= index < n_points
            or index % n_points == n_points - 1
        ):
            raise ValueError(
                f"{name} must index a checkpoint before the last (−{n_points} … "
                f"{n_points - 2}), got {index!r}"
            )
    scale = c.max(axis=1)
    if (scale <= 0).any():
        raise ValueError(f"curves must have a largest value > 0 per seed, got {scale}")
    n = c.shape[0]
    others = (c.sum(axis=0, keepdims=True) - c) / (n - 1)  # mean of the other seeds
    peak = others.argmax(axis=1)
    at_peak = c[np.arange(n), peak]
    return _CurveShape(
        peak,
        (c[:, -1] - at_peak) / scale,
        (c[:, -1] - c[:, settle_from]) / scale,
        scale,
        (c[:, -1] - c[:, first]) / scale,
    )


_CHOICES = {"strategy": STRATEGIES, "loss": MEMBER_LOSSES, "similarity": SIMILARITIES}
"""The columns of a run that name one of a few kinds, and the kinds."""


_MAX_RUNS = 1_000_000
"""The most runs :func:`design_runs` lists: its table is built by a Python loop, a dict
a run, and each run is a member of one stacked model trained together. The book's
largest experiment has about 150; 10⁷ runs would hang in that loop, for a model that
could never be trained."""


def design_runs(
    arms: Mapping[str, Mapping],
    n_seeds: int,
    cells: Sequence[Mapping] = (),
    *,
    map_seeds: int = 1,
) -> pd.DataFrame:
    """The runs table of an experiment: each arm (name → its values of the columns of
    :data:`RUN_COLUMNS` but ``seed``) with seeds 0 … ``n_seeds`` − 1, then each of
    ``cells`` (e.g. an (α, λ) map) with seeds 0 … ``map_seeds`` − 1, unless an arm
    already runs it. Columns: ``arm`` (the arm's name, "map" for a cell), then
    :data:`RUN_COLUMNS`; the index is the member of the stacked model. The strategy,
    loss and similarity must be known kinds, α and λ finite and > 0 (``ValueError``
    naming the arm and the column)."""
    n_seeds = check_int("n_seeds", n_seeds)
    map_seeds = check_int("map_seeds", map_seeds)
    if not isinstance(arms, Mapping) or not arms:
        raise ValueError(f"arms must map names to arms, at least one, got {arms!r}")
    if isinstance(cells, str | bytes | Mapping) or not isinstance(cells, Sequence):
        raise ValueError(f"cells must be a list of arms, got {cells!r}")
    check_count(
        "runs",
        len(arms) * n_seeds + len(cells) * map_seeds,
        _MAX_RUNS,
        f"{len(arms)} arms × n_seeds={n_seeds} + {len(cells)} cells × "
        f"map_seeds={map_seeds}",
    )
    keys = [c for c in RUN_COLUMNS if c != "seed"]
    for name, arm in [*arms.items(), *(("map", cell) for cell in cells)]:
        where = "cells" if name == "map" else f"arms[{name!r}]"
        check_instance(where, arm, Mapping)
        if set(arm) != set(keys):
            raise ValueError(
                f"arm {name!r} must set exactly the columns {keys}, got {sorted(arm)}"
            )
        for column, kinds in _CHOICES.items():
            check_choice(f"{where}[{column!r}]", arm[column], kinds)
        for column in ("alpha", "lam"):
            check_positive(f"{where}[{column!r}]", arm[column])
    rows = [
        {"arm": name, **arm, "seed": seed}
        for name, arm in arms.items()
        for seed in range(n_seeds)
    ]
    covered = {tuple(arm[k] for k in keys) for arm in arms.values()}
    rows += [
        {"arm": "map", **cell, "seed": seed}
        for cell in cells
        if tuple(cell[k] for k in keys) not in covered
        for seed in range(map_seeds)
    ]
    return pd.DataFrame(rows, columns=["arm", *RUN_COLUMNS]).rename_axis("member")


def pooled_seed_sd(results: pd.DataFrame, metric: str) -> tuple[float, int]:
    """The standard deviation of one run's ``metric`` pooled over the arms run with
    several seeds (arms: equal values in every column of :data:`RUN_COLUMNS` but
    ``seed``), and its degrees of freedom Σ (n_arm − 1)."""
    check_frame("results", results, _ARM_KEYS)
    _check_metric(results, metric)
    keys = list(_ARM_KEYS)
    groups = results.groupby(keys)[metric]
    sizes = groups.count()
    variances = groups.var(ddof=1)[sizes >= 2]
    df = int((sizes[sizes >= 2] - 1).sum())
    if df == 0:
        raise ValueError("results must hold at least one arm with two seeds or more")
    pooled = float(((sizes[sizes >= 2] - 1) * variances).sum() / df)
    return math.sqrt(pooled), df
