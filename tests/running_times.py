"""The book's running times as data, and the page that shows them.

``results/times.json`` holds, per scale, the timed runs of the notebooks: each run with
the command that made it, its date, the machine (CPU count, torch version, device), an
optional note, and the seconds of each notebook it ran (by notebook name, e.g.
``01_curl_framework``). ``tests/chapter_times.py --store`` adds a run from nbval's JUnit
report (``make profile SCALE=...``); a notebook keeps the time of the latest run that
timed it, so a run of a few notebooks leaves the others' times in place.
``book/running_times.md`` is generated from that file (:func:`page`), one column per
scale.

Usage: python tests/running_times.py [--data results/times.json] [--page
book/running_times.md] [--toc _toc.yml]   (writes the page from the data)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

from ccl_helpers.results import CHAPTER_PATTERN

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "results" / "times.json"
PAGE = ROOT / "book" / "running_times.md"
SCALES = ("smoke", "standard", "paper")
GOALS = {
    "smoke": ("≤ 20 s per notebook", 20.0, "notebook"),
    "standard": ("≤ 30 min for the whole book", 30 * 60.0, "book"),
    "paper": ("≤ 30 min for the whole book", 30 * 60.0, "book"),
}
"""Per scale: the goal as text, in seconds, and what it bounds (one notebook or the
sum over the book)."""
MACHINES = {"smoke": "2 CPU cores", "standard": "2 CPU cores", "paper": "one GPU"}
"""The machine each scale's goal is set for."""


def machine() -> dict:
    """The machine this process runs on: CPU count, torch version, device name."""
    import torch

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return {"cpus": os.cpu_count(), "torch": torch.__version__, "device": device}


def notebook_name(path: str) -> str:
    """``book/01_curl_framework.ipynb`` → ``01_curl_framework``."""
    return Path(path).name.removesuffix(".ipynb")


def new_run(
    seconds: Mapping[str, float],
    *,
    command: str,
    date: str,
    machine: Mapping,
    note: str = "",
) -> dict:
    """One timed run: seconds by notebook path or name (each ≥ 0), with its
    provenance."""
    if not seconds:
        raise ValueError("seconds must time at least one notebook")
    times = {notebook_name(path): round(float(s), 1) for path, s in seconds.items()}
    if any(not s >= 0 for s in times.values()):
        raise ValueError(f"seconds must be ≥ 0, got {times}")
    if not command or not date:
        raise ValueError("a run needs its command and its date")
    return {
        "command": command,
        "date": date,
        "machine": dict(machine),
        "note": note,
        "seconds": dict(sorted(times.items())),
    }


def merge(data: Mapping, scale: str, run: Mapping) -> dict:
    """``data`` with ``run`` added to ``scale``: its notebooks leave the earlier runs
    of that scale, and an earlier run left with no notebook is dropped. The other
    scales are kept as they are."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    merged = {name: [dict(r) for r in runs] for name, runs in data.items()}
    kept = []
    for earlier in merged.get(scale, []):
        left = {
            name: s
            for name, s in earlier["seconds"].items()
            if name not in run["seconds"]
        }
        if left:
            kept.append({**earlier, "seconds": left})
    merged[scale] = [*kept, dict(run)]
    return merged


def load(path: Path = DATA) -> dict:
    """The data file's runs by scale ({} if the file does not exist)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def store(data: Mapping, path: Path = DATA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def report_date(report: str) -> str:
    """The date (UTC, YYYY-MM-DD) a JUnit report's test suite started, else today."""
    import xml.etree.ElementTree as ET

    for suite in ET.parse(report).getroot().iter("testsuite"):
        if suite.get("timestamp"):
            return suite.get("timestamp")[:10]
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def toc_notebooks(toc: Path) -> list[str]:
    """The notebooks of the table of contents, in its order (by name)."""
    names = []

    def walk(entries):
        for entry in entries or []:
            if "file" in entry and (toc.parent / f"{entry['file']}.ipynb").is_file():
                names.append(Path(entry["file"]).name)
            walk(entry.get("sections"))

    parsed = yaml.safe_load(toc.read_text())
    for part in parsed.get("parts", []):
        walk(part.get("chapters"))
    walk(parsed.get("chapters"))
    return names


def duration(seconds: float) -> str:
    """``44 s`` below 100 s, else minutes with one decimal (``6.9 min``)."""
    return f"{seconds:.0f} s" if seconds < 99.5 else f"{seconds / 60:.1f} min"


def _chapter(name: str) -> int | None:
    """The chapter number of a notebook named ``NN_topic``; None for another page."""
    return int(name[:2]) if CHAPTER_PATTERN.fullmatch(name) else None


def _row_label(name: str) -> str:
    """``1. {doc}`01_topic``` for a chapter, ``{doc}`name``` for another page."""
    number = _chapter(name)
    return f"{{doc}}`{name}`" if number is None else f"{number}. {{doc}}`{name}`"


def _short_label(name: str) -> str:
    """``{doc}`Chapter 1 <01_topic>``` for a chapter, ``{doc}`name``` for a page."""
    number = _chapter(name)
    return (
        f"{{doc}}`{name}`" if number is None else f"{{doc}}`Chapter {number} <{name}>`"
    )


def _run_text(scale: str, run: Mapping, mark: str) -> str:
    where = run["machine"]
    text = (
        f"{mark}`{scale}`: {run['date']}, {where['cpus']} CPU cores, "
        f"{where['device']}, torch {where['torch']}"
    )
    return text + (f"; {run['note']}" if run.get("note") else "")


def page(data: Mapping, notebooks: list[str]) -> str:
    """The running-times page (MyST Markdown): a table of each notebook's time per
    scale, the total, the goals, and where each column was measured."""
    marks = "¹²³⁴⁵⁶⁷⁸⁹"
    columns, runs_text, over = {}, [], []
    for scale in SCALES:
        runs = data.get(scale, [])
        if len(runs) > len(marks):
            raise ValueError(f"{scale}: at most {len(marks)} runs, got {len(runs)}")
        column = {}
        for number, run in enumerate(runs):
            mark = marks[number] if len(runs) > 1 else ""
            runs_text.append(_run_text(scale, run, mark))
            for name, seconds in run["seconds"].items():
                column[name] = (seconds, mark)
        columns[scale] = column
        goal_s, unit = GOALS[scale][1:]
        timed = {n: column[n][0] for n in notebooks if n in column}
        if unit == "notebook":
            over += [(scale, _short_label(n)) for n, s in timed.items() if s > goal_s]
        elif sum(timed.values()) > goal_s:
            over.append((scale, "the whole book"))
    lines = [
        "(running-times)=",
        "# Running times",
        "",
        "How long each notebook of the book takes to run top to bottom at each scale",
        "of `CCL_SCALE`, as measured: the sum of the times of its code cells. A time",
        "depends on the machine and on what else runs on it: read it as a size, not",
        "to the second.",
        "",
        "| notebook | " + " | ".join(f"`{s}`" for s in SCALES) + " |",
        "|---|" + "---|" * len(SCALES),
    ]
    for name in notebooks:
        cells = []
        for scale in SCALES:
            found = columns[scale].get(name)
            cells.append(f"{duration(found[0])}{found[1]}" if found else "not measured")
        lines.append(f"| {_row_label(name)} | " + " | ".join(cells) + " |")
    totals = []
    for scale in SCALES:
        timed = [columns[scale][n][0] for n in notebooks if n in columns[scale]]
        if not timed:
            totals.append("not measured")
        elif len(timed) < len(notebooks):
            totals.append(f"{duration(sum(timed))} ({len(timed)} of {len(notebooks)})")
        else:
            totals.append(duration(sum(timed)))
    lines.append("| all notebooks | " + " | ".join(totals) + " |")
    lines.append(
        "| goal | "
        + " | ".join(f"{GOALS[s][0]} on {MACHINES[s]}" for s in SCALES)
        + " |"
    )
    lines += ["", "Where and when each column was measured:", ""]
    lines += [f"- {text}" for text in runs_text]
    lines += [
        f"- `{s}`: not measured yet (its goal is set for {MACHINES[s]})."
        for s in SCALES
        if not columns[s]
    ]
    lines.append("")
    for scale in SCALES:
        names = [n for s, n in over if s == scale]
        if names:
            lines += [f"Over the `{scale}` goal: {', '.join(names)}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml")
    args = parser.parse_args(argv)
    args.page.write_text(page(load(args.data), toc_notebooks(args.toc)))
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
