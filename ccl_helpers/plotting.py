"""The book's single plotting style, its colours and figure sizes, and its figure kinds.

Conventions: runs are drawn thin and light, their mean bold; bounds are dashed;
every axis is labelled (with units where there are any) and every figure has a legend.
Each quantity has one colour and one line style in the whole book (``QUANTITIES``);
figures draw it with ``style(name)``, which also tags each artist with the name (its
gid). A swept parameter (a width m, κ_M, α) takes the ``sweep_styles`` of a sequential
map; black ("limit") marks an exact or limiting curve (an ODE, a fit), grey
("reference") a constant reference.

Sizes: the book's column is ``COLUMN_PX`` CSS px wide in a 1400 px window. A figure of
``figsize(n)`` (``COLUMN_WIDTH_IN`` wide, at ``DPI``) is at most that many image px, so
it is shown at its natural size, and a font of s pt appears as s · DPI / 96 pt ≥ s pt
(``rendered_points``). Every font of ``use_style`` is ≥ ``MIN_FONT_PT`` = 9 pt.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns

from .checks import Int, Positive, check_frame, checked

PALETTE = "colorblind"
LINES = MappingProxyType(
    {
        "-": {"linestyle": "-", "linewidth": 2.2},  # a measured quantity's (mean) curve
        "--": {"linestyle": "--", "linewidth": 1.6},  # a bound or a limit
        ":": {"linestyle": ":", "linewidth": 0.9},  # a reference
    }
)
"""Line style -> its Matplotlib keywords (style and width)."""
RUN_STYLE = {"linewidth": 0.8, "alpha": 0.35}  # one run among seeds, under their mean
ERROR_BAND_STYLE = {"alpha": 0.25, "linewidth": 0}
SWEEP = "sweep"
"""The gid of the curves of a swept parameter (:func:`sweep_styles`)."""

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


class Quantity(NamedTuple):
    """How the book draws one quantity: its colour (hex) and line style (a key of
    :data:`LINES`: "-" measured or a method, "--" a bound or a limit, ":" a
    reference)."""

    color: str
    linestyle: str


QUANTITIES = MappingProxyType(
    {
        # losses
        # unsupervised contrastive loss L_un, L^N_un, Wen's L_S
        "L_un": Quantity("#0173b2", "-"),
        "L_mu": Quantity("#029e73", "-"),  # mean-classifier loss L^µ_sup
        "L_sup": Quantity("#de8f05", "-"),  # loss of the best linear classifier L_sup
        "loss_max": Quantity("#56b4e9", "-"),  # largest per-sample loss max_i ℓ(z_i)
        "L_block": Quantity("#9edae5", "-"),  # Arora et al.'s block loss L^block_un
        # mean-classifier loss on (k + 1)-tuples of classes
        "L_mu_tuple": Quantity("#66c2a5", "-"),
        # bounds
        # Arora et al.: (L_un − τ log 2)/(1 − τ)
        "curl_bound": Quantity("#d55e00", "--"),
        "curl_block_bound": Quantity("#fd8d3c", "--"),  # the same from L^block_un
        # (L^k_un − E log(1 + |I|))/(1 − τ_k)
        "k_negative_bound": Quantity("#c49c94", "--"),
        "k_negative_bound_tuple": Quantity("#8c564b", "--"),  # the same over (1 − τ⁺_k)
        "alpha": Quantity("#b185a6", "-"),  # Arora et al.'s factor α = 1/(1 − τ)
        # Merad et al. Lemma 1: L_un/p_min + log N_C
        "lemma1_bound": Quantity("#8c0800", "--"),
        "lemma1_bound_no_log": Quantity("#cc78bc", "--"),  # L_un/p_min
        # Merad et al. Lemma 2: L^N_un/p_cc(N)
        "lemma2_bound": Quantity("#b1400d", "--"),
        # L^N_un/min_c P(J ⊇ C∖{c})
        "lemma2_bound_anchor_excluded": Quantity("#ff7aa6", "--"),
        "lemma4_bound": Quantity("#a23582", "--"),  # Merad et al. Lemma 4: 2ε'/η
        # Chebyshev with Var T: Var T/(βN_C)²
        "chebyshev_bound": Quantity("#ff6f4e", "--"),
        # Merad et al. §3.1 as printed: π²/(6β²)
        "chebyshev_bound_source": Quantity("#9c9ede", "--"),
        "smoothness_source": Quantity("#d65f5f", "--"),  # Lemma 3 as printed: 2 + 8C²
        "smoothness_tight": Quantity("#591e71", "--"),  # the tighter B(C)
        "wen_rate": Quantity("#592f0d", "--"),  # Wen: sqrt(L_S^(0)/(cT))
        "lemma_a1_bound": Quantity("#7b4173", "--"),  # Lee Lemma A.1: log n/α
        "invariance_gap": Quantity("#637939", "--"),  # Lee Theorem 4.4 gap 1/||m|| − 1
        # norms, geometry, training
        "smoothness_exact": Quantity("#12711c", "-"),  # sup over the ball of ||∇²ℓ||
        "norm_max": Quantity("#ca9161", "-"),  # max_x ||f(x)||
        "norm_min": Quantity("#001c7f", "-"),  # min_x ||f(x)|| (η)
        "loss_norm": Quantity("#006374", "-"),  # norm of the loss vector ||loss^(t)||_2
        # ||W^(T) − W^(0)|| (query / only encoder)
        "movement_W": Quantity("#b8850a", "-"),
        "movement_theta": Quantity("#956cb4", "-"),  # ||θ^(T) − θ^(0)|| (key encoder)
        # gradient steps to reach a target loss
        "steps_to_target": Quantity("#5254a3", "-"),
        # P(|T − E T| ≥ βN_C), T the coupon time
        "collection_tail": Quantity("#17becf", "-"),
        "mean_gap": Quantity("#023eff", "-"),  # mean smooth-max gap (Lemma A.1)
        "largest_gap": Quantity("#e7298a", "-"),  # largest smooth-max gap (Lemma A.1)
        # gap of the attracting bound (Theorem 4.4)
        "attract_gap": Quantity("#6b6ecf", "-"),
        # probes
        "mean_classifier": Quantity("#6acc64", "-"),  # accuracy of the mean classifier
        "mean_centred": Quantity("#c885ff", "-"),  # mean classifier on centred features
        # mean classifier with unit-norm rows
        "mean_normalised": Quantity("#bcbd22", "-"),
        "linear_probe": Quantity("#e7ba52", "-"),  # linear-probe accuracy
        "knn": Quantity("#843c39", "-"),  # k-NN accuracy
        # methods and settings
        "contrastive": Quantity("#ad494a", "-"),
        "non_contrastive": Quantity("#8ca252", "-"),
        # finite-width gap to the infinite-width dynamics
        "width_gap": Quantity("#2c9bff", "-"),
        "two_encoders": Quantity("#4e4359", "-"),  # Wen: query and key encoders
        # one encoder, hidden layer trained
        "one_encoder_hidden": Quantity("#c80b4e", "-"),
        "one_encoder_all": Quantity("#8c6d31", "-"),  # one encoder, every layer trained
        "identity_augmentation": Quantity("#9b43b1", "-"),  # views equal to the input
        # Lee: the unnormalised dot-product similarity
        "dot_product": Quantity("#8b2be2", "-"),
        # Lee: the negative Euclidean similarity
        "neg_euclidean": Quantity("#1ac938", "-"),
        "balance_bound_contrastive": Quantity("#850b43", "--"),  # Lemma 4.5's bound
        "balance_bound_non_contrastive": Quantity("#0b4e21", "--"),  # the same
        "steps_to_gradient_target": Quantity("#437a64", "-"),  # steps to ||∇_z L|| ≤ ε'
        # exact curves and references
        # an exact or limiting curve: an ODE, a fit, a slope
        "limit": Quantity("#000000", "--"),
        "reference": Quantity("#808080", ":"),  # a constant or a reference line
        "shading": Quantity("#ebebeb", "-"),  # a shaded range of an axis
    }
)
"""The book's quantities, methods, bounds and references: name -> :class:`Quantity`.
No two share a colour, and any two are at least :data:`MIN_COLOR_DISTANCE` apart."""
MIN_COLOR_DISTANCE = 12.0
"""The least CIE76 ΔE in CIELAB between any two colours of :data:`QUANTITIES`."""


def quantity(name: str) -> Quantity:
    """The :class:`Quantity` (colour, line style) of the book's quantity ``name``."""
    if name not in QUANTITIES:
        raise ValueError(
            f"name must be one of the book's quantities {sorted(QUANTITIES)}, "
            f"got {name!r}"
        )
    return QUANTITIES[name]


def color(name: str) -> str:
    """The book's colour (hex) of the quantity ``name`` (:data:`QUANTITIES`)."""
    return quantity(name).color


def style(name: str, *, line: bool = True, **overrides) -> dict:
    """Matplotlib keywords that draw the quantity ``name``: its ``color``, ``gid=name``
    (so that every artist says which quantity it draws) and, if ``line``, its line
    style with the width of :data:`LINES`; ``overrides`` (``marker``, a thinner
    ``linewidth``, ...) are added last. A quantity's colour cannot be overridden."""
    look = quantity(name)
    if {"color", "c", "gid"} & set(overrides):
        raise ValueError(
            f"the colour and gid of {name!r} come from QUANTITIES; got overrides "
            f"{sorted(overrides)}"
        )
    lines = LINES[look.linestyle] if line else {}
    return {"color": look.color, "gid": name, **lines, **overrides}


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


def sweep_styles(values, linestyle: str = "-") -> dict:
    """The looks of a swept parameter's values: value -> Matplotlib keywords, a colour
    of viridis (dark to light, as RGBA), ``gid`` :data:`SWEEP` and the line of
    ``linestyle`` (a key of :data:`LINES`).

    Args:
        values: the parameter's values, in the order of the sweep (at least one).
    """
    if linestyle not in LINES:
        raise ValueError(f"linestyle must be one of {list(LINES)}, got {linestyle!r}")
    values = list(values)
    if not values:
        raise ValueError("values must hold at least one value of the swept parameter")
    if any(isinstance(v, numbers.Real) and not math.isfinite(v) for v in values):
        raise ValueError(f"values must be finite, got {values}")
    shades = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(values)))
    return {
        value: {"color": tuple(shade), "gid": SWEEP, **LINES[linestyle]}
        for value, shade in zip(values, shades)
    }


@checked(n_panels=Int(1, MAX_PANELS), n_rows=Int(1))
def figsize(n_panels: int = 1, n_rows: int = 1) -> tuple[float, float]:
    """(width, height) in inches of ``n_rows`` rows of ``n_panels`` panels (1..3) that
    fill the book's column, so that fonts keep their size as rendered."""
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


@checked(size_pt=Positive(convert=True), width_in=Positive(convert=True))
def rendered_points(size_pt: float, width_in: float = COLUMN_WIDTH_IN) -> float:
    """Size in CSS pt at which a font of ``size_pt`` appears in the book, in a figure
    ``width_in`` inches wide: the image is shrunk to the column when wider."""
    width_px = width_in * DPI
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
    look: str | Mapping,
    run: str = "seed",
    label: str | None = None,
    error_band: bool = False,
) -> plt.Axes:
    """Draw each run of ``history`` thin and their mean in the line of ``look``.

    Args:
        history: tidy data with columns ``x``, ``y`` and ``run`` (a row per run, x).
        look: the quantity drawn (a name of :data:`QUANTITIES`), or the keywords of
            :func:`style` or :func:`sweep_styles`.
        label: legend label of the mean curve (default ``y``).
        error_band: also shade mean ± one standard error of the mean over the runs
            (std/√runs at each x; needs ≥ 2 runs).
    """
    check_frame("history", history, [x, y, run], min_rows=0)
    look = style(look) if isinstance(look, str) else dict(look)
    if "color" not in look or "gid" not in look:
        raise ValueError(
            f"look must be a quantity's name or the keywords of style() or "
            f"sweep_styles(), got {look!r}"
        )
    for _, one in history.groupby(run):
        ax.plot(one[x], one[y], **{**look, **RUN_STYLE})
    by_x = history.groupby(x)[y]
    mean = by_x.mean()
    ax.plot(mean.index, mean.to_numpy(), label=label or y, **look)
    if error_band:
        if int(by_x.count().min()) < 2:
            raise ValueError("error_band needs at least 2 runs at every x")
        error = by_x.sem()
        band = {"color": look["color"], "gid": look["gid"], **ERROR_BAND_STYLE}
        ax.fill_between(mean.index, mean - error, mean + error, **band)
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
    look (:func:`style` of the name with "-" read as "_"), from ``finite``; and, if
    ``limit`` is given, the group's limit curve (e.g. an ODE) in the look of "limit",
    labelled once. Rows with a missing ``y`` are skipped."""
    for group in groups:
        one = finite[finite[by] == group].dropna(subset=[y])
        runs_and_mean(ax, one, x, y, look=group.replace("-", "_"), run=run, label=group)
        if limit is not None:
            curve = limit[limit[by] == group].dropna(subset=[y])
            ax.plot(
                curve[x],
                curve[y],
                label="ODE" if group == groups[0] else None,
                **style("limit"),
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


@checked(ncols=Int(1))
def legend_below(fig: plt.Figure, ax: plt.Axes, ncols: int = 1):
    """One legend for a multi-panel figure ``fig`` (constrained layout, as ``figure``
    gives), below its panels, holding the labelled lines of ``ax`` in ``ncols``
    columns."""
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
