"""Per-seed statistics: estimates, intervals, p-values, Holm's adjustment and fits.

The seed is the unit: :func:`estimate` (paired or Welch), :func:`holm`,
:func:`per_seed_slopes`, :func:`power_law_fit` and :func:`top_set`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from torch import Tensor

from ..checks import (
    Choice,
    Int,
    OpenUnit,
    Optional,
    Positive,
    check_frame,
    checked,
)
from ._claims import EXPECTED, LEVEL, _FiniteReal


class Estimate(NamedTuple):
    """An estimate of δ from n seeds: its standard error, the t interval [low, high]
    at 1 − :data:`LEVEL` on ``df`` degrees of freedom, and three p-values (NaN where
    they need a margin and none is given): ``p_effect`` of the two-sided test of
    δ = null, ``p_equivalent`` of the equivalence test |δ − null| < margin (two
    one-sided tests), ``p_beyond`` of the test that δ lies beyond the margin on the
    side of the estimate."""

    estimate: float
    se: float
    low: float
    high: float
    df: float
    n: int
    p_effect: float
    p_equivalent: float
    p_beyond: float


def _seed_values(name: str, values) -> np.ndarray:
    if isinstance(values, Tensor):
        values = values.detach().cpu()
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size < 2 or not np.isfinite(array).all():
        raise ValueError(
            f"{name} must hold at least 2 finite values, one per seed, got "
            f"{np.asarray(values).tolist()!r}"
        )
    return array


def _p_value(shift: float, se: float, df: float, side: str) -> float:
    """The p-value of Student's t test that an estimate ``shift`` away from the
    hypothesised value (standard error ``se``, ``df`` degrees of freedom) lies beyond
    it: alternative "greater", "less" or "two-sided". With se = 0 the estimate is
    exact: p is 0 where it lies strictly on the alternative's side, else 1."""
    if se == 0:
        beyond = {"greater": shift > 0, "less": shift < 0, "two-sided": shift != 0}
        return 0.0 if beyond[side] else 1.0
    t = shift / se
    if side == "greater":
        return float(stats.t.sf(t, df))
    if side == "less":
        return float(stats.t.cdf(t, df))
    return float(2 * stats.t.sf(abs(t), df))


@checked(
    null=_FiniteReal(),
    margin=Optional(_FiniteReal(positive=True)),
    expected=Choice(EXPECTED),
)
def estimate(
    values,
    baseline=None,
    *,
    paired: bool = True,
    null: float = 0.0,
    margin: float | None = None,
    expected: str = "greater",
) -> Estimate:
    """δ from per-seed measurements: the mean of ``values`` (no ``baseline``), of the
    paired differences values − baseline (``paired``, seeds in the same order), or the
    difference of the two means (Welch, seeds not shared).

    values, baseline: one finite value per seed each (array-likes or tensors), ≥ 2.
    null, margin, expected: as in :class:`Claim`.
    Returns an :class:`Estimate`; a zero standard error gives a point interval and
    p-values of 0 or 1.
    """
    x = _seed_values("values", values)
    if baseline is None:
        centre, se, df = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), None
    else:
        y = _seed_values("baseline", baseline)
        if paired:
            if x.size != y.size:
                raise ValueError(
                    "values and baseline must hold one value per shared seed each, got "
                    f"{x.size} and {y.size} (paired=False for arms on other seeds)"
                )
            d = x - y
            centre, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
            df = None
        else:
            vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
            centre, se = float(x.mean() - y.mean()), float(math.sqrt(vx + vy))
            denominator = vx**2 / (x.size - 1) + vy**2 / (y.size - 1)
            df = float((vx + vy) ** 2 / denominator) if denominator > 0 else None
    n = x.size if baseline is None or paired else x.size + y.size
    if df is None:
        df = float(x.size - 1) if baseline is None or paired else float(n - 2)
    half = float(stats.t.ppf(1 - LEVEL / 2, df)) * se
    offset = centre - null
    p_effect = _p_value(offset, se, df, "two-sided")
    if margin is None:
        p_equivalent = p_beyond = math.nan
    else:
        p_equivalent = max(
            _p_value(offset + margin, se, df, "greater"),
            _p_value(offset - margin, se, df, "less"),
        )
        if offset >= 0:
            p_beyond = _p_value(offset - margin, se, df, "greater")
        else:
            p_beyond = _p_value(offset + margin, se, df, "less")
    return Estimate(
        centre,
        se,
        centre - half,
        centre + half,
        df,
        int(n),
        p_effect,
        p_equivalent,
        p_beyond,
    )


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values: the k-th smallest becomes
    max over j ≤ k of min(1, (m − j + 1)·p_(j)); NaN entries are left out of the family
    and stay NaN. Reject at level α where the adjusted value is ≤ α."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or ((p < 0) | (p > 1)).any():
        raise ValueError(
            f"p_values must be a 1-d array of values in [0, 1] or NaN, got {p_values!r}"
        )
    adjusted = np.full(p.shape, np.nan)
    family = np.flatnonzero(~np.isnan(p))
    order = family[np.argsort(p[family], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def format_estimate(value: float, se: float) -> str:
    """``value ± se`` at the precision the standard error allows (its two leading
    digits), e.g. "−0.0670 ± 0.0046"."""
    if not (math.isfinite(value) and math.isfinite(se)) or se < 0:
        raise ValueError(f"value and se must be finite, se ≥ 0, got {value}, {se}")
    digits = _digits(se)
    return f"{value:.{digits}f} ± {se:.{digits}f}".replace("-", "−")


def _digits(se: float) -> int:
    """Decimals that keep two significant digits of a standard error (3 for se = 0)."""
    return 3 if se == 0 else max(0, 1 - math.floor(math.log10(se)))


def per_seed_slopes(frame: pd.DataFrame, x: str, y: str, seed: str = "seed"):
    """The log-log slope of ``y`` on ``x`` fitted to each seed's points alone (OLS of
    log y on log x): one number per seed, the unit :meth:`Verdicts.test` takes.
    Returns a Series indexed by seed."""
    check_frame("frame", frame)
    for name, column in (("x", x), ("y", y), ("seed", seed)):
        if column not in frame.columns:
            raise ValueError(
                f"{name} must name a column of frame ({list(frame.columns)}), got "
                f"{column!r}"
            )
    slopes = {}
    for value, group in frame.groupby(seed, sort=True):
        fit = power_law_fit(group[x].to_numpy(), group[y].to_numpy())
        slopes[value] = fit.slope
    if len(slopes) < 2:
        raise ValueError(f"frame must hold at least 2 seeds, got {len(slopes)}")
    return pd.Series(slopes, name=f"slope of {y} on {x}").rename_axis(seed)


class PowerLawFit(NamedTuple):
    """y ≈ e^intercept · x^slope: the slope with its confidence interval [low, high],
    the intercept (of log y on log x) and the number of points n."""

    slope: float
    low: float
    high: float
    intercept: float
    n: int


@checked(confidence=OpenUnit())
def power_law_fit(x, y, confidence: float = 0.95) -> PowerLawFit:
    """Log-log least squares: log y = a + b log x fitted by OLS over all points, with
    the t-distribution confidence interval of b (n − 2 degrees of freedom, standard
    error from the residuals).

    The interval treats the points as independent: right for independent runs (one
    seed, one x each), too narrow for the points of one run; for a claim across seeds
    fit each seed alone (:func:`per_seed_slopes`) and test the slopes. x, y:
    array-likes of n ≥ 3 finite positive numbers, at least two distinct x.
    """
    log = {}
    for name, values in (("x", x), ("y", y)):
        array = np.asarray(
            values.cpu() if isinstance(values, Tensor) else values, dtype=float
        )
        if array.ndim != 1 or array.size < 3:
            raise ValueError(
                f"{name} must be one-dimensional with ≥ 3 points, got {array.shape}"
            )
        if not (np.isfinite(array).all() and (array > 0).all()):
            raise ValueError(f"{name} must be finite and > 0 (a log-log fit)")
        log[name] = np.log(array)
    if log["x"].size != log["y"].size:
        raise ValueError(
            f"x and y must have one length, got {log['x'].size}, {log['y'].size}"
        )
    if np.ptp(log["x"]) == 0:
        raise ValueError("x must hold at least two distinct values")
    n = log["x"].size
    centred = log["x"] - log["x"].mean()
    slope = float((centred * log["y"]).sum() / np.square(centred).sum())
    intercept = float(log["y"].mean() - slope * log["x"].mean())
    residuals = log["y"] - intercept - slope * log["x"]
    stderr = math.sqrt(
        float(np.square(residuals).sum()) / (n - 2) / np.square(centred).sum()
    )
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 2)) * stderr
    return PowerLawFit(slope, slope - half, slope + half, intercept, n)


@checked(sd=Positive(convert=True), df=Int(1), confidence=OpenUnit())
def top_set(values, sd: float, df: int, confidence: float = 0.95) -> np.ndarray:
    """Which cells cannot be told apart from the best: value ≥ max − t·sd·√2, with t the
    two-sided ``confidence`` quantile of Student's t on ``df`` degrees of freedom.

    values: one single-run value per cell (e.g. the accuracy of each (α, λ) of a grid);
    sd: the standard deviation of one run (e.g. pooled over the cells run with several
    seeds, on ``df`` degrees of freedom), so sd·√2 is that of a difference of two cells.
    The peak's location is resolved only when a single cell is in the set."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        raise ValueError(
            f"values must be a non-empty 1-d array of finite numbers, got {values!r}"
        )
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * sd * math.sqrt(2)
    return array >= array.max() - half
