"""The paper dry run (tests/paper_dry_run.py): a chapter's code cells at CCL_SCALE=paper
with the steps capped and the asserts compiled out; an exception fails the chapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).with_name("paper_dry_run.py")


def notebook(path: Path, *cells: str) -> Path:
    cells = [
        {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
        for source in cells
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    return path


def dry_run(path: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(RUNNER), *options, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
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
    )
    done = dry_run(chapter, "--steps", "5")
    assert done.returncode == 0, done.stderr
    assert "01_fake.ipynb: ok" in done.stdout


def test_a_configuration_error_fails_the_chapter(tmp_path):
    chapter = notebook(
        tmp_path / "02_fake.ipynb",
        "import ccl_helpers as ccl\n",
        "pool = ccl.by_scale(smoke=1, standard=2, paper=60_000)\n"
        "if pool > 14_000:\n    raise ValueError('more than the class sizes')\n",
    )
    done = dry_run(chapter)
    assert done.returncode == 1
    assert "02_fake.ipynb: FAILED" in done.stdout
    assert "more than the class sizes" in done.stderr
