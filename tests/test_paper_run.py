"""The chapters at the paper scale without Jupyter (tests/paper_run.py): the dry run
(steps capped, asserts compiled out) and the full run (asserts kept); an exception fails
the chapter; per-cell times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).with_name("paper_run.py")


def notebook(path: Path, *cells: str) -> Path:
    cells = [
        {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
        for source in cells
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    return path


def run(path: Path, *options: str) -> subprocess.CompletedProcess:
    """The runner on one fake chapter, its paper results (full run) beside it."""
    return subprocess.run(
        [sys.executable, str(RUNNER), *options, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CCL_RESULTS_DIR": str(path.parent / "paper")},
    )


def saves(chapter: str) -> str:
    """A cell that writes the chapter's paper results."""
    return (
        "from ccl_helpers import results\n"
        f"results.save_paper_results({chapter!r}, {{'x': 1}})\n"
    )


def test_a_chapter_runs_at_paper_with_steps_capped_and_asserts_off(tmp_path):
    chapter = notebook(
        tmp_path / "01_fake.ipynb",
        "import ccl_helpers as ccl\n",
        "n_steps = ccl.steps(smoke=3, standard=30, paper=3000)\n"
        "if (ccl.scale(), n_steps) != ('paper', 5):\n"
        "    raise RuntimeError(f'{ccl.scale()}, {n_steps} steps')\n",
        "assert n_steps > 100  # a check on trained values: compiled out\n",
        "if False:\n    !pip install nothing\n",
        saves("01_fake"),
    )
    done = run(chapter, "--steps", "5")
    assert done.returncode == 0, done.stderr
    assert "01_fake.ipynb: ok" in done.stdout
    assert not (tmp_path / "paper").exists()  # the dry run's results are scratch


def test_a_chapter_that_saves_no_paper_results_fails(tmp_path):
    chapter = notebook(tmp_path / "07_fake.ipynb", "x = 1\n")
    done = run(chapter, "--steps", "2")
    assert done.returncode == 1 and "07_fake.ipynb: FAILED (no paper" in done.stdout
    assert "save_paper_results" in done.stderr
    done = run(notebook(tmp_path / "07_fake.ipynb", "x = 1\n", saves("07_fake")))
    assert done.returncode == 0 and "07_fake.ipynb: ok" in done.stdout, done.stderr
    assert (tmp_path / "paper" / "07_fake.json").is_file()


def test_a_configuration_error_fails_the_chapter(tmp_path):
    chapter = notebook(
        tmp_path / "02_fake.ipynb",
        "import ccl_helpers as ccl\n",
        "pool = ccl.by_scale(smoke=1, standard=2, paper=60_000)\n"
        "if pool > 14_000:\n    raise ValueError('more than the class sizes')\n",
    )
    done = run(chapter)
    assert done.returncode == 1
    assert "02_fake.ipynb: FAILED" in done.stdout
    assert "more than the class sizes" in done.stderr


def test_the_full_run_keeps_the_asserts_and_times_each_cell(tmp_path):
    chapter = notebook(
        tmp_path / "03_fake.ipynb",
        "import ccl_helpers as ccl\n"
        "n_steps = ccl.steps(smoke=3, standard=30, paper=300)\n",
        "assert n_steps == 300 and ccl.scale() == 'paper'\n",
        "assert False, 'a check that fails'\n",
    )
    times = tmp_path / "times.json"
    done = run(chapter, "--times", str(times))
    assert done.returncode == 1
    assert "AssertionError: a check that fails" in done.stderr
    outcome = json.loads(times.read_text())["03_fake.ipynb"]
    assert outcome["status"].startswith("FAILED")
    assert [cell[0] for cell in outcome["cells"]] == [0, 1, 2]
    assert outcome["cells"][1][2] == "assert n_steps == 300 and ccl.scale() == 'paper'"


def test_a_chapter_past_its_timeout_is_stopped_with_its_cell_times(tmp_path):
    chapter = notebook(
        tmp_path / "04_fake.ipynb", "x = 1\n", "import time\ntime.sleep(60)\n"
    )
    times = tmp_path / "times.json"
    done = run(chapter, "--steps", "2", "--timeout", "5", "--times", str(times))
    assert done.returncode == 1 and "04_fake.ipynb: STOPPED after 5 s" in done.stdout
    assert [c[0] for c in json.loads(times.read_text())["04_fake.ipynb"]["cells"]] == [
        0
    ]


def test_the_dry_run_reports_and_skips_statements_on_trained_values(tmp_path):
    """An error from ccl_helpers.verdicts, and each later statement that fails on what
    it did not assign or on data it read (here ``first``, computed from ``empty``), is
    skipped with a report; the rest of the chapter runs. The full
    run fails on the same error, and a NameError of another name fails the dry run."""
    cells = (
        "import pandas as pd\nfrom ccl_helpers import verdicts\nslopes = 'stale'\n",
        "empty = pd.DataFrame({'seed': [], 'x': [], 'y': []})\n"
        "slopes = verdicts.per_seed_slopes(empty, 'x', 'y')\nafter = 1\n",
        "mean = slopes.mean()\nran = after + 1\nfirst = empty['x']\n"
        "anchor = first.iloc[0]\n",
        "if ran != 2:\n    raise RuntimeError('a statement after the skip was lost')\n",
        saves("05_fake"),
    )
    chapter = notebook(tmp_path / "05_fake.ipynb", *cells)
    times = tmp_path / "times.json"
    done = run(chapter, "--steps", "2", "--times", str(times))
    assert done.returncode == 0, done.stderr
    assert "05_fake.ipynb: ok (3 statements on trained values skipped)" in done.stdout
    rows = json.loads(times.read_text())["05_fake.ipynb"]["cells"]
    assert rows[1][3] == [[2, "ValueError: frame must have at least 1 row(s), got 0"]]
    assert rows[2][3] == [
        [1, "needs slopes"],
        [4, "IndexError: single positional indexer is out-of-bounds (on first)"],
    ]
    done = run(chapter)
    assert done.returncode == 1 and "at least 1 row" in done.stderr
    other = notebook(tmp_path / "06_fake.ipynb", "x = undefined_name + 1\n")
    done = run(other, "--steps", "2")
    assert done.returncode == 1 and "undefined_name" in done.stderr
