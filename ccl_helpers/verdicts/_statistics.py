"""Per-seed statistics: estimates, simultaneous intervals, the decision rule and fits.

The seed is the unit: :func:`estimate` (paired or Welch), :func:`decide`,
:func:`per_seed_slopes`, :func:`power_law_fit` and :func:`top_set`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from torch import Tensor

from .._checks import (
    check_choice,
    check_frame,
    check_int,
    check_open_unit,
    check_positive,
)
from ._claims import EXPECTED, LEVEL, _finite


class Estimate(NamedTuple):
    """An estimate of δ from n seeds: its standard error and the t interval [low, high]
    on ``df`` degrees of freedom, simultaneous over a family of ``family`` claims (each
    interval at confidence 1 − :data:`LEVEL`/family, Bonferroni; 1 − LEVEL for one)."""

    estimate: float
    se: float
    low: float
    high: float
    df: float
    n: int
    family: int


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


def _t_quantile(df: float, family: int = 1) -> float:
    """The two-sided t quantile of a simultaneous interval,
    t_{df}(1 − LEVEL/(2·family)): Bonferroni over ``family`` intervals, each at
    confidence 1 − LEVEL/family."""
    return float(stats.t.ppf(1 - LEVEL / (2 * family), df))


def estimate(values, baseline=None, *, paired: bool = True, family: int = 1):
    """δ from per-seed measurements: the mean of ``values`` (no ``baseline``), of the
    paired differences values − baseline (``paired``, seeds in the same order), or the
    difference of the two means (Welch, seeds not shared), with its t interval
    simultaneous over ``family`` claims: half-width t_{df}(1 − LEVEL/(2·family))·se,
    LEVEL = 0.05 (Bonferroni over ``family`` intervals, each at confidence
    1 − LEVEL/family).

    values, baseline: one finite value per seed each (array-likes or tensors), ≥ 2.
    Returns an ``Estimate`` (a named tuple: estimate, se, low, high, df, n, family); a
    zero standard error gives a point interval.
    """
    family = check_int("family", family)
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
    half = _t_quantile(df, family) * se
    return Estimate(centre, se, centre - half, centre + half, df, int(n), family)


def decide(expected: str, low: float, high: float, null: float, margin: float) -> str:
    """The verdict of an empirical claim, read off its interval [low, high] and its band
    (null − margin, null + margin), the rule of the module's docstring:

    - "greater": *reproduced* if low > null + margin; *absent* if the interval lies
      inside the band; *contradicted* if high < null + margin and the interval is not
      inside the band; else *not resolved*. "less" is its mirror image.
    - "equal": *reproduced* if the interval lies inside the band; *contradicted* if it
      lies wholly outside it (low ≥ null + margin or high ≤ null − margin); else *not
      resolved*.
    """
    check_choice("expected", expected, EXPECTED)
    low, high = _finite("low", low), _finite("high", high)
    null, margin = _finite("null", null), _finite("margin", margin, positive=True)
    if low > high:
        raise ValueError(f"low must be ≤ high, got [{low}, {high}]")
    below, above = null - margin, null + margin
    inside = low > below and high < above
    if expected == "equal":
        if inside:
            return "reproduced"
        return "contradicted" if low >= above or high <= below else "not resolved"
    if expected == "less":  # the mirror image of "greater"
        low, high, below, above = -high, -low, -above, -below
    if low > above:
        return "reproduced"
    if inside:
        return "absent"
    return "contradicted" if high < above else "not resolved"


_MAX_SEEDS = 100_000
"""The largest number of seeds :func:`_seeds_to_decide` looks at."""


def _seeds_to_decide(found: Estimate, expected: str, null: float, margin: float):
    """The smallest number of seeds n′ at which the interval would decide the claim,
    were the estimate and the seed-to-seed spread to stay as they are: the half-width
    t_{df′}(1 − LEVEL/(2·family))·se·√(n/n′) below the distance from the estimate to
    the band's edge that decides it (null + margin for "greater", null − margin for
    "less", the nearer edge for "equal"), with df′ = df + n′ − n (n′ − 1 for paired and
    one-sample rows; for Welch rows n counts the seeds of both arms). None when even
    :data:`_MAX_SEEDS` would not (an estimate on the edge)."""
    below, above = null - margin, null + margin
    edges = {"greater": (above,), "less": (below,), "equal": (below, above)}[expected]
    distance = min(abs(found.estimate - edge) for edge in edges)
    n = np.arange(found.n + 1, _MAX_SEEDS + 1)
    half = stats.t.ppf(1 - LEVEL / (2 * found.family), found.df + n - found.n)
    half = half * found.se * np.sqrt(found.n / n)
    enough = np.flatnonzero(half < distance)
    return int(n[enough[0]]) if enough.size else None


def _fragile(low: float, high: float, se: float, null: float, margin: float) -> bool:
    """Whether an interval's end lies within one standard error of a boundary of the
    band (null ± margin): the last bits of training could move the verdict across."""
    ends = np.array([low, high])[:, None]
    bounds = np.array([null - margin, null + margin])[None, :]
    return bool((np.abs(ends - bounds) < se).any())


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


def power_law_fit(x, y, confidence: float = 0.95):
    """Log-log least squares: log y = a + b log x fitted by OLS over all points, with
    the t-distribution confidence interval of b (n − 2 degrees of freedom, standard
    error from the residuals).

    The interval treats the points as independent: right for independent runs (one
    seed, one x each), too narrow for the points of one run; for a claim across seeds
    fit each seed alone (:func:`per_seed_slopes`) and test the slopes. x, y:
    array-likes of n ≥ 3 finite positive numbers, at least two distinct x.

    Returns a ``PowerLawFit`` (a named tuple: slope, low, high, intercept, n).
    """
    check_open_unit("confidence", confidence)
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


def top_set(values, sd: float, df: int, confidence: float = 0.95) -> np.ndarray:
    """Which cells cannot be told apart from the best: value ≥ max − t·sd·√2, with t the
    two-sided ``confidence`` quantile of Student's t on ``df`` degrees of freedom.

    values: one single-run value per cell (e.g. the accuracy of each (α, λ) of a grid);
    sd: the standard deviation of one run (e.g. pooled over the cells run with several
    seeds, on ``df`` degrees of freedom), so sd·√2 is that of a difference of two cells.
    The peak's location is resolved only when a single cell is in the set."""
    sd = check_positive("sd", sd)
    df = check_int("df", df)
    check_open_unit("confidence", confidence)
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        raise ValueError(
            f"values must be a non-empty 1-d array of finite numbers, got {values!r}"
        )
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * sd * math.sqrt(2)
    return array >= array.max() - half
