"""A chapter's verdicts: its rows, their Holm-adjusted reading, the reader's tables."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..checks import Choice, Instance, check_choice, checked
from ..results import chapter_path, jsonable, records_dir, write_json
from ..runtime import glue, plain_number, scale
from ._claims import (
    EXPECTED,
    LEVEL,
    NOT_RUN,
    THEOREM,
    Claim,
    _finite,
    _Key,
    _Text,
)
from ._statistics import Estimate, _digits, estimate, holm


def _decide(expected: str, estimate: float, null: float, p_first, p_second) -> str:
    """The verdict of an empirical claim from its two adjusted p-values, at level
    :data:`LEVEL` (see the module's docstring): for "greater"/"less", ``p_first`` is
    that of "no effect" and ``p_second`` that of equivalence; for "equal",
    ``p_first`` is that of equivalence and ``p_second`` that of "beyond the margin"."""
    check_choice("expected", expected, EXPECTED)
    first = p_first <= LEVEL
    second = not math.isnan(p_second) and p_second <= LEVEL
    if expected == "equal":
        if first:
            return "reproduced"
        return "contradicted" if second else "not resolved"
    if first:
        on_side = estimate > null if expected == "greater" else estimate < null
        return "reproduced" if on_side else "contradicted"
    return "absent" if second else "not resolved"


def _tested_p_values(expected: str, found: Estimate | Mapping) -> tuple[float, float]:
    """The two p-values a claim's verdict reads (see :func:`_decide`)."""
    get = found._asdict() if isinstance(found, Estimate) else found
    if expected == "equal":
        return get["p_equivalent"], get["p_beyond"]
    return get["p_effect"], get["p_equivalent"]


def _format_interval(found: Estimate) -> str:
    """The measured column of a verdict table: estimate [low, high]."""
    digits = _digits(found.se)
    text = (
        f"{found.estimate:+.{digits}f} [{found.low:+.{digits}f}, "
        f"{found.high:+.{digits}f}]"
    )
    return text.replace("-", "−")


class Verdicts:
    """A chapter's verdicts: claims tested from per-seed values, theorem rows, claims
    not run; Holm within the chapter; the table, the record and the glued words.

    chapter: the chapter's name, e.g. "01_curl_framework".
    scope: the scope of the claims that state none (data, encoder, steps, seeds).
    """

    @checked(scope=_Text(empty=True))
    def __init__(self, chapter: str, scope: str = ""):
        chapter_path(chapter)  # checks the name
        self.chapter = chapter
        self.scope = scope
        self._rows: dict[str, dict] = {}
        self._numbers: dict[str, dict] = {}

    def _add(self, claim: Claim, row: dict) -> dict:
        if claim.key in self._rows:
            raise ValueError(f"claim key {claim.key!r} is already in this chapter")
        fields = dataclasses.asdict(claim)
        fields["scope"] = fields["scope"] or self.scope
        self._rows[claim.key] = {**fields, **row}
        return self._rows[claim.key]

    @checked(claim=Instance(Claim))
    def test(
        self, claim: Claim, values, baseline=None, *, paired: bool = True
    ) -> Estimate:
        """Add an empirical row: δ estimated from per-seed ``values`` (and
        ``baseline``; see :func:`estimate`); its verdict is read once the chapter's
        p-values are adjusted together (:meth:`rows`). Returns the estimate."""
        found = estimate(
            values,
            baseline,
            paired=paired,
            null=claim.null,
            margin=claim.margin,
            expected=claim.expected,
        )
        self._add(
            claim,
            {
                "kind": "empirical claim",
                **found._asdict(),
                "paired": baseline is not None and paired,
                "measured": _format_interval(found),
            },
        )
        return found

    @checked(claim=Instance(Claim), verdict=Choice(THEOREM))
    def theorem(self, claim: Claim, verdict: str, measured: str) -> None:
        """Add a row that is not empirical: ``verdict`` one of :data:`THEOREM`,
        ``measured`` what the numbers show (e.g. "all 40 checkpoints")."""
        self._add(
            claim, {"kind": "theorem check", "verdict": verdict, "measured": measured}
        )

    @checked(claim=Instance(Claim), reason=_Text())
    def not_run(self, claim: Claim, reason: str) -> None:
        """Add a claim the chapter does not test, with the reason."""
        self._add(claim, {"kind": "not run", "verdict": NOT_RUN, "measured": reason})

    @checked(name=_Key("a glue key"))
    def number(self, name: str, value, se=None) -> None:
        """Record a number the chapter prints (and glue it as ``name``, its s.e. as
        ``name_se``): with ``se``, a trained number, compared within
        :data:`TOLERANCE_SE` of its standard error; without, an exact one, compared
        strictly (to 12 significant digits)."""
        value = _finite(f"number {name}", plain_number(value))
        entry = {"value": value}
        glue(name, value)
        if se is not None:
            entry["se"] = _finite(f"se of {name}", plain_number(se))
            if entry["se"] < 0:
                raise ValueError(f"se of {name} must be ≥ 0, got {entry['se']}")
            glue(f"{name}_se", entry["se"])
        self._numbers[name] = entry

    def rows(self) -> list[dict]:
        """Every row, in the order added, with the chapter's p-values adjusted together
        (``p_holm``: the two p-values of each claim, those of "no effect" and of
        equivalence for "greater"/"less", of equivalence and of "beyond the margin" for
        "equal") and the verdicts of the empirical rows read from them; an empirical
        row's ``measured`` gives its estimate, its 95 % interval (not adjusted) and the
        adjusted p-value that decides its verdict (that of equivalence for "absent")."""
        rows = [dict(row) for row in self._rows.values()]
        empirical = [row for row in rows if row["kind"] == "empirical claim"]
        tested = [_tested_p_values(row["expected"], row) for row in empirical]
        adjusted = holm([p for pair in tested for p in pair])
        for i, row in enumerate(empirical):
            first, second = adjusted[2 * i], adjusted[2 * i + 1]
            row["p_holm"] = [float(first), float(second)]
            row["verdict"] = _decide(
                row["expected"], row["estimate"], row["null"], first, second
            )
            second_decides = row["verdict"] == "absent" or (
                row["expected"] == "equal" and row["verdict"] == "contradicted"
            )
            deciding = second if second_decides else first
            row["measured"] += f"; p = {deciding:.2g} (Holm)"
        return rows

    def table(self) -> pd.DataFrame:
        """The verdict table: claim, what the source says, measured (estimate with its
        95 % interval and the deciding p-value after Holm, or the theorem check's
        numbers), verdict, scope."""
        return verdict_table(self.rows())

    def show(self):
        """The verdict table as the book shows it (:func:`reader_table`)."""
        return reader_table(self.rows())

    def glue_verdicts(self) -> None:
        """Glue each row's verdict as ``<key>_verdict``, for the chapter's prose."""
        for row in self.rows():
            glue(f"{row['key']}_verdict", row["verdict"])

    def record(self) -> dict:
        """The chapter's record: chapter, scale, rows, numbers (JSON data)."""
        return jsonable(
            {
                "chapter": self.chapter,
                "scale": scale(),
                "claims": self.rows(),
                "numbers": self._numbers,
            },
            "record",
        )

    def save(self) -> Path:
        """Write :meth:`record` to ``<records_dir()>/<chapter>.json``
        (:func:`ccl_helpers.results.records_dir`)."""
        return write_json(chapter_path(self.chapter, records_dir()), self.record())


def _source_says(row: Mapping) -> str:
    says = row["statement"]
    if row.get("source_effect") is not None:
        says += f" (source: {row['source_effect']:+.3g})"
    return says


def verdict_table(rows: Sequence[Mapping]) -> pd.DataFrame:
    """The columns a reader sees (claim, source says, metric, measured, verdict, scope)
    of rows from :meth:`Verdicts.rows` or of a saved record's ``claims``."""
    if not rows:
        raise ValueError("rows must hold at least one row")
    table = pd.DataFrame(
        [
            {
                "claim": row["key"],
                "source says": f"{row['source']}: {_source_says(row)}",
                "metric (margin)": row["metric"]
                + ("" if row.get("margin") is None else f" (±{row['margin']:.3g})"),
                "measured": row["measured"],
                "verdict": row["verdict"],
                "scope": row["scope"],
            }
            for row in rows
        ]
    )
    return table.set_index("claim")


READER_COLUMNS = ("claim", "measured", "verdict", "scope")


"""The four columns of the verdict table a reader sees."""


class ReaderTable(NamedTuple):
    """The verdict table for the book's pages: ``frame`` (the four
    :data:`READER_COLUMNS`), shown as HTML whose columns wrap, or as plain text."""

    frame: pd.DataFrame

    def _repr_html_(self) -> str:
        styled = (
            self.frame.style.hide(axis="index")
            .set_uuid("verdicts")  # the same HTML on every run
            .set_properties(**{"white-space": "normal", "text-align": "left"})
            .set_properties(subset=["verdict"], **{"font-weight": "bold"})
            .set_table_styles(
                [{"selector": "th", "props": [("text-align", "left")]}],
                overwrite=False,
            )
        )
        return styled.to_html()

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


def reader_table(rows: Sequence[Mapping]) -> ReaderTable:
    """The verdict table for the book's pages: four columns that wrap (claim: the
    source and what it says; measured: the metric, its margin and the result; verdict;
    scope), no row keys.

    rows: from :meth:`Verdicts.rows` or a saved record's ``claims``."""
    full = verdict_table(rows)
    return ReaderTable(
        pd.DataFrame(
            {
                "claim": full["source says"],
                "measured": full["metric (margin)"] + ": " + full["measured"],
                "verdict": full["verdict"],
                "scope": full["scope"],
            }
        ).reset_index(drop=True)
    )
