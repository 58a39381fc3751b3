"""One method for the book: per-seed measurements → an estimate, an interval, a verdict.

A chapter states each claim of its source as a :class:`Claim`: the source and its
statement in one line, the primary metric δ and the direction the source expects, the
source's effect size where it gives one, the margin Δ > 0 (the smallest effect that
counts, stated with its reason before looking, never larger than the source's own
effect) and the scope (data, encoder, steps, seeds). A :class:`Verdicts` collects the
chapter's rows:

- :meth:`Verdicts.test` takes per-seed measurements. The **seed is the unit of
  replication**: one number per seed (a checkpoint's value, a slope fitted to one run's
  curve, …), never the points of one run. Arms that share seeds are compared by their
  paired differences d_s = x_s − y_s (Student's t on n − 1 degrees of freedom); arms
  that do not, by Welch's t (Welch–Satterthwaite degrees of freedom).
- :meth:`Verdicts.theorem` and :meth:`Verdicts.not_run` add the rows that are not
  empirical (a theorem check that holds, a statement the chapter corrects or
  sharpens, a claim not tested).

**The rule**, which a reader applies to the printed row. Each empirical claim has one
interval, the chapter's simultaneous 95 % interval: estimate ± t·se with t the
t quantile at 1 − 0.05/(2m) (Bonferroni over the chapter's m empirical claims,
:func:`estimate` with ``family=m``), and one band (null − Δ, null + Δ). For a claim that
δ is greater than ``null`` ("less" is the mirror image):

- *reproduced* if the interval lies above null + Δ;
- *absent* if it lies inside the band;
- *contradicted* if it lies below null + Δ but not inside the band (an effect of the
  claimed size is excluded, and so is "no effect");
- *not resolved* otherwise (the interval reaches across null + Δ).

For a claim that δ equals ``null`` (e.g. a slope of −1/2, "competes with"):
*reproduced* if the interval lies inside the band, *contradicted* if it lies wholly
outside it, *not resolved* otherwise (:func:`decide`). The table's "measured" column
prints exactly this interval and the band, so no p-value is needed to read a verdict;
a row *not resolved* also prints its seeds and how many would decide it were the
estimate and the spread to stay as they are. A
verdict is *fragile* when an end of its interval lies within one standard error of an
edge of the band: the last bits of training could move it across. The
rows that are not empirical read *holds*, *corrected*, *sharpened* or *not run*
(:data:`VOCABULARY`).

:meth:`Verdicts.save` writes the chapter's record, ``<results>/NN_topic.json``: the
claims with their per-seed values, estimates, intervals and verdicts, and the chapter's
trained numbers with their seeds or standard errors (:meth:`Verdicts.number`). The
stored-output check of ``make test``, ``python -m ccl_helpers.verdicts compare``,
compares a fresh record with the committed one (verdict words and claim statements
strictly, trained numbers within a tolerance set from their degrees of freedom for a
book-wide false-alarm rate of 0.01), and ``python -m ccl_helpers.verdicts scorecard``
builds the scorecard page from the committed records (:func:`load_records`).

Where it lives: the claims and the vocabulary (``_claims``), the per-seed statistics and
the rule (``_statistics``), a chapter's rows and tables (``_table``), the records, the
scorecard and the command line ``python -m ccl_helpers.verdicts`` (``_records``).
"""

from ._claims import EXPECTED, THEOREM, VOCABULARY, Claim, claims_by_key
from ._records import load_records
from ._statistics import (
    decide,
    estimate,
    format_estimate,
    per_seed_slopes,
    power_law_fit,
    top_set,
)
from ._table import Verdicts

__all__ = [
    "EXPECTED",
    "THEOREM",
    "VOCABULARY",
    "Claim",
    "claims_by_key",
    "Verdicts",
    "estimate",
    "decide",
    "format_estimate",
    "per_seed_slopes",
    "power_law_fit",
    "top_set",
    "load_records",
]
