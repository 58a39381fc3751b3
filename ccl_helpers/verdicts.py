"""One method for the book: per-seed measurements → an estimate, an interval, a verdict.

A chapter states each claim of its source as a :class:`Claim`: the source and its
statement in one line, the primary metric and the direction the source expects, the
source's effect size where it gives one, the margin below which an effect counts as
absent (with its reason, stated before looking) and the scope (data, encoder, steps,
seeds). A :class:`Verdicts` collects the chapter's rows:

- :meth:`Verdicts.test` turns per-seed measurements into a row. The **seed is the unit
  of replication**: one number per seed (a checkpoint's value, a slope fitted to one
  run's curve, …), never the points of one run. Arms that share seeds are compared by
  their paired differences d_s = x_s − y_s (Student's t on n − 1 degrees of freedom);
  arms that do not, by Welch's t (Welch–Satterthwaite degrees of freedom).
- :meth:`Verdicts.theorem` and :meth:`Verdicts.not_run` add the rows that are not
  empirical (a theorem check that holds, a statement the chapter corrects or
  sharpens, a claim not tested).

Every empirical row carries two p-values: that of the two-sided t test of "no effect"
(δ = null) and that of the equivalence test |δ − null| < margin (two one-sided tests,
TOST; for a claim that δ *equals* a value, the test that δ lies beyond the margin on
the side of the estimate). All of a chapter's p-values are adjusted together by Holm's
step-down method (:func:`holm`) before any verdict is read, at level α = 0.05. Then, for
a claim that δ is greater (less) than ``null``:

- *reproduced*: "no effect" rejected, the estimate on the claimed side;
- *contradicted*: "no effect" rejected, the estimate on the other side;
- *absent*: equivalence within the margin shown (TOST);
- *not resolved*: neither.

For a claim that δ equals ``null`` (e.g. a slope of −1/2, "competes with"):
*reproduced* when equivalence within the margin is shown, *contradicted* when δ is
shown to lie beyond it, else *not resolved*. The rows that are not empirical read
*holds*, *corrected*, *sharpened* or *not run* (:data:`VOCABULARY`).

:meth:`Verdicts.save` writes the chapter's record, ``<results>/NN_topic.json``: the
claims with their estimates and verdicts, and the chapter's trained numbers with their
standard errors (:meth:`Verdicts.number`); the stored-output check of ``make test``
compares a fresh record with the committed one (:func:`compare_records`) and the
scorecard page is built from the committed records (:func:`write_scorecard`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from torch import Tensor

from .checks import (
    Choice,
    Int,
    OpenUnit,
    Positive,
    check_choice,
    check_frame,
    check_instance,
    checked,
)
from .results import CHAPTER_PATTERN, chapter_path, jsonable, records_dir, write_json
from .runtime import glue, plain_number, scale

LEVEL = 0.05
"""The family-wise error rate of a chapter's tests (Holm), and 1 − the confidence of
its intervals."""

EMPIRICAL = ("reproduced", "contradicted", "absent", "not resolved")
"""The verdicts of an empirical claim."""

THEOREM = ("holds", "corrected", "sharpened")
"""The verdicts of a row that is not empirical: a theorem check that holds, a
statement the chapter corrects (and proves the fix of), or sharpens (and proves the
tighter form of)."""

NOT_RUN = "not run"

VOCABULARY = (*EMPIRICAL, *THEOREM, NOT_RUN)
"""Every verdict word of the book, in the scorecard's order."""

EXPECTED = ("greater", "less", "equal")
"""What a claim says of its metric δ: greater than, less than, or equal to ``null``."""

TOLERANCE_SE = 4.0
"""k of the stored-output check: a trained number may move by k·√(se₁² + se₂²)."""

_KEY = re.compile(r"[a-z0-9][a-z0-9_-]*")


def _finite(name: str, value, *, positive: bool = False) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | np.floating | np.integer)
        or not math.isfinite(value)
        or (positive and value <= 0)
    ):
        kind = "a finite real number > 0" if positive else "a finite real number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return float(value)


def _text(name: str, value, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a source, stated before looking at the numbers that test it.

    Attributes:
        key: an identifier, unique in the chapter (lower case, digits, "_", "-").
        source: where the source says it, e.g. "Arora et al. (2019), Table 1".
        statement: what the source says, in one line.
        metric: the primary metric δ, the source's own, e.g. "AVG-10 accuracy,
            contrastive − supervised (points)".
        expected: "greater" or "less" (δ > null or δ < null), or "equal" (δ = null).
        null: the value of δ under "no effect" (0 for a difference), or the value
            the source claims for "equal".
        margin: |δ − null| below this counts as no effect (as "equal" for an
            "equal" claim); None where the chapter states none (then "absent" cannot
            be reached). Never larger than the source's own effect.
        margin_reason: why this margin, stated with it.
        source_effect: the effect size the source reports, in the metric's units.
        scope: the data, encoder, steps and seeds of the measurement.
        section: the label (MyST target) of the section that tests the claim.
    """

    key: str
    source: str
    statement: str
    metric: str
    expected: str = "greater"
    null: float = 0.0
    margin: float | None = None
    margin_reason: str = ""
    source_effect: float | None = None
    scope: str = ""
    section: str | None = None

    def __post_init__(self):
        if not isinstance(self.key, str) or not _KEY.fullmatch(self.key):
            raise ValueError(
                "key must be lower-case letters, digits, '_' or '-', starting with a "
                f"letter or digit, got {self.key!r}"
            )
        for name in ("source", "statement", "metric"):
            _text(name, getattr(self, name))
        _text("scope", self.scope, empty=True)
        check_choice("expected", self.expected, EXPECTED)
        object.__setattr__(self, "null", _finite("null", self.null))
        if self.margin is not None:
            margin = _finite("margin", self.margin, positive=True)
            object.__setattr__(self, "margin", margin)
            _text("margin_reason (the margin's reason)", self.margin_reason)
        elif self.expected == "equal":
            raise ValueError("margin must be given for a claim that δ equals a value")
        if self.source_effect is not None:
            effect = _finite("source_effect", self.source_effect)
            object.__setattr__(self, "source_effect", effect)
            if self.margin is not None and self.margin > abs(effect - self.null):
                raise ValueError(
                    f"margin must not exceed the source's own effect |{effect} − "
                    f"{self.null}|, got {self.margin}"
                )
        if self.section is not None and not (
            isinstance(self.section, str) and _KEY.fullmatch(self.section)
        ):
            raise ValueError(f"section must be a MyST label, got {self.section!r}")


def claims_by_key(*claims: Claim) -> dict[str, Claim]:
    """A chapter's claims by key, in the order given; a key used twice is an error."""
    by_key: dict[str, Claim] = {}
    for claim in claims:
        check_instance("claims", claim, Claim)
        if claim.key in by_key:
            raise ValueError(f"claims must have distinct keys, {claim.key!r} is twice")
        by_key[claim.key] = claim
    return by_key


class Estimate(NamedTuple):
    """An estimate of δ from n seeds: its standard error, the t interval [low, high]
    at 1 − :data:`LEVEL` on ``df`` degrees of freedom, and three p-values (NaN where
    they need a margin and none is given): ``p_effect`` of the two-sided test of
    δ = null, ``p_equivalent`` of the equivalence test |δ − null| < margin (two
    one-sided tests), ``p_beyond`` of the test that δ lies beyond the margin on the
    side of the estimate."""

    estimate: float
    se: float
    low: float
    high: float
    df: float
    n: int
    p_effect: float
    p_equivalent: float
    p_beyond: float


def _seed_values(name: str, values) -> np.ndarray:
    if isinstance(values, Tensor):
        values = values.detach().cpu()
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size < 2 or not np.isfinite(array).all():
        raise ValueError(
            f"{name} must hold at least 2 finite values, one per seed, got "
            f"{np.asarray(values).tolist()!r}"
        )
    return array


def _p_value(shift: float, se: float, df: float, side: str) -> float:
    """The p-value of Student's t test that an estimate ``shift`` away from the
    hypothesised value (standard error ``se``, ``df`` degrees of freedom) lies beyond
    it: alternative "greater", "less" or "two-sided". With se = 0 the estimate is
    exact: p is 0 where it lies strictly on the alternative's side, else 1."""
    if se == 0:
        beyond = {"greater": shift > 0, "less": shift < 0, "two-sided": shift != 0}
        return 0.0 if beyond[side] else 1.0
    t = shift / se
    if side == "greater":
        return float(stats.t.sf(t, df))
    if side == "less":
        return float(stats.t.cdf(t, df))
    return float(2 * stats.t.sf(abs(t), df))


@checked(expected=Choice(EXPECTED))
def estimate(
    values,
    baseline=None,
    *,
    paired: bool = True,
    null: float = 0.0,
    margin: float | None = None,
    expected: str = "greater",
) -> Estimate:
    """δ from per-seed measurements: the mean of ``values`` (no ``baseline``), of the
    paired differences values − baseline (``paired``, seeds in the same order), or the
    difference of the two means (Welch, seeds not shared).

    values, baseline: one finite value per seed each (array-likes or tensors), ≥ 2.
    null, margin, expected: as in :class:`Claim`.
    Returns an :class:`Estimate`; a zero standard error gives a point interval and
    p-values of 0 or 1.
    """
    x = _seed_values("values", values)
    null = _finite("null", null)
    if margin is not None:
        margin = _finite("margin", margin, positive=True)
    if baseline is None:
        centre, se, df = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), None
    else:
        y = _seed_values("baseline", baseline)
        if paired:
            if x.size != y.size:
                raise ValueError(
                    "values and baseline must hold one value per shared seed each, got "
                    f"{x.size} and {y.size} (paired=False for arms on other seeds)"
                )
            d = x - y
            centre, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
            df = None
        else:
            vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
            centre, se = float(x.mean() - y.mean()), float(math.sqrt(vx + vy))
            denominator = vx**2 / (x.size - 1) + vy**2 / (y.size - 1)
            df = float((vx + vy) ** 2 / denominator) if denominator > 0 else None
    n = x.size if baseline is None or paired else x.size + y.size
    if df is None:
        df = float(x.size - 1) if baseline is None or paired else float(n - 2)
    half = float(stats.t.ppf(1 - LEVEL / 2, df)) * se
    offset = centre - null
    p_effect = _p_value(offset, se, df, "two-sided")
    if margin is None:
        p_equivalent = p_beyond = math.nan
    else:
        p_equivalent = max(
            _p_value(offset + margin, se, df, "greater"),
            _p_value(offset - margin, se, df, "less"),
        )
        if offset >= 0:
            p_beyond = _p_value(offset - margin, se, df, "greater")
        else:
            p_beyond = _p_value(offset + margin, se, df, "less")
    return Estimate(
        centre,
        se,
        centre - half,
        centre + half,
        df,
        int(n),
        p_effect,
        p_equivalent,
        p_beyond,
    )


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values: the k-th smallest becomes
    max over j ≤ k of min(1, (m − j + 1)·p_(j)); NaN entries are left out of the family
    and stay NaN. Reject at level α where the adjusted value is ≤ α."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or ((p < 0) | (p > 1)).any():
        raise ValueError(
            f"p_values must be a 1-d array of values in [0, 1] or NaN, got {p_values!r}"
        )
    adjusted = np.full(p.shape, np.nan)
    family = np.flatnonzero(~np.isnan(p))
    order = family[np.argsort(p[family], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


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


def format_estimate(value: float, se: float) -> str:
    """``value ± se`` at the precision the standard error allows (its two leading
    digits), e.g. "−0.0670 ± 0.0046"."""
    if not (math.isfinite(value) and math.isfinite(se)) or se < 0:
        raise ValueError(f"value and se must be finite, se ≥ 0, got {value}, {se}")
    digits = _digits(se)
    return f"{value:.{digits}f} ± {se:.{digits}f}".replace("-", "−")


def _digits(se: float) -> int:
    """Decimals that keep two significant digits of a standard error (3 for se = 0)."""
    return 3 if se == 0 else max(0, 1 - math.floor(math.log10(se)))


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

    def __init__(self, chapter: str, scope: str = ""):
        chapter_path(chapter)  # checks the name
        self.chapter = chapter
        self.scope = _text("scope", scope, empty=True)
        self._rows: dict[str, dict] = {}
        self._numbers: dict[str, dict] = {}

    def _add(self, claim: Claim, row: dict) -> dict:
        check_instance("claim", claim, Claim)
        if claim.key in self._rows:
            raise ValueError(f"claim key {claim.key!r} is already in this chapter")
        fields = dataclasses.asdict(claim)
        fields["scope"] = fields["scope"] or self.scope
        self._rows[claim.key] = {**fields, **row}
        return self._rows[claim.key]

    def test(
        self, claim: Claim, values, baseline=None, *, paired: bool = True
    ) -> Estimate:
        """Add an empirical row: δ estimated from per-seed ``values`` (and
        ``baseline``; see :func:`estimate`); its verdict is read once the chapter's
        p-values are adjusted together (:meth:`rows`). Returns the estimate."""
        check_instance("claim", claim, Claim)
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

    def theorem(self, claim: Claim, verdict: str, measured: str) -> None:
        """Add a row that is not empirical: ``verdict`` one of :data:`THEOREM`,
        ``measured`` what the numbers show (e.g. "all 40 checkpoints")."""
        check_choice("verdict", verdict, THEOREM)
        self._add(
            claim, {"kind": "theorem check", "verdict": verdict, "measured": measured}
        )

    def not_run(self, claim: Claim, reason: str) -> None:
        """Add a claim the chapter does not test, with the reason."""
        _text("reason", reason)
        self._add(claim, {"kind": "not run", "verdict": NOT_RUN, "measured": reason})

    def number(self, name: str, value, se=None) -> None:
        """Record a number the chapter prints (and glue it as ``name``, its s.e. as
        ``name_se``): with ``se``, a trained number, compared within
        :data:`TOLERANCE_SE` of its standard error; without, an exact one, compared
        strictly (to 12 significant digits)."""
        if not isinstance(name, str) or not _KEY.fullmatch(name):
            raise ValueError(f"name must be a glue key, got {name!r}")
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


def load_records(folder) -> list[dict]:
    """The chapter records (``NN_topic.json``) in ``folder``, in chapter order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be a folder of chapter records, got {folder}")
    records = []
    for path in sorted(folder.glob("[0-9][0-9]_*.json")):
        record = json.loads(path.read_text())
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


def compare_records(stored: Mapping, fresh: Mapping, k: float = TOLERANCE_SE) -> list:
    """The differences that matter between a committed record and a fresh one: another
    scale, a claim or number missing on either side, a verdict word that differs, an
    exact number that differs beyond 12 significant digits, or a trained number (one
    with a standard error) or claim estimate that moved by more than k·√(se₁² + se₂²).
    (The
    text of a theorem row's ``measured`` is not compared: its numbers are recorded as
    numbers.)
    Returns a list of messages, empty when the records agree."""
    k = _finite("k", k, positive=True)
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


def per_seed_slopes(frame: pd.DataFrame, x: str, y: str, seed: str = "seed"):
    """The log-log slope of ``y`` on ``x`` fitted to each seed's points alone (OLS of
    log y on log x): one number per seed, the unit :meth:`Verdicts.test` takes.
    Returns a Series indexed by seed."""
    check_frame("frame", frame)
    for name, column in (("x", x), ("y", y), ("seed", seed)):
        if column not in frame.columns:
            raise ValueError(
                f"{name} must name a column of frame ({list(frame.columns)}), got "
                f"{column!r}"
            )
    slopes = {}
    for value, group in frame.groupby(seed, sort=True):
        fit = power_law_fit(group[x].to_numpy(), group[y].to_numpy())
        slopes[value] = fit.slope
    if len(slopes) < 2:
        raise ValueError(f"frame must hold at least 2 seeds, got {len(slopes)}")
    return pd.Series(slopes, name=f"slope of {y} on {x}").rename_axis(seed)


class PowerLawFit(NamedTuple):
    """y ≈ e^intercept · x^slope: the slope with its confidence interval [low, high],
    the intercept (of log y on log x) and the number of points n."""

    slope: float
    low: float
    high: float
    intercept: float
    n: int


@checked(confidence=OpenUnit())
def power_law_fit(x, y, confidence: float = 0.95) -> PowerLawFit:
    """Log-log least squares: log y = a + b log x fitted by OLS over all points, with
    the t-distribution confidence interval of b (n − 2 degrees of freedom, standard
    error from the residuals).

    The interval treats the points as independent: right for independent runs (one
    seed, one x each), too narrow for the points of one run; for a claim across seeds
    fit each seed alone (:func:`per_seed_slopes`) and test the slopes. x, y:
    array-likes of n ≥ 3 finite positive numbers, at least two distinct x.
    """
    log = {}
    for name, values in (("x", x), ("y", y)):
        array = np.asarray(
            values.cpu() if isinstance(values, Tensor) else values, dtype=float
        )
        if array.ndim != 1 or array.size < 3:
            raise ValueError(
                f"{name} must be one-dimensional with ≥ 3 points, got {array.shape}"
            )
        if not (np.isfinite(array).all() and (array > 0).all()):
            raise ValueError(f"{name} must be finite and > 0 (a log-log fit)")
        log[name] = np.log(array)
    if log["x"].size != log["y"].size:
        raise ValueError(
            f"x and y must have one length, got {log['x'].size}, {log['y'].size}"
        )
    if np.ptp(log["x"]) == 0:
        raise ValueError("x must hold at least two distinct values")
    n = log["x"].size
    centred = log["x"] - log["x"].mean()
    slope = float((centred * log["y"]).sum() / np.square(centred).sum())
    intercept = float(log["y"].mean() - slope * log["x"].mean())
    residuals = log["y"] - intercept - slope * log["x"]
    stderr = math.sqrt(
        float(np.square(residuals).sum()) / (n - 2) / np.square(centred).sum()
    )
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 2)) * stderr
    return PowerLawFit(slope, slope - half, slope + half, intercept, n)


@checked(sd=Positive(convert=True), df=Int(1), confidence=OpenUnit())
def top_set(values, sd: float, df: int, confidence: float = 0.95) -> np.ndarray:
    """Which cells cannot be told apart from the best: value ≥ max − t·sd·√2, with t the
    two-sided ``confidence`` quantile of Student's t on ``df`` degrees of freedom.

    values: one single-run value per cell (e.g. the accuracy of each (α, λ) of a grid);
    sd: the standard deviation of one run (e.g. pooled over the cells run with several
    seeds, on ``df`` degrees of freedom), so sd·√2 is that of a difference of two cells.
    The peak's location is resolved only when a single cell is in the set."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        raise ValueError(
            f"values must be a non-empty 1-d array of finite numbers, got {values!r}"
        )
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * sd * math.sqrt(2)
    return array >= array.max() - half


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


if __name__ == "__main__":
    main()
