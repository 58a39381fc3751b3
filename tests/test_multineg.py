"""Tests of ccl_helpers.multineg (Merad et al., Section 3) against independent
computations: brute-force enumeration of class tuples and of negative tuples, exact
rational inclusion–exclusion, Stirling numbers, Monte Carlo simulation, naive loops over
tasks, the metrics module, and the lemmas and Proposition 1 checked on exactly computed
finite distributions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch
from bad_calls import bad_call
from conftest import labels_with_counts, randn, uniform

from ccl_helpers import coupon, curl, losses, metrics, multineg, train
from ccl_helpers.data import EmpiricalClasses
from ccl_helpers.losses import info_nce_loss
from ccl_helpers.models import MLP
from ccl_helpers.multineg._descent import _descent_to_targets, _triplet_evaluator
from ccl_helpers.multineg._exact import _best_linear_loss, _output_norm_range

DYADIC = [
    0.5,
    0.25,
    0.125,
    0.125,
]  # exact binary fractions: Fraction(float) is the true value
RHO3 = [0.5, 0.3, 0.2]


# ---------------------------------------------------------------- independent
# references


def exact_multi_negative_loss(features, labels, rho, n_negatives):
    """L^N_un on a finite set by enumerating every anchor, positive and N-tuple of
    negatives."""
    feats, labels = features.tolist(), labels.tolist()
    counts = {c: labels.count(c) for c in set(labels)}
    weight = [rho[c] / counts[c] for c in labels]  # D_neg (and the anchor's law)
    dot = [[sum(a * b for a, b in zip(u, v)) for v in feats] for u in feats]
    total = 0.0
    for i, c in enumerate(labels):
        for j in (j for j, label in enumerate(labels) if label == c):
            for negatives in itertools.product(range(len(labels)), repeat=n_negatives):
                w = weight[i] / counts[c] * math.prod(weight[k] for k in negatives)
                logits = [dot[i][j]] + [dot[i][k] for k in negatives]
                top = max(logits)
                total += w * (
                    top + math.log(sum(math.exp(z - top) for z in logits)) - dot[i][j]
                )
    return total


def naive_average_mean_classifier_loss(features, labels, task_size, rho, means=None):
    """(1/#tasks) Σ_T Σ_{c∈T} ρ(c)/ρ(T) mean_{x∈c} −log
    softmax_{c'∈T}(f(x)ᵀµ_{c'})_c."""
    labels_list = labels.tolist()
    n_classes = max(labels_list) + 1
    if means is None:
        means = torch.stack([features[labels == c].mean(0) for c in range(n_classes)])
    tasks = list(itertools.combinations(range(n_classes), task_size))
    total = 0.0
    for task in tasks:
        mass = sum(rho[c] for c in task)
        for c in task:
            members = [i for i, label in enumerate(labels_list) if label == c]
            for i in members:
                logits = [float(features[i] @ means[c2]) for c2 in task]
                own = float(features[i] @ means[c])
                top = max(logits)
                loss = top + math.log(sum(math.exp(z - top) for z in logits)) - own
                total += rho[c] / mass / len(members) * loss
    return total / len(tasks)


# ---------------------------------------------------------------- the bounds


def test_lemma1_bound_formula():
    rho = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    assert multineg.lemma1_bound(0.9, rho) == pytest.approx(
        0.9 / 0.2 + math.log(3), rel=1e-14
    )
    assert multineg.lemma1_bound(0.9, rho, with_log_term=False) == pytest.approx(
        4.5, rel=1e-14
    )
    values = multineg.lemma1_bound(torch.tensor([0.5, 1.0], dtype=torch.float64), rho)
    torch.testing.assert_close(
        values, torch.tensor([2.5, 5.0], dtype=torch.float64) + math.log(3)
    )


def test_lemma2_bound_formula_and_infinite_below_n_classes():
    rho = torch.tensor(DYADIC)
    assert multineg.lemma2_bound(2.0, 10, rho) == pytest.approx(
        2.0 / coupon.p_cc(10, rho), rel=1e-14
    )
    assert multineg.lemma2_bound(2.0, 3, rho) == math.inf
    assert multineg.lemma2_bound(2.0, 3, rho, anchor_excluded=True) == pytest.approx(
        2.0 / coupon.p_cc_anchor_excluded(3, rho), rel=1e-14
    )
    infinite = multineg.lemma2_bound(torch.tensor([1.0, 2.0]), 2, rho)
    assert infinite.shape == (2,) and bool(torch.isinf(infinite).all())


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_proposition1_part1_in_nats_equals_part2_at_one_negative(n_classes):
    losses = torch.tensor([0.1, math.log(2), 1.7], dtype=torch.float64)
    for task_size in range(2, n_classes + 1):
        part1 = multineg.proposition1_part1_bound(losses, task_size, n_classes)
        part2 = multineg.proposition1_bound(losses, 1, task_size, n_classes)
        torch.testing.assert_close(part1, part2, rtol=1e-14, atol=1e-14)
        assert multineg.proposition1_part1_bound(
            1.3, task_size, n_classes
        ) == pytest.approx(
            multineg.proposition1_bound(1.3, 1, task_size, n_classes), rel=1e-14
        )
    # k = 1: Arora et al.'s lemma with τ = 1/N_C (independent code in curl)
    assert multineg.proposition1_part1_bound(1.3, 2, n_classes) == pytest.approx(
        curl.mean_classifier_bound(1.3, 1 / n_classes), rel=1e-14
    )


def test_proposition1_bound_formula_and_factor():
    for n, task_size, n_classes in [(1, 2, 2), (3, 4, 5), (64, 9, 10)]:
        tau, k = n_classes ** (-n), task_size - 1
        expected = k / (1 - tau) * (2.2 - tau * math.log(n + 1))
        assert multineg.proposition1_bound(
            2.2, n, task_size, n_classes
        ) == pytest.approx(expected, rel=1e-14)
        assert multineg.proposition1_factor(n, task_size, n_classes) == pytest.approx(
            k / (1 - tau), rel=1e-14
        )
    factors = [multineg.proposition1_factor(n, 4, 10) for n in range(1, 16)]
    assert all(b < a for a, b in zip(factors, factors[1:]))
    assert factors[0] == pytest.approx(3 / 0.9) and factors[-1] == pytest.approx(
        3, rel=1e-14
    )


def test_proposition1_as_printed_is_below_nats_form_and_fails_for_zero_encoder():
    for n_classes in (2, 10):
        tau = 1 / n_classes
        for task_size in (2, n_classes):
            k = task_size - 1
            gap = multineg.proposition1_part1_bound(
                1.0, task_size, n_classes
            ) - multineg.proposition1_part1_bound(
                1.0, task_size, n_classes, as_printed=True
            )
            assert gap == pytest.approx(
                k * tau * (1 - math.log(2)) / (1 - tau), rel=1e-12
            )
        # f = 0: L_un = log 2 and L^µ_sup,1 = log 2; the nats bound is tight, the
        # printed one fails
        assert multineg.proposition1_part1_bound(
            math.log(2), 2, n_classes
        ) == pytest.approx(math.log(2), rel=1e-14)
        assert (
            multineg.proposition1_part1_bound(
                math.log(2), 2, n_classes, as_printed=True
            )
            < math.log(2) - 0.01
        )
        # read in bits, as its proof intends, it is the nats bound divided by log 2
        for loss in (0.3, 1.7):
            assert multineg.proposition1_part1_bound(
                loss / math.log(2), n_classes, n_classes, as_printed=True
            ) * math.log(2) == pytest.approx(
                multineg.proposition1_part1_bound(loss, n_classes, n_classes), rel=1e-12
            )


# ---------------------------------------------------------------- the average
# mean-classifier loss


@pytest.mark.parametrize("task_size", [2, 3, 4])
def test_average_mean_classifier_loss_uniform_equals_metrics(task_size):
    labels = labels_with_counts((3, 5, 2, 4), seed=1)
    features = randn(2, 3, labels.numel(), 4, seed=2)
    value = multineg.average_mean_classifier_loss(features, labels, task_size)
    assert value.shape == (2, 3) and value.dtype == torch.float64
    reference = metrics.mean_classifier(
        features, labels, task_size=task_size, class_probs=uniform(4)
    )["loss"]
    torch.testing.assert_close(value, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("task_size", [2, 3, 4])
def test_average_mean_classifier_loss_weighted_matches_naive_loop(task_size):
    labels = labels_with_counts((3, 5, 2, 4), seed=3)
    features = randn(labels.numel(), 3, seed=4)
    rho = [0.1, 0.2, 0.3, 0.4]
    value = multineg.average_mean_classifier_loss(
        features, labels, task_size, class_probs=torch.tensor(rho, dtype=torch.float64)
    )
    assert float(value) == pytest.approx(
        naive_average_mean_classifier_loss(features, labels, task_size, rho), rel=1e-10
    )
    if (
        task_size < 4
    ):  # tasks are uniform, not ∝ Π ρ as in metrics: the two differ for non-uniform ρ
        other = metrics.mean_classifier(
            features,
            labels,
            task_size=task_size,
            class_probs=torch.tensor(rho, dtype=torch.float64),
        )
        assert abs(float(other["loss"]) - float(value)) > 1e-4


def test_average_mean_classifier_loss_all_classes_is_rho_weighted():
    labels = labels_with_counts((3, 5, 2), seed=5)
    features = randn(labels.numel(), 2, seed=6)
    means = torch.stack([features[labels == c].mean(0) for c in range(3)])
    ce = torch.logsumexp(features @ means.T, -1) - (features @ means.T).gather(
        1, labels[:, None]
    ).squeeze(1)
    expected = sum(RHO3[c] * float(ce[labels == c].mean()) for c in range(3))
    rho = torch.tensor(RHO3, dtype=torch.float64)
    value = multineg.average_mean_classifier_loss(features, labels, 3, class_probs=rho)
    assert float(value) == pytest.approx(expected, rel=1e-12)


def test_average_mean_classifier_loss_with_given_means_and_chunks(monkeypatch):
    labels = labels_with_counts((4, 3, 5, 2, 3), seed=7)
    features = randn(2, labels.numel(), 3, seed=8)
    means = randn(5, 3, seed=9)
    value = multineg.average_mean_classifier_loss(features, labels, 3, means=means)
    for s in range(2):
        expected = naive_average_mean_classifier_loss(
            features[s], labels, 3, [0.2] * 5, means=means
        )
        assert float(value[s]) == pytest.approx(expected, rel=1e-10)
    monkeypatch.setattr(metrics, "CHUNK_ELEMENTS", 50)  # one task per chunk
    torch.testing.assert_close(
        multineg.average_mean_classifier_loss(features, labels, 3, means=means), value
    )


def test_average_mean_classifier_loss_of_zero_features_is_log_task_size():
    labels = labels_with_counts((2, 3, 4, 2))
    for task_size in (2, 3, 4):
        value = multineg.average_mean_classifier_loss(
            torch.zeros(labels.numel(), 2), labels, task_size
        )
        assert float(value) == pytest.approx(math.log(task_size), rel=1e-12)


def test_average_mean_classifier_loss_rejects_bad_input():
    labels = labels_with_counts((2, 3, 2))
    features = randn(labels.numel(), 2)
    with pytest.raises(ValueError, match="task_size"):
        multineg.average_mean_classifier_loss(features, labels, 1)
    with pytest.raises(ValueError, match="task_size"):
        multineg.average_mean_classifier_loss(features, labels, 4)
    with pytest.raises(ValueError, match="features"):
        multineg.average_mean_classifier_loss(features[:-1], labels, 2)
    with pytest.raises(ValueError, match="every class"):
        multineg.average_mean_classifier_loss(
            features, labels.masked_fill(labels == 1, 0), 2
        )
    with pytest.raises(ValueError, match="class_probs"):
        multineg.average_mean_classifier_loss(
            features, labels, 2, class_probs=torch.tensor([0.5, 0.5])
        )
    with pytest.raises(ValueError, match="means"):
        multineg.average_mean_classifier_loss(features, labels, 2, means=randn(3, 5))
    with pytest.raises(ValueError, match="features"):
        multineg.average_mean_classifier_loss(
            features.masked_fill(labels[:, None] == 0, math.nan), labels, 2
        )


def test_best_linear_loss_is_the_linear_probe_and_below_the_mean_classifier():
    labels = labels_with_counts((8, 6, 7), seed=10)
    centres = randn(3, 3, seed=11)
    features = centres[labels] + 1.2 * randn(labels.numel(), 3, seed=12)
    best = _best_linear_loss(features, labels, class_probs=uniform(3), max_iter=200)
    probe = metrics.linear_probe(features, labels, task_size=3, class_probs=uniform(3))[
        "loss"
    ]
    assert float(best) == pytest.approx(float(probe), abs=1e-5)
    mean = multineg.average_mean_classifier_loss(features, labels, 3)
    assert float(best) < float(mean) - 1e-3
    stacked = torch.stack([features, 2 * features])
    values = _best_linear_loss(stacked, labels, class_probs=torch.tensor(RHO3))
    means = multineg.average_mean_classifier_loss(
        stacked, labels, 3, class_probs=torch.tensor(RHO3)
    )
    assert (
        values.shape == (2,)
        and bool((values <= means).all())
        and bool((values >= 0).all())
    )


def test_best_linear_loss_is_fitted_from_zero_not_from_the_mean_classifier():
    """One L-BFGS iteration from W = 0 cannot reach the optimum, and the result does not
    depend on the class means: the check L_sup ≤ L^µ_sup compares two independent
    computations (it can fail when the fit is stopped too early)."""
    labels = labels_with_counts((30, 30, 30), seed=13)
    features = 3 * torch.eye(3, dtype=torch.float64)[labels] + randn(90, 3, seed=14)
    early = _best_linear_loss(features, labels, max_iter=1)
    converged = _best_linear_loss(features, labels, max_iter=300)
    mean = multineg.average_mean_classifier_loss(features, labels, 3)
    assert float(converged) < float(mean) < float(early)
    assert float(early) < math.log(3)  # one step from W = 0 (loss log 3) descends


def test_output_norm_range():
    features = torch.tensor(
        [[[3.0, 4.0], [0.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [6.0, 8.0], [1.0, 0.0]]]
    )
    low, high = _output_norm_range(features)
    torch.testing.assert_close(low, torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(high, torch.tensor([5.0, 10.0]))


# ---------------------------------------------------------------- the lemmas and
# Proposition 1, exactly


def tiny_problem(seed, scale, counts=(2, 3, 2)):
    labels = labels_with_counts(counts, seed=seed)
    return scale * randn(labels.numel(), 3, seed=seed + 100), labels


@pytest.mark.parametrize("seed, scale", [(0, 0.3), (1, 1.0), (2, 2.5), (3, 6.0)])
def test_lemma1_and_its_tighter_form_hold_exactly(seed, scale):
    features, labels = tiny_problem(seed, scale, counts=(4, 6, 3, 5))
    for rho in ([0.25] * 4, [0.1, 0.2, 0.3, 0.4]):
        rho_t = torch.tensor(rho, dtype=torch.float64)
        l_un = metrics.exact_unsupervised_loss(features, labels, rho_t)
        l_mu = multineg.average_mean_classifier_loss(
            features, labels, 4, class_probs=rho_t
        )
        assert (
            float(l_mu)
            <= float(multineg.lemma1_bound(l_un, rho_t, with_log_term=False)) + 1e-12
        )
        assert float(l_mu) <= float(multineg.lemma1_bound(l_un, rho_t)) + 1e-12


def test_lemma1_without_the_log_term_is_asymptotically_tight():
    # two collapsed classes on a ray, f = t·u and 2t·u: class 0 is misclassified by a
    # margin t², L^µ_sup ≈ t²/2 and L_un/p_min ≈ t²/2 + log 2: the factor 1/p_min cannot
    # be improved
    labels = labels_with_counts((3, 3))
    for t2 in (4.0, 30.0):
        features = math.sqrt(t2) * torch.stack(
            [1.0 + labels.double(), torch.zeros(6, dtype=torch.float64)], 1
        )
        l_un = metrics.exact_unsupervised_loss(features, labels, uniform(2))
        l_mu = float(multineg.average_mean_classifier_loss(features, labels, 2))
        expected_mu = 0.5 * (math.log1p(math.exp(t2)) + math.log1p(math.exp(-2 * t2)))
        assert l_mu == pytest.approx(expected_mu, rel=1e-12)
        gap = float(multineg.lemma1_bound(l_un, uniform(2), with_log_term=False)) - l_mu
        assert 0 <= gap <= math.log(2) + 1e-12
    assert gap < 0.05 * l_mu


def test_lemma1_without_the_log_term_does_not_hold_without_the_one_over_p_min():
    # the zero encoder: L_un = log 2 < L^µ_sup(f, C) = log N_C ≤ L_un / p_min
    labels = labels_with_counts((2, 2, 2, 2))
    l_un = float(metrics.exact_unsupervised_loss(torch.zeros(8, 2), labels))
    l_mu = float(multineg.average_mean_classifier_loss(torch.zeros(8, 2), labels, 4))
    assert l_un == pytest.approx(math.log(2)) and l_mu == pytest.approx(math.log(4))
    assert l_un < l_mu <= multineg.lemma1_bound(l_un, uniform(4), with_log_term=False)


@pytest.mark.parametrize("seed, scale", [(0, 0.5), (1, 1.5), (2, 4.0)])
def test_lemma2_and_its_anchor_excluded_form_hold_exactly(seed, scale):
    features, labels = tiny_problem(seed, scale)
    rho = torch.tensor(RHO3, dtype=torch.float64)
    l_mu = float(
        multineg.average_mean_classifier_loss(features, labels, 3, class_probs=rho)
    )
    for n in (2, 3):
        l_un = exact_multi_negative_loss(features, labels, RHO3, n)
        assert l_mu <= multineg.lemma2_bound(l_un, n, rho, anchor_excluded=True) + 1e-12
        assert l_mu <= multineg.lemma2_bound(l_un, n, rho) + 1e-12
    assert multineg.lemma2_bound(1.0, 2, rho) == math.inf  # p_cc(2) = 0 with 3 classes


@pytest.mark.parametrize("seed, scale", [(0, 0.5), (1, 1.5), (2, 4.0)])
def test_proposition1_holds_exactly_for_every_k_and_n(seed, scale):
    features, labels = tiny_problem(seed, scale)
    rho = [1 / 3] * 3
    l_un = {n: exact_multi_negative_loss(features, labels, rho, n) for n in (1, 2, 3)}
    assert l_un[1] == pytest.approx(
        float(metrics.exact_unsupervised_loss(features, labels, uniform(3))), rel=1e-10
    )
    for task_size in (2, 3):
        l_mu = float(multineg.average_mean_classifier_loss(features, labels, task_size))
        for n, value in l_un.items():
            assert l_mu <= multineg.proposition1_bound(value, n, task_size, 3) + 1e-12


def test_proposition1_for_the_zero_encoder_is_k_log_n_plus_one_and_tight_at_k_1_n_1():
    labels = labels_with_counts((2, 2, 2))
    features = torch.zeros(6, 2, dtype=torch.float64)
    for n in (1, 2):
        l_un = exact_multi_negative_loss(features, labels, [1 / 3] * 3, n)
        assert l_un == pytest.approx(math.log(n + 1), rel=1e-12)
        for task_size in (2, 3):
            l_mu = float(
                multineg.average_mean_classifier_loss(features, labels, task_size)
            )
            assert l_mu == pytest.approx(math.log(task_size), rel=1e-12)
            bound = multineg.proposition1_bound(l_un, n, task_size, 3)
            assert bound == pytest.approx((task_size - 1) * math.log(n + 1), rel=1e-12)
            assert l_mu <= bound + 1e-12
    assert multineg.proposition1_bound(math.log(2), 1, 2, 3) == pytest.approx(
        math.log(2), rel=1e-14
    )


# ---------------------------------------------------------------- L^N_un by Monte Carlo


def test_samples_follow_the_latent_class_model():
    labels = labels_with_counts((2, 5, 3), seed=4)
    rho = torch.tensor(RHO3, dtype=torch.float64)
    samples = metrics.draw_unsupervised_samples(
        labels, 4, 30_000, torch.Generator().manual_seed(0), rho
    )
    assert samples.anchor.shape == samples.positive.shape == (
        30_000,
    ) and samples.negatives.shape == (30_000, 4)
    assert torch.equal(labels[samples.anchor], labels[samples.positive])
    negative_freq = (
        torch.bincount(labels[samples.negatives].flatten(), minlength=3).double()
        / 120_000
    )
    anchor_freq = torch.bincount(labels[samples.anchor], minlength=3).double() / 30_000
    torch.testing.assert_close(negative_freq, rho, atol=0.01, rtol=0)
    torch.testing.assert_close(anchor_freq, rho, atol=0.015, rtol=0)
    # inside class 1 (5 examples) negatives are uniform over its examples
    members = samples.negatives.flatten()[labels[samples.negatives.flatten()] == 1]
    share = (
        torch.bincount(members, minlength=labels.numel())[labels == 1].double()
        / members.numel()
    )
    torch.testing.assert_close(
        share, torch.full((5,), 0.2, dtype=torch.float64), atol=0.015, rtol=0
    )


def test_loss_curve_matches_info_nce_on_the_same_draws(monkeypatch):
    labels = labels_with_counts((3, 4, 2), seed=5)
    features = randn(2, labels.numel(), 3, seed=6)
    samples = metrics.draw_unsupervised_samples(
        labels, 5, 200, torch.Generator().manual_seed(1)
    )
    estimate, se = metrics.unsupervised_loss_curve(features, samples)
    assert estimate.shape == se.shape == (2, 5)
    for n in range(1, 6):
        per_draw = info_nce_loss(
            features[:, samples.anchor],
            features[:, samples.positive],
            features[:, samples.negatives[:, :n]],
            reduction="none",
        )
        torch.testing.assert_close(
            estimate[:, n - 1], per_draw.mean(-1), rtol=1e-12, atol=1e-12
        )
        torch.testing.assert_close(
            se[:, n - 1], per_draw.std(-1) / math.sqrt(200), rtol=1e-9, atol=1e-12
        )
    monkeypatch.setattr(metrics._unsupervised, "CHUNK_ELEMENTS", 64)  # many chunks
    chunked = metrics.unsupervised_loss_curve(features, samples)
    torch.testing.assert_close(chunked[0], estimate)
    torch.testing.assert_close(chunked[1], se)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_monte_carlo_estimate_matches_exact_enumeration(n):
    features, labels = tiny_problem(7, 1.5)
    exact = exact_multi_negative_loss(features, labels, RHO3, n)
    estimate, se = metrics.unsupervised_loss_monte_carlo(
        features,
        labels,
        n,
        40_000,
        torch.Generator().manual_seed(n),
        torch.tensor(RHO3),
    )
    assert abs(float(estimate) - exact) < 4 * float(se)
    # the comparison has power: another ρ gives a clearly different L^N_un
    other = exact_multi_negative_loss(features, labels, [0.2, 0.3, 0.5], n)
    assert abs(float(estimate) - other) > 8 * float(se)


def test_monte_carlo_default_rho_is_the_label_frequencies():
    features, labels = tiny_problem(8, 1.0)
    exact = exact_multi_negative_loss(features, labels, [2 / 7, 3 / 7, 2 / 7], 2)
    estimate, se = metrics.unsupervised_loss_monte_carlo(features, labels, 2, 40_000)
    assert abs(float(estimate) - exact) < 4 * float(se)


def test_monte_carlo_is_deterministic_under_a_seed():
    features, labels = tiny_problem(9, 1.0)
    first = metrics.unsupervised_loss_monte_carlo(
        features, labels, 3, 500, torch.Generator().manual_seed(4)
    )
    second = metrics.unsupervised_loss_monte_carlo(
        features, labels, 3, 500, torch.Generator().manual_seed(4)
    )
    third = metrics.unsupervised_loss_monte_carlo(
        features, labels, 3, 500, torch.Generator().manual_seed(5)
    )
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    assert not torch.equal(first[0], third[0])


def test_monte_carlo_of_zero_features_is_log_n_plus_one():
    labels = labels_with_counts((2, 3, 2))
    estimate, se = metrics.unsupervised_loss_curve(
        torch.zeros(labels.numel(), 2),
        metrics.draw_unsupervised_samples(labels, 6, 50),
    )
    torch.testing.assert_close(
        estimate, torch.log(torch.arange(2, 8, dtype=torch.float64))
    )
    assert float(se.abs().max()) < 1e-7


def test_monte_carlo_rejects_bad_input():
    features, labels = tiny_problem(0, 1.0)
    with pytest.raises(ValueError, match="n_samples"):
        metrics.unsupervised_loss_monte_carlo(features, labels, 2, 1)
    with pytest.raises(ValueError, match="n_negatives"):
        metrics.unsupervised_loss_monte_carlo(features, labels, 0, 10)
    with pytest.raises(ValueError, match="features"):
        metrics.unsupervised_loss_monte_carlo(features[:-1], labels, 2, 10)
    with pytest.raises(ValueError, match="class_probs"):
        metrics.unsupervised_loss_monte_carlo(
            features, labels, 2, 10, class_probs=torch.tensor([0.5, 0.5])
        )
    samples = metrics.draw_unsupervised_samples(labels, 2, 10)
    with pytest.raises(ValueError, match="samples"):
        metrics.unsupervised_loss_curve(features[:3], samples)
    with pytest.raises(ValueError, match="labels"):
        metrics.draw_unsupervised_samples(labels.double(), 2, 10)


# ---------------------------------------------------------------- training and the
# figures' helpers


def indexed_latent(counts=(3, 4, 2)):
    labels = labels_with_counts(counts, seed=2)
    inputs = torch.arange(labels.numel(), dtype=torch.float32)[:, None].repeat(1, 2)
    return EmpiricalClasses(inputs, labels), inputs, labels


def test_contrastive_batches_shapes_and_classes():
    latent, _, labels = indexed_latent()
    sample = multineg.contrastive_batches(
        latent, 2, 5, 7, torch.Generator().manual_seed(0)
    )
    anchor, positive, pool, choice = sample(1)
    assert anchor.shape == positive.shape == (2, 5, 2)
    assert pool.shape == (2, 35, 2) and choice.shape == (2, 5, 7)
    own = torch.arange(35).view(5, 7)
    assert torch.equal(choice, own.expand(2, -1, -1))  # N negatives of its own
    assert torch.equal(labels[anchor[..., 0].long()], labels[positive[..., 0].long()])
    negative_classes = labels[pool[..., 0].long()]
    assert (
        len(set(negative_classes.flatten().tolist())) == 3
    )  # negatives of every class, collisions included
    assert not torch.equal(sample(2)[2], pool)
    with pytest.raises(ValueError, match="n_negatives"):
        multineg.contrastive_batches(latent, 2, 5, 0, torch.Generator())
    with pytest.raises(ValueError, match="pool_size"):
        multineg.contrastive_batches(latent, 2, 5, 7, torch.Generator(), pool_size=6)


def test_pooled_negatives_are_distinct_and_uniform_over_the_pool():
    latent, _, _ = indexed_latent()
    sample = multineg.contrastive_batches(
        latent, 3, 400, 4, torch.Generator().manual_seed(1), pool_size=10
    )
    anchor, positive, pool, choice = sample(1)
    assert pool.shape == (3, 10, 2) and choice.shape == (3, 400, 4)
    ordered = choice.sort(-1).values
    assert bool((ordered[..., 1:] > ordered[..., :-1]).all())  # N distinct entries
    assert int(choice.min()) == 0 and int(choice.max()) == 9
    # each entry is chosen by an anchor with probability N/P = 0.4
    frequency = torch.nn.functional.one_hot(choice, 10).sum(-2).double().mean((0, 1))
    standard_error = (0.4 * 0.6 / 1200) ** 0.5
    assert bool(((frequency - 0.4).abs() < 5 * standard_error).all())


def test_pooled_loss_is_unbiased_for_the_independent_negatives_loss():
    """Distinct entries of an i.i.d. pool are i.i.d. draws from D_neg: the mean pooled
    minibatch loss matches the mean loss with independent negatives (and the Monte Carlo
    L^N_un on the same finite set) within their standard errors."""
    labels = labels_with_counts((40, 50, 30), seed=5)
    inputs = randn(labels.numel(), 3, seed=6)
    latent = EmpiricalClasses(inputs, labels)
    encoder = lambda x: 0.8 * x  # noqa: E731
    values = {}
    for pool_size in (None, 12):
        sample = multineg.contrastive_batches(
            latent, 400, 16, 5, torch.Generator().manual_seed(7), pool_size=pool_size
        )
        losses = torch.stack(
            [
                multineg.contrastive_loss(encoder, [part[s] for part in sample(1)])
                for s in range(400)
            ]
        ).double()
        values[pool_size] = (losses.mean(), losses.std() / 20)
    (a, se_a), (b, se_b) = values[None], values[12]
    assert abs(float(a - b)) < 4 * float((se_a**2 + se_b**2) ** 0.5)
    reference, se_ref = metrics.unsupervised_loss_monte_carlo(
        0.8 * inputs.double(), labels, 5, 200_000, torch.Generator().manual_seed(8)
    )
    assert abs(float(b - reference)) < 4 * float((se_b**2 + se_ref**2) ** 0.5)


def test_contrastive_loss_is_info_nce_of_the_encoder():
    torch.manual_seed(0)
    encoder = MLP(2, (4,), 3).double().requires_grad_(False)
    anchor, positive, pool = (
        randn(6, 2, seed=1),
        randn(6, 2, seed=2),
        randn(9, 2, seed=3),
    )
    choice = torch.randint(0, 9, (6, 4), generator=torch.Generator().manual_seed(4))
    value = multineg.contrastive_loss(encoder, (anchor, positive, pool, choice))
    a, p, n = encoder(anchor), encoder(positive), encoder(pool)[choice]
    scores = torch.cat(
        [(a * p).sum(-1, keepdim=True), torch.einsum("bd,bnd->bn", a, n)], -1
    )
    expected = float((torch.logsumexp(scores, -1) - scores[:, 0]).mean())
    assert float(value) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="batch"):
        multineg.contrastive_loss(encoder, (anchor, positive, pool, choice[:3]))


@pytest.mark.parametrize("n_negatives", [1, 4])
def test_training_with_the_evaluator(n_negatives):
    labels = labels_with_counts((6, 5, 7), seed=3)
    inputs = 2 * torch.eye(3)[labels] + 0.5 * randn(
        labels.numel(), 3, seed=4, dtype=torch.float32
    )
    latent = EmpiricalClasses(inputs, labels)
    history, models = multineg.lemma_runs(
        lambda: MLP(3, (8,), 4),
        latent,
        inputs,
        labels,
        [n_negatives],
        n_seeds=2,
        n_steps=30,
        batch_size=16,
        pool_size=None if n_negatives == 1 else 6,
        checkpoints=[15],
        n_samples=2000,
        lr=1e-2,
        fit_linear=[n_negatives],
    )
    # the book's one history format, N a configuration column; wide gives the records
    assert list(history.columns) == ["step", "seed", "quantity", "value", "N"]
    runs = train.wide(history)
    assert set(runs.columns) >= {
        "N",
        "L_un",
        "L_un_se",
        "L_mu",
        "L_sup",
        "norm_min",
        "norm_max",
        "train_loss",
    }
    assert len(runs) == 6 and (runs.N == n_negatives).all()  # steps 0, 15, 30 × 2
    assert (runs.L_sup <= runs.L_mu).all() and (runs.L_un_se > 0).all()
    assert (runs.norm_min <= runs.norm_max).all() and (runs.norm_min > 0).all()
    first, last = runs[runs.step == 0], runs[runs.step == 30]
    assert (last.L_un.to_numpy() < first.L_un.to_numpy()).all()
    # the checkpoint values are what the module's functions give
    with torch.no_grad():
        features = models[n_negatives](inputs).double()
    rho = metrics.class_frequencies(labels)
    torch.testing.assert_close(
        torch.tensor(last.L_mu.to_numpy()),
        multineg.average_mean_classifier_loss(features, labels, 3, class_probs=rho),
    )
    if n_negatives == 1:  # the Monte Carlo L_un against the exact sum
        exact = metrics.exact_unsupervised_loss(features, labels, rho).numpy()
        assert (abs(last.L_un.to_numpy() - exact) < 4 * last.L_un_se.to_numpy()).all()


def test_add_lemma_bounds():
    runs = pd.DataFrame(
        {"N": [1, 1, 15, 15], "L_un": [0.5, 0.4, 2.0, 1.0], "L_un_se": [0.01] * 4}
    )
    rho = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)
    out = multineg.add_lemma_bounds(runs, rho, confidence=2.0)
    high = runs.L_un + 0.02  # the upper confidence limit, z = 2
    assert set(out.columns) == set(runs.columns) | set(multineg.LEMMA_BOUNDS)
    np.testing.assert_allclose(out.lemma1[:2], high[:2] / 0.2 + math.log(3))
    np.testing.assert_allclose(out.lemma1_no_log[:2], high[:2] / 0.2)
    np.testing.assert_allclose(out.lemma2[2:], high[2:] / coupon.p_cc(15, rho))
    np.testing.assert_allclose(
        out.lemma2_anchor_excluded[2:], high[2:] / coupon.p_cc_anchor_excluded(15, rho)
    )
    assert out.lemma1[2:].isna().all() and out.lemma2[:2].isna().all()
    assert "lemma1" not in runs  # a new frame
    with pytest.raises(ValueError, match="L_un_se"):
        multineg.add_lemma_bounds(runs.drop(columns="L_un_se"), rho)
    with pytest.raises(ValueError, match="confidence"):
        multineg.add_lemma_bounds(runs, rho, confidence=-1.0)


def test_proposition1_grid():
    labels = labels_with_counts((5, 4, 6, 5), seed=6)
    features = randn(2, labels.numel(), 3, seed=7)
    grid = multineg.proposition1_grid(
        features,
        labels,
        [1, 2, 8],
        n_samples=3000,
        generator=torch.Generator().manual_seed(0),
    )
    assert len(grid) == 2 * 3 * 3
    assert set(grid.columns) == {
        "seed",
        "n_negatives",
        "task_size",
        "k",
        "L_mu",
        "L_un",
        "L_un_se",
        "tau_plus",
        "factor",
        "bound",
        "bound_high",
    }
    assert (grid.L_mu <= grid.bound).all() and (grid.bound <= grid.bound_high).all()
    np.testing.assert_allclose(
        grid.bound_high - grid.bound, 4 * grid.factor * grid.L_un_se, rtol=1e-10
    )
    exact = metrics.exact_unsupervised_loss(features, labels, uniform(4))
    for row in grid.itertuples():
        assert row.k == row.task_size - 1 and row.tau_plus == pytest.approx(
            4.0**-row.n_negatives
        )
        expected_mu = multineg.average_mean_classifier_loss(
            features[row.seed], labels, row.task_size
        )
        assert row.L_mu == pytest.approx(float(expected_mu), rel=1e-12)
        assert row.bound == pytest.approx(
            multineg.proposition1_bound(row.L_un, row.n_negatives, row.task_size, 4),
            rel=1e-12,
        )
        assert row.L_un_se > 0
        if row.n_negatives == 1:  # Monte Carlo within 4 standard errors of exact
            assert abs(row.L_un - float(exact[row.seed])) < 4 * row.L_un_se
    with pytest.raises(ValueError, match="n_negatives"):
        multineg.proposition1_grid(features, labels, [])
    with pytest.raises(ValueError, match="features must hold at least one seed"):
        multineg.proposition1_grid(features[..., :0, :, :], labels, [1])


# ---------------------------------------------------------------- Section 4: fixed
# triplets


def _random_triplets(n=6, dim=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(n, dim, generator=g, dtype=torch.float64) for _ in range(3)
    )


def test_triplet_objective_is_the_sum_of_logistic_losses():
    triplets = _random_triplets()
    linear = torch.randn(
        5, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )

    def forward(x):
        return x @ linear

    expected = losses.logistic_loss(*(forward(t) for t in triplets), reduction="sum")
    torch.testing.assert_close(multineg.triplet_objective(forward, triplets), expected)
    # eq. (11) written out: Σᵢ ζ(f(xᵢ)ᵀ(f(xᵢ⁻) − f(xᵢ⁺)))
    a, p, n = (forward(t) for t in triplets)
    written_out = torch.nn.functional.softplus(torch.linalg.vecdot(a, n - p)).sum()
    torch.testing.assert_close(
        multineg.triplet_objective(forward, triplets), written_out
    )


def test_triplet_objective_is_chapter3_triplet_loss_times_the_number_of_triplets():
    x = randn(5, 6, seed=4)
    linear = randn(6, 3, seed=5)

    def forward(inputs):
        return inputs @ linear

    index = multineg.all_triplets(5)
    total = multineg.triplet_objective(
        forward, (x[index[:, 0]], x[index[:, 1]], x[index[:, 2]])
    )
    torch.testing.assert_close(
        total, index.shape[0] * multineg.triplet_loss(forward, (x, index))
    )


def test_triplet_objective_rejects_mismatched_shapes():
    a, p, n = _random_triplets()
    with pytest.raises(ValueError, match="triplets"):
        multineg.triplet_objective(lambda x: x, (a, p[:-1], n))


def test_triplet_evaluator_matches_autograd_and_lemma4():
    triplets = _random_triplets()
    linear = torch.randn(
        5, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64
    )
    outputs = torch.cat(triplets) @ linear  # (3n, d)
    z = outputs.clone().requires_grad_(True)
    n = triplets[0].shape[0]
    objective = torch.nn.functional.softplus(
        torch.linalg.vecdot(z[:n], z[2 * n :] - z[n : 2 * n])
    ).sum()
    (gradient,) = torch.autograd.grad(objective, z)
    result = _triplet_evaluator(triplets)(lambda x: (x @ linear).unsqueeze(0))
    torch.testing.assert_close(result["output_grad_norm"], gradient.norm().unsqueeze(0))
    norms = outputs.norm(dim=-1)
    torch.testing.assert_close(result["norm_min"], norms.min().unsqueeze(0))
    torch.testing.assert_close(result["norm_max"], norms.max().unsqueeze(0))
    per_triplet = losses.logistic_loss(
        outputs[:n], outputs[n : 2 * n], outputs[2 * n :], reduction="none"
    )
    torch.testing.assert_close(result["loss_max"], per_triplet.max().unsqueeze(0))


def test_lemma4_holds_where_it_applies():
    """Outputs z₁ = z₂ = a·e, z₃ = −a·e: u = −2a², so ε is tiny and ε < η/2 = a/2; then
    ℓ ≤ 2ε/η."""
    triplets = _random_triplets(n=4, dim=3)
    direction = torch.nn.functional.normalize(randn(4, 3, seed=3), dim=-1)
    for scale in (2.0, 3.0, 4.0):
        outputs = torch.cat(
            [scale * direction, scale * direction, -scale * direction]
        ).unsqueeze(0)
        result = _triplet_evaluator(triplets)(lambda x, outputs=outputs: outputs)
        assert result["lemma4_applies"].item() == 1.0
        assert result["norm_min"].item() == pytest.approx(scale)
        assert result["loss_max"].item() == pytest.approx(
            math.log1p(math.exp(-2 * scale**2))
        )
        assert result["loss_max"].item() <= result["lemma4_bound"].item()


# ---------------------------------------------------------------- Section 4: Theorem 1
# experiment


def _sphere_triplets(n=4, dim=12, seed=7):
    """n triplets of Gaussian directions on the unit sphere, float32."""
    points = torch.nn.functional.normalize(randn(3 * n, dim, seed=seed), dim=-1)
    return tuple(points.float().reshape(3, n, dim))


def _single_seed_descent(triplets, width, lr_constant, seed, n_steps):
    """Plain PyTorch gradient descent of one DeepReLU seed on L̂_un: the losses at
    steps 0 … n_steps."""
    from ccl_helpers.models import DeepReLU

    torch.manual_seed(seed)
    model = DeepReLU(triplets[0].shape[1], width, 1, 4)
    anchor, positive, negative = triplets
    losses_seen = []
    for _ in range(n_steps + 1):
        z1, z2, z3 = model(anchor), model(positive), model(negative)
        loss = torch.nn.functional.softplus((z1 * (z3 - z2)).sum(-1)).sum()
        losses_seen.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr_constant / width * p.grad
    return losses_seen


def test_descent_to_targets_steps_match_a_plain_descent():
    triplets = _sphere_triplets()
    epsilons = [0.5, 0.05]
    outcome = _descent_to_targets(
        triplets,
        32,
        lr_constant=4.0,
        epsilons=epsilons,
        grad_epsilons=[1.0],
        max_steps=400,
        n_seeds=2,
        out_features=4,
        checkpoints=400,  # every step is recorded: steps are exact
    )
    steps = outcome.steps
    assert len(steps) == 2 * 3
    assert set(steps["target"]) == {"loss", "output_grad_norm"}
    for seed in (0, 1):
        plain = np.array(_single_seed_descent(triplets, 32, 4.0, seed, 400))
        for epsilon in epsilons:
            expected = int(np.argmax(plain <= epsilon))
            assert plain[expected] <= epsilon
            row = steps[
                (steps.seed == seed)
                & (steps.target == "loss")
                & (steps.threshold == epsilon)
            ]
            assert row["steps"].item() == expected
    loss_rows = steps[steps.target == "loss"].sort_values(["seed", "threshold"])
    assert (loss_rows["relative_movement"] > 0).all()
    assert list(outcome.history.columns) == ["step", "seed", "quantity", "value"]
    history = train.wide(outcome.history)
    assert {"loss_max", "output_grad_norm", "relative_movement"} <= set(history)
    # the smallest target stops the descent
    assert history["step"].max() == steps["steps"].max()


def test_descent_to_targets_leaves_unreached_targets_missing():
    outcome = _descent_to_targets(
        _sphere_triplets(),
        16,
        lr_constant=1.0,
        epsilons=[1e-9],
        max_steps=3,
        n_seeds=2,
        out_features=4,
    )
    assert outcome.steps["steps"].isna().all()
    assert outcome.history["step"].max() == 3


def test_descent_sweep_adds_the_parameter_and_repeats_single_runs():
    triplets = _sphere_triplets()
    common = dict(epsilons=[0.3], max_steps=200, n_seeds=2, out_features=4)
    swept = multineg.descent_sweep(
        "width", [8, 32], lambda m: (triplets, m, 128.0 / m), **common
    )
    assert list(swept.steps["width"].unique()) == [8, 32]
    assert list(swept.history["width"].unique()) == [8, 32]
    assert list(swept.history.columns) == [
        "step",
        "seed",
        "quantity",
        "value",
        "width",
        "lr_constant",
    ]
    assert list(swept.steps["lr_constant"].unique()) == [16.0, 4.0]
    alone = _descent_to_targets(triplets, 32, lr_constant=4.0, **common)
    pd.testing.assert_frame_equal(
        swept.steps[swept.steps.width == 32]
        .drop(columns=["width", "lr_constant"])
        .reset_index(drop=True),
        alone.steps,
    )


def test_lazy_width_uses_the_upper_confidence_bound_and_every_wider_width():
    movement = {
        16: [0.5, 0.6, 0.7],
        32: [0.05, 0.06, 0.07],  # lazy, but 64 is not: not m*
        64: [0.05, 0.10, 0.15],  # mean 0.1, upper bound above 0.1
        128: [0.06, 0.07, 0.08],  # upper bound 0.07 + 2.92 · 0.01/√3 = 0.087
        256: [0.01, 0.02, 0.03],
    }
    steps = pd.DataFrame(
        [(m, s, v) for m, values in movement.items() for s, v in enumerate(values)],
        columns=["width", "seed", "relative_movement"],
    )
    assert multineg.lazy_width(steps) == 128
    assert multineg.lazy_width(steps, threshold=0.085) == 256
    assert multineg.lazy_width(steps, threshold=0.5, confidence=0.5) == 32
    assert multineg.lazy_width(steps, threshold=0.01) is None
    unreached = steps.assign(
        relative_movement=steps.relative_movement.where(steps.index != 13)
    )  # a run at m = 256 that never reached the target
    assert multineg.lazy_width(unreached) is None


# ---------------------------------------------------------------- the figures of
# Section 3


def _lemma_records():
    steps, seeds = [0, 5, 10], [0, 1, 2]
    rows = [
        {"data": name, "N": n, "step": t, "seed": s, "L_un": 2.0 - 0.1 * t + 0.01 * s}
        for name in ("FashionMNIST", "MNIST")
        for n in (1, 35)
        for t in steps
        for s in seeds
    ]
    runs = pd.DataFrame(rows).assign(
        L_un_se=0.01, L_mu=lambda r: 0.5 * r.L_un, L_sup=lambda r: 0.3 * r.L_un
    )
    return multineg.add_lemma_bounds(runs, uniform(10))


def test_draw_lemma_curves_one_colour_per_quantity_and_dashed_bounds():
    import matplotlib.pyplot as plt

    from ccl_helpers import plotting

    runs = _lemma_records()
    fig, ax = plt.subplots()
    one = runs[(runs.data == "MNIST") & (runs.N == 1)]
    multineg.draw_lemma_curves(ax, one, multineg.LEMMA1_CURVES)
    means = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in means] == [
        label for _, label, _ in multineg.LEMMA1_CURVES
    ]
    expected = ["L_un", "L_mu", "L_sup", "lemma1_bound", "lemma1_bound_no_log"]
    assert [line.get_color() for line in means] == [plotting.color(c) for c in expected]
    assert [line.get_linestyle() for line in means] == ["-"] * 3 + ["--"] * 2
    assert len(ax.collections) == 3  # ±1 s.e. bands of the three losses
    np.testing.assert_allclose(means[1].get_ydata(), one.groupby("step").L_mu.mean())
    plt.close(fig)


def test_draw_stored_runs_from_a_paper_results_file(tmp_path, monkeypatch):
    from ccl_helpers import results

    monkeypatch.setenv("CCL_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("CCL_SCALE", "paper")
    results.save_paper_results("02_multiple_negatives", {"runs": _lemma_records()})
    stored = results.load_paper_results("02_multiple_negatives")
    fig = multineg.draw_stored_runs(pd.DataFrame(stored["numbers"]["runs"]))
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == [
        "FashionMNIST, N = 1",
        "FashionMNIST, N = 35",
        "MNIST, N = 1",
        "MNIST, N = 35",
    ]
    assert [ax.get_yscale() for ax in visible] == ["linear", "log"] * 2
    with pytest.raises(ValueError, match="none of"):
        multineg.draw_stored_runs(_lemma_records(), negatives=(15,))
    with pytest.raises(ValueError, match="data"):
        multineg.draw_stored_runs(_lemma_records().drop(columns="data"))


# ---------------------------------------------------------------- the chapter's claims


def _chapter_labels():
    import json
    from pathlib import Path

    notebook = Path(__file__).parents[1] / "book" / "02_multiple_negatives.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    lines = [
        line.strip()
        for cell in cells
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
    ]
    return {
        line[1:-2] for line in lines if line.startswith("(") and line.endswith(")=")
    }


def test_claims_are_valid_keyed_and_point_at_sections_of_the_chapter():
    from ccl_helpers.verdicts import Claim

    claims = multineg.CLAIMS
    assert len(claims) == len({claim.key for claim in claims.values()}) == 24
    labels = _chapter_labels()
    for key, claim in claims.items():
        assert isinstance(claim, Claim) and claim.key == key
        assert claim.section in labels, (key, claim.section)
        # a scope holds only the fields the chapter fills
        scope = claim.scope.format(lemma="L", descent="D")
        assert scope and "{" not in scope and "}" not in scope
        if claim.expected == "equal":
            assert claim.margin is not None and claim.margin_reason
    assert {c.expected for c in claims.values()} == {"greater", "less", "equal"}


def test_claims_equal_claims_state_the_predicted_exponents():
    claims = multineg.CLAIMS
    assert claims["lazy_movement"].null == -1.0
    assert claims["steps_free_of_width"].null == 0.0
    for key in ("steps_epsilon", "steps_gradient", "steps_delta"):
        assert claims[key].expected == "greater" and claims[key].null == -2.0


def test_seed_summary_matches_mean_and_standard_error():
    frame = pd.DataFrame(
        {
            "width": [1, 1, 1, 2, 2, 2],
            "seed": [0, 1, 2, 0, 1, 2],
            "steps": [10.0, 12.0, 14.0, np.nan, 5.0, np.nan],
            "movement": [0.5, 0.7, 0.9, np.nan, np.nan, np.nan],
        }
    )
    table = multineg.seed_summary(frame, "width", ["steps", "movement"])
    assert list(table.columns) == ["steps", "movement"]
    assert table.loc[1, "steps"] == "12.0 ± 1.2"  # s.e. 2/√3
    assert table.loc[1, "movement"] == "0.70 ± 0.12"
    assert table.loc[2, "steps"] == "5 (one seed)"
    assert table.loc[2, "movement"] == "—"
    two_keys = multineg.seed_summary(frame.assign(n=1), ["width", "n"], ["steps"])
    assert two_keys.index.names == ["width", "n"]


def test_seed_summary_rejects_bad_input():
    frame = pd.DataFrame({"width": [1, 1, 2], "seed": [0, 1, 0], "steps": [1.0, 2, 3]})
    with pytest.raises(ValueError, match="two seeds"):
        multineg.seed_summary(frame, "width", ["steps"])
    with pytest.raises(ValueError, match="columns"):
        multineg.seed_summary(frame, "width", ["missing"])
    with pytest.raises(ValueError, match="by and columns"):
        multineg.seed_summary(frame, [], ["steps"])
    with pytest.raises(ValueError, match="frame"):
        multineg.seed_summary({"width": [1]}, "width", ["steps"])


def test_width_scaled_targets_keep_the_widths_paired_with_product_over_m():
    steps = pd.DataFrame(
        [(m, eps, 1.0) for m in (4, 8, 16) for eps in (0.1, 0.2, 0.4, 0.8)],
        columns=["width", "threshold", "steps"],
    )
    kept = multineg.width_scaled_targets(steps, 1.6)
    assert sorted(zip(kept.width, kept.threshold)) == [(4, 0.4), (8, 0.2), (16, 0.1)]
    assert multineg.width_scaled_targets(steps, 100.0).empty
    with pytest.raises(ValueError, match="product"):
        multineg.width_scaled_targets(steps, 0.0)
    with pytest.raises(ValueError, match="threshold"):
        multineg.width_scaled_targets(steps.drop(columns="threshold"), 1.6)


def test_lazy_values_keep_the_values_lazy_in_every_seed():
    frame = pd.DataFrame(
        {
            "seed": [0, 1] * 4,
            "n": [2, 2, 4, 4, 8, 8, 16, 16],
            "steps": [0.0, 3.0, 5.0, 6.0, 9.0, 9.0, np.nan, 20.0],
            "relative_movement": [0.0, 0.01, 0.02, 0.05, 0.05, 0.2, np.nan, 0.01],
        }
    )
    # n = 2: a target met at step 0; n = 8: one seed moved 0.2; n = 16: unreached
    assert list(multineg.lazy_values(frame, "n", 0.1)["n"].unique()) == [4]
    assert list(multineg.lazy_values(frame, "n", 0.3)["n"].unique()) == [4, 8]
    with pytest.raises(ValueError, match="threshold"):
        multineg.lazy_values(frame, "n", -1.0)
    with pytest.raises(ValueError, match="relative_movement"):
        multineg.lazy_values(frame.drop(columns="relative_movement"), "n", 0.1)


def test_endpoint_ratio_is_the_last_over_the_first_value_per_seed():
    frame = pd.DataFrame(
        {"seed": [0, 1, 0, 1, 0, 1], "n": [8, 8, 2, 2, 4, 4], "y": [6, 9, 2, 3, 1, 1.0]}
    )
    ratio = multineg.endpoint_ratio(frame, "n", "y")
    assert ratio.to_dict() == {0: 3.0, 1: 3.0}
    with pytest.raises(ValueError, match="two values"):
        multineg.endpoint_ratio(frame[frame.n == 2], "n", "y")
    with pytest.raises(ValueError, match="finite"):
        multineg.endpoint_ratio(frame.assign(y=frame.y.where(frame.n != 8)), "n", "y")


def test_progress_gap_against_a_hand_computation():
    runs = pd.DataFrame(
        {
            "N": [1] * 4 + [5] * 4,
            "seed": [0] * 8,
            "step": [0, 1, 10, 100] * 2,
            "L_un": [4.0, 3.0, 2.0, 0.0, 2.0, 1.5, 1.0, 0.0],
            "L_mu": [2.0, 1.0, 1.0, 0.0, 3.0, 2.25, 1.5, 0.0],
        }
    )
    # N = 1: shares (0.25, 0.5) and (0.5, 0.5): mean gap −0.125; N = 5: equal shares
    gap = multineg.progress_gap(pd.concat([runs, runs.assign(seed=1)]))
    np.testing.assert_allclose(gap.to_numpy(), [-0.0625, -0.0625])
    same = runs.assign(L_mu=runs.L_un)
    assert multineg.progress_gap(same).item() == 0.0
    with pytest.raises(ValueError, match="fall"):
        multineg.progress_gap(runs.assign(L_mu=1.0))
    with pytest.raises(ValueError, match="3 checkpoints"):
        multineg.progress_gap(runs[runs.step < 10])


# ---------------------------------------------------------------- bad calls

RHO = uniform(3)
LABELS = labels_with_counts((2, 3, 2))
FEATURES = randn(LABELS.numel(), 2)
LATENT, LATENT_INPUTS, LATENT_LABELS = indexed_latent()
BATCH = (
    randn(4, 3, dtype=torch.float32),
    randn(4, 3, seed=1, dtype=torch.float32),
    randn(5, 3, seed=2, dtype=torch.float32),
    torch.tensor([[0, 1], [2, 3], [4, 0], [1, 2]]),
)
TRIPLETS = _sphere_triplets()
INDEX_DATA = (randn(4, 3), multineg.all_triplets(4))
RUNS = pd.DataFrame({"N": [1, 15], "L_un": [0.5, 2.0], "L_un_se": [0.01, 0.01]})
SEEDS = pd.DataFrame({"width": [1, 1], "seed": [0, 1], "steps": [1.0, 2.0]})
SWEEP = pd.DataFrame(
    {
        "seed": [0, 1, 0, 1],
        "n": [2, 2, 4, 4],
        "steps": [3.0, 4.0, 5.0, 6.0],
        "relative_movement": [0.01, 0.02, 0.2, 0.01],
    }
)
MOVEMENT = pd.DataFrame(
    {"width": [4, 4, 8, 8], "relative_movement": [0.2, 0.3, 0.01, 0.02]}
)
GAP_RUNS = pd.DataFrame(
    {
        "N": [1] * 6,
        "seed": [0, 0, 0, 1, 1, 1],
        "step": [0, 1, 2] * 2,
        "L_un": [3.0, 2.0, 1.0, 3.0, 2.5, 1.0],
        "L_mu": [2.0, 1.5, 1.0, 2.0, 1.2, 1.0],
    }
)
RUN = dict(
    n_seeds=1,
    n_steps=2,
    batch_size=2,
    pool_size=None,
    checkpoints=[1],
    n_samples=4,
    fit_linear=[],
)


DESCENT = dict(epsilons=[0.1], max_steps=2, out_features=4)


def _case(value):
    """A case of the sweep: 4 triplets on the sphere, width 8, ν = 1/m."""
    return TRIPLETS, 8, 1.0


def _mismatched_case(value):
    """A case whose negatives hold one triplet fewer than its anchors."""
    return (*TRIPLETS[:2], TRIPLETS[2][:-1]), 8, 1.0


def _encoder():
    return MLP(2, (3,), 2)


def _lemma_runs(
    match, make_encoder=_encoder, eval_inputs=None, negatives=(1,), **changes
):
    """A bad call of multineg.lemma_runs: the valid one with ``changes``."""
    eval_inputs = torch.zeros(7, 2) if eval_inputs is None else eval_inputs
    return bad_call(
        multineg.lemma_runs,
        match,
        make_encoder,
        LATENT,
        eval_inputs,
        LABELS,
        list(negatives),
        **{**RUN, **changes},
    )


BAD_CALLS = [
    # the bounds
    bad_call(multineg.lemma1_bound, "unsupervised_loss", "x", RHO),
    bad_call(multineg.lemma1_bound, "unsupervised_loss", math.nan, RHO),
    bad_call(multineg.lemma1_bound, "class_probs", 1.0, [0.5, 0.5, 0.0]),
    bad_call(multineg.lemma2_bound, "n_negatives", 1.0, -2, RHO),
    bad_call(multineg.lemma2_bound, "n_negatives", 1.0, 2.5, RHO),
    bad_call(multineg.proposition1_bound, "task_size", 1.0, 1, 1, 5),
    bad_call(multineg.proposition1_bound, "task_size", 1.0, 1, 6, 5),
    bad_call(multineg.proposition1_bound, "n_negatives", 1.0, 0, 2, 5),
    bad_call(multineg.proposition1_bound, "n_classes", 1.0, 1, 2, 1),
    bad_call(multineg.proposition1_bound, "unsupervised_loss", math.nan, 1, 2, 5),
    bad_call(
        multineg.proposition1_part1_bound,
        "unsupervised_loss",
        torch.tensor([1.0, math.inf]),
        2,
        5,
    ),
    bad_call(multineg.proposition1_part1_bound, "task_size", 1.0, 2.5, 5),
    bad_call(
        multineg.proposition1_part1_bound, "task_size", 1.0, 2.5, 5, as_printed=True
    ),
    bad_call(multineg.proposition1_factor, "n_classes", 1, 2, 0),
    bad_call(multineg.proposition1_factor, "n_negatives", 0, 2, 5),
    # the exact mean-classifier loss and Proposition 1's grid
    bad_call(multineg.average_mean_classifier_loss, "task_size", FEATURES, LABELS, 1),
    bad_call(multineg.average_mean_classifier_loss, "task_size", FEATURES, LABELS, 4),
    bad_call(
        multineg.average_mean_classifier_loss, "features", FEATURES[:-1], LABELS, 2
    ),
    bad_call(
        multineg.average_mean_classifier_loss,
        "means",
        FEATURES,
        LABELS,
        2,
        means=randn(3, 5),
    ),
    bad_call(multineg.proposition1_grid, "n_negatives", FEATURES, LABELS, []),
    bad_call(
        multineg.proposition1_grid, "n_samples", FEATURES, LABELS, [1], n_samples=1
    ),
    bad_call(
        multineg.proposition1_grid,
        "generator",
        FEATURES,
        LABELS,
        [1],
        generator=0,
    ),
    bad_call(
        multineg.proposition1_grid,
        "features must hold at least one seed",
        FEATURES[None][:0],
        LABELS,
        [1],
    ),
    # training with N negatives
    bad_call(
        multineg.contrastive_batches, "n_negatives", LATENT, 2, 5, 0, torch.Generator()
    ),
    bad_call(
        multineg.contrastive_batches,
        "pool_size",
        LATENT,
        2,
        5,
        7,
        torch.Generator(),
        pool_size=6,
    ),
    bad_call(multineg.contrastive_batches, "latent", LATENT_INPUTS, 2, 5, 7, None),
    bad_call(multineg.contrastive_batches, "generator", LATENT, 2, 5, 7, 0),
    bad_call(
        multineg.contrastive_loss, "batch", lambda x: x, (*BATCH[:3], BATCH[3][:3])
    ),
    bad_call(
        multineg.contrastive_loss,
        r"batch\[3\]",
        lambda x: x,
        (*BATCH[:3], BATCH[3].double()),
    ),
    bad_call(
        multineg.contrastive_loss, "batch must be a tuple of 4", lambda x: x, BATCH[:3]
    ),
    bad_call(multineg.contrastive_loss, "forward", BATCH[0], BATCH),
    _lemma_runs("negatives", negatives=[]),
    _lemma_runs("negatives", negatives=[0]),
    _lemma_runs(
        "eval_inputs must have the size of eval_labels", eval_inputs=torch.zeros(4, 2)
    ),
    _lemma_runs("eval_inputs must be finite", eval_inputs=torch.full((7, 2), math.nan)),
    _lemma_runs("make_encoder", make_encoder="MLP"),
    _lemma_runs("n_samples", n_samples=1),
    _lemma_runs("checkpoints", checkpoints=[5]),
    bad_call(multineg.add_lemma_bounds, "L_un_se", RUNS.drop(columns="L_un_se"), RHO),
    bad_call(multineg.add_lemma_bounds, "confidence", RUNS, RHO, confidence=-1.0),
    # the figures
    bad_call(
        multineg.draw_lemma_curves,
        "runs lacks the columns",
        None,
        RUNS,
        multineg.LEMMA2_CURVES,
    ),
    bad_call(multineg.draw_lemma_curves, "curves", None, RUNS, "LEMMA1_CURVES"),
    bad_call(multineg.draw_stored_runs, "data", RUNS),
    # Section 4: the fixed triplets and Theorem 1's experiment
    bad_call(
        multineg.triplet_objective,
        "triplets",
        lambda x: x,
        (*TRIPLETS[:2], TRIPLETS[2][:-1]),
    ),
    bad_call(multineg.triplet_objective, "forward", TRIPLETS[0], TRIPLETS),
    bad_call(multineg.descent_sweep, "values", "width", [], _case, **DESCENT),
    bad_call(multineg.descent_sweep, "case", "width", [8], "case", **DESCENT),
    bad_call(
        multineg.descent_sweep,
        "epsilons",
        "width",
        [8],
        _case,
        **{**DESCENT, "epsilons": []},
    ),
    bad_call(
        multineg.descent_sweep,
        "grad_epsilons",
        "width",
        [8],
        _case,
        grad_epsilons=[-1.0],
        **DESCENT,
    ),
    bad_call(
        multineg.descent_sweep,
        "depth must be an integer ≥ 1, got 0",
        "width",
        [8],
        _case,
        depth=0,
        **DESCENT,
    ),
    bad_call(
        multineg.descent_sweep, "triplets", "width", [8], _mismatched_case, **DESCENT
    ),
    bad_call(
        multineg.descent_sweep,
        "width",
        "width",
        [8],
        lambda m: (TRIPLETS, 0, 1.0),
        **DESCENT,
    ),
    bad_call(
        multineg.descent_sweep,
        "lr_constant",
        "width",
        [8],
        lambda m: (TRIPLETS, 8, 0.0),
        **DESCENT,
    ),
    bad_call(multineg.lazy_width, "two seeds", MOVEMENT.iloc[[0, 2]]),
    bad_call(multineg.lazy_width, "columns", MOVEMENT.drop(columns="width")),
    bad_call(multineg.lazy_width, "threshold", MOVEMENT, threshold=-1.0),
    bad_call(multineg.lazy_width, "confidence", MOVEMENT, confidence=1.0),
    bad_call(
        multineg.width_scaled_targets,
        "product",
        SWEEP.rename(columns={"n": "width", "steps": "threshold"}),
        0.0,
    ),
    bad_call(multineg.width_scaled_targets, "threshold", SWEEP, 1.6),
    bad_call(multineg.lazy_values, "threshold", SWEEP, "n", -1.0),
    bad_call(
        multineg.lazy_values,
        "relative_movement",
        SWEEP.drop(columns="relative_movement"),
        "n",
        0.1,
    ),
    bad_call(multineg.lazy_values, "named by x", SWEEP, "width", 0.1),
    bad_call(multineg.endpoint_ratio, "two values", SWEEP[SWEEP.n == 2], "n", "steps"),
    bad_call(
        multineg.endpoint_ratio,
        "finite",
        SWEEP.assign(steps=SWEEP.steps.where(SWEEP.n != 4)),
        "n",
        "steps",
    ),
    # the chapter's summaries
    bad_call(multineg.progress_gap, "fall", GAP_RUNS.assign(L_mu=1.0)),
    bad_call(multineg.progress_gap, "3 checkpoints", GAP_RUNS[GAP_RUNS.step < 2]),
    bad_call(multineg.progress_gap, "L_mu", GAP_RUNS.drop(columns="L_mu")),
    bad_call(multineg.seed_summary, "two seeds", SEEDS.iloc[:1], "width", ["steps"]),
    bad_call(multineg.seed_summary, "columns", SEEDS, "width", ["missing"]),
    bad_call(multineg.seed_summary, "by and columns", SEEDS, [], ["steps"]),
    bad_call(multineg.seed_summary, "frame", {"width": [1]}, "width", ["steps"]),
    # the shared encoder on index triplets
    bad_call(multineg.all_triplets, "n must", 1),
    bad_call(multineg.all_triplets, "device", 4, "bogus"),
    bad_call(
        multineg.triplet_loss,
        r"data\[1\], the triplets",
        lambda x: x,
        (INDEX_DATA[0], INDEX_DATA[1][:, :2]),
    ),
    bad_call(
        multineg.triplet_loss,
        r"data\[1\]",
        lambda x: x,
        (INDEX_DATA[0], INDEX_DATA[1].double()),
    ),
    bad_call(multineg.triplet_loss, "forward", INDEX_DATA[0], INDEX_DATA),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
