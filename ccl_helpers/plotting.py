"""The book's single plotting style, its colours and figure sizes, and its figure kinds.

Conventions: runs are drawn thin and light, their mean bold; bounds are dashed;
every axis is labelled (with units where there are any) and every figure has a legend.
Each quantity has one colour in the whole book (``COLORS``, read with ``color``);
a swept parameter (a width m, κ_M, α) takes the ``sweep_colors`` of a sequential map;
black marks an exact or limiting curve (an ODE, a fit), grey a constant reference.

Sizes: the book's column is ``COLUMN_PX`` CSS px wide in a 1400 px window. A figure of
``figsize(n)`` (``COLUMN_WIDTH_IN`` wide, at ``DPI``) is at most that many image px, so
it is shown at its natural size, and a font of s pt appears as s · DPI / 96 pt ≥ s pt
(``rendered_points``). Every font of ``use_style`` is ≥ ``MIN_FONT_PT`` = 9 pt.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from types import MappingProxyType

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns

from .checks import check_frame, check_int, check_positive

PALETTE = "colorblind"
RUN_STYLE = {"linewidth": 0.8, "alpha": 0.35}
MEAN_STYLE = {"linewidth": 2.2}
BOUND_STYLE = {"linewidth": 1.6, "linestyle": "--"}
REFERENCE_STYLE = {"color": "grey", "linewidth": 0.9, "linestyle": ":"}
LIMIT_COLOR = "black"
ERROR_BAND_STYLE = {"alpha": 0.25, "linewidth": 0}

COLUMN_PX = 784  # width of the book's content column at a 1400 px window (CSS px)
DPI = 100  # image px per inch of the stored figures
COLUMN_WIDTH_IN = 7.6  # 760 px, + 2 × PAD_IN of tight bounding box ≤ COLUMN_PX
PAD_IN = 0.05  # savefig pad around the tight bounding box (inches)
ROW_HEIGHT_IN = {1: 3.4, 2: 3.0, 3: 2.6}  # height of one row of n panels
MAX_PANELS = 3  # panels in one row
MIN_FONT_PT = 9.0
FONT_SIZES_PT = {
    "font.size": 10.0,
    "axes.labelsize": 10.0,
    "axes.titlesize": 10.0,
    "figure.titlesize": 11.0,
    "xtick.labelsize": 9.0,
    "ytick.labelsize": 9.0,
    "legend.fontsize": 9.0,
    "legend.title_fontsize": 9.0,
}

# One colour per quantity, method or bound of the book: name -> hex colour.
COLORS = MappingProxyType(
    {
        # losses
        "L_un": "#0173b2",  # unsupervised contrastive loss L_un, L^N_un, Wen's L_S
        "L_mu": "#029e73",  # mean-classifier loss L^µ_sup
        "L_sup": "#de8f05",  # loss of the best linear classifier L_sup
        "loss_max": "#56b4e9",  # largest per-sample loss max_i ℓ(z_i)
        "L_block": "#9edae5",  # Arora et al.'s block loss L^block_un
        "L_mu_tuple": "#66c2a5",  # mean-classifier loss on (k + 1)-tuples of classes
        # bounds
        "curl_bound": "#d55e00",  # Arora et al.: (L_un − τ log 2)/(1 − τ)
        "curl_block_bound": "#fd8d3c",  # the same from L^block_un
        "k_negative_bound": "#c49c94",  # (L^k_un − E log(1 + |I|))/(1 − τ_k)
        "k_negative_bound_tuple": "#8c564b",  # the same over (1 − τ⁺_k)
        "alpha": "#756bb1",  # Arora et al.'s factor α = 1/(1 − τ)
        "lemma1_bound": "#8c0800",  # Merad et al. Lemma 1: L_un/p_min + log N_C
        "lemma1_bound_no_log": "#cc78bc",  # L_un/p_min
        "lemma2_bound": "#b1400d",  # Merad et al. Lemma 2: L^N_un/p_cc(N)
        "lemma2_bound_anchor_excluded": "#e377c2",  # L^N_un/min_c P(J ⊇ C∖{c})
        "lemma4_bound": "#a23582",  # Merad et al. Lemma 4: 2ε'/η
        "chebyshev_bound": "#e6550d",  # Chebyshev with Var T: Var T/(βN_C)²
        "chebyshev_bound_source": "#9c9ede",  # Merad et al. §3.1 as printed: π²/(6β²)
        "smoothness_source": "#d65f5f",  # Lemma 3 as printed: 2 + 8C²
        "smoothness_tight": "#591e71",  # the tighter B(C)
        "wen_rate": "#592f0d",  # Wen: sqrt(L_S^(0)/(cT))
        "lemma_a1_bound": "#7b4173",  # Lee Lemma A.1: log n/α
        "invariance_gap": "#637939",  # Lee Theorem 4.4 gap 1/||m|| − 1
        # norms, geometry, training
        "smoothness_exact": "#12711c",  # sup over the ball of ||∇²ℓ||
        "norm_max": "#ca9161",  # max_x ||f(x)||
        "norm_min": "#001c7f",  # min_x ||f(x)|| (η)
        "loss_norm": "#006374",  # norm of the loss vector ||loss^(t)||_2
        "movement_W": "#b8850a",  # ||W^(T) − W^(0)|| (query / only encoder)
        "movement_theta": "#956cb4",  # ||θ^(T) − θ^(0)|| (key encoder)
        "steps_to_target": "#5254a3",  # gradient steps to reach a target loss
        "collection_tail": "#17becf",  # P(|T − E T| ≥ βN_C), T the coupon time
        "mean_gap": "#023eff",  # mean smooth-max gap (Lemma A.1)
        "largest_gap": "#e7298a",  # largest smooth-max gap (Lemma A.1)
        "attract_gap": "#6b6ecf",  # gap of the attracting bound (Theorem 4.4)
        # probes
        "mean_classifier": "#6acc64",  # accuracy of the mean classifier
        "mean_centred": "#9467bd",  # mean classifier on centred features
        "mean_normalised": "#bcbd22",  # mean classifier with unit-norm rows
        "linear_probe": "#e7ba52",  # linear-probe accuracy
        "knn": "#843c39",  # k-NN accuracy
        # methods and settings
        "contrastive": "#ad494a",
        "supervised": "#e7969c",
        "random_init": "#9d7660",  # an encoder at its random initialisation
        "non_contrastive": "#8ca252",
        "balance_trace": "#bd9e39",  # trace variant of the balance score
        "width_gap": "#3182bd",  # finite-width gap to the infinite-width dynamics
        "two_encoders": "#393b79",  # Wen: query and key encoders
        "one_encoder_hidden": "#d6616b",  # one encoder, hidden layer trained
        "one_encoder_all": "#8c6d31",  # one encoder, every layer trained
        "identity_augmentation": "#a55194",  # views equal to the input
        "dot_product": "#8b2be2",  # Lee: the unnormalised dot-product similarity
        "neg_euclidean": "#1ac938",  # Lee: the negative Euclidean similarity
    }
)


def color(name: str) -> str:
    """The book's colour (hex) of the quantity, bound or method ``name`` (COLORS)."""
    if name not in COLORS:
        raise ValueError(
            f"name must be one of the book's quantities {sorted(COLORS)}, got {name!r}"
        )
    return COLORS[name]


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""Marker shapes for the categories of one figure (e.g. augmentation strategies)."""


def markers(values) -> dict:
    """A distinct marker (:data:`MARKERS`) for each of ``values``: value -> marker."""
    values = list(values)
    if not values or len(values) > len(MARKERS):
        raise ValueError(
            f"values must hold 1..{len(MARKERS)} categories, got {len(values)}"
        )
    return dict(zip(values, MARKERS))


def sweep_colors(values) -> dict:
    """Colours of a swept parameter's values (viridis, dark to light): value -> RGBA.

    Args:
        values: the parameter's values, in the order of the sweep (at least one).
    """
    values = list(values)
    if not values:
        raise ValueError("values must hold at least one value of the swept parameter")
    if any(isinstance(v, numbers.Real) and not math.isfinite(v) for v in values):
        raise ValueError(f"values must be finite, got {values}")
    shades = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(values)))
    return {value: tuple(shade) for value, shade in zip(values, shades)}


def figsize(n_panels: int = 1, n_rows: int = 1) -> tuple[float, float]:
    """(width, height) in inches of ``n_rows`` rows of ``n_panels`` panels (1..3) that
    fill the book's column, so that fonts keep their size as rendered."""
    n_panels = check_int("n_panels", n_panels, 1, MAX_PANELS)
    n_rows = check_int("n_rows", n_rows, 1)
    height = ROW_HEIGHT_IN[n_panels] * (1.0 if n_rows == 1 else 0.8 * n_rows)
    return COLUMN_WIDTH_IN, round(height, 2)


def figure(n_panels: int = 1, n_rows: int = 1, **subplots):
    """``plt.subplots(n_rows, n_panels)`` at ``figsize(n_panels, n_rows)`` with
    constrained layout (legends outside an axes stay inside the figure).

    Returns:
        (figure, axes) as ``plt.subplots`` returns them; ``subplots`` are passed on
        (``sharex``, ``sharey``, ...).
    """
    size = figsize(n_panels, n_rows)
    return plt.subplots(
        n_rows, n_panels, figsize=size, layout="constrained", **subplots
    )


def rendered_points(size_pt: float, width_in: float = COLUMN_WIDTH_IN) -> float:
    """Size in CSS pt at which a font of ``size_pt`` appears in the book, in a figure
    ``width_in`` inches wide: the image is shrunk to the column when wider."""
    size_pt = check_positive("size_pt", size_pt)
    width_px = check_positive("width_in", width_in) * DPI
    return size_pt * DPI / 96 * min(1.0, COLUMN_PX / width_px)


def use_style() -> None:
    """Set the book's style: seaborn white grid, colour-blind palette, the column's
    figure size, fonts ≥ 9 pt as rendered, constrained layout."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update(
        {
            "figure.figsize": figsize(1),
            "figure.dpi": DPI,
            "savefig.dpi": "figure",
            "savefig.bbox": "tight",
            "savefig.pad_inches": PAD_IN,
            "figure.constrained_layout.use": True,
            "legend.frameon": False,
            "axes.titleweight": "bold",
            **FONT_SIZES_PT,
        }
    )


def runs_and_mean(
    ax: plt.Axes,
    history: pd.DataFrame,
    x: str,
    y: str,
    *,
    run: str = "seed",
    label: str | None = None,
    color=None,
    bound: bool = False,
    error_band: bool = False,
) -> plt.Axes:
    """Draw each run of ``history`` thin and their mean bold (dashed if ``bound``).

    Args:
        history: tidy data with columns ``x``, ``y`` and ``run`` (a row per run, x).
        label: legend label of the mean curve (default ``y``).
        error_band: also shade mean ± one standard error of the mean over the runs
            (std/√runs at each x; needs ≥ 2 runs).
    """
    check_frame("history", history, [x, y, run], min_rows=0)
    color = color if color is not None else ax._get_lines.get_next_color()
    style = BOUND_STYLE if bound else {}
    for _, one in history.groupby(run):
        ax.plot(
            one[x],
            one[y],
            color=color,
            **RUN_STYLE,
            **{k: v for k, v in style.items() if k == "linestyle"},
        )
    by_x = history.groupby(x)[y]
    mean = by_x.mean()
    ax.plot(
        mean.index,
        mean.to_numpy(),
        color=color,
        label=label or y,
        **(BOUND_STYLE if bound else MEAN_STYLE),
    )
    if error_band:
        if int(by_x.count().min()) < 2:
            raise ValueError("error_band needs at least 2 runs at every x")
        error = by_x.sem()
        ax.fill_between(
            mean.index, mean - error, mean + error, color=color, **ERROR_BAND_STYLE
        )
    return ax


def runs_with_limit(
    ax: plt.Axes,
    finite: pd.DataFrame,
    limit: pd.DataFrame | None,
    x: str,
    y: str,
    *,
    groups: Sequence[str],
    by: str = "method",
    run: str = "seed",
) -> plt.Axes:
    """For each group (e.g. method) its runs thin and their mean bold in the group's
    colour (:func:`color` of the name with "-" read as "_"), from ``finite``; and, if
    ``limit`` is given, the group's limit curve (e.g. an ODE) dashed black, labelled
    once. Rows with a missing ``y`` are skipped."""
    for group in groups:
        one = finite[finite[by] == group].dropna(subset=[y])
        runs_and_mean(
            ax, one, x, y, run=run, label=group, color=color(group.replace("-", "_"))
        )
        if limit is not None:
            curve = limit[limit[by] == group].dropna(subset=[y])
            ax.plot(
                curve[x],
                curve[y],
                color=LIMIT_COLOR,
                label="ODE" if group == groups[0] else None,
                **BOUND_STYLE,
            )
    return ax


class PlainLogFormatter(mticker.LogFormatter):
    """Tick labels of a log axis as plain numbers ("6", "0.3", "2,000"), not "6×10⁰";
    powers of ten below 0.001 as 10⁻ᵏ. Which ticks get a label is the log formatter's
    choice."""

    def _num_to_string(self, x, vmin, vmax):
        if x >= 1 and float(x).is_integer():
            return f"{x:,.0f}"
        if x >= 1e-3:
            return f"{x:.4g}"
        exponent = round(math.log10(x))
        return f"$10^{{{exponent}}}$" if math.isclose(x, 10.0**exponent) else f"{x:.1g}"


def plain_log_ticks(ax: plt.Axes) -> plt.Axes:
    """Label the log-scaled axes of ``ax`` with plain numbers (majors and the minors
    the log formatter labels); an axis whose labels were set by hand is left alone."""
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log":
            continue
        if isinstance(axis.get_major_formatter(), mticker.LogFormatterSciNotation):
            axis.set_major_formatter(PlainLogFormatter())
        if isinstance(axis.get_minor_formatter(), mticker.LogFormatterSciNotation):
            axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
    return ax


def finish(
    ax: plt.Axes,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    legend: bool | str = True,
) -> plt.Axes:
    """Label the axes, set the title and draw the legend: inside the axes if
    ``legend`` is True, to their right if it is ``"right"``, none if False. Log axes
    get plain tick labels (:func:`plain_log_ticks`)."""
    if legend not in (True, False, "right"):
        raise ValueError(f"legend must be True, False or 'right', got {legend!r}")
    plain_log_ticks(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend == "right":
        ax.legend(loc="center left", bbox_to_anchor=(1, 0.5))
    elif legend:
        ax.legend()
    return ax


def legend_below(fig: plt.Figure, ax: plt.Axes, ncols: int = 1):
    """One legend for a multi-panel figure ``fig`` (constrained layout, as ``figure``
    gives), below its panels, holding the labelled lines of ``ax`` in ``ncols``
    columns."""
    ncols = check_int("ncols", ncols, 1)
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        raise ValueError("ax must hold at least one labelled line")
    return fig.legend(handles, labels, loc="outside lower center", ncols=ncols)


def heatmap(
    ax: plt.Axes,
    table: pd.DataFrame,
    *,
    label: str,
    fmt: str = ".2f",
    cmap: str = "viridis",
    annotate: bool = True,
    limits: tuple[float, float] | None = None,
) -> plt.Axes:
    """Draw ``table`` (rows × columns, index and columns named) as a heatmap with
    a labelled colour bar.

    The axes take the index and column names as labels; cells are annotated with
    ``fmt`` if ``annotate``. ``limits`` (low, high) fixes the colour scale, so that
    heatmaps compared side by side share it; default: the table's range.
    """
    if table.empty:
        raise ValueError("table must not be empty")
    low, high = (None, None) if limits is None else limits
    if limits is not None and not (np.isfinite([low, high]).all() and low < high):
        raise ValueError(
            f"limits must be finite (low, high) with low < high, got {limits!r}"
        )
    sns.heatmap(
        table,
        ax=ax,
        annot=annotate,
        fmt=fmt,
        cmap=cmap,
        vmin=low,
        vmax=high,
        cbar_kws={"label": label},
    )
    ax.set_ylabel(table.index.name or "")
    ax.set_xlabel(table.columns.name or "")
    return ax
