"""The benchmark scripts (benchmarks/): the host-read counter counts what it should and
the training steps of Chapters 1–4 read nothing back, the stacked losses of Chapters
1–3 trace into one compiled graph, the seed-stacking comparison
trains the same models on both sides, the chapter-time report parses nbval's JUnit XML,
and benchmarks/README.md carries the table's markers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import bench_exact_expectation  # noqa: E402
import bench_host_syncs  # noqa: E402
import bench_losses  # noqa: E402
import bench_vmap_seeds  # noqa: E402
import chapter_times  # noqa: E402
import run_all  # noqa: E402


def test_vmap_benchmark_sides_train_the_same_models(monkeypatch):
    """Both sides of every case end at the same parameters up to rounding (2 steps, one
    repetition)."""
    monkeypatch.setenv("CI", "1")
    rows = bench_vmap_seeds.run(steps=2, repeats=1, device="cpu")
    assert [r["model"] for r in rows] == [
        c.name for c in bench_vmap_seeds.cases(torch.device("cpu"))
    ]
    for r in rows:
        assert r["max_param_difference"] < 1e-4, r
        assert (
            r["stacked_s"] > 0
            and r["sequential_s"] > 0
            and r["goal"] == bench_vmap_seeds.GOAL_CPU
        )
        assert (
            0 < r["compute_share_sequential"] < 1 and 0 < r["compute_share_stacked"] < 1
        )
        assert (
            r["ceiling"] == pytest.approx(1 / r["compute_share_sequential"])
            and r["ceiling"] > 1
        )


def test_readme_table_is_replaced_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        f"intro\n{run_all.README_START}\nold table\n{run_all.README_END}\nrest\n"
    )
    run_all.write_readme_table(readme, "| new |")
    assert (
        readme.read_text()
        == f"intro\n{run_all.README_START}\n| new |\n{run_all.README_END}\nrest\n"
    )
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="bench-table"):
        run_all.write_readme_table(readme, "| new |")


def test_benchmarks_readme_has_the_table_markers():
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert 0 <= text.find(run_all.README_START) < text.find(run_all.README_END)


def test_chapter_times_sums_cells_and_ranks_the_slowest(tmp_path, capsys):
    report = tmp_path / "nbval.xml"
    report.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="book.01_curl_framework.ipynb" name="Cell 0" time="3.0" />'
        '<testcase classname="book.01_curl_framework.ipynb" '
        'name="Cell 1" time="60.0" />'
        '<testcase classname="book.02_multiple_negatives.ipynb" '
        'name="Cell 0" time="57.0" />'
        "</testsuite></testsuites>"
    )
    assert chapter_times.chapter_times(str(report)) == {
        "book/01_curl_framework.ipynb": 63.0,
        "book/02_multiple_negatives.ipynb": 57.0,
    }
    chapter_times.main([str(report), "--top", "2"])
    out = capsys.readouterr().out
    assert (
        "book/01_curl_framework.ipynb: 1.1 min (63 s)" in out
        and "all notebooks: 2.0 min" in out
    )
    slowest = [line for line in out.splitlines() if " s (" in line]
    assert (
        len(slowest) == 2
        and "01_curl_framework cell 1" in slowest[0]
        and "02_multiple_negatives cell 0" in slowest[1]
    )


def test_chapter_times_fails_past_its_limit_naming_the_slowest(tmp_path, capsys):
    """Two notebooks side by side: the wall time (the suite's, 50 min) is what the limit
    reads, not the sum of the cells (70 min)."""
    report = tmp_path / "nbval.xml"
    report.write_text(
        '<testsuites><testsuite time="3000.0">'
        '<testcase classname="book.01_curl_framework.ipynb" '
        'name="Cell 0" time="2940.0" />'
        '<testcase classname="book.05_supervised_approximation.ipynb" '
        'name="Cell 0" time="1260.0" />'
        "</testsuite></testsuites>"
    )
    assert chapter_times.wall_time(str(report)) == 3000.0
    assert chapter_times.main([str(report), "--limit", "60"]) == 0
    assert "in 50.0 min of wall time" in capsys.readouterr().out
    assert chapter_times.main([str(report), "--limit", "40"]) == 1
    said = capsys.readouterr().err
    assert "took 50.0 min, over the limit of 40 min" in said
    assert said.index("01_curl_framework 49.0 min") < said.index(
        "05_supervised_approximation 21.0 min"
    )


def test_loss_benchmark_runs_without_its_optional_comparator(monkeypatch, capsys):
    """Without pytorch-metric-learning only the package's side is timed, with one line
    that says so, and the run succeeds."""
    monkeypatch.setitem(sys.modules, "pytorch_metric_learning", None)
    monkeypatch.setattr(bench_losses, "DEFAULT_BATCHES", (8,))
    monkeypatch.setattr(bench_losses, "DEFAULT_DIMS", (4,))
    assert bench_losses.main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("pytorch-metric-learning is not installed") == 1
    rows = bench_losses.run(repeats=1)
    assert len(rows) == 2 and not any(r["pml_fits"] for r in rows)
    assert all(r["ours_s"] > 0 for r in rows)


def test_host_reads_are_counted_per_step():
    """A loop that reads one value a step, through ``item``, ``bool`` or a boolean
    mask, gives one read per step; Adam's own step counters are not counted."""
    x = torch.randn(4, requires_grad=True)
    optimizer = torch.optim.Adam([x])

    def loop(n_steps, read):
        for _ in range(n_steps):
            loss = x.square().sum()
            read(loss)
            loss.backward()
            optimizer.step()

    for read in (
        lambda v: v.item(),
        lambda v: bool(v > 0),
        lambda v: x.detach()[x.detach() > 0],
    ):
        found = bench_host_syncs.per_step(lambda n, read=read: loop(n, read), 2, 5)
        assert found["per_step"] == 1, found
    assert bench_host_syncs.per_step(lambda n: loop(n, lambda v: v), 2, 5) == {
        "per_step": 0,
        "by_name": {},
    }


def test_training_steps_of_chapters_1_to_4_read_nothing_back(monkeypatch):
    """No host synchronisation inside the training loops of Chapters 1–4 (the
    counts of benchmarks/README.md); Chapter 5's come from its augmentations."""
    monkeypatch.setenv("CI", "1")
    rows = {r["case"][:9]: r for r in bench_host_syncs.run("cpu", short=2, long=4)}
    assert set(rows) == {f"Chapter {i}" for i in range(1, 6)}
    for chapter in ("Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"):
        assert rows[chapter]["per_step"] == 0, rows[chapter]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_stacked_losses_of_chapters_1_to_3_trace_as_one_graph(index):
    """torch.compile's lever: each chapter's vmapped loss (bench_compile's stacked
    side) traces into one graph, with no break back into eager Python."""
    from ccl_helpers import train

    case = bench_vmap_seeds.cases(torch.device("cpu"))[index]
    model = train.StackedModel(case.make_module, case.n_models, seed=0)
    loss = bench_vmap_seeds.stacked_loss(model, case.loss_fn)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(loss)(model.params, model.buffers, case.sample(1))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), [
        str(reason.reason) for reason in explained.break_reasons
    ]


def test_exact_expectation_timing_compares_the_same_loss():
    """Both sides of the exact-expectation benchmark compute the same L_S, and it
    reports what it timed."""
    q = torch.randn(
        6, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64
    )
    k = torch.randn(
        6, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )
    result = bench_exact_expectation.time_exact_expectation(
        q, k, 2, repeats=2, loop_repeats=1
    )
    assert set(result) == {
        "vectorised_s",
        "loop_s",
        "ratio",
        "abs_difference",
        "n_sets",
    }
    assert (
        result["abs_difference"] < 1e-12
        and result["n_sets"] == 6 * 10
        and result["ratio"] > 0
    )
    for bad in ({"repeats": 0}, {"loop_repeats": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            bench_exact_expectation.time_exact_expectation(q, k, 2, **bad)
