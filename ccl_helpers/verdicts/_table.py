"""A chapter's verdicts: its rows, read by one rule, and the reader's tables."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .._checks import check_choice, check_instance
from ..results import chapter_path, jsonable, records_dir, write_json
from ..runtime import glue, plain_number, scale
from ._claims import NOT_RUN, THEOREM, Claim, _finite, _key, _text
from ._statistics import (
    _MAX_SEEDS,
    Estimate,
    _digits,
    _fragile,
    _seed_values,
    _seeds_to_decide,
    decide,
    estimate,
)


def _format_row(
    found: Estimate, expected: str, null: float, margin: float, verdict: str
) -> str:
    """The measured column of an empirical row: the estimate, its simultaneous interval
    and the band (null − margin, null + margin) the verdict reads it against; for a row
    not resolved (``verdict``, as :func:`decide` read it), also the seeds it has and
    the seeds that would decide it at the same spread (:func:`_seeds_to_decide`)."""
    digits = max(_digits(found.se), _digits(margin / 10))
    text = (
        f"{found.estimate:+.{digits}f} [{found.low:+.{digits}f}, "
        f"{found.high:+.{digits}f}]; band ({null - margin:+.{digits}f}, "
        f"{null + margin:+.{digits}f})"
    )
    if verdict == "not resolved":
        needed = _seeds_to_decide(found, expected, null, margin)
        text += f"; {found.n} seeds, " + (
            f"about {needed:,} would decide it at this spread"
            if needed
            else f"more than {_MAX_SEEDS:,} would be needed at this spread"
        )
    return text.replace("-", "−")


DESIGNS = ("paired", "one sample", "Welch")


"""How an empirical row's seeds were compared: paired differences of two arms on shared
seeds (given as two arms, or as the differences), one value per seed of one arm, or two
arms on other seeds (Welch)."""


class Verdicts:
    """A chapter's verdicts: claims tested from per-seed values, theorem rows, claims
    not run; one simultaneous interval per empirical claim, its verdict read off it by
    :func:`decide`; the table, the record and the glued words.

    chapter: the chapter's name, e.g. "01_curl_framework".
    scope: the scope of the claims that state none (data, encoder, steps, seeds).
    """

    def __init__(self, chapter: str, scope: str = ""):
        _text("scope", scope, empty=True)
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

    def test(self, claim: Claim, values, baseline=None, *, paired=None) -> None:
        """Add an empirical row: δ estimated from per-seed ``values`` (and
        ``baseline``; see :func:`estimate`). ``paired``: with a baseline, whether the
        two arms share their seeds (default True; False: Welch); without one, whether
        ``values`` are already the per-seed differences of two such arms (default
        False: one value per seed of one arm). The claim must state its margin. Its
        interval and verdict are read once every claim of the chapter is in
        (:meth:`rows`)."""
        check_instance("claim", claim, Claim)
        if claim.margin is None:
            raise ValueError(
                f"claim {claim.key!r} must state its margin (and the margin's reason): "
                "an empirical claim's verdict reads its interval against it"
            )
        if paired is None:
            paired = baseline is not None
        if not isinstance(paired, bool):
            raise ValueError(f"paired must be True, False or None, got {paired!r}")
        estimate(values, baseline, paired=paired)  # checks the values once
        x = _seed_values("values", values)
        if baseline is not None and paired:
            x, baseline = x - _seed_values("baseline", baseline), None
        welch = baseline is not None
        self._add(
            claim,
            {
                "kind": "empirical claim",
                "design": "Welch" if welch else "paired" if paired else "one sample",
                "paired": paired,
                "values": x.tolist(),
                "baseline": _seed_values("baseline", baseline).tolist()
                if welch
                else None,
            },
        )

    def theorem(self, claim: Claim, verdict: str, measured: str) -> None:
        """Add a row that is not empirical: ``verdict`` one of :data:`THEOREM`,
        ``measured`` what the numbers show (e.g. "all 40 checkpoints")."""
        check_instance("claim", claim, Claim)
        check_choice("verdict", verdict, THEOREM)
        self._add(
            claim, {"kind": "theorem check", "verdict": verdict, "measured": measured}
        )

    def not_run(self, claim: Claim, reason: str) -> None:
        """Add a claim the chapter does not test, with the reason."""
        check_instance("claim", claim, Claim)
        _text("reason", reason)
        self._add(claim, {"kind": "not run", "verdict": NOT_RUN, "measured": reason})

    def number(self, name: str, value, se=None, *, df=None) -> None:
        """Record a number the chapter prints, and glue it as ``name`` (its s.e. as
        ``name_se``). Three kinds:

        - per-seed values (an array-like or tensor of ≥ 2 finite values, or the
          :func:`estimate` of a one-sample or paired contrast): a trained number,
          stored with its seeds, its mean, standard error and degrees of freedom;
        - ``value`` with ``se`` (and ``df``, where known): a trained number derived
          from the seeds' spread (a standard deviation, a transformed estimate, a
          Monte Carlo mean);
        - ``value`` alone: an exact number, compared strictly.

        The stored-output check (``python -m ccl_helpers.verdicts compare``) allows a
        trained number a move of k·√2·se, k from its degrees of freedom. A name already
        recorded in the chapter is an error."""
        _key("name", name, "a glue key")
        if name in self._numbers:
            raise ValueError(
                f"name {name!r} is already recorded in this chapter: a number is "
                "recorded once"
            )
        if isinstance(value, Estimate):
            entry = {"value": value.estimate, "se": value.se, "df": value.df}
        elif se is None and _is_sequence(value):
            seeds = _seed_values(f"number {name}", value)
            mean = float(seeds.mean())
            entry = {
                "value": mean,
                "se": float(seeds.std(ddof=1) / math.sqrt(seeds.size)),
                "df": float(seeds.size - 1),
                "seeds": seeds.tolist(),
            }
        else:
            entry = {"value": _finite(f"number {name}", plain_number(value))}
            if se is not None:
                entry["se"] = _finite(f"se of {name}", plain_number(se))
                if entry["se"] < 0:
                    raise ValueError(f"se of {name} must be ≥ 0, got {entry['se']}")
                if df is not None:
                    entry["df"] = _finite(f"df of {name}", df, positive=True)
            elif df is not None:
                raise ValueError(f"df of {name} goes with an se, got se None")
        glue(name, entry["value"])
        if "se" in entry:
            glue(f"{name}_se", entry["se"])
        self._numbers[name] = entry

    def rows(self) -> list[dict]:
        """Every row, in the order added. An empirical row gets its estimate and its
        interval simultaneous over the chapter's m empirical claims (:func:`estimate`
        with ``family=m``), its verdict read off that interval and its margin
        (:func:`decide`), ``fragile`` (an end within one s.e. of the band's edge: the
        last bits of training could move the verdict across) and ``measured``: the
        estimate, the interval and the band."""
        rows = [dict(row) for row in self._rows.values()]
        empirical = [row for row in rows if row["kind"] == "empirical claim"]
        for row in empirical:
            welch = row["design"] == "Welch"
            found = estimate(
                row["values"], row["baseline"], paired=not welch, family=len(empirical)
            )
            row.update(found._asdict())
            row["verdict"] = decide(
                row["expected"], found.low, found.high, row["null"], row["margin"]
            )
            row["fragile"] = _fragile(
                found.low, found.high, found.se, row["null"], row["margin"]
            )
            row["measured"] = _format_row(
                found, row["expected"], row["null"], row["margin"], row["verdict"]
            )
        return rows

    def table(self) -> pd.DataFrame:
        """The verdict table: claim, what the source says, measured (the estimate, its
        simultaneous interval and the band, or the theorem check's numbers), verdict,
        scope."""
        return verdict_table(self.rows())

    def show(self):
        """The verdict table as the book shows it: four columns that wrap (claim: the
        source and what it says; measured: the metric, its margin and the result;
        verdict; scope), no row keys; HTML in a notebook, plain text otherwise."""
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


def _is_sequence(value) -> bool:
    """Whether ``value`` holds several numbers (per-seed values), not one."""
    if isinstance(value, str | bytes):
        return False
    return getattr(value, "ndim", None) == 1 or isinstance(value, list | tuple)


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
