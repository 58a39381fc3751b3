"""The paper dry run: each chapter's ``paper`` configuration, at the paper scale's data
sizes, widths and seeds, for a few steps, on the CPU.

Each chapter runs in a process of its own with ``CCL_SCALE=paper`` and
``CCL_PAPER_STEPS`` (default 2), which caps every count of :func:`ccl_helpers.steps`.
Its code cells run in order with their asserts compiled out: the checks on trained
values cannot hold after two steps. A configuration, shape or memory error still raises,
and the chapter fails. Results and records go to a temporary folder.

Usage: python tests/paper_dry_run.py [--steps K] [book/NN_topic.ipynb ...] (default:
every chapter). Prints one line per chapter with its time; exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def code_cells(notebook: Path) -> list[str]:
    """The notebook's code cells as plain Python (IPython syntax such as ``!pip``
    translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    cells = json.loads(notebook.read_text())["cells"]
    return [transform("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


def run_one(notebook: Path) -> None:
    """Execute the code cells of ``notebook`` in one namespace, asserts compiled out,
    from the book's folder (as the book runs them)."""
    import matplotlib

    matplotlib.use("Agg")
    from IPython.display import display

    os.chdir(notebook.parent)
    namespace = {"__name__": "__main__", "display": display}
    for index, source in enumerate(code_cells(notebook)):
        code = compile(
            source, f"{notebook.name}, code cell {index}", "exec", optimize=1
        )
        try:
            exec(code, namespace)
        finally:
            matplotlib.pyplot.close("all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one.resolve())
        return 0
    notebooks = args.notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    failed = []
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            **os.environ,
            "CCL_SCALE": "paper",
            "CCL_PAPER_STEPS": str(args.steps),
            "CCL_RESULTS_DIR": scratch,
            "CCL_RECORDS_DIR": scratch,
            "CI": "1",
            "MPLBACKEND": "Agg",
        }
        for notebook in notebooks:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(notebook)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            took = time.perf_counter() - start
            status = "ok" if done.returncode == 0 else f"FAILED ({done.returncode})"
            print(f"{notebook.name}: {status} in {took:.0f} s", flush=True)
            if done.returncode != 0:
                failed.append(notebook.name)
                print(done.stderr[-12000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
