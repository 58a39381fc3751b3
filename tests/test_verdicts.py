"""Tests of ccl_helpers.verdicts against scipy.stats (t intervals, paired and Welch
tests, two one-sided tests), Holm's adjustment by its definition, a coverage
simulation, and the records, comparator and scorecard built on them."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from ccl_helpers import checks, verdicts
from ccl_helpers.verdicts import Claim, Verdicts
from ccl_helpers.verdicts._table import _decide

RNG = np.random.default_rng(0)
X = np.array([0.61, 0.72, 0.55, 0.80, 0.67, 0.70])
Y = np.array([0.52, 0.70, 0.49, 0.71, 0.66, 0.58])


def claim(key="c", **changes):
    fields = dict(key=key, source="S (2020), §1", statement="x beats y", metric="x − y")
    return Claim(**{**fields, **changes})


def test_one_sample_interval_and_p_match_scipy():
    found = verdicts.estimate(X, null=0.6)
    reference = stats.ttest_1samp(X, 0.6)
    interval = reference.confidence_interval(0.95)
    assert found.estimate == pytest.approx(X.mean())
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))
    assert found.p_effect == pytest.approx(reference.pvalue)
    assert found.df == X.size - 1 and found.n == X.size


def test_paired_difference_matches_ttest_rel():
    found = verdicts.estimate(X, Y)
    reference = stats.ttest_rel(X, Y)
    interval = reference.confidence_interval(0.95)
    assert found.estimate == pytest.approx((X - Y).mean())
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))
    assert found.p_effect == pytest.approx(reference.pvalue)
    assert found.df == X.size - 1


def test_welch_matches_ttest_ind_and_its_degrees_of_freedom():
    y = np.array([0.52, 0.70, 0.49, 0.71])
    found = verdicts.estimate(X, y, paired=False)
    reference = stats.ttest_ind(X, y, equal_var=False)
    interval = reference.confidence_interval(0.95)
    assert found.df == pytest.approx(reference.df)
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))
    assert found.p_effect == pytest.approx(reference.pvalue)


def test_tost_and_beyond_match_one_sided_scipy_tests():
    margin = 0.05
    d = X - Y
    found = verdicts.estimate(X, Y, margin=margin)
    above = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
    below = stats.ttest_1samp(d, margin, alternative="less").pvalue
    assert found.p_equivalent == pytest.approx(max(above, below))
    beyond = stats.ttest_1samp(d, margin, alternative="greater").pvalue  # d > 0 here
    assert found.p_beyond == pytest.approx(beyond)
    negative = verdicts.estimate(-d, margin=margin)
    assert negative.p_beyond == pytest.approx(
        stats.ttest_1samp(-d, -margin, alternative="less").pvalue
    )


def test_no_margin_gives_nan_margin_tests():
    found = verdicts.estimate(X)
    assert math.isnan(found.p_equivalent) and math.isnan(found.p_beyond)


def test_a_zero_standard_error_gives_exact_p_values():
    found = verdicts.estimate([0.25, 0.25, 0.25], margin=0.5)
    assert (found.low, found.high) == (0.25, 0.25)
    assert (found.p_effect, found.p_equivalent, found.p_beyond) == (0.0, 0.0, 1.0)
    zero = verdicts.estimate([0.0, 0.0], margin=0.1)
    assert (zero.p_effect, zero.p_equivalent) == (1.0, 0.0)


def brute_force_holm(p):
    """Holm by its definition: reject the sorted hypotheses H_(1..k) while
    p_(j) ≤ α/(m − j + 1); the adjusted p-value of H_i is the smallest α at which
    this procedure rejects it, found on a fine grid of α."""
    p = np.asarray(p)
    order = np.argsort(p, kind="stable")
    m = p.size
    grid = np.linspace(0, 1, 20001)
    adjusted = np.ones(m)
    for alpha in grid[::-1]:
        rejected = np.zeros(m, bool)
        for j, i in enumerate(order):
            if p[i] <= alpha / (m - j):
                rejected[i] = True
            else:
                break
        adjusted[rejected] = alpha
    return adjusted


def test_holm_against_its_definition_and_a_known_case():
    known = verdicts.holm([0.01, 0.04, 0.03, 0.005])
    assert known == pytest.approx([0.03, 0.06, 0.06, 0.02])
    for _ in range(5):
        p = RNG.uniform(0, 0.2, size=7)
        assert verdicts.holm(p) == pytest.approx(brute_force_holm(p), abs=1e-4)


def test_holm_leaves_nan_out_of_the_family():
    got = verdicts.holm([0.01, math.nan, 0.02])
    assert got[0] == pytest.approx(0.02) and got[2] == pytest.approx(0.02)
    assert math.isnan(got[1])
    with pytest.raises(ValueError, match="p_values"):
        verdicts.holm([0.5, 1.5])


@pytest.mark.parametrize("paired", [True, False])
def test_the_95_interval_covers_the_truth_95_percent_of_the_time(paired):
    rng = np.random.default_rng(1)
    n_trials, n = 4000, 5
    covered = 0
    for _ in range(n_trials):
        x = rng.normal(0.3, 1.0, n)
        y = rng.normal(0.0, 1.0 if paired else 2.0, n + (0 if paired else 3))
        found = verdicts.estimate(x, y, paired=paired)
        covered += found.low <= 0.3 <= found.high
    # binomial s.e. of the coverage: √(0.95·0.05/4000) ≈ 0.0034
    assert abs(covered / n_trials - 0.95) < 4 * 0.0035


@pytest.mark.parametrize(
    "expected, estimate, p_first, p_second, word",
    [
        ("greater", 0.3, 0.01, 0.9, "reproduced"),
        ("greater", -0.3, 0.01, 0.9, "contradicted"),
        ("less", -0.3, 0.01, 0.9, "reproduced"),
        ("greater", 0.01, 0.5, 0.01, "absent"),
        ("greater", 0.01, 0.5, 0.2, "not resolved"),
        ("greater", 0.01, 0.5, math.nan, "not resolved"),
        ("equal", 0.01, 0.01, 0.9, "reproduced"),
        ("equal", 0.5, 0.9, 0.01, "contradicted"),
        ("equal", 0.1, 0.3, 0.3, "not resolved"),
    ],
)
def test_decide_reads_the_fixed_vocabulary(expected, estimate, p_first, p_second, word):
    assert _decide(expected, estimate, 0.0, p_first, p_second) == word
    assert word in verdicts.EMPIRICAL


def test_a_chapter_adjusts_its_p_values_together():
    strong = X + 0.2  # paired difference about 0.27, clearly > 0 alone
    alone = Verdicts("01_curl_framework")
    alone.test(claim("a"), strong, X)
    assert alone.rows()[0]["verdict"] == "reproduced"
    found = verdicts.estimate(X, Y)
    assert 0.01 < found.p_effect < 0.05  # reproduced alone, at level 0.05
    crowded = Verdicts("01_curl_framework")
    crowded.test(claim("weak"), X, Y)
    for i in range(4):
        crowded.test(claim(f"noise{i}"), RNG.normal(0, 1, 6))
    rows = {row["key"]: row for row in crowded.rows()}
    assert rows["weak"]["verdict"] == "not resolved"  # not after Holm over 5
    assert rows["weak"]["p_holm"][0] >= found.p_effect


def test_verdicts_rows_theorem_and_not_run():
    book = Verdicts("02_multiple_negatives")
    book.test(claim("e", margin=0.05, margin_reason="a tenth of the effect"), X, Y)
    book.theorem(claim("t"), "holds", "all 12 checkpoints")
    book.not_run(claim("n"), "needs ImageNet")
    table = book.table()
    assert list(table.columns) == [
        "source says",
        "metric (margin)",
        "measured",
        "verdict",
        "scope",
    ]
    assert table.loc["t", "verdict"] == "holds"
    assert table.loc["n", "verdict"] == "not run"
    assert table.loc["e", "verdict"] in verdicts.EMPIRICAL
    with pytest.raises(ValueError, match="already"):
        book.theorem(claim("t"), "holds", "again")
    with pytest.raises(ValueError, match="verdict"):
        book.theorem(claim("u"), "reproduced", "not a theorem word")


@pytest.mark.parametrize(
    "changes, match",
    [
        (dict(key="Bad Key"), "key"),
        (dict(expected="up"), "expected"),
        (dict(expected="equal"), "margin must be given"),
        (dict(margin=0.1), "margin_reason"),
        (dict(margin=-0.1, margin_reason="r"), "margin"),
        (dict(margin=0.3, margin_reason="r", source_effect=0.2), "exceed"),
        (dict(statement=""), "statement"),
        (dict(section="no spaces allowed"), "section"),
    ],
)
def test_claim_rejects_bad_statements(changes, match):
    with pytest.raises(ValueError, match=match):
        claim(**changes)


def test_claim_fields_are_declared_and_converted():
    """Each field's rule is declared on Claim (read back by the bad-input test), its
    numbers pass on as floats, and a replaced field is checked as a new one."""
    assert {"key", "expected", "null", "margin", "section"} <= set(
        checks.declarations(Claim)
    )
    made = claim(null=np.int64(1), margin=np.float32(0.5), margin_reason="r")
    assert type(made.null) is float and type(made.margin) is float
    with pytest.raises(ValueError, match="margin"):
        dataclasses.replace(made, margin=-1.0)


def test_estimate_rejects_bad_samples():
    with pytest.raises(ValueError, match="values"):
        verdicts.estimate([1.0])
    with pytest.raises(ValueError, match="baseline"):
        verdicts.estimate(X, [1.0, math.nan])
    with pytest.raises(ValueError, match="shared seed"):
        verdicts.estimate(X, Y[:4])
    assert verdicts.estimate(torch.tensor(X), torch.tensor(Y)).estimate == (
        pytest.approx((X - Y).mean())
    )


def test_record_round_trip_and_comparison(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "standard")
    monkeypatch.setenv("CCL_RECORDS_DIR", str(tmp_path))
    book = Verdicts("03_wen_convergence")
    book.test(claim("e", section="wen-rate"), X, Y)
    book.theorem(claim("t"), "sharpened", "1/4 instead of 1/2")
    book.number("slope", -0.47, se=0.02)
    book.number("count", 12)
    path = book.save()
    assert path == tmp_path / "03_wen_convergence.json"
    stored = json.loads(path.read_text())
    assert verdicts.compare_records(stored, stored) == []
    moved = json.loads(path.read_text())
    moved["numbers"]["slope"]["value"] += 0.05  # 0.05 < 4·√2·0.02 = 0.113
    assert verdicts.compare_records(stored, moved) == []
    moved["numbers"]["slope"]["value"] += 0.1
    moved["numbers"]["count"]["value"] = 13
    moved["claims"][1]["verdict"] = "holds"
    problems = verdicts.compare_records(stored, moved)
    assert len(problems) == 3
    moved["scale"] = "smoke"
    assert len(verdicts.compare_records(stored, moved)) == 4
    assert any("slope" in p for p in problems) and any("count" in p for p in problems)
    assert any("verdict" in p for p in problems)


def test_scorecard_page_counts_and_links(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "standard")
    monkeypatch.setenv("CCL_RECORDS_DIR", str(tmp_path))
    for chapter in ("01_curl_framework", "02_multiple_negatives"):
        book = Verdicts(chapter)
        book.theorem(claim("t", section="curl-lemma"), "holds", "all | checkpoints")
        book.not_run(claim("n"), "not at this scale")  # no section: no link
        book.save()
    page = verdicts.write_scorecard(
        tmp_path, tmp_path / "scorecard.md", {"01_curl_framework": "The CURL book"}
    ).read_text()
    assert "| holds | 2 |" in page and "| not run | 2 |" in page
    assert "| all | 4 |" in page and "## The CURL book" in page
    assert "{ref}`section <curl-lemma>`" in page and "nan" not in page
    assert "all \\| checkpoints" in page  # a pipe inside a cell is escaped


def test_per_seed_slopes_fit_each_seed_alone():
    rows = [
        {"seed": s, "m": m, "y": (1 + 0.1 * s) * m ** (-0.5 - 0.01 * s)}
        for s in range(3)
        for m in (10, 100, 1000)
    ]
    slopes = verdicts.per_seed_slopes(pd.DataFrame(rows), "m", "y")
    assert slopes.to_numpy() == pytest.approx([-0.5, -0.51, -0.52])


def test_format_estimate_keeps_two_digits_of_the_se():
    assert verdicts.format_estimate(-0.06712, 0.0046) == "−0.0671 ± 0.0046"
    assert verdicts.format_estimate(26.07, 1.3) == "26.1 ± 1.3"
    with pytest.raises(ValueError):
        verdicts.format_estimate(1.0, -1.0)


def test_the_vocabulary_is_fixed():
    assert verdicts.VOCABULARY == (
        "reproduced",
        "contradicted",
        "absent",
        "not resolved",
        "holds",
        "corrected",
        "sharpened",
        "not run",
    )
    assert set(itertools.chain(verdicts.EMPIRICAL, verdicts.THEOREM)) < set(
        verdicts.VOCABULARY
    )


def test_power_law_fit_matches_linregress():
    from scipy import stats

    rng = np.random.default_rng(0)
    x = np.repeat([16.0, 64.0, 256.0, 1024.0], 3)
    y = 5.0 * x**-0.9 * np.exp(0.2 * rng.standard_normal(x.size))
    fit = verdicts.power_law_fit(x, y, confidence=0.9)
    reference = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.95, x.size - 2) * reference.stderr
    assert fit.n == 12
    assert math.isclose(fit.slope, reference.slope, rel_tol=1e-12)
    assert math.isclose(fit.intercept, reference.intercept, rel_tol=1e-12)
    assert math.isclose(fit.low, reference.slope - half, rel_tol=1e-12)
    assert math.isclose(fit.high, reference.slope + half, rel_tol=1e-12)
    wider = verdicts.power_law_fit(torch.tensor(x), torch.tensor(y), 0.99)
    assert wider.low < fit.low and wider.high > fit.high


def test_power_law_fit_covers_the_true_exponent():
    rng = np.random.default_rng(1)
    x = np.repeat(np.geomspace(1, 100, 5), 3)
    covered = []
    for _ in range(400):
        y = 2.0 * x**-1.5 * np.exp(0.3 * rng.standard_normal(x.size))
        fit = verdicts.power_law_fit(x, y)
        covered.append(fit.low <= -1.5 <= fit.high)
    # 95% coverage; 400 trials → standard error 1.1%
    assert abs(np.mean(covered) - 0.95) < 0.035


@pytest.mark.parametrize(
    ("x", "y", "confidence", "match"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 1.0, "confidence"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 0, "confidence"),
        ([1.0, 2.0], [1.0, 2.0], 0.95, "x must be one-dimensional"),
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], 0.95, "y must be finite and > 0"),
        ([1.0, -2.0, 3.0], [1.0, 2.0, 3.0], 0.95, "x must be finite"),
        ([1.0, 2.0, np.nan], [1.0, 2.0, 3.0], 0.95, "x must be finite"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], 0.95, "one length"),
        ([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], 0.95, "two distinct"),
    ],
)
def test_power_law_fit_bad_inputs_raise(x, y, confidence, match):
    with pytest.raises(ValueError, match=match):
        verdicts.power_law_fit(x, y, confidence)


# ------------------------------------------- mean classifier: centred, normalised rows


def test_top_set_against_the_t_quantile():
    values = np.array([84.0, 86.0, 85.5, 83.0, 85.0])
    half = stats.t.ppf(0.975, 24) * 0.3 * math.sqrt(2)  # 0.875
    expected = values >= 86.0 - half
    assert verdicts.top_set(values, 0.3, 24).tolist() == expected.tolist()
    assert verdicts.top_set(values, 0.3, 24).tolist() == [
        False,
        True,
        True,
        False,
        False,
    ]
    assert verdicts.top_set(values, 0.01, 24).sum() == 1  # resolved: a single cell
    for bad in ([], [1.0, np.nan]):
        with pytest.raises(ValueError, match="values"):
            verdicts.top_set(bad, 0.3, 24)
    with pytest.raises(ValueError, match="sd"):
        verdicts.top_set(values, 0.0, 24)


def test_the_chapter_scope_fills_claims_without_one():
    book = Verdicts("04_multimodal_dynamics", scope="5 seeds, 300 steps")
    book.theorem(claim("own", scope="exact"), "holds", "all")
    book.theorem(claim("default"), "holds", "all")
    table = book.table()
    assert table.loc["own", "scope"] == "exact"
    assert table.loc["default", "scope"] == "5 seeds, 300 steps"


def test_the_scorecard_page_is_built_from_the_committed_records():
    """book/scorecard.md is what `make scorecard` writes from results/standard/: every
    claim of every chapter record, nothing executed."""
    root = Path(__file__).resolve().parent.parent
    records = verdicts.load_records(root / "results" / "standard")
    assert records, "results/standard/ holds no chapter record"
    titles = verdicts.chapter_titles(root / "_toc.yml")
    assert {record["chapter"] for record in records} == set(titles)
    page = (root / "book" / "scorecard.md").read_text()
    assert page == verdicts.scorecard_page(records, titles), (
        "book/scorecard.md is stale: run `make scorecard`"
    )


def test_chapter_titles_are_the_chapters_of_the_toc_not_its_other_pages(tmp_path):
    """A notebook named like a chapter (NN_topic) is a chapter; another notebook of the
    table of contents (a page such as a guide) is not, and a listed Markdown page
    neither."""
    for name, title in (("01_one", "First"), ("guide", "A guide")):
        cell = {"cell_type": "markdown", "metadata": {}, "source": [f"# {title}\n"]}
        (tmp_path / "book").mkdir(exist_ok=True)
        (tmp_path / "book" / f"{name}.ipynb").write_text(json.dumps({"cells": [cell]}))
    (tmp_path / "book" / "notes.md").write_text("# Notes\n")
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "root: book/notes\nchapters:\n  - file: book/guide\n  - file: book/01_one\n"
    )
    assert verdicts.chapter_titles(toc) == {"01_one": "First"}


def test_an_empirical_row_shows_its_deciding_adjusted_p_value():
    book = Verdicts("01_curl_framework")
    book.test(claim("a"), X, Y)
    book.test(claim("b"), Y, X)
    rows = {row["key"]: row for row in book.rows()}
    for key in "ab":
        p = rows[key]["p_holm"][0]
        assert rows[key]["measured"].endswith(f"; p = {p:.2g} (Holm)")


def test_claims_by_key_keeps_order_and_rejects_a_repeated_key():
    claims = verdicts.claims_by_key(claim("b"), claim("a"))
    assert list(claims) == ["b", "a"]
    with pytest.raises(ValueError, match="'a' is twice"):
        verdicts.claims_by_key(claim("a"), claim("a"))
    with pytest.raises(ValueError, match="claims"):
        verdicts.claims_by_key("not a claim")


def test_the_reader_table_has_four_wrapping_columns_and_no_keys():
    book = Verdicts("02_multiple_negatives")
    book.test(claim("e_key", margin=0.05, margin_reason="a tenth of the effect"), X, Y)
    book.theorem(claim("t_key"), "holds", "all 12 checkpoints")
    shown = book.show()
    assert list(shown.frame.columns) == list(verdicts.READER_COLUMNS)
    full = book.table()
    assert list(shown.frame["verdict"]) == list(full["verdict"])
    assert shown.frame.loc[1, "measured"].endswith("all 12 checkpoints")
    html = shown._repr_html_()
    assert "white-space: normal" in html and "holds" in html
    assert "e_key" not in html and "t_key" not in html
    assert html == book.show()._repr_html_()  # no random ids
    assert "holds" in repr(shown) and " at 0x" not in repr(shown)


def test_a_cut_record_is_refused_with_its_file_named(tmp_path):
    good = Path(__file__).resolve().parents[1] / "results" / "standard"
    text = (good / "03_wen_convergence.json").read_text()
    (tmp_path / "03_wen_convergence.json").write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="03_wen_convergence.json is not valid JSON"):
        verdicts.load_records(tmp_path)
