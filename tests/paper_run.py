"""The chapters at the paper scale without Jupyter: each chapter's code cells, in order,
in a process of its own with ``CCL_SCALE=paper``.

Two uses:

- **The dry run** (``--steps K``, what ``make test`` runs with K = 2):
  ``CCL_PAPER_STEPS=K`` caps every count of :func:`ccl_helpers.steps`; the data sizes,
  subsets, widths and seeds of every training call stay the paper's. The asserts are
  compiled out: the checks on trained values cannot hold after two steps. A
  configuration, shape or memory error still raises, and the chapter fails. Results and
  records go to a temporary folder.
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
import json
import os
import re
import subprocess
import sys
import tempfile
import time
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


def run_one(notebook: Path, optimize: int, times: Path) -> None:
    """Execute the code cells of ``notebook`` in one namespace from the book's folder
    (as the book runs them), asserts compiled out when ``optimize`` is 1; after each
    cell, append [index, seconds, first line] to ``times`` (JSON lines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.chdir(notebook.parent)
    namespace = {"__name__": "__main__", "display": display}
    for index, source in enumerate(code_cells(notebook)):
        code = compile(
            source, f"{notebook.name}, code cell {index}", "exec", optimize=optimize
        )
        start = time.perf_counter()
        try:
            exec(code, namespace)
        finally:
            plt.close("all")
            first = next((line for line in source.splitlines() if line.strip()), "")
            row = [index, round(time.perf_counter() - start, 2), first[:80]]
            with times.open("a") as out:
                out.write(json.dumps(row) + "\n")


def run_chapter(
    notebook: Path, env: dict, optimize: int, timeout: float | None, scratch: Path
) -> dict:
    """One chapter in a child process → {status, seconds, cells, error}."""
    times = scratch / f"{notebook.stem}.times"
    command = [sys.executable, __file__, "--one", str(notebook)]
    command += ["--optimize", str(optimize), "--cell-times", str(times)]
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
    cells = (
        [json.loads(line) for line in times.read_text().splitlines()]
        if (times.exists())
        else []
    )
    took = round(time.perf_counter() - start, 1)
    return {"status": status, "seconds": took, "cells": cells, "error": error}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--steps", type=int, help="the dry run: CCL_PAPER_STEPS")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per chapter")
    parser.add_argument("--times", type=Path, help="per-chapter times (JSON)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--optimize", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cell-times", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one.resolve(), args.optimize, args.cell_times)
        return 0
    notebooks = [n.resolve() for n in args.notebooks] or sorted(
        (ROOT / "book").glob("[0-9][0-9]_*.ipynb")
    )
    dry = args.steps is not None
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "CCL_SCALE": "paper", "CI": "1", "MPLBACKEND": "Agg"}
        env.setdefault("CCL_RECORDS_DIR", scratch)
        if dry:
            env.update(
                CCL_PAPER_STEPS=str(args.steps),
                CCL_RESULTS_DIR=scratch,
                CCL_RECORDS_DIR=scratch,
            )

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
    return 0 if all(o["status"] == "ok" for o in outcomes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
