"""Figures 1 and 2: the lemmas' curves along training, of live or stored runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._checks import check_frame

LEMMA1_CURVES = (
    ("L_un", r"$L_{\rm un}(f)$", "L_un"),
    ("L_mu", r"$L^\mu_{\rm sup}(f, \mathcal{C})$", "L_mu"),
    ("L_sup", r"$L_{\rm sup}(f, \mathcal{C})$ (fitted)", "L_sup"),
    ("lemma1", r"Lemma 1: $L_{\rm un}/p_{\min} + \log N_C$", "lemma1_bound"),
    ("lemma1_no_log", r"$L_{\rm un}/p_{\min}$ (no $\log N_C$)", "lemma1_bound_no_log"),
)
"""The curves of Figure 1 (Lemma 1), each as (column, legend label, the quantity's name
in :data:`ccl_helpers.plotting.QUANTITIES`)."""
LEMMA2_CURVES = (
    ("L_un", r"$L^N_{\rm un}(f)$", "L_un"),
    ("L_mu", r"$L^\mu_{\rm sup}(f, \mathcal{C})$", "L_mu"),
    ("lemma2", r"Lemma 2: $L^N_{\rm un}/p_{cc}(N)$", "lemma2_bound"),
    (
        "lemma2_anchor_excluded",
        r"$L^N_{\rm un}/\min_c P(J \supseteq \mathcal{C}\setminus\{c\})$",
        "lemma2_bound_anchor_excluded",
    ),
)
"""The curves of Figure 2 (Lemma 2), as :data:`LEMMA1_CURVES`."""


def draw_lemma_curves(ax, runs: pd.DataFrame, curves) -> None:
    """Draw ``curves`` (:data:`LEMMA1_CURVES` or :data:`LEMMA2_CURVES`) of ``runs``
    (the records of one N, with :func:`add_lemma_bounds`' columns) against the training
    step: the seeds thin, their mean in the quantity's look, with a ±1 s.e. band for
    the losses (the bounds are dashed)."""
    from .. import plotting  # matplotlib loads with the first figure

    if isinstance(curves, str) or not all(
        isinstance(curve, tuple) and len(curve) == 3 for curve in curves
    ):
        raise ValueError(
            "curves must be (column, label, quantity) triples such as LEMMA1_CURVES, "
            f"got {curves!r}"
        )
    check_frame(
        "runs",
        runs,
        ["step", "seed", *(column for column, _, _ in curves)],
        columns_from="curves",
    )
    for column, label, name in curves:
        bound = plotting.quantity(name).linestyle == "--"
        plotting.runs_and_mean(
            ax, runs, "step", column, look=name, label=label, error_band=not bound
        )


def draw_stored_runs(runs: pd.DataFrame, negatives: Sequence[int] = (1, 35)):
    """Figures 1 and 2 of stored runs (e.g. the paper scale's, read back from JSON):
    for every data set of the ``data`` column and every N in ``negatives``, one panel
    of :func:`draw_lemma_curves` (Lemma 1's curves for N = 1, Lemma 2's otherwise; log
    scale for N > 1), at most 3 panels a row. Returns the figure."""
    from .. import plotting

    check_frame("runs", runs, ["data", "N", "step", "seed"])
    panels = [
        (name, int(n))
        for name in runs["data"].unique()
        for n in negatives
        if bool(((runs["data"] == name) & (runs["N"] == n)).any())
    ]
    if not panels:
        raise ValueError(f"runs hold none of N = {list(negatives)}")
    n_rows = -(-len(panels) // plotting.MAX_PANELS)
    fig, axes = plotting.figure(min(len(panels), plotting.MAX_PANELS), n_rows)
    for ax, (name, n) in zip(np.ravel(axes), panels):
        one = runs[(runs["data"] == name) & (runs["N"] == n)]
        draw_lemma_curves(ax, one, LEMMA1_CURVES if n == 1 else LEMMA2_CURVES)
        if n > 1:
            ax.set_yscale("log")
        plotting.finish(
            ax, xlabel="training step", ylabel="nats", title=f"{name}, N = {n}"
        )
    for ax in np.ravel(axes)[len(panels) :]:
        ax.set_visible(False)
    return fig
