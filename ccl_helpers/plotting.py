"""The book's single plotting style and its recurring figure kinds.

Conventions: runs are drawn thin and light, their mean bold; bounds are dashed;
every axis is labelled (with units where there are any) and every figure has a legend.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

PALETTE = "colorblind"
RUN_STYLE = {"linewidth": 0.8, "alpha": 0.35}
MEAN_STYLE = {"linewidth": 2.2}
BOUND_STYLE = {"linewidth": 1.6, "linestyle": "--"}


def use_style() -> None:
    """Set the book's seaborn style (white grid, colour-blind palette, readable fonts)."""
    sns.set_theme(
        context="notebook", style="whitegrid", palette=PALETTE, font_scale=0.95
    )
    plt.rcParams.update(
        {
            "figure.figsize": (6.4, 3.8),
            "figure.dpi": 100,
            "savefig.bbox": "tight",
            "legend.frameon": False,
            "axes.titleweight": "bold",
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
) -> plt.Axes:
    """Draw each run of ``history`` thin and their mean bold (dashed if ``bound``).

    Args:
        history: tidy data with columns ``x``, ``y`` and ``run`` (one row per run and x).
        label: legend label of the mean curve (default ``y``).
    """
    missing = {x, y, run} - set(history.columns)
    if missing:
        raise ValueError(
            f"history lacks the columns {sorted(missing)}; it has {list(history.columns)}"
        )
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
    mean = history.groupby(x, as_index=False)[y].mean()
    ax.plot(
        mean[x],
        mean[y],
        color=color,
        label=label or y,
        **(BOUND_STYLE if bound else MEAN_STYLE),
    )
    return ax


def finish(
    ax: plt.Axes,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    legend: bool = True,
) -> plt.Axes:
    """Label the axes, set the title and draw the legend."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend:
        ax.legend()
    return ax


def heatmap(
    ax: plt.Axes,
    table: pd.DataFrame,
    *,
    label: str,
    fmt: str = ".2f",
    cmap: str = "viridis",
    annotate: bool = True,
) -> plt.Axes:
    """Draw ``table`` (rows × columns, index and columns named) as a heatmap with a labelled colour bar.

    The axes take the index and column names as labels; cells are annotated with ``fmt`` if ``annotate``.
    """
    if table.empty:
        raise ValueError("table must not be empty")
    sns.heatmap(
        table, ax=ax, annot=annotate, fmt=fmt, cmap=cmap, cbar_kws={"label": label}
    )
    ax.set_ylabel(table.index.name or "")
    ax.set_xlabel(table.columns.name or "")
    return ax
