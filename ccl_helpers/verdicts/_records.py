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

import numpy as np
import pandas as pd
from scipy import stats

from ..results import CHAPTER_PATTERN
from ._claims import VOCABULARY
from ._statistics import decide, estimate


def _no_duplicates(pairs):
    """A JSON object's pairs as a dict; a key given twice is an error."""
    found = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} is given twice")
        found[key] = value
    return found


def _no_constant(name):
    raise ValueError(f"{name} is not a finite number")


def load_records(folder) -> list[dict]:
    """The chapter records (``NN_topic.json``) in ``folder``, in chapter order. A file
    that is not strict JSON (cut, NaN or Infinity, a key given twice), that is not a
    chapter record, or that repeats another file's chapter or a claim key, raises a
    ValueError that names it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be a folder of chapter records, got {folder}")
    records, files = [], {}
    for path in sorted(folder.glob("[0-9][0-9]_*.json")):
        try:
            record = json.loads(
                path.read_text(),
                object_pairs_hook=_no_duplicates,
                parse_constant=_no_constant,
            )
        except ValueError as error:  # json.JSONDecodeError is a ValueError
            raise ValueError(f"{path} is not a valid chapter record: {error}") from None
        if (
            not isinstance(record, dict)
            or not {"chapter", "claims"} <= set(record)
            or not isinstance(record["claims"], list)
            or not all(isinstance(row, dict) for row in record["claims"])
        ):
            raise ValueError(
                f"{path} is not a chapter record (chapter, and claims: a list of rows)"
            )
        if record["chapter"] in files:
            raise ValueError(
                f"{path} and {files[record['chapter']]} hold the same chapter "
                f"{record['chapter']!r}"
            )
        keys = [row.get("key") for row in record["claims"]]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise ValueError(f"{path} holds the claims {repeated} twice")
        files[record["chapter"]] = path
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
            "margin": row.get("margin"),
            "margin_reason": row.get("margin_reason", ""),
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
        "chapter reached by one method. The seed is the unit of replication, and arms",
        "that share seeds are compared by their paired differences. Each empirical",
        "claim has one interval, simultaneous over the chapter's m empirical claims",
        "(Student's t at 1 − 0.05/(2m): Bonferroni, 95 % for the family), and one",
        "margin Δ > 0, the smallest effect that counts, stated with its reason before",
        "looking; the band is (null − Δ, null + Δ). The *measured* column prints the",
        "estimate, that interval and that band, and the verdict is read off them:",
        "",
        "- a claim that the effect is positive is *reproduced* if the interval lies",
        "  above the band, *absent* if it lies inside it, *contradicted* if it lies",
        "  below the band's upper edge without lying inside it, and *not resolved*",
        "  otherwise (a negative effect is the mirror image);",
        "- a claim of equality is *reproduced* if the interval lies inside the band,",
        "  *contradicted* if it lies wholly outside it, and *not resolved* otherwise.",
        "",
        "A row *not resolved* also gives its seeds and about how many would decide",
        "it, were its estimate and its seed-to-seed spread to stay as they are.",
        "",
        "*Holds*, *corrected* and *sharpened* are the verdicts of theorem checks;",
        "*not run* marks a claim the book does not test.",
        "",
        "| verdict | claims |",
        "|---|---|",
    ]
    counts = card["verdict"].value_counts()
    lines += [f"| {word} | {counts.get(word, 0)} |" for word in VOCABULARY]
    lines += [f"| all | {len(card)} |", ""]
    for chapter, rows in card.groupby("chapter", sort=True):
        lines += [f"## {titles.get(chapter, chapter)}", ""]
        lines += [
            "| claim | source | verdict | measured | margin Δ, and why |",
            "|---|---|---|---|---|",
        ]
        for row in rows.itertuples():
            claim = _cell(row.statement)
            if isinstance(row.section, str):  # None (no section) is NaN in a frame
                claim += f" ({{ref}}`section <{row.section}>`)"
            margin = ""
            if row.kind == "empirical claim":
                margin = f"{row.margin:.3g}: {_cell(row.margin_reason)}"
            lines.append(
                f"| {claim} | {_cell(row.source)} | {row.verdict} | "
                f"{_cell(row.measured)} | {margin} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_scorecard(folder, page, titles: Mapping[str, str]) -> Path:
    """Write :func:`scorecard_page` of the records in ``folder`` to ``page``."""
    page = Path(page)
    page.write_text(scorecard_page(load_records(folder), titles))
    return page


FALSE_ALARM = 0.01


"""The book-wide false-alarm rate of :func:`compare_records`: the chance that a rerun
whose trained numbers are a fresh draw of the same seeds' distribution fails any of
them (Bonferroni over the ``family`` of trained numbers compared)."""


def _tolerance_k(df: float, family: int) -> float:
    """k of the trained-number check, |new − stored| ≤ k·√2·se_stored: the two-sided t
    quantile on the stored s.e.'s ``df`` degrees of freedom at half of
    :data:`FALSE_ALARM` spread over ``family`` numbers (the other half goes to
    :func:`_se_ratio_bound`). For a fresh draw, (new − stored)/(√2·se_stored) follows
    Student's t on df exactly (normal seeds)."""
    return float(stats.t.ppf(1 - FALSE_ALARM / (4 * family), df))


def _se_ratio_bound(df: float, family: int) -> float:
    """r of the check 1/r ≤ se_new/se_stored ≤ r: the square root of the two-sided
    F(df, df) quantile at half of :data:`FALSE_ALARM` spread over ``family`` numbers
    (the ratio of two independent variance estimates on df degrees of freedom each)."""
    return math.sqrt(float(stats.f.ppf(1 - FALSE_ALARM / (4 * family), df, df)))


_STRICT_FIELDS = (
    "kind",
    "expected",
    "null",
    "margin",
    "margin_reason",
    "source_effect",
    "design",
    "paired",
    "n",
    "family",
)
"""The fields of a claim that a rerun must reproduce exactly: how it was stated and
tested."""


def _check_finite(where: str, value, problems: list) -> None:
    """Every number in ``value`` finite (NaN and inf are errors, as are None for a
    number's value or s.e.)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _check_finite(f"{where}.{key}", item, problems)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_finite(f"{where}[{i}]", item, problems)
    elif isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{where}: {value} is not finite")


def _consistency(record: Mapping, name: str) -> list[str]:
    """What a record's own per-seed values contradict: a claim's estimate, s.e.,
    interval or verdict recomputed from its values and margin, and a
    number's mean and s.e. recomputed from its seeds."""
    problems = []
    for row in record["claims"]:
        if row.get("kind") != "empirical claim":
            continue
        where = f"{name} claim {row.get('key')}"
        try:
            found = estimate(
                row["values"],
                row.get("baseline"),
                paired=row["design"] != "Welch",
                family=row["family"],
            )
            verdict = decide(
                row["expected"], found.low, found.high, row["null"], row["margin"]
            )
        except (KeyError, TypeError, ValueError) as error:
            problems.append(f"{where}: cannot be recomputed ({error})")
            continue
        for field in ("estimate", "se", "low", "high", "df", "n"):
            if not math.isclose(
                row.get(field, math.nan),
                getattr(found, field),
                rel_tol=1e-9,
                abs_tol=1e-12,
            ):
                problems.append(
                    f"{where}: {field} {row.get(field)!r} ≠ {getattr(found, field)!r} "
                    "recomputed from its values"
                )
        if row.get("verdict") != verdict:
            problems.append(
                f"{where}: verdict {row.get('verdict')!r} ≠ {verdict!r}, the rule read "
                "off its interval and margin"
            )
    for key, entry in record.get("numbers", {}).items():
        if "seeds" in entry:
            seeds = np.asarray(entry["seeds"], dtype=np.float64)
            mean = float(seeds.mean())
            se = float(seeds.std(ddof=1) / math.sqrt(seeds.size))
            if not (
                math.isclose(entry["value"], mean, rel_tol=1e-9, abs_tol=1e-12)
                and math.isclose(entry["se"], se, rel_tol=1e-9, abs_tol=1e-12)
            ):
                problems.append(
                    f"{name} number {key}: value ± se {entry['value']!r} ± "
                    f"{entry['se']!r} ≠ {mean!r} ± {se!r} of its seeds"
                )
    return problems


def _trained_count(record: Mapping) -> int:
    """The trained numbers of a record: its empirical claims and its numbers with an
    s.e. (the family of :func:`compare_records`)."""
    claims = sum(row.get("kind") == "empirical claim" for row in record["claims"])
    return claims + sum("se" in entry for entry in record.get("numbers", {}).values())


def compare_records(stored: Mapping, fresh: Mapping, family: int | None = None) -> list:
    """The differences that matter between a committed record and a fresh one → a list
    of messages, empty when the records agree:

    - another scale; a claim or number missing on either side; a value that is not
      finite;
    - either record contradicting its own per-seed values (``_consistency``);
    - a claim whose statement or test differs (``_STRICT_FIELDS``), or whose
      verdict word differs;
    - an exact number that differs beyond 12 significant digits;
    - a trained number (an empirical claim's estimate, a number with an s.e.) that moved
      by more than k·√2·se_stored, k = ``_tolerance_k`` of its df over ``family``
      numbers (default: this record's ``_trained_count``), or whose s.e. changed by
      a factor beyond ``_se_ratio_bound``; a number without its own df takes the
      smallest df of the record's claims.
    """
    for name, record in (("stored", stored), ("fresh", fresh)):
        if not isinstance(record, Mapping) or not isinstance(
            record.get("claims"), list
        ):
            raise ValueError(f"{name} must be a chapter record (a 'claims' list)")
    family = _trained_count(stored) if family is None else family
    problems: list[str] = []
    for name, record in (("stored", stored), ("fresh", fresh)):
        _check_finite(name, record, problems)
    if problems:
        return problems
    problems += _consistency(stored, "stored") + _consistency(fresh, "fresh")
    if stored.get("scale") != fresh.get("scale"):
        problems.append(f"scale {fresh.get('scale')!r} ≠ {stored.get('scale')!r}")
    claim_dfs = [row["df"] for row in stored["claims"] if "df" in row]
    smallest_df = min(claim_dfs, default=1.0)

    def close(name, a, b):
        if "se" not in a or "se" not in b:
            if ("se" in a) != ("se" in b):
                problems.append(f"{name}: trained in one record, exact in the other")
            elif not math.isclose(a["value"], b["value"], rel_tol=1e-12, abs_tol=0):
                problems.append(f"{name}: exact value {b['value']!r} ≠ {a['value']!r}")
            return
        df = a.get("df", smallest_df)
        if a["se"] == 0:
            if b["se"] != 0 or not math.isclose(a["value"], b["value"], rel_tol=1e-12):
                problems.append(
                    f"{name}: {b['value']:.6g} ± {b['se']:.3g} against the stored "
                    f"{a['value']:.6g} with no spread over its seeds"
                )
            return
        allowed = _tolerance_k(df, family) * math.sqrt(2) * a["se"]
        if abs(a["value"] - b["value"]) > allowed:
            problems.append(
                f"{name}: {b['value']:.6g} against stored {a['value']:.6g}, more than "
                f"k·√2·se = {allowed:.3g} apart (k = {_tolerance_k(df, family):.2f}, "
                f"df = {df:g})"
            )
        bound, ratio = _se_ratio_bound(df, family), b["se"] / a["se"]
        if not 1 / bound <= ratio <= bound:
            problems.append(
                f"{name}: s.e. {b['se']:.3g} against stored {a['se']:.3g}, a ratio "
                f"{ratio:.3g} outside [1/{bound:.3g}, {bound:.3g}]"
            )

    claims = [
        {row["key"]: row for row in record["claims"]} for record in (stored, fresh)
    ]
    for key in sorted(set(claims[0]) ^ set(claims[1])):
        problems.append(f"claim {key}: in only one of the records")
    for key in sorted(set(claims[0]) & set(claims[1])):
        a, b = claims[0][key], claims[1][key]
        for field in _STRICT_FIELDS:
            if a.get(field) != b.get(field):
                problems.append(
                    f"claim {key}: {field} {b.get(field)!r} ≠ stored {a.get(field)!r}"
                )
        if a["verdict"] != b["verdict"]:
            problems.append(f"claim {key}: verdict {b['verdict']!r} ≠ {a['verdict']!r}")
        if a["kind"] == "empirical claim" and b["kind"] == "empirical claim":
            close(
                f"claim {key}",
                {"value": a["estimate"], "se": a["se"], "df": a["df"]},
                {"value": b["estimate"], "se": b["se"]},
            )
    numbers = [record.get("numbers", {}) for record in (stored, fresh)]
    for name in sorted(set(numbers[0]) ^ set(numbers[1])):
        problems.append(f"number {name}: in only one of the records")
    for name in sorted(set(numbers[0]) & set(numbers[1])):
        close(f"number {name}", numbers[0][name], numbers[1][name])
    return problems


def _fragile_rows(record: Mapping) -> list[str]:
    """The keys of a record's empirical claims whose verdict is fragile (an end of the
    interval within one s.e. of the band's edge, :func:`fragile`)."""
    return [row["key"] for row in record["claims"] if row.get("fragile")]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m ccl_helpers.verdicts scorecard RECORDS PAGE``: write the scorecard
    page from the chapter records in RECORDS; ``compare STORED FRESH``: compare two
    folders of records (the family of the trained-number check is every trained
    number of the stored records), print the fragile verdicts of the fresh ones per
    chapter, exit 1 on a difference that matters. A bad folder or record exits 2 with
    one line."""
    parser = argparse.ArgumentParser(
        prog="python -m ccl_helpers.verdicts",
        description="The book's chapter records: the scorecard page, and the check "
        "of a fresh run against the committed records.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    card = commands.add_parser("scorecard", help="write the scorecard page")
    card.add_argument("records", help="the folder of chapter records (NN_topic.json)")
    card.add_argument("page", help="the Markdown page to write")
    card.add_argument(
        "--toc",
        default="_toc.yml",
        help="the table of contents that names the chapters (default: _toc.yml)",
    )
    compare = commands.add_parser(
        "compare", help="compare a fresh run's records with the committed ones"
    )
    compare.add_argument("stored", help="the folder of the committed records")
    compare.add_argument("fresh", help="the folder of the fresh run's records")
    args = parser.parse_args(argv)
    try:
        if args.command == "scorecard":
            write_scorecard(args.records, args.page, chapter_titles(args.toc))
            print(f"wrote {args.page}")
            return
        stored = {r["chapter"]: r for r in load_records(args.stored)}
        fresh = {r["chapter"]: r for r in load_records(args.fresh)}
    except (OSError, ValueError) as error:
        parser.exit(2, f"{parser.prog} {args.command}: {error}\n")
    problems = [
        f"{chapter}: only in {where}"
        for where, mine, other in (
            (args.stored, stored, fresh),
            (args.fresh, fresh, stored),
        )
        for chapter in sorted(set(mine) - set(other))
    ]
    family = sum(_trained_count(record) for record in stored.values())
    for chapter in sorted(set(stored) & set(fresh)):
        found = compare_records(stored[chapter], fresh[chapter], family)
        problems += [f"{chapter}: {p}" for p in found]
    for chapter, record in sorted(fresh.items()):
        rows = _fragile_rows(record)
        named = f": {', '.join(rows)}" if rows else ""
        word = "verdict" if len(rows) == 1 else "verdicts"
        print(f"{chapter}: {len(rows)} fragile {word}{named}")
    print(
        "\n".join(problems)
        or f"{len(fresh)} chapter records agree ({family} trained numbers, "
        f"a false-alarm rate of {FALSE_ALARM:g} over all of them)"
    )
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
