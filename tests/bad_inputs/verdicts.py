"""The baselines of ``ccl_helpers.verdicts``."""

from __future__ import annotations

import pandas as pd

from .common import verdict_rows

BASELINES = {
    "verdicts.Claim": lambda: (
        dict(key="c", source="S (2020), §1", statement="x beats y", metric="x − y"),
        (),
    ),
    "verdicts.power_law_fit": lambda: (
        dict(x=[1.0, 2.0, 4.0, 8.0], y=[1.0, 0.6, 0.3, 0.2], confidence=0.95),
        (),
    ),
    "verdicts.top_set": lambda: (
        dict(values=[1.0, 2.0, 3.0], sd=0.5, df=4, confidence=0.95),
        (),
    ),
    "verdicts.estimate": lambda: (
        dict(
            values=[1.0, 2.0, 3.0],
            baseline=[1.5, 2.0, 2.0],
            paired=True,
            family=3,
        ),
        (),
    ),
    "verdicts.decide": lambda: (
        dict(expected="greater", low=0.2, high=0.5, null=0.0, margin=0.1),
        (),
    ),
    "verdicts.t_quantile": lambda: (dict(df=4.0, family=3), ()),
    "verdicts.fragile": lambda: (
        dict(low=0.2, high=0.5, se=0.05, null=0.0, margin=0.1),
        (),
    ),
    "verdicts.format_estimate": lambda: (dict(value=0.5, se=0.01), ()),
    "verdicts.per_seed_slopes": lambda: (
        dict(
            frame=pd.DataFrame(
                {"seed": [0, 0, 0, 1, 1, 1], "m": [1.0, 2, 4] * 2, "y": [3.0, 2, 1] * 2}
            ),
            x="m",
            y="y",
            seed="seed",
        ),
        (),
    ),
    "verdicts.verdict_table": lambda: (dict(rows=verdict_rows()), ()),
    "verdicts.reader_table": lambda: (dict(rows=verdict_rows()), ()),
    "verdicts.scorecard": lambda: (
        dict(records=[{"chapter": "01_curl_framework", "claims": verdict_rows()}]),
        (),
    ),
    "verdicts.scorecard_page": lambda: (
        dict(
            records=[{"chapter": "01_curl_framework", "claims": verdict_rows()}],
            titles={},
        ),
        (),
    ),
    "verdicts.compare_records": lambda: (
        dict(
            stored={"claims": verdict_rows(), "numbers": {}},
            fresh={"claims": verdict_rows(), "numbers": {}},
            family=2,
        ),
        (),
    ),
}
