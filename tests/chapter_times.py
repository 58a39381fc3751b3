"""Print the wall time nbval spent on each chapter, and the costliest cells, from its
JUnit XML report.

Usage: python tests/chapter_times.py _build/nbval.xml [--top K] [--scale NAME]
[--limit MINUTES] [--store results/times.json [--command TEXT] [--note TEXT]]

The report's test cases are the notebooks' code cells, "Cell i" being the i-th code
cell; their times are summed per notebook. The run's wall time is the report's own,
less than that sum when notebooks ran side by side. ``--limit MINUTES`` exits 1 when the
wall time is above it, naming the slowest notebooks: `make test` sets it so that a run
that would exceed CI's time limit fails on the developer's machine first. ``--top K``
also lists the K slowest cells of the whole book, each labelled with its notebook and
the first line of its code that is not a blank line or an nbval marker. ``--store`` adds
the notebooks' times to the data file as a run of ``--scale``, with the command that
made the report (default ``make profile SCALE=<scale>``), the report's date and this
machine, and rewrites the running-times page from it; see tests/running_times.py.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import nbformat
import running_times


def cell_times(report: str) -> list[tuple[str, int, float]]:
    """(notebook path, code-cell index, seconds) for every cell of the report."""
    rows = []
    for case in ET.parse(report).getroot().iter("testcase"):
        classname = case.get("classname") or "?"  # e.g. "book.01_curl_framework.ipynb"
        path = classname.removesuffix(".ipynb").replace(".", "/") + ".ipynb"
        rows.append(
            (
                path,
                int(case.get("name", "Cell -1").split()[-1]),
                float(case.get("time", 0)),
            )
        )
    return rows


def wall_time(report: str) -> float:
    """The seconds the whole run took, as the report states (pytest's session time)."""
    root = ET.parse(report).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    return sum(float(suite.get("time", 0)) for suite in suites)


def chapter_times(report: str) -> dict[str, float]:
    """Seconds per notebook, summed over its cells."""
    totals: dict[str, float] = defaultdict(float)
    for path, _, seconds in cell_times(report):
        totals[path] += seconds
    return dict(totals)


def cell_label(path: str, index: int, width: int = 90) -> str:
    """The first line of the ``index``-th code cell of the notebook at ``path`` that
    says what it does."""
    if not Path(path).is_file():
        return "?"
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    if not 0 <= index < len(code):
        return "?"
    lines = [line.strip() for line in code[index].source.splitlines()]
    first = next(
        (line for line in lines if line and not line.startswith("# NBVAL")), ""
    )
    return first if len(first) <= width else first[: width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", default="_build/nbval.xml")
    parser.add_argument(
        "--top", type=int, default=0, help="also list the K slowest cells"
    )
    parser.add_argument(
        "--scale",
        default="standard",
        help="the CCL_SCALE the report was made at (for the label)",
    )
    parser.add_argument(
        "--limit",
        type=float,
        help="exit 1 when the run's wall time exceeds this many minutes",
    )
    parser.add_argument(
        "--store", type=Path, help="add the times to this data file as a run of --scale"
    )
    parser.add_argument(
        "--page", type=Path, default=running_times.PAGE, help="the page to rewrite"
    )
    parser.add_argument("--command", help="the command that made the report")
    parser.add_argument("--note", default="", help="a note on the run (e.g. the load)")
    args = parser.parse_args(argv)
    times = chapter_times(args.report)
    for name, seconds in sorted(times.items()):
        print(f"{name}: {seconds / 60:.1f} min ({seconds:.0f} s)")
    total = sum(times.values())
    wall = wall_time(args.report)
    print(
        f"all notebooks: {total / 60:.1f} min at CCL_SCALE={args.scale}, "
        f"in {wall / 60:.1f} min of wall time"
    )
    if args.top:
        print(f"slowest {args.top} cells:")
        for path, index, seconds in sorted(
            cell_times(args.report), key=lambda row: -row[2]
        )[: args.top]:
            print(
                f"  {seconds:7.1f} s ({seconds / total:4.0%})  "
                f"{Path(path).stem} cell {index}: {cell_label(path, index)}"
            )
    if args.store:
        run = running_times.new_run(
            times,
            command=args.command or f"make profile SCALE={args.scale}",
            date=running_times.report_date(args.report),
            machine=running_times.machine(),
            note=args.note,
        )
        data = running_times.merge(running_times.load(args.store), args.scale, run)
        running_times.store(data, args.store)
        toc = running_times.ROOT / "_toc.yml"
        args.page.write_text(running_times.page(data, running_times.toc_notebooks(toc)))
        print(f"stored in {args.store}; wrote {args.page}")
    if args.limit is not None and wall > 60 * args.limit:
        slowest = sorted(times.items(), key=lambda item: -item[1])[:3]
        named = ", ".join(f"{Path(n).stem} {s / 60:.1f} min" for n, s in slowest)
        print(
            f"the notebooks took {wall / 60:.1f} min, over the limit of "
            f"{args.limit:g} min; the slowest: {named}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
