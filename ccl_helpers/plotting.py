"""The book's single plotting style, its colours and figure sizes, and its figure kinds.

Conventions: runs are drawn thin and light, their mean bold; bounds are dashed;
every axis is labelled (with units where there are any) and every figure has a legend.
Each quantity has one colour and one line style in the whole book (``QUANTITIES``);
figures draw it with ``style(name)``, which also tags each artist with the name (its
gid). A swept parameter (a width m, κ_M, α) takes the ``sweep_styles`` of a sequential
map; black ("limit") marks an exact or limiting curve (an ODE, a fit), grey
("reference") a constant reference.

Sizes: the book's column is 784 CSS px wide in a 1400 px window. A figure of
``figure(n)`` (7.6 in wide, at ``DPI`` = 100) is at most that many image px, so it is
shown at its natural size, and a font of s pt appears as s · DPI / 96 pt ≥ s pt. Every
font of ``use_style`` is ≥ ``MIN_FONT_PT`` = 9 pt.
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

from ._checks import check_frame, check_int

__all__ = [
    "QUANTITIES",
    "LINES",
    "SWEEP",
    "MAX_PANELS",
    "DPI",
    "MIN_FONT_PT",
    "MIN_COLOR_DISTANCE",
    "quantity",
    "color",
    "style",
    "markers",
    "sweep_styles",
    "figure",
    "use_style",
    "runs_and_mean",
    "runs_with_limit",
    "finish",
    "legend_below",
    "heatmap",
]

_PALETTE = "colorblind"
LINES = MappingProxyType(
    {
        "-": {"linestyle": "-", "linewidth": 2.2},  # a measured quantity's (mean) curve
        "--": {"linestyle": "--", "linewidth": 1.6},  # a bound or a limit
        ":": {"linestyle": ":", "linewidth": 0.9},  # a reference
    }
)
"""Line style -> its Matplotlib keywords (style and width)."""
_RUN_STYLE = {"linewidth": 0.8, "alpha": 0.35}  # one run among seeds, under their mean
_ERROR_BAND_STYLE = {"alpha": 0.25, "linewidth": 0}
SWEEP = "sweep"
"""The gid of the curves of a swept parameter (:func:`sweep_styles`)."""

_COLUMN_PX = 784  # width of the book's content column at a 1400 px window (CSS px)
DPI = 100  # image px per inch of the stored figures
_COLUMN_WIDTH_IN = 7.6  # 760 px, + 2 × _PAD_IN of tight bounding box ≤ _COLUMN_PX
_PAD_IN = 0.05  # savefig pad around the tight bounding box (inches)
_ROW_HEIGHT_IN = {1: 3.4, 2: 3.0, 3: 2.6}  # height of one row of n panels
MAX_PANELS = 3  # panels in one row
MIN_FONT_PT = 9.0
_FONT_SIZES_PT = {
    "font.size": 10.0,
    "axes.labelsize": 10.0,
    "axes.titlesize": 10.0,
    "figure.titlesize": 11.0,
    "xtick.labelsize": 9.0,
    "ytick.labelsize": 9.0,
    "legend.fontsize": 9.0,
    "legend.title_fontsize": 9.0,
}


class _Quantity(NamedTuple):
    """How the book draws one quantity: its colour (hex) and line style (a key of
    :data:`LINES`: "-" measured or a method, "--" a bound or a limit, ":" a
    reference)."""

    color: str
    linestyle: str


QUANTITIES = MappingProxyType(
    {
        # losses
        # unsupervised contrastive loss L_un, L^N_un, Wen's L_S
        "L_un": _Quantity("#0173b2", "-"),
        "L_mu": _Quantity("#029e73", "-"),  # mean-classifier loss L^µ_sup
        "L_sup": _Quantity("#de8f05", "-"),  # loss of the best linear classifier L_sup
        "loss_max": _Quantity("#56b4e9", "-"),  # largest per-sample loss max_i ℓ(z_i)
        "L_block": _Quantity("#9edae5", "-"),  # Arora et al.'s block loss L^block_un
        # mean-classifier loss on (k + 1)-tuples of classes
        "L_mu_tuple": _Quantity("#66c2a5", "-"),
        # bounds
        # Arora et al.: (L_un − τ log 2)/(1 − τ)
        "curl_bound": _Quantity("#d55e00", "--"),
        "curl_block_bound": _Quantity("#fd8d3c", "--"),  # the same from L^block_un
        # (L^k_un − E log(1 + |I|))/(1 − τ_k)
        "k_negative_bound": _Quantity("#c49c94", "--"),
        # the same over (1 − τ⁺_k)
        "k_negative_bound_tuple": _Quantity("#8c564b", "--"),
        "alpha": _Quantity("#b185a6", "-"),  # Arora et al.'s factor α = 1/(1 − τ)
        # Merad et al. Lemma 1: L_un/p_min + log N_C
        "lemma1_bound": _Quantity("#8c0800", "--"),
        "lemma1_bound_no_log": _Quantity("#cc78bc", "--"),  # L_un/p_min
        # Merad et al. Lemma 2: L^N_un/p_cc(N)
        "lemma2_bound": _Quantity("#b1400d", "--"),
        # L^N_un/min_c P(J ⊇ C∖{c})
        "lemma2_bound_anchor_excluded": _Quantity("#ff7aa6", "--"),
        "lemma4_bound": _Quantity("#a23582", "--"),  # Merad et al. Lemma 4: 2ε'/η
        # Chebyshev with Var T: Var T/(βN_C)²
        "chebyshev_bound": _Quantity("#ff6f4e", "--"),
        # Merad et al. §3.1 as printed: π²/(6β²)
        "chebyshev_bound_source": _Quantity("#9c9ede", "--"),
        "smoothness_source": _Quantity("#d65f5f", "--"),  # Lemma 3 as printed: 2 + 8C²
        "smoothness_tight": _Quantity("#591e71", "--"),  # the tighter B(C)
        "wen_rate": _Quantity("#592f0d", "--"),  # Wen: sqrt(L_S^(0)/(cT))
        "lemma_a1_bound": _Quantity("#7b4173", "--"),  # Lee Lemma A.1: log n/α
        "invariance_gap": _Quantity("#637939", "--"),  # Lee Theorem 4.4 gap 1/||m|| − 1
        # norms, geometry, training
        "smoothness_exact": _Quantity("#12711c", "-"),  # sup over the ball of ||∇²ℓ||
        "norm_max": _Quantity("#ca9161", "-"),  # max_x ||f(x)||
        "norm_min": _Quantity("#001c7f", "-"),  # min_x ||f(x)|| (η)
        # norm of the loss vector ||loss^(t)||_2
        "loss_norm": _Quantity("#006374", "-"),
        # ||W^(T) − W^(0)|| (query / only encoder)
        "movement_W": _Quantity("#b8850a", "-"),
        "movement_theta": _Quantity("#956cb4", "-"),  # ||θ^(T) − θ^(0)|| (key encoder)
        # gradient steps to reach a target loss
        "steps_to_target": _Quantity("#5254a3", "-"),
        # P(|T − E T| ≥ βN_C), T the coupon time
        "collection_tail": _Quantity("#17becf", "-"),
        "mean_gap": _Quantity("#023eff", "-"),  # mean smooth-max gap (Lemma A.1)
        "largest_gap": _Quantity("#e7298a", "-"),  # largest smooth-max gap (Lemma A.1)
        # gap of the attracting bound (Theorem 4.4)
        "attract_gap": _Quantity("#6b6ecf", "-"),
        # probes
        "mean_classifier": _Quantity("#6acc64", "-"),  # accuracy of the mean classifier
        # mean classifier on centred features
        "mean_centred": _Quantity("#c885ff", "-"),
        # mean classifier with unit-norm rows
        "mean_normalised": _Quantity("#bcbd22", "-"),
        "linear_probe": _Quantity("#e7ba52", "-"),  # linear-probe accuracy
        "knn": _Quantity("#843c39", "-"),  # k-NN accuracy
        # methods and settings
        "contrastive": _Quantity("#ad494a", "-"),
        "non_contrastive": _Quantity("#8ca252", "-"),
        # finite-width gap to the infinite-width dynamics
        "width_gap": _Quantity("#2c9bff", "-"),
        "two_encoders": _Quantity("#4e4359", "-"),  # Wen: query and key encoders
        # one encoder, hidden layer trained
        "one_encoder_hidden": _Quantity("#c80b4e", "-"),
        # one encoder, every layer trained
        "one_encoder_all": _Quantity("#8c6d31", "-"),
        "identity_augmentation": _Quantity("#9b43b1", "-"),  # views equal to the input
        # Lee: the unnormalised dot-product similarity
        "dot_product": _Quantity("#8b2be2", "-"),
        # Lee: the negative Euclidean similarity
        "neg_euclidean": _Quantity("#1ac938", "-"),
        "balance_bound_contrastive": _Quantity("#850b43", "--"),  # Lemma 4.5's bound
        "balance_bound_non_contrastive": _Quantity("#0b4e21", "--"),  # the same
        # steps to ||∇_z L|| ≤ ε'
        "steps_to_gradient_target": _Quantity("#437a64", "-"),
        # exact curves and references
        # an exact or limiting curve: an ODE, a fit, a slope
        "limit": _Quantity("#000000", "--"),
        "reference": _Quantity("#808080", ":"),  # a constant or a reference line
        "shading": _Quantity("#ebebeb", "-"),  # a shaded range of an axis
    }
)
"""The book's quantities, methods, bounds and references: name -> how the book draws
it, a named tuple (``color``, a hex string; ``linestyle``, a key of :data:`LINES`: "-"
measured or a method, "--" a bound or a limit, ":" a reference). No two share a
colour, and any two are at least :data:`MIN_COLOR_DISTANCE` apart."""
MIN_COLOR_DISTANCE = 12.0
"""The least CIE76 ΔE in CIELAB between any two colours of :data:`QUANTITIES`."""


def quantity(name: str):
    """How the book draws its quantity ``name``: the named tuple (``color``,
    ``linestyle``) of :data:`QUANTITIES`."""
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


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""Marker shapes for the categories of one figure (e.g. augmentation strategies)."""


def markers(values) -> dict:
    """A distinct marker shape ("o", "s", "^", "D", "v", "P", "X", "*") for each of
    ``values`` (1 to 8 categories of one figure, e.g. augmentation strategies): value ->
    marker."""
    values = list(values)
    if not values or len(values) > len(_MARKERS):
        raise ValueError(
            f"values must hold 1..{len(_MARKERS)} categories, got {len(values)}"
        )
    return dict(zip(values, _MARKERS))


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


def _figsize(n_panels: int = 1, n_rows: int = 1) -> tuple[float, float]:
    """(width, height) in inches of ``n_rows`` rows of ``n_panels`` panels (1..3) that
    fill the book's column, so that fonts keep their size as rendered."""
    height = _ROW_HEIGHT_IN[n_panels] * (1.0 if n_rows == 1 else 0.8 * n_rows)
    return _COLUMN_WIDTH_IN, round(height, 2)


def figure(n_panels: int = 1, n_rows: int = 1, **subplots):
    """``plt.subplots(n_rows, n_panels)`` of ``n_rows`` rows of ``n_panels`` panels
    (1..:data:`MAX_PANELS`) that fill the book's column (7.6 in wide, so that fonts
    keep their size as rendered), with constrained layout (legends outside an axes stay
    inside the figure).

    Returns:
        (figure, axes) as ``plt.subplots`` returns them; ``subplots`` are passed on
        (``sharex``, ``sharey``, ...).
    """
    n_panels = check_int("n_panels", n_panels, 1, MAX_PANELS)
    n_rows = check_int("n_rows", n_rows)
    size = _figsize(n_panels, n_rows)
    return plt.subplots(
        n_rows, n_panels, figsize=size, layout="constrained", **subplots
    )


def use_style() -> None:
    """Set the book's style: seaborn white grid, colour-blind palette, the column's
    figure size, fonts ≥ 9 pt as rendered, constrained layout."""
    sns.set_theme(context="notebook", style="whitegrid", palette=_PALETTE)
    plt.rcParams.update(
        {
            "figure.figsize": _figsize(1),
            "figure.dpi": DPI,
            "savefig.dpi": "figure",
            "savefig.bbox": "tight",
            "savefig.pad_inches": _PAD_IN,
            "figure.constrained_layout.use": True,
            "legend.frameon": False,
            "axes.titleweight": "bold",
            **_FONT_SIZES_PT,
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
    if isinstance(look, str) and look not in QUANTITIES:
        raise ValueError(
            f"look must be one of the book's quantities {sorted(QUANTITIES)} or the "
            f"keywords of style() or sweep_styles(), got {look!r}"
        )
    look = style(look) if isinstance(look, str) else look
    if not isinstance(look, Mapping) or "color" not in look or "gid" not in look:
        raise ValueError(
            f"look must be a quantity's name or the keywords of style() or "
            f"sweep_styles(), got {look!r}"
        )
    look = dict(look)
    by_x = history.groupby(x)[y]
    if error_band and int(by_x.count().min()) < 2:
        raise ValueError("error_band needs at least 2 runs at every x")
    for _, one in history.groupby(run):
        ax.plot(one[x], one[y], **{**look, **_RUN_STYLE})
    mean = by_x.mean()
    ax.plot(mean.index, mean.to_numpy(), label=label or y, **look)
    if error_band:
        error = by_x.sem()
        band = {"color": look["color"], "gid": look["gid"], **_ERROR_BAND_STYLE}
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
    if isinstance(groups, str):
        raise ValueError(
            f"groups must be a sequence of the groups' names, got the string "
            f"{groups!r}: pass [{groups!r}]"
        )
    unknown = [
        g
        for g in groups
        if not isinstance(g, str) or g.replace("-", "_") not in QUANTITIES
    ]
    if unknown:
        raise ValueError(
            f"groups must name the book's quantities ('-' read as '_'), got {unknown}"
        )
    check_frame("finite", finite, [by, x, y, run], min_rows=0)
    if limit is not None:
        check_frame("limit", limit, [by, x, y], min_rows=0)
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


class _PlainLogFormatter(mticker.LogFormatter):
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


def _plain_log_ticks(ax: plt.Axes) -> plt.Axes:
    """Label the log-scaled axes of ``ax`` with plain numbers (majors and the minors
    the log formatter labels); an axis whose labels were set by hand is left alone."""
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log":
            continue
        if isinstance(axis.get_major_formatter(), mticker.LogFormatterSciNotation):
            axis.set_major_formatter(_PlainLogFormatter())
        if isinstance(axis.get_minor_formatter(), mticker.LogFormatterSciNotation):
            axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False))
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
    get plain tick labels ("6", "0.3", "2,000", not "6×10⁰"; 10⁻ᵏ below 0.001); an axis
    whose tick labels were set by hand keeps them."""
    if legend not in (True, False, "right"):
        raise ValueError(f"legend must be True, False or 'right', got {legend!r}")
    _plain_log_ticks(ax)
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
    ncols = check_int("ncols", ncols)
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
