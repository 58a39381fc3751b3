"""Every notebook of the book runs top to bottom at ``CCL_SCALE=smoke`` (the short scale
of every code path), every figure it draws keeps the book's palette (``figure_palette``:
each artist names its quantity and is drawn in its colour), and a chapter (``NN_topic``)
writes its record while a page that is no chapter writes none.

nbval checks the ``standard`` scale against the stored outputs; this test checks that
the other code path the book promises (``smoke``, used for quick checks and by the
notebooks' own asserts) still executes without error. The notebooks run in a fresh
kernel on a copy; nothing is written back.
"""

from __future__ import annotations

import time

import figure_palette
import nbformat
import pytest
from nbclient import NotebookClient
from test_notebook_hygiene import IDS, NOTEBOOKS, ROOT

from ccl_helpers.results import CHAPTER_PATTERN

SMOKE_TIMEOUT = (
    300  # seconds per cell; the smoke budget is ~20 s per notebook on 2 cores
)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_chapter_runs_at_smoke_scale(nb_path, monkeypatch, tmp_path):
    monkeypatch.setenv("CCL_SCALE", "smoke")
    monkeypatch.setenv("CCL_DEVICE", "cpu")  # the smoke asserts hold on the CPU
    monkeypatch.setenv("CCL_THREADS", "1")  # (and on a GPU: no assert on one stream)
    monkeypatch.setenv("CCL_RECORDS_DIR", str(tmp_path))
    monkeypatch.setenv("CI", "1")  # no progress bars
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(nb_path, as_version=4)
    palette_log = tmp_path / "figures.jsonl"
    recorder = (
        f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        f"import figure_palette\nfigure_palette.record({str(palette_log)!r})"
    )
    nb.cells.insert(0, nbformat.v4.new_code_cell(recorder))
    client = NotebookClient(
        nb,
        timeout=SMOKE_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT / "book")}},
    )
    start = time.perf_counter()
    # raises CellExecutionError, naming the cell, on the first failing cell
    client.execute()
    elapsed = time.perf_counter() - start
    print(f"{nb_path.name}: {elapsed:.1f} s at smoke scale")
    records = sorted(p.name for p in tmp_path.glob("*.json"))
    if CHAPTER_PATTERN.fullmatch(nb_path.stem):  # a chapter records its verdicts
        assert f"{nb_path.stem}.json" in records, records
    else:  # a page of the book that is no chapter (e.g. a guide) makes no claims
        assert records == [], records
    if any("plt.show()" in "".join(cell.source) for cell in nb.cells):
        figures = figure_palette.read(palette_log)
        assert figures, "the chapter shows figures, none was recorded"
        assert figure_palette.problems(figures) == []
