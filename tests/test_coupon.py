"""Tests of ccl_helpers.coupon (Merad et al., Lemma 2 and Proposition 1) against
independent computations: brute-force enumeration of class tuples, exact rational
inclusion–exclusion, Stirling numbers and Monte Carlo simulation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import torch
from bad_calls import bad_call, lacking_device
from conftest import uniform

from ccl_helpers import coupon

DYADIC = [0.5, 0.25, 0.125, 0.125]  # exact binary fractions: Fraction(float) is exact
RHO3 = [0.5, 0.3, 0.2]
WIDE = torch.linspace(1, 2, 40, dtype=torch.float64)
WIDE = WIDE / WIDE.sum()  # 40 classes, not uniform: 2⁴⁰ subsets beyond N = 1024

BAD_CALLS = [
    bad_call(coupon.probability_vector, "class_probs", [0.6, 0.6]),
    bad_call(coupon.probability_vector, "class_probs", [1.0, 0.0]),
    bad_call(coupon.probability_vector, "class_probs", torch.tensor([1, 0])),
    bad_call(coupon.probability_vector, "class_probs", "abc"),
    bad_call(coupon.p_cc, "n_negatives", 0, RHO3),
    bad_call(coupon.p_cc, "n_negatives", 2.5, RHO3),
    bad_call(coupon.p_cc, "class_probs", 3, [1.2, -0.2]),
    bad_call(coupon.p_cc, "class_probs", 3, [1.0]),
    bad_call(coupon.p_cc, "n_negatives=2,000 .* 40 classes to cover", 2000, WIDE),
    bad_call(coupon.p_cc_anchor_excluded, "n_negatives", True, RHO3),
    bad_call(coupon.p_cc_anchor_excluded, "class_probs", 3, [[0.5, 0.5]]),
    bad_call(
        coupon.p_cc_anchor_excluded, "n_negatives=2,000 .* 39 classes", 2000, WIDE
    ),
    bad_call(coupon.tau_plus, "n_negatives", 0, uniform(3)),
    bad_call(coupon.tau_plus, "class_probs", 2, [0.5, 0.6]),
    bad_call(coupon.collection_time_moments_exact, "n_classes", 1),
    bad_call(coupon.collection_time_moments_exact, "n_classes", 2.5),
    bad_call(
        coupon.collection_time_moments_exact, "n_classes=1125899906842624 give", 2**50
    ),
    bad_call(coupon.collection_time_tail, "beta", 0.0, 10),
    bad_call(coupon.collection_time_tail, "beta", [1.0, -1.0], 10),
    bad_call(coupon.collection_time_tail, "beta", float("nan"), 10),
    bad_call(coupon.collection_time_tail, "beta", "x", 10),
    bad_call(coupon.collection_time_tail, "n_classes", 1.0, 1),
    bad_call(coupon.chebyshev_tail_bound, "beta", torch.tensor([0, 1]), 3),
    bad_call(coupon.chebyshev_tail_bound, "n_classes", 1.0, True),
    bad_call(coupon.chebyshev_tail_bound, "n_classes", 1.0, 2.5, as_printed=True),
    bad_call(coupon.sample_collection_time, "n_samples", 0, [0.5, 0.5]),
    bad_call(coupon.sample_collection_time, "class_probs", 5, [0.5, 0.6]),
    bad_call(coupon.sample_collection_time, "block", 5, [0.5, 0.5], block=0),
    bad_call(coupon.sample_collection_time, "generator", 5, [0.5, 0.5], generator=0),
    bad_call(
        coupon.sample_collection_time,
        "generator",
        5,
        [0.5, 0.5],
        generator=torch.Generator(),
        device="meta",
    ),
    bad_call(coupon.sample_collection_time, "device", 5, [0.5, 0.5], device="gpu"),
    bad_call(
        coupon.sample_collection_time, "device", 5, [0.5, 0.5], device=lacking_device()
    ),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()


# --------------------------------------------------------------- independent references


def brute_force_cover(n, rho, required):
    """Σ over all N-tuples of classes of Π ρ, over the tuples whose classes include
    ``required``."""
    total = 0.0
    for draws in itertools.product(range(len(rho)), repeat=n):
        if set(required) <= set(draws):
            total += math.prod(rho[c] for c in draws)
    return total


def exact_inclusion_exclusion(n, rho, required):
    """P(draws ⊇ required) = Σ_{S ⊆ required} (−1)^{|S|} (1 − ρ(S))^N in exact
    rationals."""
    rho = [Fraction(p) for p in rho]
    total = Fraction(0)
    for size in range(len(required) + 1):
        for subset in itertools.combinations(required, size):
            total += (-1) ** size * (1 - sum(rho[c] for c in subset)) ** n
    return total


def stirling_p_cc(n, n_classes):
    """Uniform p_cc = N_C! S(N, N_C) / N_C^N with Stirling numbers of the second kind
    (recurrence)."""
    row = [1] + [0] * n_classes  # S(0, k)
    for _ in range(n):
        row = [0] + [k * row[k] + row[k - 1] for k in range(1, n_classes + 1)]
    return Fraction(math.factorial(n_classes) * row[n_classes], n_classes**n)


# ---------------------------------------------------------------- p_cc


@pytest.mark.parametrize("n_classes, n_max", [(2, 7), (3, 7), (4, 6)])
def test_p_cc_uniform_matches_brute_force_enumeration(n_classes, n_max):
    rho = [1 / n_classes] * n_classes
    for n in range(1, n_max + 1):
        expected = brute_force_cover(n, rho, range(n_classes))
        assert coupon.p_cc(n, uniform(n_classes)) == pytest.approx(
            expected, rel=1e-12, abs=1e-300
        )


@pytest.mark.parametrize("rho", [RHO3, [0.1, 0.2, 0.3, 0.4]])
def test_p_cc_general_matches_brute_force_enumeration(rho):
    for n in range(1, 7):
        expected = brute_force_cover(n, rho, range(len(rho)))
        value = coupon.p_cc(n, torch.tensor(rho, dtype=torch.float64))
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n_classes", [2, 5, 10, 20])
def test_p_cc_uniform_matches_stirling_numbers(n_classes):
    for n in (n_classes - 1, n_classes, n_classes + 3, 2 * n_classes, 35, 64, 300):
        expected = float(stirling_p_cc(n, n_classes)) if n >= n_classes else 0.0
        assert coupon.p_cc(n, uniform(n_classes)) == pytest.approx(
            expected, rel=1e-14, abs=0
        )


@pytest.mark.parametrize("n", [4, 5, 10, 60, 400, 1024, 1025, 3000])
def test_p_cc_general_matches_exact_rational_inclusion_exclusion(n):
    # n ≤ 1024: the dynamic programme; n > 1024: float inclusion–exclusion with its
    # error bound
    expected = float(exact_inclusion_exclusion(n, DYADIC, range(4)))
    assert coupon.p_cc(n, torch.tensor(DYADIC)) == pytest.approx(expected, rel=1e-11)


def test_p_cc_dynamic_programme_agrees_with_the_uniform_closed_form():
    rho, required = uniform(10), torch.ones(10, dtype=torch.bool)
    for n in (10, 11, 15, 25, 35, 64, 500):
        dp = coupon._cover_dynamic_programme(n, rho, required)
        assert dp == pytest.approx(coupon.p_cc(n, rho), rel=1e-12)


def test_p_cc_at_and_below_n_classes():
    rho = torch.tensor([0.1, 0.2, 0.3, 0.15, 0.25], dtype=torch.float64)
    for n in range(1, 5):
        assert coupon.p_cc(n, rho) == 0.0
    # exactly N_C draws: each class once, in any order
    assert coupon.p_cc(5, rho) == pytest.approx(
        math.factorial(5) * math.prod(rho.tolist()), rel=1e-13
    )
    # N_C + 1 draws: one class twice
    expected = math.factorial(6) / 2 * math.prod(rho.tolist()) * float(rho.sum())
    assert coupon.p_cc(6, rho) == pytest.approx(expected, rel=1e-13)


def test_p_cc_matches_monte_carlo_simulation():
    rho = torch.tensor([0.1, 0.15, 0.2, 0.25, 0.3], dtype=torch.float64)
    n, trials = 14, 60_000
    draws = torch.multinomial(
        rho, trials * n, replacement=True, generator=torch.Generator().manual_seed(0)
    ).view(trials, n)
    seen = torch.zeros(trials, 5, dtype=torch.bool).scatter_(1, draws, True)
    hits = seen.all(1).double()
    estimate, standard_error = float(hits.mean()), float(hits.std()) / math.sqrt(trials)
    exact = coupon.p_cc(n, rho)
    assert abs(estimate - exact) < 4 * standard_error
    # the comparison has power: the uniform ρ gives a clearly different probability
    assert abs(estimate - coupon.p_cc(n, uniform(5))) > 8 * standard_error
    # the positive's class is not among the N draws: counting it would give a larger
    # value
    anchor = torch.multinomial(
        rho, trials, replacement=True, generator=torch.Generator().manual_seed(1)
    )
    with_anchor = seen.clone().scatter_(1, anchor[:, None], True).all(1).double().mean()
    assert float(with_anchor) - exact > 8 * standard_error


def test_p_cc_increases_with_n_and_reaches_one():
    rho = torch.tensor(DYADIC)
    values = [coupon.p_cc(n, rho) for n in range(4, 200, 7)]
    assert all(b > a for a, b in zip(values, values[1:]))
    assert 0 < values[0] < 1 and values[-1] == pytest.approx(1.0, abs=1e-9)
    assert coupon.p_cc(10**5, uniform(10)) == 1.0


def test_p_cc_uniform_detection_accepts_float32_and_lists():
    assert coupon.p_cc(15, torch.full((10,), 0.1)) == coupon.p_cc(15, uniform(10))
    assert coupon.p_cc(15, [0.1] * 10) == coupon.p_cc(15, uniform(10))
    assert coupon.p_cc(6, RHO3) == pytest.approx(
        brute_force_cover(6, RHO3, range(3)), rel=1e-12
    )


def test_p_cc_uniform_float_path_for_huge_n():
    n_classes, n = 2**15, 700_000  # N·log2(N_C) > 2^20 bits: the float closed form
    expected = math.fsum(
        (-1) ** j * math.comb(n_classes, j) * math.exp(n * math.log1p(-j / n_classes))
        for j in range(40)
    )
    value = coupon.p_cc(n, uniform(n_classes))
    assert value == pytest.approx(expected, rel=1e-12)
    assert 1 - value == pytest.approx(
        1 - expected, rel=1e-6
    )  # ≈ 1.6e-5, not rounded away
    with pytest.raises(
        ValueError, match="n_negatives"
    ):  # there the alternating sum cancels
        coupon.p_cc(300_000, uniform(n_classes))


def test_p_cc_raises_beyond_what_it_computes_exactly():
    rho = torch.linspace(1, 2, 21, dtype=torch.float64)
    rho = rho / rho.sum()
    # N > 1024: inclusion–exclusion over the 2²¹ subsets, against the dynamic programme
    required = torch.ones(21, dtype=torch.bool)
    dynamic = coupon._cover_dynamic_programme(2000, rho, required)
    assert coupon.p_cc(2000, rho) == pytest.approx(dynamic, rel=1e-9)
    with pytest.raises(ValueError, match="n_negatives=2,000 .* 1,099,511,627,776"):
        coupon.p_cc(2000, WIDE)  # 2⁴⁰ subsets: more than the 2²⁴ enumerated
    assert 0 < coupon.p_cc(1000, rho) <= 1  # within the dynamic programme's range
    tiny = torch.tensor([1e-12, 0.5, 0.5 - 1e-12], dtype=torch.float64)
    with pytest.raises(ValueError, match="n_negatives"):
        coupon.p_cc(3000, tiny)  # p ≈ 3e-9: inclusion–exclusion would cancel
    assert coupon.p_cc(1000, tiny) == pytest.approx(1000e-12, rel=1e-3)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3", None])
def test_p_cc_rejects_bad_n_negatives(bad):
    with pytest.raises(ValueError, match="n_negatives"):
        coupon.p_cc(bad, uniform(3))


@pytest.mark.parametrize(
    "bad",
    [
        [0.6, 0.6],
        [1.2, -0.2],
        [1.0, 0.0],
        [1.0],
        [[0.5, 0.5]],
        [float("nan"), 0.5],
        torch.tensor([1, 0]),
        "abc",
    ],
)
def test_p_cc_rejects_bad_class_probs(bad):
    with pytest.raises(ValueError, match="class_probs"):
        coupon.p_cc(3, bad)


# ------------------------------------------------ p_cc with the anchor's class excluded


def test_p_cc_anchor_excluded_matches_brute_force():
    for rho in (RHO3, [0.1, 0.2, 0.3, 0.4], [0.25] * 4):
        k = len(rho)
        for n in range(1, 7):
            expected = min(
                brute_force_cover(n, rho, [c for c in range(k) if c != excluded])
                for excluded in range(k)
            )
            value = coupon.p_cc_anchor_excluded(
                n, torch.tensor(rho, dtype=torch.float64)
            )
            assert value == pytest.approx(expected, rel=1e-12, abs=1e-300)
            assert value >= coupon.p_cc(n, torch.tensor(rho, dtype=torch.float64))


def test_p_cc_anchor_excluded_large_n_and_uniform_closed_form():
    # inclusion–exclusion path (n > 1024) against exact rationals, excluded class by
    # class
    n = 1500
    expected = min(
        float(exact_inclusion_exclusion(n, DYADIC, [c for c in range(4) if c != e]))
        for e in range(4)
    )
    assert coupon.p_cc_anchor_excluded(n, torch.tensor(DYADIC)) == pytest.approx(
        expected, rel=1e-11
    )
    # uniform: Σ_j (−1)^j C(N_C−1, j)(1 − j/N_C)^N; positive from N = N_C − 1 on, where
    # p_cc = 0
    assert coupon.p_cc_anchor_excluded(9, uniform(10)) == pytest.approx(
        math.factorial(9) / 10**9, rel=1e-14
    )
    assert coupon.p_cc(9, uniform(10)) == 0.0


# ---------------------------------------------------------------- τ⁺


@pytest.mark.parametrize("rho", [RHO3, [0.25] * 4, [0.7, 0.3]])
def test_tau_plus_matches_enumeration_of_class_tuples(rho):
    for n in range(1, 5):
        expected = sum(
            math.prod(rho[c] for c in t)
            for t in itertools.product(range(len(rho)), repeat=n + 1)
            if len(set(t)) == 1
        )
        assert coupon.tau_plus(
            n, torch.tensor(rho, dtype=torch.float64)
        ) == pytest.approx(expected, rel=1e-13)


def test_tau_plus_uniform_is_n_classes_to_the_minus_n():
    for n_classes in (2, 3, 10):
        for n in (1, 2, 7, 64):
            assert coupon.tau_plus(n, uniform(n_classes)) == pytest.approx(
                n_classes ** (-n), rel=1e-15
            )
    assert coupon.tau_plus(1, torch.tensor(RHO3)) == pytest.approx(
        sum(p * p for p in RHO3), rel=1e-7
    )


def test_tau_plus_matches_monte_carlo():
    rho = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64)
    trials, n = 200_000, 2
    classes = torch.multinomial(
        rho,
        trials * (n + 1),
        replacement=True,
        generator=torch.Generator().manual_seed(3),
    ).view(trials, n + 1)
    same = (classes == classes[:, :1]).all(1).double()
    se = float(same.std()) / math.sqrt(trials)
    assert abs(float(same.mean()) - coupon.tau_plus(n, rho)) < 4 * se
    assert abs(float(same.mean()) - coupon.tau_plus(n + 1, rho)) > 8 * se


@pytest.mark.parametrize(
    "rho, tau", [([0.5, 0.2, 0.3], 0.38), ([0.5, 0.5], 0.5), ([0.1] * 10, 0.1)]
)
def test_tau_plus_with_one_negative_is_the_collision_probability(rho, tau):
    value = coupon.tau_plus(1, torch.tensor(rho, dtype=torch.float64))
    assert value == pytest.approx(tau, rel=1e-12)


def test_probability_vector_validates_and_renormalises():
    rho = coupon.probability_vector([0.5, 0.5 + 1e-7])
    assert rho.dtype == torch.float64 and float(rho.sum()) == pytest.approx(
        1, abs=1e-15
    )
    for bad in ([0.7, 0.7], [1.0, 0.0], torch.tensor([1, 0]), "ab"):
        with pytest.raises(ValueError, match="class_probs"):
            coupon.probability_vector(bad)


# ------------------------------------------- the collection time T (Section 3.1)


def exact_pmf_of_collection_time(n_classes, n_max):
    """P(T = n) = p_cc(n) − p_cc(n − 1) for n = 1..n_max from exact Stirling numbers
    (independent of coupon.p_cc), as Fractions."""
    cdf = [Fraction(0)] + [
        stirling_p_cc(n, n_classes) if n >= n_classes else Fraction(0)
        for n in range(1, n_max + 1)
    ]
    return {n: cdf[n] - cdf[n - 1] for n in range(1, n_max + 1)}, cdf


@pytest.mark.parametrize("n_classes", [2, 3, 5, 10])
def test_collection_time_mean_and_variance_match_sums_over_the_exact_law(n_classes):
    n_max = 60 * n_classes  # P(T > n_max) ≤ N_C (1 − 1/N_C)^{n_max} < 1e-25
    pmf, _ = exact_pmf_of_collection_time(n_classes, n_max)
    mean = sum(n * p for n, p in pmf.items())
    second = sum(n * n * p for n, p in pmf.items())
    assert coupon._collection_time_mean(n_classes) == pytest.approx(
        float(mean), rel=1e-13
    )
    assert coupon._collection_time_variance(n_classes) == pytest.approx(
        float(second - mean**2), rel=1e-12
    )


@pytest.mark.parametrize("n_classes", [2, 3, 5, 10])
def test_exact_moments_are_the_rational_sums_over_the_exact_law(n_classes):
    n_max = 60 * n_classes
    pmf, _ = exact_pmf_of_collection_time(n_classes, n_max)
    mean = sum(n * p for n, p in pmf.items())
    second = sum(n * n * p for n, p in pmf.items())
    exact_mean, exact_variance = coupon.collection_time_moments_exact(n_classes)
    assert isinstance(exact_mean, Fraction) and isinstance(exact_variance, Fraction)
    # the pmf is cut at n_max: its moments fall short by less than 1e-20
    assert 0 <= exact_mean - mean < Fraction(1, 10**20)
    assert 0 <= exact_variance - (second - mean**2) < Fraction(1, 10**18)
    assert float(exact_mean) == pytest.approx(
        coupon._collection_time_mean(n_classes), rel=1e-15
    )
    assert float(exact_variance) == pytest.approx(
        coupon._collection_time_variance(n_classes), rel=1e-15
    )
    # the closed form N_C² Σ 1/k² − N_C H_{N_C}
    squares = sum(Fraction(1, k * k) for k in range(1, n_classes + 1))
    harmonic = sum(Fraction(1, k) for k in range(1, n_classes + 1))
    assert exact_mean == n_classes * harmonic
    assert exact_variance == n_classes**2 * squares - n_classes * harmonic


def test_exact_moments_known_values_and_bad_input():
    assert coupon.collection_time_moments_exact(2) == (Fraction(3), Fraction(2))
    assert coupon.collection_time_moments_exact(10)[0] == Fraction(7381, 252)
    for bad in (1, 0, 2.5, True):
        with pytest.raises(ValueError, match="n_classes"):
            coupon.collection_time_moments_exact(bad)
    with pytest.raises(ValueError, match="n_classes=1000001 give 1,000,001 rational"):
        coupon.collection_time_moments_exact(10**6 + 1)


def test_collection_time_pmf_from_p_cc_differences():
    n_classes = 4
    pmf, _ = exact_pmf_of_collection_time(n_classes, 40)
    for n in range(n_classes + 1, 40):
        difference = coupon.p_cc(n, uniform(n_classes)) - coupon.p_cc(
            n - 1, uniform(n_classes)
        )
        assert difference == pytest.approx(float(pmf[n]), rel=1e-12, abs=1e-16)


def test_collection_time_known_values():
    assert coupon._collection_time_mean(2) == 3.0  # 2 (1 + 1/2)
    assert coupon._collection_time_variance(2) == 2.0  # geometric(1/2): (1 − p)/p²
    assert coupon._collection_time_mean(10) == pytest.approx(7381 / 252, rel=1e-15)
    assert coupon._collection_time_variance(10) == pytest.approx(125.687, abs=1e-3)
    assert coupon._collection_time_variance_as_printed(10) == pytest.approx(
        164.493, abs=1e-3
    )


def test_source_variance_bounds_the_variance_and_is_its_limit():
    for n_classes in range(2, 301):
        exact = coupon._collection_time_variance(n_classes)
        printed = coupon._collection_time_variance_as_printed(n_classes)
        assert exact < printed
    # Var T / (N_C π)²/6 → 1 (the source's value is the leading term)
    ratio = coupon._collection_time_variance(
        10_000
    ) / coupon._collection_time_variance_as_printed(10_000)
    assert 0.99 < ratio < 1


@pytest.mark.parametrize("n_classes", [2, 4, 10])
def test_collection_time_tail_matches_the_exact_law(n_classes):
    n_max = 60 * n_classes
    _, cdf = exact_pmf_of_collection_time(n_classes, n_max)
    mean = Fraction(n_classes) * sum(Fraction(1, k) for k in range(1, n_classes + 1))
    betas = [0.05, 0.3, 0.77, 1.0, 1.5, 2.5, 4.0]
    expected = [
        float(
            sum(
                cdf[n] - cdf[n - 1]
                for n in range(1, n_max + 1)
                if abs(n - mean) >= Fraction(beta) * n_classes
            )
        )
        for beta in betas
    ]
    value = coupon.collection_time_tail(torch.tensor(betas), n_classes)
    assert value.dtype == torch.float64 and value.shape == (len(betas),)
    assert value.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_tail_is_below_both_chebyshev_bounds():
    betas = torch.logspace(-2, 1.5, 200, dtype=torch.float64)
    for n_classes in (2, 3, 10, 50):
        tail = coupon.collection_time_tail(betas, n_classes)
        exact = coupon.chebyshev_tail_bound(betas, n_classes)
        printed = coupon.chebyshev_tail_bound(betas, n_classes, as_printed=True)
        assert ((tail >= 0) & (tail <= 1)).all()
        assert (tail <= exact).all() and (exact < printed).all()
        assert printed.tolist() == pytest.approx(
            (math.pi**2 / (6 * betas**2)).tolist(), rel=1e-14
        )
    # the tail is not trivially small: Chebyshev is within a factor 10 near β = 1.2
    one = torch.tensor([1.2], dtype=torch.float64)
    ratio = coupon.chebyshev_tail_bound(one, 10) / coupon.collection_time_tail(one, 10)
    assert 1 < float(ratio) < 10


def test_collection_time_tail_takes_numbers_and_keeps_the_shape():
    grid = torch.tensor([[0.5, 1.0], [2.0, 3.0]])
    value = coupon.collection_time_tail(grid, 5)
    assert value.shape == (2, 2)
    assert float(value[0, 1]) == float(coupon.collection_time_tail(1.0, 5))
    assert coupon.collection_time_tail([0.5, 1.0], 5).tolist() == value[0].tolist()


def test_simulated_collection_time_matches_mean_variance_and_law():
    n_classes, n_samples = 10, 40_000
    times = coupon.sample_collection_time(
        n_samples, uniform(n_classes), generator=torch.Generator().manual_seed(1)
    ).double()
    assert times.min() >= n_classes
    mean, variance = (
        coupon._collection_time_mean(n_classes),
        (coupon._collection_time_variance(n_classes)),
    )
    assert abs(float(times.mean()) - mean) < 4 * math.sqrt(variance / n_samples)
    # s.e. of the sample variance: sqrt((µ4 − σ⁴)/n), µ4 from the sample
    mu4 = float(((times - times.mean()) ** 4).mean())
    se_var = math.sqrt((mu4 - variance**2) / n_samples)
    assert abs(float(times.var()) - variance) < 4 * se_var
    assert abs(float(times.var()) - coupon._collection_time_variance_as_printed(10)) > (
        8 * se_var
    )  # the source's value is not the variance
    for n in (15, 25, 40):
        fraction = float((times <= n).double().mean())
        p = coupon.p_cc(n, uniform(n_classes))
        assert abs(fraction - p) < 4 * math.sqrt(p * (1 - p) / n_samples)


def test_simulated_collection_time_with_non_uniform_probabilities():
    rho, n_samples = torch.tensor(RHO3, dtype=torch.float64), 40_000
    times = coupon.sample_collection_time(
        n_samples, rho, generator=torch.Generator().manual_seed(2), block=1
    )  # block = 1: many rounds of doubling blocks
    for n in (3, 5, 8, 14):
        p = coupon.p_cc(n, rho)
        fraction = float((times <= n).double().mean())
        assert abs(fraction - p) < 4 * math.sqrt(p * (1 - p) / n_samples)
    # E[T] = Σ_{n≥0} P(T > n) = Σ_n (1 − p_cc(n)) (terms below 1e-17 beyond n = 200)
    mean = 3 + sum(1 - coupon.p_cc(n, rho) for n in range(3, 200))
    se = float(times.double().std()) / math.sqrt(n_samples)
    assert abs(float(times.double().mean()) - mean) < 4 * se


def test_simulated_collection_time_is_deterministic_under_a_seed():
    def draw(seed):
        return coupon.sample_collection_time(
            500, [0.25] * 4, generator=torch.Generator().manual_seed(seed), block=2
        )

    first = draw(5)
    assert torch.equal(first, draw(5)) and first.dtype == torch.int64
    assert not torch.equal(first, draw(6))
