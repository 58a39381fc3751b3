"""Tests of ccl_helpers.results: the paper-scale results files (round trips in a
temporary folder, provenance, malformed files, bad arguments)."""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from bad_calls import bad_call

from ccl_helpers import results

CHAPTER = "02_multiple_negatives"

A_FILE = __file__  # a file, where a folder is wanted
NEVER_WRITTEN = Path(tempfile.gettempdir()) / "ccl_bad_calls_never_written"
PAPER = {"CCL_SCALE": "paper", "CCL_RESULTS_DIR": str(NEVER_WRITTEN)}
LIVE = pd.DataFrame({"k": [1, 2], "x": [1.0, 2.0]})
STORED = pd.DataFrame({"k": [1, 2], "x": [3.0, 4.0]})

BAD_CALLS = [
    bad_call(results.chapter_path, "chapter", "multineg"),
    bad_call(results.chapter_path, "chapter", 2),
    bad_call(
        results.chapter_path,
        "CCL_RESULTS_DIR",
        CHAPTER,
        environment={"CCL_RESULTS_DIR": A_FILE},
    ),
    bad_call(results.records_dir, "CCL_SCALE", environment={"CCL_SCALE": "huge"}),
    bad_call(
        results.records_dir,
        "CCL_RECORDS_DIR",
        environment={"CCL_SCALE": "standard", "CCL_RECORDS_DIR": A_FILE},
    ),
    bad_call(
        results.records_dir,
        "CCL_RESULTS_DIR",
        environment={"CCL_SCALE": "paper", "CCL_RESULTS_DIR": A_FILE},
    ),
    bad_call(results.load_paper_results, "chapter", "02_Multiple"),
    bad_call(results.load_paper_results, "chapter", "02_x.json"),
    bad_call(
        results.load_paper_results,
        "CCL_RESULTS_DIR",
        CHAPTER,
        environment={"CCL_RESULTS_DIR": A_FILE},
    ),
    # each refused before anything is written
    bad_call(results.save_paper_results, "chapter", "../02_x", {"x": 1}),
    bad_call(
        results.save_paper_results,
        "started",
        CHAPTER,
        {"x": 1},
        started=time.time() + 3600,
        environment=PAPER,
    ),
    bad_call(results.save_paper_results, "started", CHAPTER, {"x": 1}, started="now"),
    bad_call(
        results.save_paper_results,
        "CCL_SCALE must be 'paper'",
        CHAPTER,
        {"x": 1},
        environment={**PAPER, "CCL_SCALE": "standard"},
    ),
    bad_call(
        results.save_paper_results,
        "numbers must be a dict",
        CHAPTER,
        [1, 2],
        environment=PAPER,
    ),
    bad_call(
        results.save_paper_results,
        r"numbers\['x'\] must be finite",
        CHAPTER,
        {"x": math.inf},
        environment=PAPER,
    ),
    bad_call(results.write_json, "record", NEVER_WRITTEN / "x.json", [1, 2]),
    bad_call(results.write_json, "record", NEVER_WRITTEN / "x.json", {"x": math.nan}),
    bad_call(
        results.jsonable, r"value\['x'\] must be JSON data", {"x": object()}, "value"
    ),
    bad_call(results.jsonable, r"value\[0\] must be finite", [math.inf], "value"),
    bad_call(results.jsonable, "value must have str or int keys", {(1, 2): 3}, "value"),
    bad_call(results.provenance_line, "record", {"numbers": {}}),
    bad_call(results.provenance_line, "record", None),
    bad_call(
        results.beside_stored, "live", LIVE.to_dict("records"), STORED, ["k"], ["x"]
    ),
    bad_call(results.beside_stored, "stored", LIVE, "records", ["k"], ["x"]),
    bad_call(results.beside_stored, "by", LIVE, STORED, "k", ["x"]),
    bad_call(results.beside_stored, "columns", LIVE, STORED, ["k"], ["y"]),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
    assert not NEVER_WRITTEN.exists()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A temporary results folder, and the paper scale."""
    monkeypatch.setenv("CCL_RESULTS_DIR", str(tmp_path / "paper"))
    monkeypatch.setenv("CCL_SCALE", "paper")
    monkeypatch.setenv("CCL_PAPER_COMMAND", "make paper")
    return tmp_path / "paper"


def test_round_trip_of_numbers_tensors_and_arrays(folder):
    numbers = {
        "p_cc": 0.25,
        "n": 15,
        "name": "digits",
        "flag": True,
        "curve": torch.tensor([1.5, 2.5], dtype=torch.float64),
        "grid": np.arange(4).reshape(2, 2),
        "mean": np.float32(0.5),
        "nested": {"a": [1, 2, {"b": torch.tensor(3)}], 7: "int key"},
        "missing": float("nan"),
    }
    path = results.save_paper_results(CHAPTER, numbers)
    assert path == folder / f"{CHAPTER}.json" and path.is_file()
    record = results.load_paper_results(CHAPTER)
    assert record["chapter"] == CHAPTER
    assert record["numbers"] == {
        "p_cc": 0.25,
        "n": 15,
        "name": "digits",
        "flag": True,
        "curve": [1.5, 2.5],
        "grid": [[0, 1], [2, 3]],
        "mean": 0.5,
        "nested": {"a": [1, 2, {"b": 3}], "7": "int key"},
        "missing": None,
    }
    assert not list(folder.glob("*.partial"))  # written atomically


def test_data_frame_round_trip(folder):
    table = pd.DataFrame(
        {
            "N": [1, 15, 25],
            "L_un": [0.7, 2.1, np.nan],
            "kind": ["a", "b", "c"],
        }
    )
    results.save_paper_results(CHAPTER, {"runs": table, "by_n": table["N"]})
    record = results.load_paper_results(CHAPTER)
    back = pd.DataFrame(record["numbers"]["runs"])
    pd.testing.assert_frame_equal(back, table)
    assert record["numbers"]["by_n"] == {"0": 1, "1": 15, "2": 25}


def test_provenance_keys_and_values(folder):
    started = time.time() - 90
    results.save_paper_results(CHAPTER, {"x": 1}, started=started)
    origin = results.load_paper_results(CHAPTER)["provenance"]
    assert set(origin) == {
        "command",
        "commit",
        "dirty",
        "device",
        "date",
        "wall_time_s",
        "torch",
        "python",
        "scale",
    }
    assert origin["command"] == "make paper" and origin["scale"] == "paper"
    assert origin["torch"] == torch.__version__
    assert 90 <= origin["wall_time_s"] < 90 + 60
    assert origin["date"].endswith("+00:00")  # UTC
    commit = origin["commit"]
    assert commit == "unknown" or (len(commit) == 40 and int(commit, 16) >= 0)
    line = results.provenance_line(results.load_paper_results(CHAPTER))
    assert line.startswith("paper scale, ") and "1.5 min" in line
    assert f"commit {commit[:7]}" in line


def test_load_returns_none_without_a_file(folder):
    assert results.load_paper_results("05_supervised_approximation") is None
    assert not folder.exists()


@pytest.mark.parametrize(
    "content",
    [
        "not json {",
        "[1, 2]",
        json.dumps({"chapter": CHAPTER, "numbers": {}}),
        json.dumps({"chapter": "01_other", "provenance": {}, "numbers": {}}),
        json.dumps({"chapter": CHAPTER, "provenance": {}, "numbers": [1]}),
    ],
)
def test_load_rejects_a_malformed_file(folder, content):
    folder.mkdir(parents=True)
    (folder / f"{CHAPTER}.json").write_text(content)
    with pytest.raises(ValueError, match=CHAPTER):
        results.load_paper_results(CHAPTER)


def test_save_is_only_for_the_paper_scale(folder, monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "standard")
    with pytest.raises(ValueError, match="CCL_SCALE"):
        results.save_paper_results(CHAPTER, {"x": 1})
    assert not folder.exists()


@pytest.mark.parametrize(
    "chapter",
    ["02", "multineg", "../02_x", "02_Multiple", "02_x.json", 2, None],
)
def test_bad_chapter_names_raise(folder, chapter):
    with pytest.raises(ValueError, match="chapter"):
        results.save_paper_results(chapter, {"x": 1})
    with pytest.raises(ValueError, match="chapter"):
        results.load_paper_results(chapter)


@pytest.mark.parametrize(
    "numbers, message",
    [
        ([1, 2], "numbers must be a dict"),
        ({"x": math.inf}, r"numbers\['x'\] must be finite"),
        ({"x": {(1, 2): 3}}, "keys"),
        ({"x": object()}, r"numbers\['x'\] must be JSON data"),
    ],
)
def test_bad_numbers_raise(folder, numbers, message):
    with pytest.raises(ValueError, match=message):
        results.save_paper_results(CHAPTER, numbers)
    assert not folder.exists() or not list(folder.iterdir())


@pytest.mark.parametrize(
    "started", [time.time() + 3600, "now", True], ids=["future", "text", "bool"]
)
def test_bad_start_time_raises(folder, started):
    with pytest.raises(ValueError, match="started"):
        results.save_paper_results(CHAPTER, {"x": 1}, started=started)


def test_results_dir_defaults_to_the_book_root(monkeypatch):
    monkeypatch.delenv("CCL_RESULTS_DIR", raising=False)
    folder = results._results_dir()
    assert folder.parts[-2:] == ("results", "paper")
    assert (folder.parent.parent / "_toc.yml").is_file()


def test_provenance_line_rejects_a_record_without_provenance():
    with pytest.raises(ValueError, match="record"):
        results.provenance_line({"numbers": {}})


def test_beside_stored_puts_group_means_side_by_side():
    live = pd.DataFrame({"k": [1, 1, 2], "seed": [0, 1, 0], "x": [1.0, 3.0, 5.0]})
    stored = live.assign(x=live["x"] * 10).to_dict("records")  # as load_paper_results
    table = results.beside_stored(live, stored, ["k"], ["x"])
    assert table[("this run", "x")].tolist() == [2.0, 5.0]
    assert table[("paper", "x")].tolist() == [20.0, 50.0]
    assert table[("paper", "n")].tolist() == [2, 1]
    with pytest.raises(ValueError, match="columns"):
        results.beside_stored(live, [{"k": 1}], ["k"], ["x"])
    with pytest.raises(ValueError, match="stored"):
        results.beside_stored(live, "records", ["k"], ["x"])


def test_provenance_of_a_copy_without_its_repository(folder, monkeypatch):
    monkeypatch.setattr(results, "_git", lambda *args: None)
    monkeypatch.setenv("CCL_COMMIT", "a" * 40)
    origin = results._provenance()
    assert origin["commit"] == "a" * 40 and origin["dirty"] is None
    monkeypatch.delenv("CCL_COMMIT")
    assert results._provenance()["commit"] == "unknown"


def test_a_named_commit_wins_over_the_copy_s_repository(folder, monkeypatch):
    """A tree sent to another machine may carry an older repository: CCL_COMMIT
    names the commit the tree is."""
    monkeypatch.setattr(results, "_git", lambda *args: "b" * 40 if args[0] else None)
    monkeypatch.setenv("CCL_COMMIT", "a" * 40)
    origin = results._provenance()
    assert origin["commit"] == "a" * 40 and origin["dirty"] is None
    monkeypatch.delenv("CCL_COMMIT")
    assert results._provenance()["commit"] == "b" * 40


def test_the_paper_record_does_not_replace_the_paper_numbers(folder):
    """At paper the verdict record and the chapter's numbers are two files."""
    from ccl_helpers import verdicts

    results.save_paper_results(CHAPTER, {"x": 1})
    verdicts.Verdicts(CHAPTER, scope="test").save()
    assert results.load_paper_results(CHAPTER)["numbers"] == {"x": 1}
    assert (folder / "records" / f"{CHAPTER}.json").is_file()
