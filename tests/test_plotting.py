"""Tests of ccl_helpers.plotting: the style, colours and figure sizes, the "runs + mean"
curves (and their bound variant), the axis finishing, and validation; Agg backend."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import itertools  # noqa: E402
import math  # noqa: E402

import figure_palette  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from bad_calls import bad_call  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402

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
    returned = plotting.runs_and_mean(ax, data, "step", "loss", look="L_un")
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
    # the quantity's colour and gid for the runs and their mean, the mean labelled by y
    assert {line.get_color() for line in lines} == {plotting.color("L_un")}
    assert {line.get_gid() for line in lines} == {"L_un"}
    assert mean.get_label() == "loss"
    assert all(
        run.get_label().startswith("_") for run in runs
    )  # runs stay out of the legend


def test_runs_and_mean_of_a_bound_is_dashed(ax):
    plotting.runs_and_mean(ax, history(), "step", "loss", look="curl_bound", label="b")
    *runs, mean = ax.get_lines()
    assert len(runs) == 3
    assert mean.get_linestyle() == "--" and all(
        run.get_linestyle() == "--" for run in runs
    )
    assert mean.get_linewidth() > max(run.get_linewidth() for run in runs)
    assert mean.get_label() == "b"


def test_runs_and_mean_takes_a_sweep_look_and_a_run_column(ax):
    data = history(seed_column="trial")
    shade = plotting.sweep_styles([1, 2])[2]
    plotting.runs_and_mean(ax, data, "step", "loss", run="trial", look=shade)
    lines = ax.get_lines()
    assert len(lines) == 4
    assert {to_rgba(line.get_color()) for line in lines} == {shade["color"]}
    assert {line.get_gid() for line in lines} == {plotting.SWEEP}


@pytest.mark.parametrize("look", ["no_such_quantity", {"color": "red"}, {}])
def test_runs_and_mean_needs_a_quantity_or_its_keywords(ax, look):
    with pytest.raises(ValueError, match="look|name"):
        plotting.runs_and_mean(ax, history(), "step", "loss", look=look)


def test_runs_and_mean_error_band_is_the_standard_error_of_the_mean(ax):
    data = history(seeds=(0, 1, 5))
    plotting.runs_and_mean(ax, data, "step", "loss", look="L_mu", error_band=True)
    (band,) = ax.collections
    assert band.get_gid() == "L_mu"
    vertices = band.get_paths()[0].vertices
    standard_error = np.std([0, 1, 5], ddof=1) / np.sqrt(3)
    mean = np.array([2 + s**0.5 for s in (0, 5, 10)])
    for step, centre in zip((0, 5, 10), mean):
        at_step = vertices[np.isclose(vertices[:, 0], step), 1]
        np.testing.assert_allclose(
            [at_step.min(), at_step.max()],
            [centre - standard_error, centre + standard_error],
        )
    with pytest.raises(ValueError, match="2 runs"):
        plotting.runs_and_mean(
            ax, history(seeds=(0,)), "step", "loss", look="L_mu", error_band=True
        )


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
        plotting.runs_and_mean(ax, history(), x, y, look="L_un", run=run)
    assert len(ax.get_lines()) == 0


def test_runs_with_limit_colours_each_group_and_labels_the_limit_once(ax):
    finite = pd.concat(
        [history().assign(method=m) for m in ("contrastive", "non-contrastive")]
    )
    limit = finite.groupby(["method", "step"], as_index=False)["loss"].mean()
    plotting.runs_with_limit(
        ax, finite, limit, "step", "loss", groups=["contrastive", "non-contrastive"]
    )
    lines = ax.get_lines()
    assert len(lines) == 2 * (3 + 1 + 1)  # per method: 3 runs, the mean, the limit
    labels = [
        line.get_label() for line in lines if not line.get_label().startswith("_")
    ]
    assert labels == ["contrastive", "ODE", "non-contrastive"]
    assert lines[3].get_color() == plotting.color("contrastive")
    assert lines[8].get_color() == plotting.color("non_contrastive")
    assert lines[4].get_color() == plotting.color("limit")
    assert lines[4].get_linestyle() == "--"
    assert [line.get_gid() for line in lines[3:5]] == ["contrastive", "limit"]


def test_finish_labels_the_axes(ax):
    plotting.runs_and_mean(
        ax, history(), "step", "loss", look="L_un", label="mean loss"
    )
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
    plotting.runs_and_mean(ax, history(), "step", "loss", look="L_un")
    plotting.finish(ax, xlabel="a", ylabel="b", legend=False)
    assert ax.get_legend() is None and ax.get_title() == ""


def test_use_style_sets_the_book_style():
    with matplotlib.rc_context():
        plt.rcParams["legend.frameon"] = True
        plotting.use_style()
        assert plt.rcParams["legend.frameon"] is False
        assert tuple(plt.rcParams["figure.figsize"]) == plotting._figsize(1)
        assert plt.rcParams["axes.titleweight"] == "bold"
        assert plt.rcParams["figure.dpi"] == plotting.DPI
        keys = ["font.size", "axes.labelsize", "axes.titlesize", "legend.fontsize"]
        keys += ["xtick.labelsize", "ytick.labelsize", "figure.titlesize"]
        sizes = [
            FontProperties(size=plt.rcParams[k]).get_size_in_points() for k in keys
        ]
        assert sizes and min(sizes) >= plotting.MIN_FONT_PT


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


def test_heatmaps_compared_side_by_side_share_their_colour_scale():
    fig, axes = plt.subplots(1, 2)
    low = pd.DataFrame([[1.0, 2.0]], index=["a"], columns=["x", "y"])
    high = pd.DataFrame([[3.0, 9.0]], index=["a"], columns=["x", "y"])
    for ax, table in zip(axes, (low, high)):
        plotting.heatmap(ax, table, label="accuracy", limits=(1.0, 9.0))
    assert [ax.collections[0].get_clim() for ax in axes] == [(1.0, 9.0)] * 2
    with pytest.raises(ValueError, match="limits"):
        plotting.heatmap(axes[0], low, label="accuracy", limits=(2.0, 2.0))
    plt.close(fig)


def test_heatmap_rejects_an_empty_table(ax):
    with pytest.raises(ValueError, match="table"):
        plotting.heatmap(ax, pd.DataFrame(), label="x")


def test_no_two_quantities_share_a_colour_or_look_alike():
    names = list(plotting.QUANTITIES)
    colours = [plotting.color(name) for name in names]
    assert len({to_rgba(colour) for colour in colours}) == len(names)
    closest = min(
        (figure_palette.color_distance(a, b), name_a, name_b)
        for (name_a, a), (name_b, b) in itertools.combinations(zip(names, colours), 2)
    )
    assert closest[0] >= plotting.MIN_COLOR_DISTANCE, closest
    assert {look.linestyle for look in plotting.QUANTITIES.values()} <= set(
        plotting.LINES
    )
    assert plotting.color("L_mu") == "#029e73"


def test_style_draws_the_quantity_and_names_it(ax):
    (line,) = ax.plot([0, 1], [1, 0], **plotting.style("chebyshev_bound"))
    assert line.get_color() == plotting.color("chebyshev_bound")
    assert line.get_gid() == "chebyshev_bound"
    assert line.get_linestyle() == "--"
    assert line.get_linewidth() == plotting.LINES["--"]["linewidth"]
    dots = ax.scatter([0], [0], **plotting.style("L_un", line=False, marker="x"))
    assert dots.get_gid() == "L_un"
    thin = plotting.style("limit", linewidth=0.9, linestyle=":")
    assert (thin["linewidth"], thin["linestyle"]) == (0.9, ":")
    with pytest.raises(ValueError, match="colour"):
        plotting.style("L_un", color="red")
    with pytest.raises(ValueError, match="colour"):
        plotting.style("L_un", gid="L_mu")


@pytest.mark.parametrize("name", ["L_unsup", "", "l_un", "bound"])
def test_a_quantity_of_an_unknown_name_raises(name):
    for read in (plotting.color, plotting.style, plotting.quantity):
        with pytest.raises(ValueError, match="name must be one of .*L_mu"):
            read(name)


@pytest.mark.parametrize("n_panels", [1, 2, 3])
def test_figsize_fills_the_column(n_panels):
    width, height = plotting._figsize(n_panels)
    assert width == plotting._COLUMN_WIDTH_IN
    assert (width + 2 * plotting._PAD_IN) * plotting.DPI <= plotting._COLUMN_PX
    assert 2.0 <= height <= 4.0
    taller = plotting._figsize(n_panels, n_rows=3)
    assert taller[0] == width and taller[1] > height


def test_figsize_rows_get_lower_with_more_panels():
    heights = [plotting._figsize(n)[1] for n in (1, 2, 3)]
    assert heights == sorted(heights, reverse=True) and len(set(heights)) == 3


@pytest.mark.parametrize("n_panels", [1, 3])
def test_figure_saves_an_image_no_wider_than_the_column(n_panels):
    import io

    with matplotlib.rc_context():
        plotting.use_style()
        figure, axes = plotting.figure(n_panels, sharey=True)
        panels = np.atleast_1d(axes)
        assert len(panels) == n_panels
        for ax in panels:
            ax.plot([0, 1], [0, 1], label="a legend label, outside")
            plotting.finish(ax, xlabel="x", ylabel="y", legend=False)
        plotting.finish(panels[-1], xlabel="x", ylabel="y", legend="right")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        plt.close(figure)
    width = plt.imread(io.BytesIO(buffer.getvalue())).shape[1]
    assert plotting._COLUMN_PX - 40 <= width <= plotting._COLUMN_PX


def rendered_points(size_pt, width_in):
    """The CSS pt at which a font of ``size_pt`` appears in the book, in a figure
    ``width_in`` inches wide: s · DPI / 96, the image shrunk to the column if wider."""
    width_px = width_in * plotting.DPI
    return size_pt * plotting.DPI / 96 * min(1.0, plotting._COLUMN_PX / width_px)


def test_the_smallest_font_renders_at_9_pt_or_more():
    for n_panels in (1, 2, 3):
        width = plotting._figsize(n_panels)[0]
        assert rendered_points(plotting.MIN_FONT_PT, width) >= 9.0
    # a figure twice the column's width would be shown at half its size
    wide = 2 * plotting._COLUMN_PX / plotting.DPI
    assert rendered_points(12.0, wide) == pytest.approx(6.25)


def test_sweep_styles_are_distinct_ordered_and_tagged():
    looks = plotting.sweep_styles([10, 40, 160])
    assert list(looks) == [10, 40, 160]
    shades = [look["color"] for look in looks.values()]
    assert len(set(shades)) == 3
    lightness = [sum(shade[:3]) for shade in shades]
    assert lightness == sorted(lightness)  # viridis: dark to light
    assert {look["gid"] for look in looks.values()} == {plotting.SWEEP}
    dashed = plotting.sweep_styles([10, 40], linestyle="--")
    assert {look["linestyle"] for look in dashed.values()} == {"--"}
    with pytest.raises(ValueError, match="values"):
        plotting.sweep_styles([])
    with pytest.raises(ValueError, match="linestyle"):
        plotting.sweep_styles([1], linestyle="-.")


def test_finish_legend_right_is_outside_the_axes(ax):
    plotting.runs_and_mean(ax, history(), "step", "loss", look="L_un")
    plotting.finish(ax, xlabel="a", ylabel="b", legend="right")
    ax.figure.canvas.draw()
    legend_box = ax.get_legend().get_window_extent()
    assert legend_box.x0 >= ax.get_window_extent().x1
    with pytest.raises(ValueError, match="legend"):
        plotting.finish(ax, xlabel="a", ylabel="b", legend="left")


def test_legend_below_holds_the_lines_of_one_panel_below_the_panels():
    figure, axes = plotting.figure(2)
    plotting.runs_and_mean(
        axes[0], history(), "step", "loss", look="L_un", label="mean loss"
    )
    axes[1].plot([0, 1], [0, 1], label="other panel")
    legend = plotting.legend_below(figure, axes[0], ncols=2)
    figure.canvas.draw()
    assert [text.get_text() for text in legend.get_texts()] == ["mean loss"]
    assert legend.get_window_extent().y1 <= axes[0].get_window_extent().y0
    with pytest.raises(ValueError, match="ncols"):
        plotting.legend_below(figure, axes[0], ncols=0)
    empty_figure, empty = plotting.figure(1)
    with pytest.raises(ValueError, match="labelled line"):
        plotting.legend_below(empty_figure, empty)
    plt.close(figure)
    plt.close(empty_figure)


def test_markers_are_distinct_per_category():
    shapes = plotting.markers(["base", "-blur", "+noise"])
    assert list(shapes) == ["base", "-blur", "+noise"]
    assert len(set(shapes.values())) == 3
    with pytest.raises(ValueError, match="categories"):
        plotting.markers([])
    with pytest.raises(ValueError, match="categories"):
        plotting.markers(range(len(plotting._MARKERS) + 1))


def test_log_axes_get_plain_tick_labels(ax):
    ax.plot([2, 9, 5000], [1e-4, 0.3, 0.9])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_yticks([1e-4, 0.01, 1], ["tiny", "small", "one"])  # set by hand: kept
    plotting.finish(ax, xlabel="x", ylabel="y", legend=False)
    ax.figure.canvas.draw()
    majors = [t.get_text() for t in ax.get_xticklabels()]
    assert {"1", "10", "100", "1,000"} <= set(majors)
    assert not any("times" in t or "e+" in t for t in majors)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tiny", "small", "one"]
    formatter = plotting._PlainLogFormatter()
    assert [formatter._num_to_string(x, 0, 0) for x in (6, 0.3, 1e-5)] == [
        "6",
        "0.3",
        "$10^{-5}$",
    ]


def test_lab_and_color_distance_against_known_values():
    np.testing.assert_allclose(figure_palette.lab("white"), [100, 0, 0], atol=1e-3)
    np.testing.assert_allclose(figure_palette.lab("black"), [0, 0, 0], atol=1e-9)
    # sRGB red in CIELAB (D65), from the CIE formulas
    np.testing.assert_allclose(
        figure_palette.lab("#ff0000"), [53.24, 80.09, 67.20], atol=0.01
    )
    assert figure_palette.color_distance("#ff0000", "#ff0000") == 0
    assert figure_palette.color_distance("white", "black") == pytest.approx(100)


def test_palette_problems_name_untagged_and_miscoloured_artists(ax):
    ax.plot([0, 1], [0, 1], **plotting.style("L_un"), label="fine")
    ax.plot([0, 1], [1, 0], color=plotting.color("L_mu"), label="untagged")
    ax.plot([0, 1], [1, 1], color="#000001", gid="L_sup", label="miscoloured")
    ax.plot([0, 1], [0, 0], color=plotting.color("L_un"), gid="L_sup")
    ax.plot([0, 1], [2, 2], **plotting.sweep_styles([1])[1])
    found = figure_palette.problems(
        [{"suptitle": "", "artists": figure_palette.drawn(ax.figure)}]
    )
    assert len(found) == 4, found
    assert "'untagged': gid None names no quantity" in found[0]
    assert "L_sup drawn in #000001" in found[1]
    assert "colour #0173b2 is used for ['L_sup', 'L_un']" in found[-1]
    empty, _ = plt.subplots()
    clean = figure_palette.drawn(empty)
    assert figure_palette.problems([{"suptitle": "", "artists": clean}]) == []
    plt.close(empty)


# ------------------------------------------------------------------ bad calls

_FIGURE, _AX = plt.subplots()
plt.close(_FIGURE)  # drawn on, never shown
_HISTORY = history()
_FINITE = history().assign(method="contrastive")
_TABLE = pd.DataFrame([[1.0, 2.0]], index=["a"], columns=["x", "y"])

BAD_CALLS = [
    bad_call(plotting.quantity, "name must be one of .*L_mu", "L_unsup"),
    bad_call(plotting.color, "name must be one of", "l_un"),
    bad_call(plotting.style, "name must be one of", "bound"),
    bad_call(plotting.style, "overrides", "L_un", color="red"),
    bad_call(plotting.markers, "values .*categories", []),
    bad_call(plotting.markers, "values .*categories", range(9)),
    bad_call(plotting.sweep_styles, "values", []),
    bad_call(plotting.sweep_styles, "values must be finite", [1.0, math.inf]),
    bad_call(plotting.sweep_styles, "linestyle", [1, 2], linestyle="-."),
    bad_call(plotting.figure, "n_panels", 0),
    bad_call(plotting.figure, "n_panels", 4),
    bad_call(plotting.figure, "n_panels", 1.5),
    bad_call(plotting.figure, "n_rows", 2, 0),
    bad_call(
        plotting.runs_and_mean, "history", _AX, _HISTORY, "epoch", "loss", look="L_un"
    ),
    bad_call(
        plotting.runs_and_mean, "look", _AX, _HISTORY, "step", "loss", look="L_unsup"
    ),
    bad_call(plotting.runs_and_mean, "look", _AX, _HISTORY, "step", "loss", look=3),
    bad_call(
        plotting.runs_and_mean,
        "error_band",
        _AX,
        history(seeds=(0,)),
        "step",
        "loss",
        look="L_un",
        error_band=True,
    ),
    bad_call(
        plotting.runs_with_limit,
        "groups",
        _AX,
        _FINITE,
        None,
        "step",
        "loss",
        groups="contrastive",
    ),
    bad_call(
        plotting.runs_with_limit,
        "groups",
        _AX,
        _FINITE,
        None,
        "step",
        "loss",
        groups=["supervised"],
    ),
    bad_call(
        plotting.runs_with_limit,
        "finite",
        _AX,
        _FINITE,
        None,
        "step",
        "loss",
        groups=["contrastive"],
        by="arm",
    ),
    bad_call(
        plotting.runs_with_limit,
        "limit",
        _AX,
        _FINITE,
        _FINITE.drop(columns="loss"),
        "step",
        "loss",
        groups=["contrastive"],
    ),
    bad_call(plotting.finish, "legend", _AX, xlabel="x", ylabel="y", legend="left"),
    bad_call(plotting.legend_below, "ncols", _FIGURE, _AX, ncols=0),
    bad_call(
        plotting.legend_below, "ax must hold at least one labelled line", _FIGURE, _AX
    ),
    bad_call(plotting.heatmap, "table", _AX, pd.DataFrame(), label="x"),
    bad_call(plotting.heatmap, "limits", _AX, _TABLE, label="x", limits=(2.0, 2.0)),
]
"""Every public callable but ``use_style``, which takes no argument."""


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
