"""The chapters' records: loading and comparing them, the scorecard, the command line.

A fresh record is compared with the stored one (:func:`compare_records`); the scorecard
page is built from the stored records (:func:`write_scorecard`).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..checks import checked
from ..results import CHAPTER_PATTERN
from ._claims import TOLERANCE_SE, VOCABULARY, _FiniteReal


def load_records(folder) -> list[dict]:
    """The chapter records (``NN_topic.json``) in ``folder``, in chapter order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be a folder of chapter records, got {folder}")
    records = []
    for path in sorted(folder.glob("[0-9][0-9]_*.json")):
        try:
            record = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from None
        if not isinstance(record, dict) or not {"chapter", "claims"} <= set(record):
            raise ValueError(f"{path} is not a chapter record (chapter, claims)")
        records.append(record)
    return records


def scorecard(records: Sequence[Mapping]) -> pd.DataFrame:
    """Every claim of the book: chapter, claim, source, statement, verdict, measured,
    section (its label) — one row per claim of each record."""
    rows = [
        {
            "chapter": record["chapter"],
            "claim": row["key"],
            "source": row["source"],
            "statement": row["statement"],
            "kind": row["kind"],
            "verdict": row["verdict"],
            "measured": row["measured"],
            "section": row.get("section"),
        }
        for record in records
        for row in record["claims"]
    ]
    if not rows:
        raise ValueError("records must hold at least one claim")
    return pd.DataFrame(rows)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def scorecard_page(records: Sequence[Mapping], titles: Mapping[str, str]) -> str:
    """The scorecard page (MyST Markdown): the count of each verdict, then one table
    per chapter with every claim, its verdict and a link to its section."""
    card = scorecard(records)
    lines = [
        "(scorecard)=",
        "# Scorecard",
        "",
        "Every claim of the sources that the book tests, with the verdict its",
        "chapter reached by one method: seeds as the unit, 95 % t intervals, a",
        "margin stated before looking, and a chapter's p-values adjusted together",
        "(Holm). *Reproduced*, *contradicted*, *absent* (no effect beyond the margin)",
        "and *not resolved* are the verdicts of empirical claims; *holds*,",
        "*corrected* and *sharpened* those of theorem checks; *not run* marks a claim",
        "the book does not test.",
        "",
        "| verdict | claims |",
        "|---|---|",
    ]
    counts = card["verdict"].value_counts()
    lines += [f"| {word} | {counts.get(word, 0)} |" for word in VOCABULARY]
    lines += [f"| all | {len(card)} |", ""]
    for chapter, rows in card.groupby("chapter", sort=True):
        lines += [f"## {titles.get(chapter, chapter)}", ""]
        lines += ["| claim | source | verdict | measured |", "|---|---|---|---|"]
        for row in rows.itertuples():
            claim = _cell(row.statement)
            if isinstance(row.section, str):  # None (no section) is NaN in a frame
                claim += f" ({{ref}}`section <{row.section}>`)"
            lines.append(
                f"| {claim} | {_cell(row.source)} | {row.verdict} | "
                f"{_cell(row.measured)} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_scorecard(folder, page, titles: Mapping[str, str]) -> Path:
    """Write :func:`scorecard_page` of the records in ``folder`` to ``page``."""
    page = Path(page)
    page.write_text(scorecard_page(load_records(folder), titles))
    return page


@checked(k=_FiniteReal(positive=True))
def compare_records(stored: Mapping, fresh: Mapping, k: float = TOLERANCE_SE) -> list:
    """The differences that matter between a committed record and a fresh one: another
    scale, a claim or number missing on either side, a verdict word that differs, an
    exact number that differs beyond 12 significant digits, or a trained number (one
    with a standard error) or claim estimate that moved by more than k·√(se₁² + se₂²).
    (The
    text of a theorem row's ``measured`` is not compared: its numbers are recorded as
    numbers.)
    Returns a list of messages, empty when the records agree."""
    for name, record in (("stored", stored), ("fresh", fresh)):
        if not isinstance(record, Mapping) or not isinstance(
            record.get("claims"), list
        ):
            raise ValueError(f"{name} must be a chapter record (a 'claims' list)")
    problems = []
    if stored.get("scale") != fresh.get("scale"):
        problems.append(f"scale {fresh.get('scale')!r} ≠ {stored.get('scale')!r}")

    def close(name, a, b):
        if "se" in a and "se" in b:
            allowed = k * math.hypot(a["se"], b["se"])
            if abs(a["value"] - b["value"]) > allowed:
                problems.append(
                    f"{name}: {b['value']:.6g} against stored {a['value']:.6g}, more "
                    f"than {k:g}·√(se₁² + se₂²) = {allowed:.3g} apart"
                )
        elif not math.isclose(a["value"], b["value"], rel_tol=1e-12, abs_tol=1e-300):
            problems.append(f"{name}: exact value {b['value']!r} ≠ {a['value']!r}")

    claims = [
        {row["key"]: row for row in record["claims"]} for record in (stored, fresh)
    ]
    for key in sorted(set(claims[0]) ^ set(claims[1])):
        problems.append(f"claim {key}: in only one of the records")
    for key in sorted(set(claims[0]) & set(claims[1])):
        a, b = claims[0][key], claims[1][key]
        if a["verdict"] != b["verdict"]:
            problems.append(f"claim {key}: verdict {b['verdict']!r} ≠ {a['verdict']!r}")
        if a["kind"] == "empirical claim" and b["kind"] == "empirical claim":
            close(
                f"claim {key}",
                {"value": a["estimate"], "se": a["se"]},
                {"value": b["estimate"], "se": b["se"]},
            )
    numbers = [record.get("numbers", {}) for record in (stored, fresh)]
    for name in sorted(set(numbers[0]) ^ set(numbers[1])):
        problems.append(f"number {name}: in only one of the records")
    for name in sorted(set(numbers[0]) & set(numbers[1])):
        close(f"number {name}", numbers[0][name], numbers[1][name])
    return problems


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m ccl_helpers.verdicts scorecard RECORDS PAGE``: write the scorecard
    page from the chapter records in RECORDS; ``compare STORED FRESH``: compare two
    folders of records, exit 1 on a difference that matters."""
    parser = argparse.ArgumentParser(prog="python -m ccl_helpers.verdicts")
    commands = parser.add_subparsers(dest="command", required=True)
    card = commands.add_parser("scorecard", help="write the scorecard page")
    card.add_argument("records")
    card.add_argument("page")
    card.add_argument("--toc", default="_toc.yml")
    compare = commands.add_parser("compare", help="compare two folders of records")
    compare.add_argument("stored")
    compare.add_argument("fresh")
    args = parser.parse_args(argv)
    if args.command == "scorecard":
        write_scorecard(args.records, args.page, chapter_titles(args.toc))
        print(f"wrote {args.page}")
        return
    stored = {r["chapter"]: r for r in load_records(args.stored)}
    fresh = {r["chapter"]: r for r in load_records(args.fresh)}
    problems = [
        f"{chapter}: only in {where}"
        for where, mine, other in (
            (args.stored, stored, fresh),
            (args.fresh, fresh, stored),
        )
        for chapter in sorted(set(mine) - set(other))
    ]
    for chapter in sorted(set(stored) & set(fresh)):
        problems += [
            f"{chapter}: {p}" for p in compare_records(stored[chapter], fresh[chapter])
        ]
    print("\n".join(problems) or f"{len(fresh)} chapter records agree")
    raise SystemExit(1 if problems else 0)


def chapter_titles(toc) -> dict[str, str]:
    """Each chapter's title (its notebook's first heading), by the chapter's name, for
    the chapters of the table of contents ``toc``: its notebooks named like a chapter
    (``NN_topic``, :data:`~ccl_helpers.results.CHAPTER_PATTERN`), not its other
    pages."""
    toc = Path(toc)
    titles = {}
    for entry in re.findall(r"file:\s*(\S+)", toc.read_text()):
        notebook = toc.parent / f"{entry}.ipynb"
        if not (notebook.is_file() and CHAPTER_PATTERN.fullmatch(notebook.stem)):
            continue
        cells = json.loads(notebook.read_text())["cells"]
        for cell in cells:
            heading = re.search(r"^# (.+)$", "".join(cell["source"]), re.MULTILINE)
            if cell["cell_type"] == "markdown" and heading:
                titles[notebook.stem] = heading.group(1).strip()
                break
    return titles
