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

Where it lives: the claims and the vocabulary (``_claims``), the per-seed statistics
(``_statistics``), a chapter's rows and tables (``_table``), the records, the
scorecard and the command line ``python -m ccl_helpers.verdicts`` (``_records``).
"""

from ._claims import (
    EMPIRICAL,
    EXPECTED,
    LEVEL,
    NOT_RUN,
    THEOREM,
    TOLERANCE_SE,
    VOCABULARY,
    Claim,
    claims_by_key,
)
from ._records import (
    chapter_titles,
    compare_records,
    load_records,
    main,
    scorecard,
    scorecard_page,
    write_scorecard,
)
from ._statistics import (
    Estimate,
    PowerLawFit,
    estimate,
    format_estimate,
    holm,
    per_seed_slopes,
    power_law_fit,
    top_set,
)
from ._table import READER_COLUMNS, ReaderTable, Verdicts, reader_table, verdict_table

__all__ = [
    "LEVEL",
    "EMPIRICAL",
    "THEOREM",
    "NOT_RUN",
    "VOCABULARY",
    "EXPECTED",
    "TOLERANCE_SE",
    "Claim",
    "claims_by_key",
    "Estimate",
    "estimate",
    "holm",
    "format_estimate",
    "Verdicts",
    "verdict_table",
    "READER_COLUMNS",
    "ReaderTable",
    "reader_table",
    "load_records",
    "scorecard",
    "scorecard_page",
    "write_scorecard",
    "compare_records",
    "per_seed_slopes",
    "PowerLawFit",
    "power_law_fit",
    "top_set",
    "main",
    "chapter_titles",
]
