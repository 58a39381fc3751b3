"""Analysis of Algorithm 1's histories: averages, constants, ratios, slopes.

Running averages, descent constants, Lemma 4.3's ratios and late slopes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._checks import check_frame, check_int, check_positive
from ..verdicts import power_law_fit


def running_average(
    history: pd.DataFrame,
    column: str = "loss_norm",
    by: Sequence[str] = ("width", "seed"),
) -> pd.Series:
    """(1/T) Σ_{t=0}^{T−1} value^(t) at T = step + 1, per group ``by`` (the left side of
    Theorem 4.2 for ``column="loss_norm"``); aligned with ``history``'s index."""
    check_frame("history", history, ["step"])
    check_frame("history", history, [column], columns_from="column")
    check_frame("history", history, list(by), columns_from="by")
    ordered = history.sort_values([*by, "step"])
    sums = ordered.groupby(list(by))[column].cumsum()
    return (sums / (ordered["step"] + 1)).reindex(history.index)


def descent_constant(
    history: pd.DataFrame, by: Sequence[str] = ("width", "seed")
) -> pd.Series:
    """c = min_t (L_S^(t) − L_S^(t+1)) / ‖loss^(t)‖² per group: the measured constant of
    the proof's one-step descent L_S^(t+1) ≤ L_S^(t) − c‖loss^(t)‖² (Theorem 4.2's
    Ω(min(η, γ) δ m / (n³ d))). With c > 0, Cauchy–Schwarz and telescoping give (1/T)
    Σ_{t<T} ‖loss^(t)‖ ≤ (L_S^(0) / (c T))^{1/2}."""
    check_frame("history", history, ["loss", "loss_norm", "step"])
    check_frame("history", history, list(by), columns_from="by")

    def one(group: pd.DataFrame) -> float:
        group = group.sort_values("step")
        decrease = group["loss"].to_numpy()[:-1] - group["loss"].to_numpy()[1:]
        return float(np.min(decrease / group["loss_norm"].to_numpy()[:-1] ** 2))

    return (
        history.groupby(list(by))[["step", "loss", "loss_norm"]]
        .apply(one)
        .rename("descent_constant")
    )


def lemma43_ratios(history: pd.DataFrame) -> pd.DataFrame:
    """Lemma 4.3's ratios divided by m/d: ``ratio_W`` = ‖∇_W L_S‖²_F / Σ_i‖loss~_i‖² /
    (m/d) and ``ratio_theta`` = ‖∇_θ L_S‖²_F / Σ_i‖loss^_i‖² / (m/d), for every row of
    an :func:`algorithm1` history (Definition 4.1's loss vectors, with the 1/n; the
    source's bounds then read Ω(δ/n) ≤ ratio ≤ O(L n))."""
    check_frame(
        "history",
        history,
        ["grad_W_sq", "tilde_sq", "grad_theta_sq", "hat_sq", "width", "out_features"],
    )
    scale = history["width"] / history["out_features"]
    return pd.DataFrame(
        {
            "ratio_W": history["grad_W_sq"] / history["tilde_sq"] / scale,
            "ratio_theta": history["grad_theta_sq"] / history["hat_sq"] / scale,
        },
        index=history.index,
    )


def late_slopes(
    history: pd.DataFrame,
    column: str = "running_average",
    *,
    decades: float = 1.0,
    offset: float = 0.0,
    n_points: int = 25,
    by: Sequence[str] = ("width", "seed"),
) -> pd.Series:
    """The log-log slope of ``column`` against T = step + 1 late in each run: one slope
    per group ``by`` (a Series indexed by ``by``), each fitted to its own run alone.

    The window spans ``decades`` decades and ends ``offset`` decades before the run's
    last T: T from T_max·10^{−(offset + decades)} to T_max·10^{−offset}, at ``n_points``
    log-spaced values of T (rounded, duplicates dropped; ≥ 3 needed), OLS of log value
    on log T (:func:`ccl_helpers.verdicts.power_law_fit`). On the running average
    (Theorem 4.2's left side, :func:`running_average`) a slope ≤ −1/2 is the proof's
    rate T^{−1/2}. Values must be > 0 on the window.
    """
    check_frame("history", history, ["step"])
    decades = check_positive("decades", decades)
    offset = check_positive("offset", offset, allow_zero=True)
    n_points = check_int("n_points", n_points, 3)
    check_frame("history", history, [column], columns_from="column")
    check_frame("history", history, list(by), columns_from="by")
    slopes = {}
    for key, group in history.groupby(list(by), sort=True):
        last = float(group["step"].max()) + 1
        grid = np.unique(
            np.round(
                np.geomspace(
                    last * 10 ** -(offset + decades), last * 10**-offset, n_points
                )
            )
        )
        window = group[group["step"].isin(grid - 1)]
        if len(window) < 3:
            raise ValueError(
                f"the window of decades = {decades}, offset = {offset} holds "
                f"{len(window)} recorded steps of the run {key}; it needs ≥ 3"
            )
        slopes[key] = power_law_fit(
            window["step"].to_numpy() + 1.0, window[column].to_numpy()
        ).slope
    index = pd.MultiIndex.from_tuples(list(slopes), names=list(by))
    if index.nlevels == 1:
        index = index.get_level_values(0)
    return pd.Series(list(slopes.values()), index=index, name=f"late slope of {column}")
