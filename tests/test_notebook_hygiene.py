"""Hygiene of the stored chapter notebooks (book/*.ipynb), checked without running them.

The stored outputs are what the book renders and what nbval compares a fresh run with,
so they must come from one clean top-to-bottom run (``make outputs``), carry no errors
and no machine-specific paths, and mark every cell whose output changes from run to run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from check_book_pages import toc_files

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]

# Tags that exempt a cell's output from nbval's comparison.
IGNORE_TAGS = {"nbval-ignore-output", "nbval-skip"}

# Absolute paths that would only exist on the machine that ran the notebook.
ABSOLUTE_PATH = re.compile(
    r"(/work/|/home/|/tmp/|/root/|/Users/|/content/|\b[A-Za-z]:\\)"
)
# tqdm's text bar ("12/100 [00:01<00:09, 9.87it/s]") and its rate units.
PROGRESS_BAR = re.compile(r"(it/s\]|s/it\]|\?it/s|\d+/\d+ \[\d\d:\d\d<)")
WIDGET = "application/vnd.jupyter.widget-view+json"
# Timings: "Wall time", "CPU times", "elapsed", or a number followed by a time unit.
TIMING = re.compile(
    r"(Wall time|CPU "
    r"times|elapsed|\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds|min|minutes)\b)"
)
# The provenance of stored paper-scale runs (results.provenance_line) names the stored
# run's wall time; it is read from the committed file and does not vary.
STORED_PROVENANCE = re.compile(r"^paper-scale runs: .*$", re.MULTILINE)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def output_text(output) -> str:
    """All text of one output: stream text, text/* data, and the error's name/value."""
    if output.output_type == "stream":
        return output.get("text", "")
    if output.output_type == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    parts = []
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            parts.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(parts)


def where(nb_path: Path, index: int, cell) -> str:
    first = cell.source.strip().splitlines()[0] if cell.source.strip() else "<empty>"
    return f"{nb_path.name}, code cell {index} ({first[:60]!r})"


@pytest.mark.parametrize("name", toc_files())
def test_toc_entry_exists(name):
    candidates = [ROOT / f"{name}{ext}" for ext in (".ipynb", ".md")]
    assert any(p.exists() for p in candidates), (
        f"_toc.yml lists {name}, but neither {name}.ipynb nor {name}.md exists"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_valid_nbformat(nb_path):
    nb = read(nb_path)
    nbformat.validate(nb)
    missing = [i for i, c in enumerate(nb.cells) if "id" not in c]
    assert not missing, (
        f"{nb_path.name}: cells {missing} have no id (save with nbformat ≥ 4.5)"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_kernelspec_is_python3(nb_path):
    kernelspec = read(nb_path).metadata.get("kernelspec", {})
    assert kernelspec.get("name") == "python3", (
        f"{nb_path.name}: kernelspec name is {kernelspec.get('name')!r}"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_every_code_cell_executed_in_order(nb_path):
    cells = code_cells(read(nb_path))
    counts = [c.get("execution_count") for c in cells]
    expected = list(range(1, len(cells) + 1))
    assert counts == expected, (
        f"{nb_path.name}: execution counts {counts}, expected {expected}: "
        "re-run the notebook top to bottom in a fresh kernel (make "
        "outputs), and delete empty code cells"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_no_stored_errors(nb_path):
    bad = [
        where(nb_path, i, c)
        for i, c in enumerate(code_cells(read(nb_path)))
        if any(o.output_type == "error" for o in c.get("outputs", []))
    ]
    assert not bad, f"stored error outputs in: {bad}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_no_absolute_paths_in_outputs(nb_path):
    bad = []
    for i, cell in enumerate(code_cells(read(nb_path))):
        for output in cell.get("outputs", []):
            match = ABSOLUTE_PATH.search(output_text(output))
            if match:
                bad.append(f"{where(nb_path, i, cell)}: {match.group(0)!r}")
    assert not bad, f"absolute paths in outputs: {bad}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_varying_outputs_are_tagged(nb_path):
    """Progress bars (tqdm text or widgets) and timings must carry
    ``nbval-ignore-output``."""
    bad = []
    for i, cell in enumerate(code_cells(read(nb_path))):
        if IGNORE_TAGS & set(cell.metadata.get("tags", [])):
            continue
        for output in cell.get("outputs", []):
            text = STORED_PROVENANCE.sub("", output_text(output))
            if WIDGET in output.get("data", {}):
                bad.append(f"{where(nb_path, i, cell)}: widget output")
            elif PROGRESS_BAR.search(text):
                bad.append(f"{where(nb_path, i, cell)}: progress bar")
            elif TIMING.search(text):
                bad.append(
                    f"{where(nb_path, i, cell)}: timing "
                    f"{TIMING.search(text).group(0)!r}"
                )
    assert not bad, (
        f"untagged cells whose output varies (add the tag nbval-ignore-output): {bad}"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_setup(nb_path):
    cells = code_cells(read(nb_path))
    assert cells, f"{nb_path.name} has no code cell"
    source = cells[0].source
    assert "google.colab" in source and "setup(" in source, (
        f"{nb_path.name}: the first code cell must install the package on Colab "
        '(guarded by "google.colab" in sys.modules) and call ccl_helpers.setup()'
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_headings(nb_path):
    """One H1 title, first; no skipped heading levels (MyST warns on both under -W)."""
    levels = []
    for cell in read(nb_path).cells:
        if cell.cell_type != "markdown":
            continue
        # the backtick/tilde fence we are inside (code blocks hold "# comments")
        fence = None
        for line in cell.source.splitlines():
            if m := re.match(r"^\s*(`{3,}|~{3,})", line):
                if fence is None:
                    fence = m.group(1)
                elif (
                    m.group(1)[0] == fence[0]
                    and len(m.group(1)) >= len(fence)
                    and not line.strip()[len(m.group(1)) :]
                ):
                    fence = None
            elif fence is None and (m := re.match(r"^(#{1,6})\s", line)):
                levels.append(len(m.group(1)))
    assert levels and levels[0] == 1, (
        f"{nb_path.name}: the first heading must be the H1 title, got "
        f"levels {levels[:3]}"
    )
    assert levels.count(1) == 1, (
        f"{nb_path.name}: {levels.count(1)} H1 headings, expected exactly one"
    )
    jumps = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
    assert not jumps, f"{nb_path.name}: heading levels skip (from, to): {jumps}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_no_semicolon_suppressed_output(nb_path):
    """nbval (≥ 0.10) executes cells with ``store_history=False``, so IPython does not
    honour a trailing ``;``: the value it hides in the stored run reappears under nbval
    and the cell fails. End a plotting cell with ``plt.show()`` instead."""
    bad = [
        where(nb_path, i, c)
        for i, c in enumerate(code_cells(read(nb_path)))
        if c.source.strip()
        and c.source.strip().splitlines()[-1].split("#")[0].rstrip().endswith(";")
    ]
    assert not bad, (
        f"cells whose last line ends with ';' (use plt.show() or an assignment): {bad}"
    )


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_no_widget_state_is_stored(nb_path):
    """Stored widget state makes each page load the widget manager from a CDN: the
    book must read offline (``make outputs`` stores none)."""
    assert "widgets" not in read(nb_path).metadata, (
        f"{nb_path.name} stores widget state in its metadata"
    )
