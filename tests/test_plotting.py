"""Tests of ccl_helpers.plotting: the style, the "runs + mean" curves (and their bound variant),
the axis finishing, and validation. Uses matplotlib's Agg backend."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from ccl_helpers import plotting  # noqa: E402


def history(seeds=(0, 1, 2), steps=(0, 5, 10), seed_column="seed"):
    rows = [
        {"step": step, seed_column: seed, "loss": float(seed + step**0.5)}
        for seed in seeds
        for step in steps
    ]
    return (
        pd.DataFrame(rows)
        .sample(frac=1.0, random_state=0)
        .sort_values("step", kind="stable")
    )


@pytest.fixture
def ax():
    figure, axes = plt.subplots()
    yield axes
    plt.close(figure)


@pytest.mark.parametrize("seeds", [(0,), (0, 1, 2), (3, 7, 8, 9)])
def test_runs_and_mean_draws_one_line_per_run_and_a_bold_mean(ax, seeds):
    data = history(seeds)
    returned = plotting.runs_and_mean(ax, data, "step", "loss")
    assert returned is ax
    lines = ax.get_lines()
    assert len(lines) == len(seeds) + 1
    *runs, mean = lines
    assert all(mean.get_linewidth() > run.get_linewidth() for run in runs)
    assert all(run.get_alpha() is not None and run.get_alpha() < 1 for run in runs)
    assert all(line.get_linestyle() == "-" for line in lines)
    # the mean curve is the mean over runs at each x, in increasing x
    np.testing.assert_allclose(mean.get_xdata(), [0, 5, 10])
    np.testing.assert_allclose(
        mean.get_ydata(), [np.mean(seeds) + s**0.5 for s in (0, 5, 10)]
    )
    # each run's line holds that run's values
    drawn = sorted(tuple(np.asarray(run.get_ydata(), dtype=float)) for run in runs)
    expected = sorted(tuple(float(seed + s**0.5) for s in (0, 5, 10)) for seed in seeds)
    np.testing.assert_allclose(drawn, expected)
    # one colour for the runs and their mean, the mean labelled by y
    assert len({to_rgba(line.get_color()) for line in lines}) == 1
    assert mean.get_label() == "loss"
    assert all(
        run.get_label().startswith("_") for run in runs
    )  # runs stay out of the legend


def test_runs_and_mean_bound_is_dashed(ax):
    plotting.runs_and_mean(ax, history(), "step", "loss", bound=True, label="bound")
    *runs, mean = ax.get_lines()
    assert len(runs) == 3
    assert mean.get_linestyle() == "--" and all(
        run.get_linestyle() == "--" for run in runs
    )
    assert mean.get_linewidth() > max(run.get_linewidth() for run in runs)
    assert mean.get_label() == "bound"


def test_runs_and_mean_colour_and_run_column(ax):
    data = history(seed_column="trial")
    plotting.runs_and_mean(
        ax, data, "step", "loss", run="trial", color="red", label="mine"
    )
    lines = ax.get_lines()
    assert len(lines) == 4
    assert all(to_rgba(line.get_color())[:3] == (1.0, 0.0, 0.0) for line in lines)
    # two calls without a colour take successive colours of the cycle
    plotting.runs_and_mean(ax, history(), "step", "loss")
    plotting.runs_and_mean(ax, history(), "step", "loss")
    second, third = ax.get_lines()[7], ax.get_lines()[11]
    assert to_rgba(second.get_color()) != to_rgba(third.get_color())


@pytest.mark.parametrize(
    "x, y, run, missing",
    [
        ("epoch", "loss", "seed", "epoch"),
        ("step", "acc", "seed", "acc"),
        ("step", "loss", "trial", "trial"),
    ],
)
def test_runs_and_mean_missing_columns_raise(ax, x, y, run, missing):
    with pytest.raises(ValueError, match=missing):
        plotting.runs_and_mean(ax, history(), x, y, run=run)
    assert len(ax.get_lines()) == 0


def test_finish_labels_the_axes(ax):
    plotting.runs_and_mean(ax, history(), "step", "loss", label="mean loss")
    assert (
        plotting.finish(ax, xlabel="step", ylabel="loss (nats)", title="Training") is ax
    )
    assert (
        ax.get_xlabel() == "step"
        and ax.get_ylabel() == "loss (nats)"
        and ax.get_title() == "Training"
    )
    legend = ax.get_legend()
    assert [text.get_text() for text in legend.get_texts()] == ["mean loss"]


def test_finish_without_legend(ax):
    plotting.runs_and_mean(ax, history(), "step", "loss")
    plotting.finish(ax, xlabel="a", ylabel="b", legend=False)
    assert ax.get_legend() is None and ax.get_title() == ""


def test_use_style_sets_the_book_style():
    with matplotlib.rc_context():
        plt.rcParams["legend.frameon"] = True
        plotting.use_style()
        assert plt.rcParams["legend.frameon"] is False
        assert tuple(plt.rcParams["figure.figsize"]) == (6.4, 3.8)
        assert plt.rcParams["axes.titleweight"] == "bold"


def test_heatmap_labels_axes_and_colour_bar(ax):
    table = pd.DataFrame(
        [[1.0, 2.0], [3.0, 4.0]],
        index=pd.Index([1, 2], name="k"),
        columns=pd.Index([8, 16], name="N"),
    )
    plotting.heatmap(ax, table, label="ratio")
    assert ax.get_xlabel() == "N" and ax.get_ylabel() == "k"
    assert ax.figure.axes[-1].get_ylabel() == "ratio"
    assert [t.get_text() for t in ax.texts] == ["1.00", "2.00", "3.00", "4.00"]


def test_heatmap_rejects_an_empty_table(ax):
    with pytest.raises(ValueError, match="table"):
        plotting.heatmap(ax, pd.DataFrame(), label="x")
