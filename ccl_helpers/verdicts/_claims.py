"""A claim of a source as a chapter states it, and the verdicts' fixed vocabulary."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ..checks import (
    UNKNOWN,
    BadValue,
    Choice,
    Optional,
    Rule,
    check_instance,
    checked,
)

LEVEL = 0.05


"""1 − the simultaneous confidence of a chapter's intervals (the family-wise error rate
of its empirical verdicts)."""


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


class _FiniteReal(Rule):
    """The rule of a finite real number (> 0 with ``positive``), a Python or NumPy
    one, not a bool; passed on as a ``float``."""

    converts = True

    def __init__(self, *, positive: bool = False):
        self.positive = positive

    def check(self, name, value, arguments):
        return _finite(name, value, positive=self.positive)

    def bad_values(self, valid):
        bad = [
            BadValue("nan", math.nan),
            BadValue("inf", math.inf),
            BadValue("bool", True),
            BadValue("string", UNKNOWN),
        ]
        if self.positive:
            bad += [BadValue("zero", 0.0), BadValue("negative", -1.0)]
        return bad


class _Text(Rule):
    """The rule of a string, not blank unless ``empty`` allows it."""

    def __init__(self, *, empty: bool = False):
        self.empty = empty

    def check(self, name, value, arguments):
        return _text(name, value, empty=self.empty)

    def bad_values(self, valid):
        bad = [BadValue("not a string", 1.5)]
        if not self.empty:
            bad.append(BadValue("blank", " "))
        return bad


class _Key(Rule):
    """The rule of an identifier (a claim's key, a MyST label, a glue key): lower-case
    letters, digits, "_" or "-", starting with a letter or digit; ``what`` says what it
    names."""

    def __init__(self, what: str):
        self.what = what

    def check(self, name, value, arguments):
        if not isinstance(value, str) or not _KEY.fullmatch(value):
            raise ValueError(f"{name} must be {self.what}, got {value!r}")
        return value

    def bad_values(self, valid):
        return [BadValue("not a string", 1.5), BadValue("spaces", "no spaces")]


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
        margin: Δ > 0, the smallest effect that counts: |δ − null| below it is no
            effect (is "equal" for an "equal" claim). An empirical claim must state it
            (None only for the rows that are not empirical). Never larger than the
            source's own effect.
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
        """The relations between the fields (the rule of each field alone is declared
        on ``__init__``)."""
        if self.margin is not None:
            _text("margin_reason (the margin's reason)", self.margin_reason)
        elif self.expected == "equal":
            raise ValueError("margin must be given for a claim that δ equals a value")
        effect = self.source_effect
        if effect is not None and self.margin is not None:
            if self.margin > abs(effect - self.null):
                raise ValueError(
                    f"margin must not exceed the source's own effect |{effect} − "
                    f"{self.null}|, got {self.margin}"
                )


Claim.__init__ = checked(
    key=_Key("lower-case letters, digits, '_' or '-', starting with a letter or digit"),
    source=_Text(),
    statement=_Text(),
    metric=_Text(),
    expected=Choice(EXPECTED),
    null=_FiniteReal(),
    margin=Optional(_FiniteReal(positive=True)),
    source_effect=Optional(_FiniteReal()),
    scope=_Text(empty=True),
    section=Optional(_Key("a MyST label")),
)(Claim.__init__)


def claims_by_key(*claims: Claim) -> dict[str, Claim]:
    """A chapter's claims by key, in the order given; a key used twice is an error."""
    by_key: dict[str, Claim] = {}
    for claim in claims:
        check_instance("claims", claim, Claim)
        if claim.key in by_key:
            raise ValueError(f"claims must have distinct keys, {claim.key!r} is twice")
        by_key[claim.key] = claim
    return by_key
