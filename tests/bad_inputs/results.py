"""The baselines of ``ccl_helpers.results``."""

from __future__ import annotations

import pandas as pd

from .common import PUBLIC

BASELINES = {
    "results.load_paper_results": lambda: (dict(chapter="01_curl_framework"), ()),
    "results.results_dir": lambda: (dict(), ()),
    "results.records_dir": lambda: (dict(), ()),
    "results.chapter_path": lambda: (dict(chapter="01_curl_framework"), ()),
    "results.provenance": lambda: (dict(started=0.0), ()),
    "results.provenance_line": lambda: (
        dict(record={"provenance": PUBLIC["results.provenance"]()}),
        (),
    ),
    "results.beside_stored": lambda: (
        dict(
            live=pd.DataFrame({"k": [1, 2], "x": [1.0, 2.0]}),
            stored=pd.DataFrame({"k": [1, 2], "x": [3.0, 4.0]}),
            by=["k"],
            columns=["x"],
        ),
        (),
    ),
}
