"""Tests of ccl_helpers.verdicts against scipy.stats (simultaneous t intervals, paired
and Welch), the decision rule at every boundary, coverage simulations, and the records,
comparator and scorecard built on them."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from bad_calls import bad_call
from scipy import stats

from ccl_helpers import verdicts
from ccl_helpers.verdicts import Claim, Verdicts, _claims, _records, _statistics, _table

RNG = np.random.default_rng(0)
X = np.array([0.61, 0.72, 0.55, 0.80, 0.67, 0.70])
Y = np.array([0.52, 0.70, 0.49, 0.71, 0.66, 0.58])


def claim(key="c", **changes):
    fields = dict(key=key, source="S (2020), §1", statement="x beats y", metric="x − y")
    return Claim(**{**fields, **changes})


def claim_with_margin(key="c", margin=0.05, **changes):
    return claim(key, margin=margin, margin_reason="a tenth of the effect", **changes)


@pytest.mark.parametrize("family", [1, 4])
def test_one_sample_interval_matches_scipy(family):
    found = verdicts.estimate(X, family=family)
    interval = stats.ttest_1samp(X, 0.0).confidence_interval(1 - 0.05 / family)
    assert found.estimate == pytest.approx(X.mean())
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))
    assert found.df == X.size - 1 and found.n == X.size and found.family == family


@pytest.mark.parametrize("family", [1, 7])
def test_paired_difference_matches_ttest_rel(family):
    found = verdicts.estimate(X, Y, family=family)
    interval = stats.ttest_rel(X, Y).confidence_interval(1 - 0.05 / family)
    assert found.estimate == pytest.approx((X - Y).mean())
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))
    assert found.df == X.size - 1


@pytest.mark.parametrize("family", [1, 3])
def test_welch_matches_ttest_ind_and_its_degrees_of_freedom(family):
    y = np.array([0.52, 0.70, 0.49, 0.71])
    found = verdicts.estimate(X, y, paired=False, family=family)
    reference = stats.ttest_ind(X, y, equal_var=False)
    interval = reference.confidence_interval(1 - 0.05 / family)
    assert found.df == pytest.approx(reference.df)
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high))


@pytest.mark.parametrize("df, family", [(4, 1), (4, 21), (19, 10), (2.5, 3)])
def test_the_t_quantile_is_scipys_at_level_over_the_family(df, family):
    t_quantile = _statistics._t_quantile
    assert t_quantile(df, family) == pytest.approx(
        stats.t.ppf(1 - 0.05 / family / 2, df)
    )
    assert t_quantile(df, family + 1) > t_quantile(df, family)


def test_a_zero_standard_error_gives_a_point_interval():
    found = verdicts.estimate([0.25, 0.25, 0.25], family=5)
    assert (found.low, found.high, found.se) == (0.25, 0.25, 0.0)


# The rule at every boundary: band (−0.1, +0.1) around null 0 (and around 1 shifted).
BOUNDARIES = [
    # greater: reproduced only strictly above +Δ
    ("greater", 0.11, 0.5, "reproduced"),
    ("greater", 0.1, 0.5, "not resolved"),  # touches +Δ: not above it
    ("greater", 0.05, 0.5, "not resolved"),
    ("greater", -0.5, 0.5, "not resolved"),
    ("greater", -0.09, 0.09, "absent"),
    ("greater", -0.1, 0.09, "contradicted"),  # touches −Δ: not inside the band
    ("greater", -0.09, 0.1, "not resolved"),  # touches +Δ: not below it
    ("greater", -0.5, 0.05, "contradicted"),
    ("greater", -0.5, -0.2, "contradicted"),
    # less: the mirror image
    ("less", -0.5, -0.11, "reproduced"),
    ("less", -0.5, -0.1, "not resolved"),
    ("less", -0.09, 0.09, "absent"),
    ("less", -0.09, 0.1, "contradicted"),
    ("less", -0.05, 0.5, "contradicted"),
    ("less", -0.1, 0.09, "not resolved"),
    # equal: inside the band, wholly outside it, or neither
    ("equal", -0.09, 0.09, "reproduced"),
    ("equal", -0.1, 0.09, "not resolved"),
    ("equal", 0.1, 0.5, "contradicted"),
    ("equal", -0.5, -0.1, "contradicted"),
    ("equal", 0.09, 0.5, "not resolved"),
    ("equal", -0.5, 0.5, "not resolved"),
]


@pytest.mark.parametrize("expected, low, high, word", BOUNDARIES)
@pytest.mark.parametrize("null", [0.0, 1.0])
def test_decide_at_every_boundary_of_the_band(expected, low, high, word, null):
    # the shifted intervals are exact in binary only around 0; around 1 the ends move
    # by at most 1e-16, so the cases that touch an edge are read at null 0 alone
    touching = any(abs(abs(end) - 0.1) < 1e-12 for end in (low, high))
    if null and touching:
        return
    assert verdicts.decide(expected, null + low, null + high, null, 0.1) == word
    assert word in _claims.EMPIRICAL


def test_decide_rejects_a_reversed_interval_and_a_missing_margin():
    with pytest.raises(ValueError, match="low"):
        verdicts.decide("greater", 0.5, 0.1, 0.0, 0.1)
    with pytest.raises(ValueError, match="margin"):
        verdicts.decide("greater", 0.1, 0.5, 0.0, None)


@pytest.mark.parametrize("expected", ["greater", "less", "equal"])
def test_seeds_to_decide_is_the_first_n_whose_interval_decides(expected):
    """Against scipy: at the n it returns, the interval of the same mean and standard
    deviation decides the claim (decide is not "not resolved"); at n − 1 it does not."""
    rng = np.random.default_rng(3)
    sign = -1.0 if expected == "less" else 1.0
    values = sign * (0.13 + 0.08 * rng.standard_normal(5))
    found = verdicts.estimate(values, family=4)
    assert verdicts.decide(expected, found.low, found.high, 0.0, 0.1) == "not resolved"
    needed = _statistics._seeds_to_decide(found, expected, 0.0, 0.1)
    sd = found.se * math.sqrt(found.n)

    def verdict_at(n):
        half = stats.t.ppf(1 - 0.05 / (2 * 4), n - 1) * sd / math.sqrt(n)
        return verdicts.decide(
            expected, found.estimate - half, found.estimate + half, 0.0, 0.1
        )

    assert needed is not None and needed > found.n
    assert verdict_at(needed) != "not resolved"
    assert verdict_at(needed - 1) == "not resolved" or needed - 1 == found.n


def test_a_row_not_resolved_prints_its_seeds_and_those_that_would_decide_it():
    book = Verdicts("01_curl_framework")
    book.test(claim_with_margin("wide", margin=0.01), [0.0, 0.02, 0.005, 0.03, 0.012])
    book.test(claim_with_margin("edge", margin=0.01), [0.0, 0.02, 0.0, 0.02, 0.01])
    rows = {row["key"]: row for row in book.rows()}
    assert rows["wide"]["verdict"] == "not resolved"
    needed = _statistics._seeds_to_decide(
        verdicts.estimate(rows["wide"]["values"], family=2), "greater", 0.0, 0.01
    )
    assert rows["wide"]["measured"].endswith(
        f"; 5 seeds, about {needed:,} would decide it at this spread"
    )
    # an estimate on the band's edge is decided by no number of seeds
    assert rows["edge"]["measured"].endswith(
        "; 5 seeds, more than 100,000 would be needed at this spread"
    )


def test_the_rows_verdict_is_read_off_its_printed_interval_and_band():
    """The cases of the review: an effect smaller than the margin reads absent, not
    reproduced; a one-sided row without a margin is refused."""
    book = Verdicts("01_curl_framework")
    small = np.array([0.0071, 0.0085, 0.0078, 0.0069, 0.0090, 0.0076])  # < 0.01
    book.test(claim_with_margin("small", margin=0.01), small)
    book.test(claim_with_margin("big", margin=0.01), small + 0.05)
    rows = {row["key"]: row for row in book.rows()}
    assert rows["small"]["verdict"] == "absent"
    assert rows["big"]["verdict"] == "reproduced"
    for row in rows.values():  # the printed numbers: estimate, interval, band
        found = verdicts.estimate(row["values"], family=2)
        printed = [
            float(v.replace("−", "-"))
            for v in re.findall(r"[+−]\d+\.\d+", row["measured"])
        ]
        digits = len(row["measured"].split()[0].split(".")[1])
        wanted = [found.estimate, found.low, found.high, -0.01, 0.01]
        assert printed == pytest.approx(wanted, abs=0.6 * 10**-digits)
    with pytest.raises(ValueError, match="must state its margin"):
        book.test(claim("no_margin"), small)


def test_the_interval_is_simultaneous_over_the_chapters_empirical_claims():
    alone = Verdicts("01_curl_framework")
    alone.test(claim_with_margin("a"), X, Y)
    crowded = Verdicts("01_curl_framework")
    crowded.test(claim_with_margin("a"), X, Y)
    for i in range(4):
        crowded.test(claim_with_margin(f"noise{i}"), RNG.normal(0, 1, 6))
    crowded.theorem(claim("t"), "holds", "all")  # not in the family
    one, five = alone.rows()[0], crowded.rows()[0]
    assert (one["family"], five["family"]) == (1, 5)
    reference = stats.ttest_rel(X, Y).confidence_interval(1 - 0.05 / 5)
    assert (five["low"], five["high"]) == pytest.approx((reference.low, reference.high))
    assert five["high"] - five["low"] > one["high"] - one["low"]


def test_simultaneous_intervals_cover_every_true_effect_95_percent_of_the_time():
    """m = 8 claims of 5 seeds each, true effects of several sizes: the family's
    intervals all cover their truth in at least 95 % of the trials (Bonferroni is
    conservative), and one interval alone at 1 − 0.05/8."""
    rng = np.random.default_rng(3)
    m, n, trials = 8, 5, 3000
    truth = np.linspace(-1.0, 1.0, m)
    all_cover = single = 0
    for _ in range(trials):
        covered = []
        for j in range(m):
            found = verdicts.estimate(rng.normal(truth[j], 1.0, n), family=m)
            covered.append(found.low <= truth[j] <= found.high)
        all_cover += all(covered)
        single += covered[0]
    se = math.sqrt(0.95 * 0.05 / trials)
    assert all_cover / trials >= 0.95 - 3 * se
    assert single / trials >= 1 - 0.05 / m - 3 * math.sqrt(0.05 / m / trials)


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


def test_a_row_records_its_design_as_tested():
    book = Verdicts("01_curl_framework")
    book.test(claim_with_margin("two_arms"), X, Y)
    book.test(claim_with_margin("differences"), X - Y, paired=True)
    book.test(claim_with_margin("one_arm"), X)
    book.test(claim_with_margin("welch"), X, Y[:4], paired=False)
    rows = {row["key"]: row for row in book.rows()}
    assert [rows[k]["design"] for k in rows] == [
        "paired",
        "paired",
        "one sample",
        "Welch",
    ]
    assert [rows[k]["paired"] for k in rows] == [True, True, False, False]
    assert rows["two_arms"]["values"] == pytest.approx(list(X - Y))
    assert rows["two_arms"]["estimate"] == rows["differences"]["estimate"]
    assert rows["welch"]["baseline"] == pytest.approx(list(Y[:4]))
    assert set(_table.DESIGNS) == {rows[k]["design"] for k in rows}
    with pytest.raises(ValueError, match="paired"):
        book.test(claim_with_margin("bad"), X, paired="yes")


def test_fragile_marks_an_end_within_one_se_of_the_band():
    fragile = _statistics._fragile
    assert fragile(0.105, 0.3, 0.01, 0.0, 0.1)  # low within 0.01 of +Δ
    assert fragile(-0.3, -0.095, 0.01, 0.0, 0.1)  # high near −Δ
    assert not fragile(0.2, 0.3, 0.01, 0.0, 0.1)
    book = Verdicts("01_curl_framework")
    book.test(claim_with_margin("edge", margin=0.01), [0.0101, 0.0105, 0.0102, 0.0104])
    assert book.rows()[0]["fragile"]


def test_verdicts_rows_theorem_and_not_run():
    book = Verdicts("02_multiple_negatives")
    book.test(claim_with_margin("e"), X, Y)
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
    assert table.loc["e", "verdict"] in _claims.EMPIRICAL
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


def test_claim_fields_are_converted_and_checked_again_when_replaced():
    """A claim's numbers pass on as floats, and a replaced field is checked as a new
    one."""
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


def saved_record(tmp_path, monkeypatch) -> dict:
    """A chapter record with one empirical claim (6 paired seeds), a theorem row, a
    number with its seeds, a derived number (value, se, df) and an exact count."""
    monkeypatch.setenv("CCL_SCALE", "standard")
    monkeypatch.setenv("CCL_RECORDS_DIR", str(tmp_path))
    book = Verdicts("03_wen_convergence")
    book.test(claim_with_margin("e", section="wen-rate"), X, Y)
    book.theorem(claim("t"), "sharpened", "1/4 instead of 1/2")
    book.number("slope", -0.47 + 0.02 * (X - X.mean()) / X.std())
    book.number("spread", 0.3, 0.05, df=5)
    book.number("count", 12)
    path = book.save()
    assert path == tmp_path / "03_wen_convergence.json"
    return json.loads(path.read_text())


def test_record_round_trip_and_comparison(tmp_path, monkeypatch):
    stored = saved_record(tmp_path, monkeypatch)
    assert stored["numbers"]["slope"]["seeds"] and stored["numbers"]["slope"]["df"] == 5
    assert stored["claims"][0]["values"] == pytest.approx(list(X - Y))
    assert _records.compare_records(stored, stored) == []
    moved = copy.deepcopy(stored)
    entry = moved["numbers"]["slope"]
    entry["seeds"] = [v + 0.01 for v in entry["seeds"]]  # a small move: allowed
    entry["value"] += 0.01
    assert _records.compare_records(stored, moved) == []
    moved["numbers"]["count"]["value"] = 13
    moved["claims"][1]["verdict"] = "holds"
    moved["scale"] = "smoke"
    problems = _records.compare_records(stored, moved)
    assert len(problems) == 3
    assert any("count" in p for p in problems) and any("verdict" in p for p in problems)


def shifted_seeds(record, name, seeds):
    """The record with number ``name``'s seeds replaced, and its mean and s.e."""
    changed = copy.deepcopy(record)
    seeds = np.asarray(seeds, dtype=float)
    changed["numbers"][name].update(
        seeds=seeds.tolist(),
        value=float(seeds.mean()),
        se=float(seeds.std(ddof=1) / math.sqrt(seeds.size)),
    )
    return changed


def test_the_comparator_fails_when_it_should(tmp_path, monkeypatch):
    """Each perturbation a rerun must not get through: every case fails."""
    stored = saved_record(tmp_path, monkeypatch)
    seeds = np.array(stored["numbers"]["slope"]["seeds"])
    cases = {}
    for bad in (math.nan, math.inf):
        for field in ("value", "se"):
            changed = copy.deepcopy(stored)
            changed["numbers"]["spread"][field] = bad
            cases[f"{field} {bad}"] = changed
    cases["se inflated ×50"] = copy.deepcopy(stored)
    cases["se inflated ×50"]["numbers"]["spread"]["se"] *= 50
    cases["se collapsed"] = copy.deepcopy(stored)
    cases["se collapsed"]["numbers"]["spread"]["se"] = 0.0
    diverged = seeds.copy()
    diverged[:3] += 5.0  # three of six seeds diverge
    cases["3 of 6 seeds diverged"] = shifted_seeds(stored, "slope", diverged)
    cases["×100 units"] = shifted_seeds(stored, "slope", 100 * seeds)
    for field, value in (
        ("margin", 0.5),
        ("null", 0.1),
        ("expected", "less"),
        ("n", 7),
        ("family", 3),
        ("design", "Welch"),
    ):
        changed = copy.deepcopy(stored)
        changed["claims"][0][field] = value
        cases[f"claim {field}"] = changed
    changed = copy.deepcopy(stored)
    changed["claims"][0]["low"] -= 0.05
    cases["interval rewritten"] = changed
    changed = copy.deepcopy(stored)
    changed["claims"][0]["values"][0] += 0.5
    cases["values that do not give the estimate"] = changed
    changed = copy.deepcopy(stored)
    changed["numbers"]["slope"]["value"] += 1e-3
    cases["a mean that its seeds do not give"] = changed
    for name, fresh in cases.items():
        assert _records.compare_records(stored, fresh), name


def test_the_comparators_false_alarm_rate_is_about_one_percent():
    """Fresh draws of 50 trained numbers of 5 seeds each (the model of a rerun): the
    check fails the whole set in about 1 % of the draws, no more."""
    rng = np.random.default_rng(5)
    books, family, n = 4000, 50, 5
    k = _records._tolerance_k(n - 1, family)
    r = _records._se_ratio_bound(n - 1, family)
    draws = rng.normal(0.0, 1.0, (2, books, family, n))
    mean, se = draws.mean(-1), draws.std(-1, ddof=1) / math.sqrt(n)
    moved = np.abs(mean[1] - mean[0]) > k * math.sqrt(2) * se[0]
    ratio = se[1] / se[0]
    spread = (ratio > r) | (ratio < 1 / r)
    rate = (moved | spread).any(-1).mean()
    assert rate <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / books)
    assert rate >= 0.002  # not a check that can never fire


def test_load_records_refuses_bad_files_by_name(tmp_path, monkeypatch):
    stored = saved_record(tmp_path, monkeypatch)
    good = tmp_path / "03_wen_convergence.json"
    text = good.read_text()
    bad = {
        "cut": text[: len(text) // 2],
        "NaN": text.replace('"value": 12', '"value": NaN', 1),
        "a key twice": text.replace('"scale":', '"scale": "x", "scale":', 1),
    }
    for what, content in bad.items():
        folder = tmp_path / what.replace(" ", "_")
        folder.mkdir()
        (folder / "03_wen_convergence.json").write_text(content)
        with pytest.raises(ValueError, match="03_wen_convergence.json"):
            verdicts.load_records(folder)
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("03_wen_convergence.json", "04_copy.json"):
        (twice / name).write_text(text)
    with pytest.raises(ValueError, match="the same chapter"):
        verdicts.load_records(twice)
    repeated = copy.deepcopy(stored)
    repeated["claims"].append(repeated["claims"][0])
    folder = tmp_path / "repeated"
    folder.mkdir()
    (folder / "03_wen_convergence.json").write_text(json.dumps(repeated))
    with pytest.raises(ValueError, match="twice"):
        verdicts.load_records(folder)


def test_a_repeated_number_name_is_refused():
    book = Verdicts("01_curl_framework")
    book.number("n", 3)
    with pytest.raises(ValueError, match="name 'n' is already recorded"):
        book.number("n", 4)
    with pytest.raises(ValueError, match="name 'n' is already recorded"):
        book.number("n", [1.0, 2.0])  # whatever the value, before reading it


def test_the_command_line_explains_its_arguments_and_fails_in_one_line(
    tmp_path, monkeypatch, capsys
):
    with pytest.raises(SystemExit):
        _records.main(["compare", "--help"])
    said = capsys.readouterr().out
    assert "the folder of the committed records" in said
    with pytest.raises(SystemExit) as stopped:
        _records.main(["compare", str(tmp_path / "missing"), str(tmp_path)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "folder of chapter records" in err
    saved_record(tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as stopped:
        _records.main(["compare", str(tmp_path), str(tmp_path)])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert "03_wen_convergence: 0 fragile verdicts" in out and "agree" in out
    # a cut record: one line that names the file, for either command
    for command in (
        ["compare", str(CUT_RECORDS), str(tmp_path)],
        ["scorecard", str(CUT_RECORDS), str(tmp_path / "page.md")],
    ):
        with pytest.raises(SystemExit) as stopped:
            _records.main(command)
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert (
            err.count("\n") == 1 and str(CUT_RECORDS / "03_wen_convergence.json") in err
        )


def test_scorecard_page_counts_and_links(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "standard")
    monkeypatch.setenv("CCL_RECORDS_DIR", str(tmp_path))
    for chapter in ("01_curl_framework", "02_multiple_negatives"):
        book = Verdicts(chapter)
        book.theorem(claim("t", section="curl-lemma"), "holds", "all | checkpoints")
        book.not_run(claim("n"), "not at this scale")  # no section: no link
        book.save()
    page = _records.write_scorecard(
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
    assert set(itertools.chain(_claims.EMPIRICAL, verdicts.THEOREM)) < set(
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
    titles = _records.chapter_titles(root / "_toc.yml")
    assert {record["chapter"] for record in records} == set(titles)
    page = (root / "book" / "scorecard.md").read_text()
    assert page == _records.scorecard_page(records, titles), (
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
    assert _records.chapter_titles(toc) == {"01_one": "First"}


def test_claims_by_key_keeps_order_and_rejects_a_repeated_key():
    claims = verdicts.claims_by_key(claim("b"), claim("a"))
    assert list(claims) == ["b", "a"]
    with pytest.raises(ValueError, match="'a' is twice"):
        verdicts.claims_by_key(claim("a"), claim("a"))
    with pytest.raises(ValueError, match="claims"):
        verdicts.claims_by_key("not a claim")


def test_the_reader_table_has_four_wrapping_columns_and_no_keys():
    book = Verdicts("02_multiple_negatives")
    book.test(claim_with_margin("e_key"), X, Y)
    book.theorem(claim("t_key"), "holds", "all 12 checkpoints")
    shown = book.show()
    assert list(shown.frame.columns) == list(_table.READER_COLUMNS)
    full = book.table()
    assert list(shown.frame["verdict"]) == list(full["verdict"])
    assert shown.frame.loc[1, "measured"].endswith("all 12 checkpoints")
    html = shown._repr_html_()
    assert "white-space: normal" in html and "holds" in html
    assert "e_key" not in html and "t_key" not in html
    assert html == book.show()._repr_html_()  # no random ids
    assert "holds" in repr(shown) and " at 0x" not in repr(shown)


# ------------------------------------------------------------------ bad calls

_FIELDS = dict(source="S (2020), §1", statement="x beats y", metric="x − y")
_CLAIM = Claim(key="c", **_FIELDS)
_SLOPES = pd.DataFrame(
    {"seed": [0, 0, 0, 1, 1, 1], "m": [1.0, 2, 4] * 2, "y": [3.0, 2, 1] * 2}
)
_CHAPTER = Verdicts("01_curl_framework")
_CHAPTER.number("n", 3)
_FOLDERS = tempfile.TemporaryDirectory(prefix="bad_records_")
CUT_RECORDS = Path(_FOLDERS.name) / "cut"
"""A folder whose only chapter record is cut in the middle."""
_NAN_RECORDS = Path(_FOLDERS.name) / "nan"
_RECORD = json.dumps(
    {"chapter": "03_wen_convergence", "scale": "standard", "claims": []}
)
for _folder, _text in (
    (CUT_RECORDS, _RECORD[: len(_RECORD) // 2]),
    (_NAN_RECORDS, _RECORD.replace('"standard"', "NaN")),
):
    _folder.mkdir()
    (_folder / "03_wen_convergence.json").write_text(_text)

BAD_CALLS = [
    bad_call(verdicts.Claim, "key", key="Bad Key", **_FIELDS),
    bad_call(verdicts.Claim, "expected", key="c", expected="more", **_FIELDS),
    bad_call(
        verdicts.Claim, "margin", key="c", margin=0.0, margin_reason="r", **_FIELDS
    ),
    bad_call(verdicts.Claim, "margin_reason", key="c", margin=0.1, **_FIELDS),
    bad_call(verdicts.Claim, "null", key="c", null="0", **_FIELDS),
    bad_call(verdicts.claims_by_key, "claims", "c"),
    bad_call(verdicts.claims_by_key, "claims .*'c' is twice", _CLAIM, _CLAIM),
    bad_call(verdicts.Verdicts, "chapter", "curl_framework"),
    bad_call(verdicts.Verdicts, "scope", "01_curl_framework", scope=None),
    bad_call(_CHAPTER.test, "claim", "c", X),
    bad_call(_CHAPTER.test, "claim 'c' must state its margin", _CLAIM, X),
    bad_call(_CHAPTER.theorem, "verdict", _CLAIM, "reproduced", "all checkpoints"),
    bad_call(_CHAPTER.not_run, "reason", _CLAIM, " "),
    bad_call(_CHAPTER.number, "name 'n' is already recorded", "n", 4),
    bad_call(_CHAPTER.number, "name", "Bad Name", 1.0),
    bad_call(verdicts.estimate, "values", [1.0]),
    bad_call(verdicts.estimate, "baseline", X, [1.0, math.nan]),
    bad_call(verdicts.estimate, "values and baseline", X, Y[:4]),
    bad_call(verdicts.estimate, "family", X, family=0),
    bad_call(verdicts.decide, "expected", "bigger", 0.2, 0.5, 0.0, 0.1),
    bad_call(verdicts.decide, "margin", "greater", 0.2, 0.5, 0.0, 0.0),
    bad_call(verdicts.decide, "low", "greater", 0.5, 0.2, 0.0, 0.1),
    bad_call(verdicts.decide, "high", "greater", 0.2, math.nan, 0.0, 0.1),
    bad_call(verdicts.format_estimate, "se", 0.5, -0.01),
    bad_call(verdicts.per_seed_slopes, "frame", _SLOPES.iloc[:0], "m", "y"),
    bad_call(verdicts.per_seed_slopes, "x", _SLOPES, "width", "y"),
    bad_call(verdicts.per_seed_slopes, "frame .*2 seeds", _SLOPES.iloc[:3], "m", "y"),
    bad_call(verdicts.power_law_fit, "confidence", [1.0, 2, 4], [3.0, 2, 1], 95),
    bad_call(
        verdicts.power_law_fit, "y must be finite and > 0", [1.0, 2, 4], [1, 0, 1]
    ),
    bad_call(verdicts.power_law_fit, "x and y", [1.0, 2, 4], [3.0, 2, 1, 0.5]),
    bad_call(verdicts.top_set, "values", [], 0.5, 4),
    bad_call(verdicts.top_set, "sd", [1.0, 2.0, 3.0], 0.0, 4),
    bad_call(verdicts.top_set, "df", [1.0, 2.0, 3.0], 0.5, 0),
    bad_call(verdicts.top_set, "confidence", [1.0, 2.0, 3.0], 0.5, 4, confidence=1.0),
    bad_call(verdicts.load_records, "folder", Path(_FOLDERS.name) / "missing"),
    bad_call(verdicts.load_records, r"cut/03_wen_convergence\.json", CUT_RECORDS),
    bad_call(verdicts.load_records, "03_wen_convergence.json", _NAN_RECORDS),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
