"""The chapters at the paper scale without Jupyter: each chapter's code cells, in order,
in a process of its own with ``CCL_SCALE=paper``.

Two uses:

- **The dry run** (``--steps K``, what ``make test`` runs with K = 2, two chapters at a
  time, each on one thread unless ``CCL_THREADS`` says otherwise):
  ``CCL_PAPER_STEPS=K`` caps every count of :func:`ccl_helpers.steps`, and
  :func:`ccl_helpers.evals` gives evaluation-only sizes their smoke values; the data
  sizes, subsets, widths and seeds of every training call stay the paper's. The checks
  on trained values cannot hold after two steps, so they are reported, not raised: the
  asserts are compiled out, and a statement whose error comes from
  ``ccl_helpers.verdicts`` (the statistics of trained values), with every later
  statement that fails on what it did not assign or on the data it read, is skipped
  with one line in the times (:func:`_run_dry`). Any other error (configuration,
  shape, memory) fails the chapter, and so does a chapter that writes no paper
  results. Results and records go to a temporary folder.
- **The paper run** (no ``--steps``): every cell as the book runs it, asserts included;
  each chapter writes ``results/paper/NN_topic.json`` (``make paper`` does the same
  through Jupyter).

A line of a cell that starts with ``!`` or ``%`` (the Colab install) becomes ``pass``.
``--times FILE`` writes each chapter's status, time and per-cell times as JSON (also for
a chapter stopped by ``--timeout``); ``--jobs N`` runs N chapters at once.

Usage: python tests/paper_run.py [--steps K] [--jobs N] [--timeout S] [--times FILE]
[book/NN_topic.ipynb ...] (default: every chapter). Prints one line per chapter with its
time; exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL_LINE = re.compile(r"^(\s*)[!%].*$", re.MULTILINE)


def code_cells(notebook: Path) -> list[str]:
    """The notebook's code cells as Python (a ``!``/``%`` line becomes ``pass``)."""
    cells = json.loads(notebook.read_text())["cells"]
    return [
        SHELL_LINE.sub(r"\1pass", "".join(c["source"]))
        for c in cells
        if c["cell_type"] == "code"
    ]


def display(*objects, **_) -> None:
    """Jupyter's ``display`` outside Jupyter: each object's text form is computed (an
    error in it still raises) and dropped."""
    for item in objects:
        repr(item)


VERDICTS = ROOT / "ccl_helpers" / "verdicts"


def _from_verdicts(error: BaseException) -> bool:
    """Whether ``error`` was raised inside a call into ``ccl_helpers.verdicts`` (the
    statistics of trained per-seed values)."""
    frames = traceback.extract_tb(error.__traceback__)
    return any(Path(frame.filename).parent == VERDICTS for frame in frames)


def _stored_names(statement: ast.stmt) -> set[str]:
    """The names a statement assigns (targets, loop variables, imports, definitions)."""
    names = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _read_data(statement: ast.stmt, namespace: dict) -> set[str]:
    """The names of data (not modules, functions or classes) that a statement reads."""
    return {
        node.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and node.id in namespace
        and not (inspect.ismodule(namespace[node.id]) or callable(namespace[node.id]))
    }


def _run_dry(source: str, where: str, namespace: dict, doubt: dict) -> list:
    """The dry run of one cell, statement by statement, asserts compiled out.

    A statement on trained values that cannot hold after a few steps is reported and
    skipped: one whose error comes from ``ccl_helpers.verdicts`` (the statistics of
    trained values), and after it one that fails on what such a statement did not
    assign (a NameError) or on the data it read, or on data computed from those (e.g.
    an empty table of the runs that reached a target). Any other error raises.
    ``doubt`` holds the names ``missing`` and ``read`` so far, across cells; returns
    [line, message] of the skipped ones."""
    reports = []
    for statement in ast.parse(source).body:
        module = ast.Module(body=[statement], type_ignores=[])
        code = compile(module, where, "exec", optimize=1)
        reads = _read_data(statement, namespace)
        try:
            exec(code, namespace)
            if reads & doubt["read"]:  # computed from doubtful data: doubtful too
                doubt["read"].update(_stored_names(statement))
        except Exception as error:
            on = sorted(reads & doubt["read"])
            if isinstance(error, NameError) and error.name in doubt["missing"]:
                message = f"needs {error.name}"
            elif _from_verdicts(error):
                message = f"{type(error).__name__}: {error}"
            elif on:
                message = f"{type(error).__name__}: {error} (on {', '.join(on)})"
            else:
                raise
            names = _stored_names(statement)
            doubt["missing"].update(names)
            doubt["read"].update(reads)
            for name in names:  # an older value must not stand in for it
                namespace.pop(name, None)
            reports.append([statement.lineno, message])
    return reports


def run_one(notebook: Path, dry: bool, times: Path) -> None:
    """Execute the code cells of ``notebook`` in one namespace from the book's folder
    (as the book runs them), or their dry run (:func:`_run_dry`); after each cell,
    append [index, seconds, first line, skipped statements] to ``times`` (JSON
    lines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.chdir(notebook.parent)
    namespace = {"__name__": "__main__", "display": display}
    doubt: dict[str, set[str]] = {"missing": set(), "read": set()}
    for index, source in enumerate(code_cells(notebook)):
        where = f"{notebook.name}, code cell {index}"
        start, reports = time.perf_counter(), []
        try:
            if dry:
                reports = _run_dry(source, where, namespace, doubt)
            else:
                exec(compile(source, where, "exec"), namespace)
        finally:
            plt.close("all")
            first = next((line for line in source.splitlines() if line.strip()), "")
            row = [index, round(time.perf_counter() - start, 2), first[:80], reports]
            with times.open("a") as out:
                out.write(json.dumps(row) + "\n")


def run_chapter(
    notebook: Path, env: dict, dry: bool, timeout: float | None, scratch: Path
) -> dict:
    """One chapter in a child process → {status, seconds, cells, error}. A chapter
    that ends without error but wrote no ``<results dir>/NN_topic.json`` fails."""
    times = scratch / f"{notebook.stem}.times"
    folder = env.get("CCL_RESULTS_DIR") or ROOT / "results" / "paper"
    written = Path(folder) / f"{notebook.stem}.json"
    started = time.time()
    command = [sys.executable, __file__, "--one", str(notebook)]
    command += ["--cell-times", str(times)] + (["--dry"] if dry else [])
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
        status = "ok" if done.returncode == 0 else f"FAILED ({done.returncode})"
        error = done.stderr[-12000:] if done.returncode else ""
    except subprocess.TimeoutExpired:
        status, error = f"STOPPED after {timeout:.0f} s", ""
    if status == "ok" and not (
        written.is_file() and written.stat().st_mtime >= started
    ):
        status = "FAILED (no paper results)"
        error = f"the chapter ended without writing {written} (save_paper_results)"
    lines = times.read_text().splitlines() if times.exists() else []
    cells = [json.loads(line) for line in lines]
    took = round(time.perf_counter() - start, 1)
    n_skipped = sum(len(cell[3]) for cell in cells)
    if status == "ok" and n_skipped:
        status += f" ({n_skipped} statements on trained values skipped)"
    return {"status": status, "seconds": took, "cells": cells, "error": error}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--steps", type=int, help="the dry run: CCL_PAPER_STEPS")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per chapter")
    parser.add_argument("--times", type=Path, help="per-chapter times (JSON)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dry", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cell-times", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one.resolve(), args.dry, args.cell_times)
        return 0
    notebooks = [n.resolve() for n in args.notebooks] or sorted(
        (ROOT / "book").glob("[0-9][0-9]_*.ipynb")
    )
    dry = args.steps is not None
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "CCL_SCALE": "paper", "CI": "1", "MPLBACKEND": "Agg"}
        if dry:  # results and records (results/paper/records at paper) to scratch
            env.update(CCL_PAPER_STEPS=str(args.steps), CCL_RESULTS_DIR=scratch)
            # one thread a chapter: beside other work (--jobs, a shared machine) a
            # chapter on every core slows down many times
            env.setdefault("CCL_THREADS", "1")
            env.setdefault("OMP_NUM_THREADS", "1")

        def one(notebook: Path) -> dict:
            outcome = run_chapter(notebook, env, int(dry), args.timeout, Path(scratch))
            print(f"{notebook.name}: {outcome['status']} in {outcome['seconds']:.0f} s")
            if outcome["error"]:
                print(outcome["error"], file=sys.stderr)
            sys.stdout.flush()
            return outcome

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            outcomes = dict(zip((n.name for n in notebooks), pool.map(one, notebooks)))
    if args.times:
        args.times.write_text(json.dumps(outcomes, indent=1))
    return 0 if all(o["status"].startswith("ok") for o in outcomes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
