"""Per-seed summaries of the runs and tables of mean ± s.e.

The summaries are lazy widths, sweep endpoints and the lag between two losses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .._checks import check_frame, check_open_unit, check_positive
from ..verdicts import format_estimate


def lazy_width(
    steps: pd.DataFrame,
    threshold: float = 0.1,
    confidence: float = 0.95,
) -> int | None:
    """m*: the smallest width from which on the relative movement ‖W^(T) − W^(0)‖_F /
    ‖W^(0)‖_F is below ``threshold`` with the given confidence — the upper end of the
    one-sided t interval of its mean over seeds, mean + t·s/√k, is below
    ``threshold`` at that width and every wider one. steps: rows (width, seed,
    relative_movement) (the runs' movement at the target; NaN for a run that never
    reached it, which makes its width not lazy); None when no width qualifies.
    threshold > 0; confidence in (0, 1)."""
    threshold = check_positive("threshold", threshold)
    check_open_unit("confidence", confidence)
    check_frame("steps", steps, ["width", "relative_movement"])
    by_width = steps.groupby("width")["relative_movement"]
    size, count = by_width.size(), by_width.count()
    if (size < 2).any():
        raise ValueError("steps must hold at least two seeds at every width")
    quantile = stats.t.ppf(confidence, np.maximum(count - 1, 1))
    upper = by_width.mean() + quantile * by_width.std() / np.sqrt(count)
    lazy = ((upper < threshold) & (count == size))[::-1].cummin()[::-1]
    return int(lazy.index[lazy.to_numpy()][0]) if lazy.any() else None


def width_scaled_targets(steps: pd.DataFrame, product: float) -> pd.DataFrame:
    """The rows of a width sweep's ``steps`` (:func:`descent_sweep` over ``width``)
    whose threshold ε is ``product``/m: Theorem 1 (and Lemma 6) ask for m ≥ Ω(d/ε), so
    along an ε sweep the width grows like 1/ε, here at m·ε = ``product``. Returns
    those rows (both targets), an ε sweep whose every point has its own width.
    product > 0."""
    product = check_positive("product", product)
    check_frame("steps", steps, ["width", "threshold"])
    scaled = steps["width"] * steps["threshold"] / product
    return steps[np.isclose(scaled, 1.0, rtol=1e-9, atol=0.0)]


def lazy_values(frame: pd.DataFrame, x: str, threshold: float) -> pd.DataFrame:
    """The rows of a sweep's ``frame`` (columns seed, ``x``, steps,
    relative_movement) at the values of ``x`` where every seed's run reached its
    target after at least one step in the lazy regime, relative movement ‖W −
    W^(0)‖_F/‖W^(0)‖_F below ``threshold``: the runs within the theorem's hypotheses
    (a target met at initialisation says nothing of the descent). Returns those
    rows. threshold > 0."""
    threshold = check_positive("threshold", threshold)
    check_frame(
        "frame", frame, ["seed", x, "steps", "relative_movement"], columns_from="x"
    )
    lazy = (frame["relative_movement"] < threshold) & (frame["steps"] > 0)
    every_seed = lazy.groupby(frame[x]).transform("all")
    return frame[every_seed.to_numpy()]


def endpoint_ratio(frame: pd.DataFrame, x: str, y: str) -> pd.Series:
    """Per seed, ``y`` at the largest ``x`` over ``y`` at the smallest ``x`` (one row
    per (seed, x), every y finite and > 0): how much y changes across the sweep, with
    no assumption on the curve's shape between. Returns a Series indexed by seed."""
    check_frame("frame", frame, ["seed", x, y], columns_from="x/y")
    if frame[x].nunique() < 2:
        raise ValueError(f"frame must hold at least two values of {x}")
    values = frame.pivot(index="seed", columns=x, values=y)
    if not (np.isfinite(values.to_numpy()).all() and (values.to_numpy() > 0).all()):
        raise ValueError(f"{y} must be finite and > 0 at every (seed, {x})")
    return (values[values.columns.max()] / values[values.columns.min()]).rename(
        f"{y} at the largest {x} / at the smallest"
    )


def progress_gap(
    runs: pd.DataFrame, first: str = "L_un", second: str = "L_mu", by: str = "N"
) -> pd.Series:
    """Per seed, how far apart two losses fall along training: with p_X(t) = (X(0) −
    X(t))/(X(0) − X(T)) the share of X's whole fall (step 0 to the last step T)
    reached at step t, the mean of p_first(t) − p_second(t) over the checkpoints 0 < t
    < T and over the groups ``by`` (e.g. N). 0 when the two fall in step; > 0 when
    ``first`` falls earlier. runs: one row per (``by``, seed, step). Returns a Series
    indexed by seed."""
    check_frame("runs", runs, ["seed", "step", by, first, second])
    gaps = {}
    for (group, seed), one in runs.sort_values("step").groupby([by, "seed"]):
        if len(one) < 3:
            raise ValueError("runs must hold at least 3 checkpoints per (by, seed)")
        shares = []
        for column in (first, second):
            values = one[column].to_numpy(dtype=float)
            fall = values[0] - values[-1]
            if not fall > 0:
                raise ValueError(
                    f"{column} must fall along training (N = {group}, seed {seed})"
                )
            shares.append((values[0] - values[1:-1]) / fall)
        gaps[(group, seed)] = float(np.mean(shares[0] - shares[1]))
    per_run = pd.Series(gaps).rename_axis([by, "seed"])
    return per_run.groupby(level="seed").mean().rename("progress gap")


def seed_summary(frame: pd.DataFrame, by, columns: Sequence[str]) -> pd.DataFrame:
    """For each group of the column(s) ``by`` of a tidy frame (one row per seed in a
    group), each of ``columns`` as "mean ± s.e." over the seeds
    (:func:`ccl_helpers.verdicts.format_estimate`); NaN values (runs that never got
    there) are left out: "(one seed)" where one is left, "—" where none is. Returns a
    frame of strings indexed by ``by``."""
    keys = [by] if isinstance(by, str) else list(by)
    columns = list(columns)
    if not keys or not columns:
        raise ValueError("by and columns must each name at least one column")
    check_frame("frame", frame, [*keys, *columns], columns_from="by/columns")
    groups = frame.groupby(keys if len(keys) > 1 else keys[0], sort=True)[columns]
    means, errors, counts = groups.mean(), groups.sem(), groups.count()
    if (groups.size() < 2).any():
        raise ValueError("frame must hold at least two seeds in every group of by")

    def cell(mean, se, count):
        if count == 0:
            return "—"
        return f"{mean:.4g} (one seed)" if count == 1 else format_estimate(mean, se)

    return pd.DataFrame(
        {
            column: [
                cell(m, e, c)
                for m, e, c in zip(means[column], errors[column], counts[column])
            ]
            for column in columns
        },
        index=means.index,
    )
