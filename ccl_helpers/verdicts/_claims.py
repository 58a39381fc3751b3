"""A claim of a source as a chapter states it, and the verdicts' fixed vocabulary."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from .._checks import check_choice, check_instance

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
_KEY_RULE = "lower-case letters, digits, '_' or '-', starting with a letter or digit"


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


def _key(name: str, value, what: str) -> str:
    """``value`` if it is an identifier (a claim's key, a MyST label, a glue key):
    lower-case letters, digits, "_" or "-", starting with a letter or digit; else
    ValueError naming ``name`` and ``what`` it names."""
    if not isinstance(value, str) or not _KEY.fullmatch(value):
        raise ValueError(f"{name} must be {what}, got {value!r}")
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
        """Each field validated (its numbers passed on as floats), then the relations
        between them."""
        _key("key", self.key, _KEY_RULE)
        for name in ("source", "statement", "metric"):
            _text(name, getattr(self, name))
        check_choice("expected", self.expected, EXPECTED)
        object.__setattr__(self, "null", _finite("null", self.null))
        if self.margin is not None:
            margin = _finite("margin", self.margin, positive=True)
            object.__setattr__(self, "margin", margin)
        if self.source_effect is not None:
            effect = _finite("source_effect", self.source_effect)
            object.__setattr__(self, "source_effect", effect)
        _text("scope", self.scope, empty=True)
        if self.section is not None:
            _key("section", self.section, "a MyST label")
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


def claims_by_key(*claims: Claim) -> dict[str, Claim]:
    """A chapter's claims by key, in the order given; a key used twice is an error."""
    by_key: dict[str, Claim] = {}
    for claim in claims:
        check_instance("claims", claim, Claim)
        if claim.key in by_key:
            raise ValueError(f"claims must have distinct keys, {claim.key!r} is twice")
        by_key[claim.key] = claim
    return by_key
