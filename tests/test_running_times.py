"""The running-times data and page (tests/running_times.py, fed by
tests/chapter_times.py --store): a JUnit report becomes a run of one scale with its
provenance, runs of other scales and of other notebooks are kept, and the page shows
each notebook's time per scale, the totals, the goals and what was not measured; the
committed page is the one the committed data gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import chapter_times  # noqa: E402
import running_times  # noqa: E402

MACHINE = {"cpus": 2, "torch": "2.13.0+cpu", "device": "cpu (no GPU)"}


def junit(path: Path, cases: list[tuple[str, int, float]], stamp: str) -> str:
    """A JUnit report of nbval's form: (notebook, cell, seconds) per test case."""
    rows = "".join(
        f'<testcase classname="book.{name}.ipynb" name="Cell {cell}" time="{s}" />'
        for name, cell, s in cases
    )
    path.write_text(
        f'<testsuites><testsuite name="pytest" timestamp="{stamp}">{rows}'
        "</testsuite></testsuites>"
    )
    return str(path)


def row(page: str, first: str) -> list[str]:
    """The cells of the page's table row whose first cell is ``first``."""
    line = next(x for x in page.splitlines() if x.startswith(f"| {first} |"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_a_report_is_stored_as_a_run_and_the_page_rewritten(tmp_path, capsys):
    report = junit(
        tmp_path / "smoke.xml",
        [("01_curl_framework", 0, 3.0), ("01_curl_framework", 1, 41.0)]
        + [("02_multiple_negatives", 0, 12.5)],
        "2026-11-27T08:06:37.139150+00:00",
    )
    data, page = tmp_path / "times.json", tmp_path / "running_times.md"
    chapter_times.main(
        [report, "--scale", "smoke", "--store", str(data), "--page", str(page)]
    )
    assert "stored in" in capsys.readouterr().out
    (run,) = json.loads(data.read_text())["smoke"]
    assert run["seconds"] == {"01_curl_framework": 44.0, "02_multiple_negatives": 12.5}
    assert run["command"] == "make profile SCALE=smoke" and run["date"] == "2026-11-27"
    assert set(run["machine"]) == {"cpus", "torch", "device"}
    text = page.read_text()
    assert row(text, "1. {doc}`01_curl_framework`") == [
        "44 s",
        "not measured",
        "not measured",
    ]
    assert row(text, "2. {doc}`02_multiple_negatives`")[0] == "12 s"
    n_notebooks = len(running_times.toc_notebooks(ROOT / "_toc.yml"))
    assert row(text, "all notebooks")[0] == f"56 s (2 of {n_notebooks})"
    # Chapter 1 is over the smoke goal of 20 s per notebook, Chapter 2 is not
    assert "Over the `smoke` goal: {doc}`Chapter 1 <01_curl_framework>`." in text
    assert "- `paper`: not measured yet (its goal is set for one GPU)." in text


def test_runs_merge_by_scale_and_by_notebook():
    first = running_times.new_run(
        {"book/a.ipynb": 100.0, "book/b.ipynb": 200.0},
        command="make test",
        date="2026-11-26",
        machine=MACHINE,
    )
    data = running_times.merge({}, "standard", first)
    smoke = running_times.new_run(
        {"a": 5.0}, command="x", date="2026-11-27", machine=MACHINE
    )
    data = running_times.merge(data, "smoke", smoke)
    # a later standard run of b alone: b's time is replaced, a's kept with its run
    later = running_times.new_run(
        {"b": 150.0}, command="y", date="2026-11-27", machine=MACHINE, note="busy"
    )
    data = running_times.merge(data, "standard", later)
    assert [r["seconds"] for r in data["standard"]] == [{"a": 100.0}, {"b": 150.0}]
    assert data["smoke"] == [smoke]
    # a run that times every notebook of the earlier one replaces it
    again = running_times.new_run(
        {"a": 90.0, "b": 140.0}, command="z", date="2026-11-28", machine=MACHINE
    )
    assert running_times.merge(data, "standard", again)["standard"] == [again]

    text = running_times.page(data, ["a", "b"])
    # two standard runs: each time is marked with the run it comes from
    assert row(text, "{doc}`a`") == ["5 s", "1.7 min¹", "not measured"]
    assert row(text, "{doc}`b`") == ["not measured", "2.5 min²", "not measured"]
    assert row(text, "all notebooks") == ["5 s (1 of 2)", "4.2 min", "not measured"]
    assert "- ¹`standard`: 2026-11-26, 2 CPU cores" in text
    assert "- ²`standard`: 2026-11-27" in text and text.count("; busy") == 1
    assert "Over the" not in text  # within every goal


def test_the_whole_book_over_its_goal_is_said():
    run = running_times.new_run(
        {"a": 1000.0, "b": 900.0}, command="x", date="2026-11-27", machine=MACHINE
    )
    text = running_times.page(running_times.merge({}, "standard", run), ["a", "b"])
    assert "Over the `standard` goal: the whole book." in text


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: running_times.merge({}, "large", {"seconds": {}}), "scale"),
        (
            lambda: running_times.new_run(
                {"a": -1.0}, command="x", date="d", machine=MACHINE
            ),
            "≥ 0",
        ),
        (
            lambda: running_times.new_run({}, command="x", date="d", machine=MACHINE),
            "at least one",
        ),
    ],
)
def test_bad_runs_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_committed_page_is_built_from_the_committed_data():
    """book/running_times.md is what `python tests/running_times.py` writes from
    results/times.json; every notebook of the book has a row."""
    data = running_times.load(running_times.DATA)
    assert data, "results/times.json holds no run"
    notebooks = running_times.toc_notebooks(ROOT / "_toc.yml")
    assert {p.stem for p in (ROOT / "book").glob("*.ipynb")} == set(notebooks)
    assert running_times.PAGE.read_text() == running_times.page(data, notebooks), (
        "book/running_times.md is stale: run `python tests/running_times.py`"
    )
