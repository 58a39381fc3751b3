"""Tests of ccl_helpers.curl (Arora et al. 2019): the bound, the lemma L_sup ≤ L_mu ≤
bound, the block loss, the batch samplers; the k-negative lemma (collision terms
against enumeration, closed forms and Monte Carlo; the lemma verified exactly on a tiny
enumerated distribution); the block losses against a naive loop; the downstream
classifiers; the supervised baseline with a grid and early stopping."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from bad_calls import bad_call, lacking_device
from conftest import labels_with_counts, naive_unsupervised_loss, randn

from ccl_helpers import curl, metrics
from ccl_helpers.curl._blocks import _block_losses, _BlockSamples, _draw_block_samples
from ccl_helpers.curl._k_negatives import (
    _collision_terms,
    _negative_counts,
    _tuple_mean_classifier_loss,
)
from ccl_helpers.data import EmpiricalClasses, GaussianClasses
from ccl_helpers.losses import logistic_loss
from ccl_helpers.models import MLP, Classifier
from ccl_helpers.train import StackedModel, train
from ccl_helpers.verdicts import Claim, Verdicts

RHO = torch.tensor([0.5, 0.2, 0.3], dtype=torch.float64)


# ---------------------------------------------------------------- the bound


@pytest.mark.parametrize("loss, tau", [(0.9, 0.0), (0.9, 0.38), (2.5, 0.1), (0.7, 0.5)])
def test_mean_classifier_bound_formula(loss, tau):
    expected = (loss - tau * math.log(2)) / (1 - tau)
    assert curl.mean_classifier_bound(loss, tau) == pytest.approx(expected, rel=1e-14)
    tensor = curl.mean_classifier_bound(
        torch.tensor([loss, 2 * loss], dtype=torch.float64), tau
    )
    torch.testing.assert_close(
        tensor,
        torch.tensor(
            [expected, (2 * loss - tau * math.log(2)) / (1 - tau)], dtype=torch.float64
        ),
    )


def test_bound_of_the_trivial_loss_is_log_2():
    # f = 0 gives L_un = log 2, and the bound is then log 2 = L_mu for every τ
    for tau in (0.0, 0.25, 0.9):
        assert curl.mean_classifier_bound(math.log(2), tau) == pytest.approx(
            math.log(2), rel=1e-12
        )


@pytest.mark.parametrize("tau", [-0.1, 1.0, 1.5])
def test_mean_classifier_bound_rejects_bad_tau(tau):
    with pytest.raises(ValueError, match="tau"):
        curl.mean_classifier_bound(1.0, tau)


# ---------------------------------------------------------------- the lemma


@pytest.mark.parametrize("scale", [0.05, 0.5, 1.0, 3.0])
def test_lemma_holds_on_random_features(scale):
    labels = labels_with_counts((5, 8, 3, 6), seed=11)
    features = scale * randn(3, labels.numel(), 4, seed=12)
    sides = curl.lemma_quantities(features, labels, max_iter=200)
    assert set(sides) == {"L_un", "L_mu", "L_sup", "bound", "accuracy_mu"}
    for value in sides.values():
        assert value.shape == (3,) and bool(torch.isfinite(value).all())
    assert bool((sides["L_sup"] <= sides["L_mu"] + 1e-6).all())
    assert bool((sides["L_mu"] <= sides["bound"] + 1e-10).all())
    assert bool((sides["L_sup"] >= 0).all())
    # the pieces are what they claim to be
    rho = torch.tensor([5, 8, 3, 6], dtype=torch.float64) / 22
    tau = float((rho**2).sum())
    for s in range(3):
        l_un = naive_unsupervised_loss(features[s], labels, rho)
        assert float(sides["L_un"][s]) == pytest.approx(l_un, rel=1e-10)
        assert float(sides["bound"][s]) == pytest.approx(
            (l_un - tau * math.log(2)) / (1 - tau), rel=1e-10
        )
    mean = metrics.mean_classifier(features, labels, task_size=2)
    torch.testing.assert_close(sides["L_mu"], mean["loss"])
    torch.testing.assert_close(sides["accuracy_mu"], mean["accuracy"])


def test_lemma_heldout_fit_uses_the_rows_of_one_multiclass_head():
    labels = labels_with_counts((5, 8, 3, 6), seed=11)
    features = randn(2, labels.numel(), 4, seed=12)
    fit_labels = labels_with_counts((7, 7, 7, 7), seed=13)
    fit_features = randn(2, fit_labels.numel(), 4, seed=14)
    sides = curl.lemma_quantities(
        features, labels, fit_linear=False, heldout_fit=(fit_features, fit_labels)
    )
    assert set(sides) == {"L_un", "L_mu", "bound", "accuracy_mu", "L_sup_heldout"}
    # the four-way head, then each binary task's loss written out with its two rows
    head = metrics.fit_linear_classifiers(
        fit_features, fit_labels, torch.tensor([[0, 1, 2, 3]])
    )[:, 0]
    rho = metrics.class_frequencies(labels)
    for s in range(2):
        total = weight = 0.0
        for c1, c2 in itertools.combinations(range(4), 2):
            p = float(rho[c1] * rho[c2])
            w = head[s, c2] - head[s, c1]
            f1, f2 = features[s, labels == c1], features[s, labels == c2]
            loss = 0.5 * F.softplus(f1 @ w).mean() + 0.5 * F.softplus(-f2 @ w).mean()
            total, weight = total + p * float(loss), weight + p
        found = float(sides["L_sup_heldout"][s])
        assert found == pytest.approx(total / weight, rel=1e-9)
    # one W per task cannot beat the task's own best fit on this distribution
    in_sample = curl.lemma_quantities(features, labels)["L_sup"]
    assert bool((sides["L_sup_heldout"] >= in_sample - 1e-6).all())
    with pytest.raises(ValueError, match="fit_features"):
        curl.lemma_quantities(
            features, labels, heldout_fit=(fit_features[..., :3], fit_labels)
        )


def test_lemma_holds_on_a_random_encoder_of_digits():
    from ccl_helpers.data import load_digits

    images, labels = load_digits()
    keep = labels < 4
    images, labels = images[keep][:60], labels[keep][:60]
    model = StackedModel(lambda: MLP(64, (16,), 6), n_seeds=2, seed=3)
    with torch.no_grad():
        features = model(images)
    sides = curl.lemma_quantities(features, labels, max_iter=100)
    assert bool((sides["L_sup"] <= sides["L_mu"] + 1e-6).all())
    assert bool((sides["L_mu"] <= sides["bound"] + 1e-10).all())


def test_lemma_is_tight_for_the_zero_encoder():
    labels = labels_with_counts((3, 4, 5))
    sides = curl.lemma_quantities(torch.zeros(labels.numel(), 2), labels, max_iter=20)
    for name in ("L_un", "L_mu", "L_sup", "bound"):
        assert float(sides[name]) == pytest.approx(math.log(2), rel=1e-6)


# ----------------------------------------------- the block loss and the supervised loss


def naive_block_loss(forward, anchor, positives, negatives):
    losses = []
    for a, ps, ns in zip(anchor, positives, negatives):
        fa = forward(a[None])[0]
        mean_pos = sum(forward(p[None])[0] for p in ps) / len(ps)
        mean_neg = sum(forward(n[None])[0] for n in ns) / len(ns)
        losses.append(
            math.log1p(math.exp(float((fa @ (mean_neg - mean_pos)).detach())))
        )
    return sum(losses) / len(losses)


@pytest.fixture
def encoder():
    torch.manual_seed(0)
    return MLP(6, (5,), 3).double().requires_grad_(False)


def test_block_loss_with_one_positive_and_negative_is_the_logistic_loss(encoder):
    anchor, positive, negative = (
        randn(9, 2, 3, seed=1),
        randn(9, 2, 3, seed=2),
        randn(9, 2, 3, seed=3),
    )
    value = curl.block_contrastive_loss(
        encoder, (anchor, positive[:, None], negative[:, None])
    )
    torch.testing.assert_close(
        value, logistic_loss(encoder(anchor), encoder(positive), encoder(negative))
    )
    expected = naive_block_loss(encoder, anchor, positive[:, None], negative[:, None])
    assert float(value) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("block_size", [2, 5])
def test_block_loss_matches_naive(encoder, block_size):
    anchor = randn(7, 6, seed=4)
    positives, negatives = (
        randn(7, block_size, 6, seed=5),
        randn(7, block_size, 6, seed=6),
    )
    value = curl.block_contrastive_loss(encoder, (anchor, positives, negatives))
    assert value.shape == ()
    assert float(value) == pytest.approx(
        naive_block_loss(encoder, anchor, positives, negatives), rel=1e-10
    )


@pytest.mark.parametrize(
    "shapes",
    [
        ((4, 6), (4, 2, 6), (4, 3, 6)),
        ((4, 6), (3, 2, 6), (3, 2, 6)),
        ((4, 6), (4, 6), (4, 6)),
        ((4, 6), (4, 2, 6), (4, 2, 5)),
    ],
)
def test_block_loss_shape_mismatch_raises(encoder, shapes):
    with pytest.raises(ValueError, match="positives"):
        curl.block_contrastive_loss(
            encoder, tuple(torch.zeros(s, dtype=torch.float64) for s in shapes)
        )


def test_cross_entropy_loss_matches_naive(encoder):
    inputs, labels = randn(8, 6, seed=7), torch.tensor([0, 2, 1, 1, 0, 2, 2, 0])
    logits = encoder(inputs).tolist()
    expected = (
        sum(
            math.log(sum(math.exp(z) for z in row)) - row[y]
            for row, y in zip(logits, labels.tolist())
        )
        / 8
    )
    assert float(curl.cross_entropy_loss(encoder, (inputs, labels))) == pytest.approx(
        expected, rel=1e-10
    )


# ---------------------------------------------------------------- batch samplers


def indexed_latent(counts=(3, 4, 2)):
    labels = labels_with_counts(counts, seed=2)
    inputs = torch.arange(labels.numel(), dtype=torch.float32)[:, None, None].repeat(
        1, 2, 2
    )
    return EmpiricalClasses(inputs, labels), inputs, labels


@pytest.mark.parametrize("block_size", [1, 3])
def test_contrastive_batches(block_size):
    latent, _, labels = indexed_latent()
    sample = curl.contrastive_batches(
        latent,
        n_seeds=2,
        batch_size=5,
        generator=torch.Generator().manual_seed(0),
        block_size=block_size,
    )
    anchor, positives, negatives = sample(1)
    assert anchor.shape == (2, 5, 2, 2)
    assert positives.shape == negatives.shape == (2, 5, block_size, 2, 2)
    anchor_class = labels[anchor[..., 0, 0].long()]
    assert torch.equal(
        labels[positives[..., 0, 0].long()],
        anchor_class[..., None].expand(-1, -1, block_size),
    )
    negative_class = labels[negatives[..., 0, 0].long()]
    assert bool(
        (negative_class == negative_class[..., :1]).all()
    )  # one class per negative block
    second = sample(2)
    assert not torch.equal(second[0], anchor)  # fresh draws at every step


def test_labelled_batches():
    _, inputs, labels = indexed_latent()
    sample = curl.labelled_batches(
        inputs,
        labels,
        n_seeds=3,
        batch_size=4,
        generator=torch.Generator().manual_seed(1),
    )
    x, y = sample(1)
    assert x.shape == (3, 4, 2, 2) and y.shape == (3, 4)
    assert torch.equal(labels[x[..., 0, 0].long()], y)
    # uniform with replacement over the examples
    many = torch.cat(
        [sample(step)[0][..., 0, 0].long().flatten() for step in range(1500)]
    )
    observed = torch.bincount(many, minlength=labels.numel()).numpy()
    from scipy import stats

    assert stats.chisquare(observed).pvalue > 1e-3


def test_block_loss_trains_with_the_batches_and_lowers_l_un():
    latent = GaussianClasses.random(3, 4, separation=3.0, noise_std=0.5, seed=1)
    generator = torch.Generator().manual_seed(2)
    model = StackedModel(lambda: MLP(4, (16,), 4), n_seeds=2, seed=0)
    classes = latent.sample_classes((150,), torch.Generator().manual_seed(3))
    points = latent.sample_given(classes, torch.Generator().manual_seed(4))

    def evaluate(m):
        return {"L_un": metrics.exact_unsupervised_loss(m(points), classes)}

    history = train(
        model,
        curl.block_contrastive_loss,
        curl.contrastive_batches(latent, 2, 32, generator, 2),
        60,
        lr=1e-2,
        evaluate=evaluate,
    )
    l_un = history[history.quantity == "L_un"].pivot(
        index="step", columns="seed", values="value"
    )
    assert bool((l_un.loc[60] < l_un.loc[0]).all())


# ---------------------------------------------------------------- k negatives


def brute_force_collision_terms(k, rho):
    """τ_k = P(c⁺, c⁻_1 … c⁻_k not distinct) and E log(1 + |I|), I = {i: c⁻_i = c⁺},
    by enumerating every (k + 1)-tuple of classes."""
    rho = rho.tolist()
    tau = collision = 0.0
    for classes in itertools.product(range(len(rho)), repeat=k + 1):
        p = math.prod(rho[c] for c in classes)
        if len(set(classes)) < k + 1:
            tau += p
        collision += p * math.log(1 + sum(c == classes[0] for c in classes[1:]))
    return tau, collision


RHO4 = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)


@pytest.mark.parametrize(
    "rho, k",
    [
        (RHO4, 1),
        (RHO4, 2),
        (RHO4, 3),
        (torch.tensor([0.05, 0.15, 0.5, 0.2, 0.1], dtype=torch.float64), 2),
        (torch.tensor([0.05, 0.15, 0.5, 0.2, 0.1], dtype=torch.float64), 4),
    ],
)
def test_collision_terms_match_enumeration_of_class_tuples(rho, k):
    tau, collision = _collision_terms(k, rho)
    expected_tau, expected_collision = brute_force_collision_terms(k, rho)
    assert isinstance(tau, float) and isinstance(collision, float)
    assert tau == pytest.approx(expected_tau, rel=1e-12, abs=1e-15)
    assert collision == pytest.approx(expected_collision, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "rho",
    [
        RHO4,
        torch.tensor([0.7, 0.3]),
        torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64),
    ],
)
def test_collision_terms_with_one_negative(rho):
    tau, collision = _collision_terms(1, rho)
    expected = float((torch.as_tensor(rho, dtype=torch.float64) ** 2).sum())
    assert tau == pytest.approx(expected, rel=1e-12)
    assert collision == pytest.approx(expected * math.log(2), rel=1e-12)


@pytest.mark.parametrize("n_classes, k", [(4, 1), (4, 3), (6, 2), (10, 5), (10, 9)])
def test_collision_terms_uniform_closed_form(n_classes, k):
    tau, _ = _collision_terms(k, torch.full((n_classes,), 1.0 / n_classes))
    distinct = math.factorial(n_classes) / (
        math.factorial(n_classes - k - 1) * n_classes ** (k + 1)
    )
    assert tau == pytest.approx(1 - distinct, rel=1e-12)


def test_collision_terms_match_monte_carlo():
    k, m = 3, 200_000
    classes = torch.multinomial(
        RHO4, m * (k + 1), replacement=True, generator=torch.Generator().manual_seed(3)
    ).view(m, k + 1)
    hits = (classes[:, 1:] == classes[:, :1]).sum(1)
    distinct = torch.stack(
        [classes[:, i] != classes[:, j] for i in range(k + 1) for j in range(i)]
    ).all(0)
    collided = (~distinct).double()
    log_hits = torch.log1p(hits.double())
    tau, collision = _collision_terms(k, RHO4)
    for estimate, exact in [(collided, tau), (log_hits, collision)]:
        se = float(estimate.std()) / math.sqrt(m)
        assert abs(float(estimate.mean()) - exact) < 4 * se


LEMMA_COLUMNS = [
    "seed",
    "k",
    "L_un",
    "L_un_se",
    "L_mu",
    "tau_k",
    "collision",
    "bound",
    "bound_se",
    "tau_plus_k",
    "L_mu_tuple",
    "bound_tuple",
    "bound_tuple_se",
]


@pytest.mark.parametrize("scale", [0.05, 0.5, 1.0, 3.0])
def test_k_negative_lemma_holds_on_random_features(scale):
    labels = labels_with_counts((5, 8, 3, 6), seed=11)
    features = scale * randn(2, labels.numel(), 4, seed=12)
    table = curl.k_negative_lemma(
        features, labels, [1, 2, 3], 3000, torch.Generator().manual_seed(1)
    )
    assert list(table.columns) == LEMMA_COLUMNS
    assert len(table) == 2 * 3
    assert table["k"].tolist() == [1, 1, 2, 2, 3, 3]
    assert table["seed"].tolist() == [0, 1] * 3
    assert np.isfinite(table.drop(columns=["seed", "k"]).to_numpy()).all()
    assert (table["L_un_se"] > 0).all()
    assert (table["L_mu"] <= table["bound"] + 4 * table["bound_se"]).all()
    assert (
        table["L_mu_tuple"] <= table["bound_tuple"] + 4 * table["bound_tuple_se"]
    ).all()
    # charging only the collisions with c⁺ divides by more: the tuple bound is lower
    assert (table["tau_plus_k"] <= table["tau_k"] + 1e-15).all()
    rho = metrics.class_frequencies(labels)
    for k in (1, 2, 3):
        rows = table[table.k == k]
        tau, collision = _collision_terms(k, rho)
        assert (rows["tau_k"] == tau).all() and (rows["collision"] == collision).all()
        np.testing.assert_allclose(
            rows["bound"], (rows["L_un"] - collision) / (1 - tau), rtol=1e-12
        )
        np.testing.assert_allclose(
            rows["bound_se"], rows["L_un_se"] / (1 - tau), rtol=1e-12
        )
        mean = metrics.mean_classifier(features, labels, task_size=k + 1)["loss"]
        np.testing.assert_allclose(rows["L_mu"], mean.numpy(), rtol=1e-12)
    # more negatives, larger loss (shared draws) and L_un(k = 1) is the exact L_un
    assert (table[table.k == 3]["L_un"].to_numpy() > table[table.k == 1]["L_un"]).all()
    exact = metrics.exact_unsupervised_loss(features, labels).numpy()
    rows = table[table.k == 1]
    assert (np.abs(rows["L_un"] - exact) < 4 * rows["L_un_se"]).all()


def test_k_negative_lemma_is_deterministic_under_a_seeded_generator():
    labels = labels_with_counts((4, 6, 5), seed=2)
    features = randn(2, labels.numel(), 3, seed=3)

    def run(seed):
        return curl.k_negative_lemma(
            features, labels, [2, 1], 500, torch.Generator().manual_seed(seed)
        )

    first, second = run(4), run(4)
    pd.testing.assert_frame_equal(first, second)
    assert first["k"].tolist() == [2, 2, 1, 1]  # in the order asked
    assert not np.array_equal(first["L_un"], run(5)["L_un"])


@pytest.mark.parametrize("negatives", [[], [0], [1, 0], [-1], [1.5], [True]])
def test_k_negative_lemma_bad_negatives_raise(negatives):
    labels = labels_with_counts((4, 6, 5))
    with pytest.raises(ValueError, match="negatives"):
        curl.k_negative_lemma(randn(1, labels.numel(), 3), labels, negatives, 100)


def test_k_negative_lemma_bad_sizes_raise():
    labels = labels_with_counts((4, 6, 5))
    features = randn(1, labels.numel(), 3)
    with pytest.raises(ValueError, match="negatives"):  # k + 1 > N_C
        curl.k_negative_lemma(features, labels, [3], 100)
    with pytest.raises(ValueError, match="n_samples"):
        curl.k_negative_lemma(features, labels, [1], 1)


# ------------------------------------------- the k-negative lemma, enumerated exactly


def naive_k_negative_sides(features, labels, k):
    """L^k_un, L^µ_sup,k+1, τ_k and E log(1 + |I|) of a finite labelled set (D_c
    uniform over class c, ρ the label frequencies), by enumerating every tuple (x, x⁺,
    x⁻_1 … x⁻_k) and every ordered (k + 1)-tuple of classes, in float64 Python."""
    feats, labels = features.tolist(), labels.tolist()
    n, classes = len(labels), sorted(set(labels))
    members = {c: [i for i in range(n) if labels[i] == c] for c in classes}
    rho = {c: len(members[c]) / n for c in classes}

    def dot(u, v):
        return sum(a * b for a, b in zip(u, v))

    dims = range(len(feats[0]))
    l_un = 0.0
    for x in range(n):  # x uniform over the set (D_c uniform, c ~ ρ)
        for pos in members[labels[x]]:
            for negs in itertools.product(range(n), repeat=k):
                weight = 1 / n / len(members[labels[x]]) / n**k
                terms = sum(
                    math.exp(dot(feats[x], feats[j]) - dot(feats[x], feats[pos]))
                    for j in negs
                )
                l_un += weight * math.log1p(terms)
    means = {
        c: [sum(feats[i][d] for i in members[c]) / len(members[c]) for d in dims]
        for c in classes
    }
    l_mu = total = tau = collision = 0.0
    for ordered in itertools.product(classes, repeat=k + 1):
        p = math.prod(rho[c] for c in ordered)
        collision += p * math.log(1 + sum(c == ordered[0] for c in ordered[1:]))
        if len(set(ordered)) < k + 1:
            tau += p
            continue
        total += p
        for j, c in enumerate(ordered):  # the task's loss, each class weight 1/m
            for i in members[c]:
                logits = [dot(means[d], feats[i]) for d in ordered]
                lse = math.log(sum(math.exp(z) for z in logits))
                l_mu += p / (k + 1) / len(members[c]) * (lse - logits[j])
    return l_un, l_mu / total, tau, collision


@pytest.mark.parametrize(
    "counts, k", [((2, 2), 1), ((1, 2, 2), 1), ((2, 1, 2), 2), ((1, 2, 1, 1), 3)]
)
def test_k_negative_lemma_holds_exactly_on_an_enumerated_distribution(counts, k):
    labels = labels_with_counts(counts, seed=1)
    rho = metrics.class_frequencies(labels)
    for seed, scale in [(0, 0.3), (1, 1.0), (2, 2.5)]:
        features = scale * randn(labels.numel(), 2, seed=seed)
        l_un, l_mu, tau, collision = naive_k_negative_sides(features, labels, k)
        tau_k, collision_k = _collision_terms(k, rho)
        assert (tau, collision) == pytest.approx(
            (tau_k, collision_k), rel=1e-12, abs=1e-15
        )
        bound = (l_un - collision_k) / (1 - tau_k)  # k_negative_lemma's bound
        assert l_mu <= bound + 1e-12
        mean = metrics.mean_classifier(features, labels, task_size=k + 1)["loss"]
        assert float(mean) == pytest.approx(l_mu, rel=1e-10)
        if k == 1:
            exact = metrics.exact_unsupervised_loss(features, labels)
            assert float(exact) == pytest.approx(l_un, rel=1e-10)
    # f = 0: L_un = L_mu = log(k + 1); the bound exceeds them by (τ_k log(k + 1) −
    # E log(1 + |I|)) / (1 − τ_k) ≥ 0, zero for k = 1 (equality)
    l_un, l_mu, tau, collision = naive_k_negative_sides(
        torch.zeros(labels.numel(), 2, dtype=torch.float64), labels, k
    )
    assert l_un == pytest.approx(math.log(k + 1), rel=1e-12)
    assert l_mu == pytest.approx(math.log(k + 1), rel=1e-12)
    tau_k, collision_k = _collision_terms(k, rho)
    bound = (l_un - collision_k) / (1 - tau_k)
    assert bound - l_mu == pytest.approx(
        (tau * math.log(k + 1) - collision) / (1 - tau), abs=1e-12
    )
    assert bound >= l_mu - 1e-12
    if k == 1:
        assert bound == pytest.approx(l_mu, rel=1e-12)


def test_k_negative_lemma_l_un_matches_the_enumerated_loss():
    labels = labels_with_counts((2, 1, 2), seed=1)
    features = randn(labels.numel(), 2, seed=4)
    l_un, l_mu, _, _ = naive_k_negative_sides(features, labels, 2)
    table = curl.k_negative_lemma(
        features[None], labels, [2], 20_000, torch.Generator().manual_seed(0)
    )
    assert abs(float(table["L_un"][0]) - l_un) < 4 * float(table["L_un_se"][0])
    assert float(table["L_mu"][0]) == pytest.approx(l_mu, rel=1e-10)


# ---------------------------------------------------------------- blocks


def chi_square_pvalue(observed, expected_probabilities):
    from scipy import stats

    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected_probabilities, dtype=float) * observed.sum()
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("block_size", [1, 3])
def test_draw_block_samples_follow_the_distribution(block_size):
    counts = (30, 10, 20, 5)
    labels = labels_with_counts(counts, seed=3)
    m = 20_000
    samples = _draw_block_samples(
        labels, block_size, m, torch.Generator().manual_seed(4)
    )
    assert isinstance(samples, _BlockSamples)
    assert samples.anchor.shape == (m,)
    assert samples.positives.shape == samples.negatives.shape == (m, block_size)
    for index in samples:
        assert index.dtype == torch.long
        assert int(index.min()) >= 0 and int(index.max()) < labels.numel()
    rho = np.array(counts) / sum(counts)
    # anchors uniform over the set: classes follow ρ, and so does every example
    anchor_class = labels[samples.anchor]
    assert chi_square_pvalue(torch.bincount(anchor_class), rho) > 1e-3
    n = labels.numel()
    uniform = [1 / n] * n
    observed = torch.bincount(samples.anchor, minlength=n)
    assert chi_square_pvalue(observed, uniform) > 1e-3
    # positives in the anchor's class
    assert torch.equal(
        labels[samples.positives], anchor_class[:, None].expand(-1, block_size)
    )
    # each negative block in one class, which follows ρ
    negative_class = labels[samples.negatives]
    assert torch.equal(negative_class, negative_class[:, :1].expand(-1, block_size))
    assert chi_square_pvalue(torch.bincount(negative_class[:, 0]), rho) > 1e-3
    # ... independently of the anchor's class: P(c⁻ = c⁺) = Σ ρ²
    same = (negative_class[:, 0] == anchor_class).double()
    assert abs(float(same.mean()) - (rho**2).sum()) < 4 * float(same.std()) / m**0.5
    # members of a block uniform over their class (class 0, the first member and all)
    for index in (samples.positives, samples.negatives):
        members = index[labels[index[:, 0]] == 0]
        observed = torch.bincount(members.flatten(), minlength=n)[labels == 0]
        assert chi_square_pvalue(observed, [1 / counts[0]] * counts[0]) > 1e-3
        observed = torch.bincount(members[:, 0], minlength=n)[labels == 0]
        assert chi_square_pvalue(observed, [1 / counts[0]] * counts[0]) > 1e-3


def test_draw_block_samples_blocks_hold_distinct_draws():
    labels = labels_with_counts((50, 50), seed=0)
    samples = _draw_block_samples(labels, 4, 500, torch.Generator().manual_seed(1))
    # i.i.d. draws within a block: not all copies of the first member
    for index in (samples.positives, samples.negatives):
        assert (index != index[:, :1]).any(1).float().mean() > 0.9


def test_draw_block_samples_is_deterministic():
    labels = labels_with_counts((3, 5, 4), seed=1)

    def draw(generator):
        return _draw_block_samples(labels, 2, 50, generator)

    first = draw(torch.Generator().manual_seed(7))
    second = draw(torch.Generator().manual_seed(7))
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    other = draw(torch.Generator().manual_seed(8))
    assert not torch.equal(first.anchor, other.anchor)
    default = draw(None)  # a new generator seeded 0
    for a, b in zip(default, draw(torch.Generator().manual_seed(0))):
        assert torch.equal(a, b)


def naive_block_losses(features, labels, samples):
    """The estimates of _block_losses, one draw at a time, in Python floats."""
    feats = features.tolist()

    def dot(u, v):
        return sum(a * b for a, b in zip(u, v))

    def mean(rows):
        return [sum(r[d] for r in rows) / len(rows) for d in range(len(rows[0]))]

    def diff(u, v):
        return [a - b for a, b in zip(u, v)]

    single, block = [], []
    for a, ps, ns in zip(*(s.tolist() for s in samples)):
        fa = feats[a]
        single.append(math.log1p(math.exp(dot(fa, diff(feats[ns[0]], feats[ps[0]])))))
        positive_mean = mean([feats[i] for i in ps])
        negative_mean = mean([feats[i] for i in ns])
        block.append(math.log1p(math.exp(dot(fa, diff(negative_mean, positive_mean)))))
    m = len(single)

    def mean_and_se(values):
        mu = sum(values) / m
        return mu, math.sqrt(sum((v - mu) ** 2 for v in values) / (m - 1) / m)

    l_un, l_un_se = mean_and_se(single)
    l_block, l_block_se = mean_and_se(block)
    _, gap_se = mean_and_se([s - b for s, b in zip(single, block)])
    return {
        "L_un": l_un,
        "L_un_se": l_un_se,
        "L_block": l_block,
        "L_block_se": l_block_se,
        "gap_se": gap_se,
    }


@pytest.mark.parametrize("block_size", [1, 3])
def test_block_losses_match_a_naive_loop(block_size):
    labels = labels_with_counts((4, 3, 5), seed=2)
    features = randn(2, labels.numel(), 3, seed=3, dtype=torch.float32)
    samples = _draw_block_samples(
        labels, block_size, 40, torch.Generator().manual_seed(5)
    )
    losses = _block_losses(features, samples)
    assert set(losses) == {"L_un", "L_un_se", "L_block", "L_block_se", "gap_se"}
    for value in losses.values():
        assert value.shape == (2,) and value.dtype == torch.float64
    for s in range(2):
        expected = naive_block_losses(features[s].double(), labels, samples)
        for name, value in expected.items():
            assert float(losses[name][s]) == pytest.approx(value, rel=1e-10, abs=1e-14)
    # a feature without the seed axis
    alone = _block_losses(features[1], samples)
    for name, value in alone.items():
        assert value.shape == ()
        torch.testing.assert_close(value, losses[name][1], rtol=1e-12, atol=0)


def test_block_losses_with_blocks_of_one_are_l_un():
    labels = labels_with_counts((4, 3, 5), seed=2)
    features = randn(3, labels.numel(), 3, seed=6)
    losses = _block_losses(
        features, _draw_block_samples(labels, 1, 200, torch.Generator())
    )
    assert torch.equal(losses["L_block"], losses["L_un"])
    assert torch.equal(losses["L_block_se"], losses["L_un_se"])
    assert torch.equal(losses["gap_se"], torch.zeros(3, dtype=torch.float64))


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("block_size", [2, 5])
def test_block_loss_is_below_l_un(scale, block_size):
    labels = labels_with_counts((6, 9, 5), seed=4)
    features = scale * randn(3, labels.numel(), 4, seed=5)
    losses = _block_losses(
        features,
        _draw_block_samples(labels, block_size, 4000, torch.Generator().manual_seed(6)),
    )
    assert bool((losses["gap_se"] > 0).all())
    assert bool((losses["L_block"] <= losses["L_un"] + 4 * losses["gap_se"]).all())


@pytest.mark.parametrize("block_size", [1, 3])
def test_block_losses_l_un_matches_the_exact_loss(block_size):
    labels = labels_with_counts((6, 9, 5), seed=4)
    features = randn(2, labels.numel(), 4, seed=7)
    losses = _block_losses(
        features,
        _draw_block_samples(
            labels, block_size, 20_000, torch.Generator().manual_seed(8)
        ),
    )
    exact = metrics.exact_unsupervised_loss(features, labels)
    assert bool(((losses["L_un"] - exact).abs() < 4 * losses["L_un_se"]).all())


def test_block_evaluator():
    labels = labels_with_counts((6, 9, 5), seed=4)
    inputs = randn(labels.numel(), 5, seed=9, dtype=torch.float32)
    model = StackedModel(lambda: MLP(5, (8,), 3), n_seeds=2, seed=1)
    evaluate = curl.block_evaluator(
        inputs, labels, 3, 300, torch.Generator().manual_seed(10)
    )
    values = evaluate(model)
    assert set(values) == {
        "L_un",
        "L_un_se",
        "L_block",
        "L_block_se",
        "gap_se",
        "L_mu",
        "bound",
        "block_bound",
    }
    for value in values.values():
        assert value.shape == (2,) and bool(torch.isfinite(value).all())
    with torch.no_grad():
        features = model(inputs)
    samples = _draw_block_samples(labels, 3, 300, torch.Generator().manual_seed(10))
    for name, value in _block_losses(features, samples).items():
        torch.testing.assert_close(values[name], value)
    mean = metrics.mean_classifier(features.double(), labels, task_size=2)
    torch.testing.assert_close(values["L_mu"], mean["loss"])
    tau = float((torch.tensor([6, 9, 5], dtype=torch.float64) / 20).square().sum())
    for bound, loss in [("bound", "L_un"), ("block_bound", "L_block")]:
        torch.testing.assert_close(
            values[bound], (values[loss] - tau * math.log(2)) / (1 - tau)
        )
    # the draws are made once: a second call on the same model gives the same values
    again = evaluate(model)
    for name in values:
        assert torch.equal(values[name], again[name])


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"block_size": 0}, "block_size"),
        ({"block_size": 2.0}, "block_size"),
        ({"n_samples": 1}, "n_samples"),
        ({"n_samples": -5}, "n_samples"),
    ],
)
def test_block_evaluator_bad_arguments_raise(kwargs, argument):
    labels = labels_with_counts((3, 4))
    arguments = {"block_size": 2, "n_samples": 10, **kwargs}
    with pytest.raises(ValueError, match=argument):
        curl.block_evaluator(randn(labels.numel(), 2), labels, **arguments)


# ---------------------------------------------------------------- downstream accuracies


def test_downstream_accuracies():
    latent = GaussianClasses.random(3, 4, separation=6.0, noise_std=0.3, seed=3)
    train_classes = torch.arange(45) % 3
    test_classes = torch.arange(30) % 3
    train_x = latent.sample_given(train_classes, torch.Generator().manual_seed(1))
    test_x = latent.sample_given(test_classes, torch.Generator().manual_seed(2))
    model = StackedModel(lambda: MLP(4, (), 4), n_seeds=2)
    with torch.no_grad():
        train_f, test_f = model(train_x), model(test_x)
    table = curl.downstream_accuracies(
        train_f, train_classes, test_f, test_classes, task_sizes=(2, 3), max_iter=50
    )
    assert list(table.columns) == ["seed", "task_size", "classifier", "accuracy"]
    assert len(table) == 2 * 2 * 2
    assert table["accuracy"].between(0, 1 + 1e-6).all()
    mean3 = metrics.mean_classifier(
        train_f, train_classes, test_f, test_classes, task_size=3
    )["accuracy"]
    got = (
        table[(table.task_size == 3) & (table.classifier == "mean")]
        .sort_values("seed")["accuracy"]
        .to_numpy()
    )
    np.testing.assert_allclose(got, mean3.double().numpy())
    # an affine encoder keeps well-separated blobs separable: the linear head is nearly
    # perfect
    assert (table.loc[table.classifier == "linear", "accuracy"] > 0.95).all()


@pytest.mark.parametrize("task_size", [2, 3])
def test_downstream_accuracies_centred_and_normalised_means(task_size):
    labels = labels_with_counts((7, 5, 6), seed=5)
    test_labels = labels_with_counts((4, 6, 5), seed=6)
    shift = torch.tensor([2.0, -1.0, 0.5], dtype=torch.float64)
    train_f = randn(2, labels.numel(), 3, seed=7) + shift
    test_f = randn(2, test_labels.numel(), 3, seed=8) + shift
    names = ("mean", "mean, centred", "mean, normalised")
    table = curl.downstream_accuracies(
        train_f,
        labels,
        test_f,
        test_labels,
        task_sizes=(task_size,),
        classifiers=names,
    )
    assert table["classifier"].tolist() == [n for n in names for _ in range(2)]
    options = [{}, {"centre": True}, {"normalise": True}]
    direct = {}
    for name, option in zip(names, options):
        direct[name] = metrics.mean_classifier(
            train_f, labels, test_f, test_labels, task_size=task_size, **option
        )["accuracy"]
        got = table[table.classifier == name].sort_values("seed")["accuracy"]
        np.testing.assert_array_equal(got.to_numpy(), direct[name].double().numpy())
    # the variants are different classifiers here
    assert not torch.equal(direct["mean"], direct["mean, centred"])


@pytest.mark.parametrize("classifiers", [("mean", "median"), ("Mean",), ()])
def test_downstream_accuracies_unknown_classifier_raises(classifiers):
    labels = labels_with_counts((3, 3))
    features = randn(1, labels.numel(), 2)
    with pytest.raises(ValueError, match="classifiers"):
        curl.downstream_accuracies(
            features, labels, features, labels, classifiers=classifiers
        )


# ---------------------------------------------------------------- supervised baseline


def blob_split(n_per_class, seed):
    centres = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    labels = torch.arange(3).repeat(n_per_class)
    noise = randn(labels.numel(), 2, seed=seed, dtype=torch.float32)
    return centres[labels] + 1.1 * noise, labels


SUPERVISED_GRID = [(0.5, 0.0), (0.05, 1e-2)]
SUPERVISED = {"n_steps": 20, "batch_size": 16, "eval_steps": [5, 10, 15], "seed": 1}


def make_classifier():
    return Classifier(MLP(2, (8,), 4), 3)


def run_supervised(**kwargs):
    train_x, train_y = blob_split(20, seed=1)
    val_x, val_y = blob_split(10, seed=2)
    arguments = {
        "grid": SUPERVISED_GRID,
        "n_seeds": 2,
        "search_seeds": 2,
        **{k: v for k, v in SUPERVISED.items() if k != "batch_size"},
        **kwargs,
    }
    run = curl.train_tuned(
        make_classifier,
        curl.cross_entropy_loss,
        lambda n, generator: curl.labelled_batches(
            train_x, train_y, n, SUPERVISED["batch_size"], generator
        ),
        curl.head_accuracy(val_x, val_y),
        **arguments,
    )
    return run, val_x, val_y


def validation_accuracy(model, val_x, val_y):
    with torch.no_grad():
        return (model(val_x).argmax(-1) == val_y).double().mean(-1)


def reference_accuracies(lr, weight_decay, n_seeds):
    """The validation accuracy of each seed at steps 0, 5, 10, 15, 20 of a plain
    training run (no early stopping) with the batches of train_tuned: a frame
    step × seed; and the parameters at those steps, {step: {name: (S, ...)}}."""
    train_x, train_y = blob_split(20, seed=1)
    val_x, val_y = blob_split(10, seed=2)
    model = StackedModel(make_classifier, n_seeds, seed=SUPERVISED["seed"])
    generator = torch.Generator().manual_seed(SUPERVISED["seed"] + 1)
    snapshots = []

    def evaluate(m):
        snapshots.append({k: v.detach().clone() for k, v in m.params.items()})
        return {"val_accuracy": validation_accuracy(m, val_x, val_y)}

    history = train(
        model,
        curl.cross_entropy_loss,
        curl.labelled_batches(
            train_x, train_y, n_seeds, SUPERVISED["batch_size"], generator
        ),
        SUPERVISED["n_steps"],
        lr=lr,
        weight_decay=weight_decay,
        evaluate=evaluate,
        eval_steps=SUPERVISED["eval_steps"],
        desc=None,
    )
    history = history[history.quantity == "val_accuracy"]
    table = history.pivot(index="step", columns="seed", values="value")
    return table, dict(zip(table.index, snapshots))


def assert_parameters_at_the_best_steps(model, best_steps, snapshots):
    """Seed i of ``model`` holds the parameters of step best_steps[i]."""
    for i, step in enumerate(best_steps):
        for name, value in model.params.items():
            assert torch.equal(value[i], snapshots[step][name][i])


SEARCH_COLUMNS = ["lr", "weight_decay", "seed", "best_step", "val_accuracy", "chosen"]


def test_train_tuned_selects_by_early_stopping():
    run, val_x, val_y = run_supervised()
    search = run.search
    assert list(search.columns) == SEARCH_COLUMNS
    keys = list(zip(search.lr, search.weight_decay, search.seed))
    assert keys == [(lr, wd, s) for lr, wd in SUPERVISED_GRID for s in (1, 2)]
    means, references = [], []
    for lr, wd in SUPERVISED_GRID:
        reference, snapshots = reference_accuracies(lr, wd, 2)
        references.append((reference, snapshots))
        assert reference.index.tolist() == [0, 5, 10, 15, 20]
        rows = search[(search.lr == lr) & (search.weight_decay == wd)]
        for row in rows.itertuples():
            curve = reference[row.seed]
            assert row.val_accuracy == curve.max()
            assert row.best_step == curve.idxmax()  # the first best step
        means.append(rows.val_accuracy.mean())
    # the chosen configuration: the best mean early-stopped accuracy
    best = int(np.argmax(means))
    assert best == 1  # (here the second: a rule "take the first" would fail)
    assert search.chosen.tolist() == [i == best for i in (0, 0, 1, 1)]
    # search_seeds == n_seeds: the final run is the chosen configuration's search
    chosen = search[search.chosen].reset_index(drop=True)
    assert list(run.final.columns) == ["seed", "best_step", "val_accuracy"]
    pd.testing.assert_frame_equal(
        run.final.reset_index(drop=True),
        chosen[["seed", "best_step", "val_accuracy"]],
    )
    # the model holds each seed's parameters of its best step ...
    assert run.model.seeds == [1, 2]
    accuracy = validation_accuracy(run.model, val_x, val_y)
    np.testing.assert_array_equal(accuracy.numpy(), chosen.val_accuracy.to_numpy())
    # ... which matters here: both seeds were better before the end
    final_step = references[best][0].loc[20]
    assert (chosen.val_accuracy.to_numpy() > final_step.to_numpy()).all()
    assert_parameters_at_the_best_steps(
        run.model, chosen.best_step.tolist(), references[best][1]
    )


def test_train_tuned_retrains_the_chosen_configuration_with_more_seeds():
    run, val_x, val_y = run_supervised(n_seeds=3, search_seeds=1)
    assert len(run.search) == len(SUPERVISED_GRID)
    assert run.search.seed.tolist() == [1, 1]
    assert run.search.chosen.sum() == 1
    assert list(run.final.columns) == ["seed", "best_step", "val_accuracy"]
    assert run.final.seed.tolist() == [1, 2, 3]
    assert set(run.final.best_step) <= {0, 5, 10, 15, 20}
    assert run.model.seeds == [1, 2, 3]
    accuracy = validation_accuracy(run.model, val_x, val_y)
    np.testing.assert_array_equal(accuracy.numpy(), run.final.val_accuracy.to_numpy())
    lr, wd = run.search.loc[run.search.chosen, ["lr", "weight_decay"]].iloc[0]
    reference, snapshots = reference_accuracies(lr, wd, 3)
    assert_parameters_at_the_best_steps(
        run.model, run.final.best_step.tolist(), snapshots
    )
    np.testing.assert_array_equal(
        run.final.val_accuracy.to_numpy(), reference.max().to_numpy()
    )
    np.testing.assert_array_equal(
        run.final.best_step.to_numpy(), reference.idxmax().to_numpy()
    )


def test_train_tuned_is_deterministic():
    first, _, _ = run_supervised(n_steps=6, eval_steps=[3])
    second, _, _ = run_supervised(n_steps=6, eval_steps=[3])
    pd.testing.assert_frame_equal(first.search, second.search)
    pd.testing.assert_frame_equal(first.final, second.final)
    for name, value in first.model.params.items():
        assert torch.equal(value, second.model.params[name])


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"grid": []}, "grid"),
        ({"search_seeds": 0}, "search_seeds"),
        ({"search_seeds": 3}, "search_seeds"),
        ({"n_seeds": 0}, "n_seeds"),
        ({"eval_steps": [30]}, "eval_steps"),
        ({"evaluate_steps": [-1]}, "evaluate_steps"),
        ({"evaluate": 3}, "evaluate"),
        ({"grid": [(0.0, 0.0)]}, "lr"),
        ({"grid": [(0.1, -1.0)]}, "weight_decay"),
        ({"tolerance": -0.1}, "tolerance"),
    ],
)
def test_train_tuned_bad_arguments_raise(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        run_supervised(**kwargs)


def test_train_tuned_tolerance_chooses_the_first_configuration_near_the_best():
    exact, _, _ = run_supervised()
    means = exact.search.groupby(["lr", "weight_decay"], sort=False)["val_accuracy"]
    means = means.mean().to_numpy()
    assert means[1] > means[0]  # without a tolerance the second is chosen
    gap = means[1] - means[0]
    near, _, _ = run_supervised(tolerance=gap + 1e-9)  # the first is within it
    assert near.search.chosen.tolist() == [True, True, False, False]
    far, _, _ = run_supervised(tolerance=gap / 2)
    pd.testing.assert_frame_equal(far.search, exact.search)


def test_train_tuned_records_evaluate_only_in_the_final_run_at_its_steps():
    calls = []

    def evaluate(model):
        calls.append(model.n_seeds)
        return {"marker": torch.arange(model.n_seeds, dtype=torch.float64)}

    run, _, _ = run_supervised(
        n_seeds=3, search_seeds=1, evaluate=evaluate, evaluate_steps=[0, 7, 20]
    )
    assert calls == [3, 3, 3]  # the search runs do not evaluate
    wide = run.history.pivot_table(index="step", columns="quantity", values="value")
    assert wide["marker"].dropna().index.tolist() == [0, 7, 20]
    assert wide["val_accuracy"].dropna().index.tolist() == [0, 5, 7, 10, 15, 20]
    # step 7 is evaluated for the quantities, and it may be the best step
    assert set(run.final.best_step) <= {0, 5, 7, 10, 15, 20}


def test_probe_accuracy_is_the_linear_probe_on_the_models_features():
    fit_x, fit_y = blob_split(20, seed=3)
    val_x, val_y = blob_split(10, seed=4)
    model = StackedModel(lambda: MLP(2, (8,), 4), 2, seed=0)
    score = curl.probe_accuracy(fit_x, fit_y, val_x, val_y, max_iter=50)
    with torch.no_grad():
        found = score(model)
        expected = metrics.linear_probe(
            model(fit_x), fit_y, model(val_x), val_y, task_size=3, max_iter=50
        )["accuracy"]
    assert found.shape == (2,) and found.dtype == torch.float64
    torch.testing.assert_close(found, expected.double())
    classifier = StackedModel(make_classifier, 2, seed=0)
    encoder = curl.probe_accuracy(fit_x, fit_y, val_x, val_y, submodule="encoder")
    with torch.no_grad():
        assert encoder(classifier).shape == (2,)


def test_k_negative_lemma_needs_seed_axis():
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    with pytest.raises(ValueError, match="features"):
        curl.k_negative_lemma(randn(6, 2, seed=1), labels, [1], 100)


# ---------------------------------------------------------------- the claims


def test_claims_are_valid_and_their_keys_unique():
    assert all(isinstance(claim, Claim) for claim in curl.CLAIMS.values())
    assert all(key == claim.key for key, claim in curl.CLAIMS.items())
    keys = [claim.key for claim in curl.CLAIMS.values()]
    assert len(keys) == len(set(keys)) == 13
    for claim in curl.CLAIMS.values():
        # Claim validates itself; rebuilding it from its fields must not raise
        assert Claim(**dataclasses.asdict(claim)) == claim
        if claim.expected == "equal" or claim.margin is not None:
            assert claim.margin is not None and claim.margin_reason.strip()


def test_claims_sections_are_labels_of_the_chapter():
    notebook = Path(__file__).resolve().parents[1] / "book" / "01_curl_framework.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    markdown = [c for c in cells if c["cell_type"] == "markdown"]
    text = "\n".join("".join(c["source"]) for c in markdown)
    labels = set(re.findall(r"^\(([a-z0-9-]+)\)=$", text, flags=re.MULTILINE))
    assert {claim.section for claim in curl.CLAIMS.values()} <= labels


def test_one_criterion_for_every_comparison_of_two_encoders():
    # Table 1's encoders and the unseen classes: one margin, the largest gap the source
    # reads as competing (0.7 points); the mean classifier against a trained head: the
    # largest such gap the source reads as good classification (1.9 points)
    keys = ["competes_avg2", "competes_avg10", "unseen_linear", "unseen_mean"]
    encoders = [curl.CLAIMS[k] for k in keys]
    means = [c for k, c in curl.CLAIMS.items() if k.startswith("means_")]
    assert len(means) == 2
    assert {(c.expected, c.null, c.margin) for c in encoders} == {("equal", 0.0, 0.007)}
    assert {(c.expected, c.null, c.margin) for c in means} == {("equal", 0.0, 0.019)}
    # each margin is one of the source's own gaps, as the claims quote them
    assert "88.4 against 89.1 %" in curl.CLAIMS["competes_avg10"].statement
    assert "1.9 points" in curl.CLAIMS["means_supervised"].margin_reason
    assert "0.7 points" in curl.CLAIMS["unseen_linear"].margin_reason
    # the control against the untrained encoder is a gain, absent below one point
    control = curl.CLAIMS["unseen_untrained"]
    assert (control.expected, control.margin) == ("greater", 0.01)


def test_claims_read_by_the_verdict_method():
    # equal per-seed accuracies: the encoders compete (equivalence within the margin);
    # a gain within noise of zero and wider than the margin: not resolved
    book = Verdicts("01_curl_framework")
    same = np.array([0.950, 0.951, 0.952, 0.949, 0.950])
    jitter = np.array([0.0, 1e-4, -1e-4, 2e-4, -2e-4])
    book.test(curl.CLAIMS["competes_avg2"], same, same + jitter)
    book.test(curl.CLAIMS["bias_centring"], [0.01, -0.01, 0.02, -0.02, 0.0])
    verdicts = {row["key"]: row["verdict"] for row in book.rows()}
    assert verdicts == {
        "competes_avg2": "reproduced",
        "bias_centring": "not resolved",
    }


# ---------------------------------------------------------------- k negatives, tuples


@pytest.mark.parametrize("k, n_classes", [(1, 1), (1, 4), (3, 2), (4, 3), (9, 9)])
def test_negative_counts_enumerate_every_count_vector(k, n_classes):
    counts = _negative_counts(k, n_classes)
    assert counts.shape == (math.comb(k + n_classes - 1, n_classes - 1), n_classes)
    assert (counts.sum(-1) == k).all() and (counts >= 0).all()
    assert len({tuple(row.tolist()) for row in counts}) == len(counts)


def brute_force_tuple_loss(features, labels, k):
    """τ⁺_k and L^µ_tuple by enumerating every (c⁺, c⁻_1 … c⁻_k) and every x."""
    rho = metrics.class_frequencies(labels).tolist()
    means = metrics.class_means(features, labels)
    n_classes = len(rho)
    total = torch.zeros(features.shape[0], dtype=torch.float64)
    no_hit = 0.0
    for positive in range(n_classes):
        members = (labels == positive).nonzero().flatten()
        for negatives in itertools.product(range(n_classes), repeat=k):
            if positive in negatives:
                continue
            p = rho[positive] * math.prod(rho[c] for c in negatives)
            no_hit += p
            for x in members:
                exponents = [
                    (features[:, x] * (means[:, c] - means[:, positive])).sum(-1)
                    for c in negatives
                ]
                zero = torch.zeros_like(exponents[0])
                loss = torch.logsumexp(torch.stack([zero, *exponents]), 0)
                total += p / len(members) * loss
    return 1 - no_hit, total / no_hit


@pytest.mark.parametrize("k", [1, 2, 3])
def test_tuple_mean_classifier_loss_matches_enumeration(k):
    labels = labels_with_counts((2, 3, 2, 4), seed=5)
    features = 1.5 * randn(2, labels.numel(), 3, seed=6)
    tau_plus, loss = _tuple_mean_classifier_loss(features, labels, k)
    expected_tau, expected = brute_force_tuple_loss(features, labels, k)
    assert tau_plus == pytest.approx(expected_tau, rel=1e-12)
    torch.testing.assert_close(loss, expected, rtol=1e-12, atol=0)


def test_tuple_loss_with_one_negative_is_the_binary_mean_classifier_loss():
    labels = labels_with_counts((5, 8, 3, 6), seed=7)
    features = randn(3, labels.numel(), 4, seed=8)
    tau_plus, loss = _tuple_mean_classifier_loss(features, labels, 1)
    rho = metrics.class_frequencies(labels)
    assert tau_plus == pytest.approx(float((rho**2).sum()), rel=1e-12)
    binary = metrics.mean_classifier(features.double(), labels, task_size=2)["loss"]
    torch.testing.assert_close(loss, binary, rtol=1e-12, atol=0)


def test_tuple_loss_does_not_overflow_on_large_features():
    labels = labels_with_counts((4, 4, 4), seed=9)
    features = 300 * randn(1, labels.numel(), 3, seed=10)
    _, loss = _tuple_mean_classifier_loss(features, labels, 2)
    expected = brute_force_tuple_loss(features, labels, 2)[1]
    assert torch.isfinite(loss).all()
    torch.testing.assert_close(loss, expected, rtol=1e-10, atol=0)


def test_negative_counts_into_one_class_is_one_row():
    # k negatives in one class: the single count vector (k), for any k
    assert _negative_counts(5, 1).tolist() == [[5.0]]
    assert _negative_counts(2**50, 1).tolist() == [[float(2**50)]]


def test_head_accuracy_refuses_labels_beyond_the_logits():
    """Labels 5..7 scored against 3 logits would read as accuracy 0: a ValueError
    naming the range instead; labels within it score as the reference does."""
    val_x, val_y = blob_split(10, seed=2)
    model = StackedModel(make_classifier, 2, seed=0)
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.2.*got a label 7"):
        curl.head_accuracy(val_x, val_y + 5)(model)
    assert torch.equal(
        curl.head_accuracy(val_x, val_y)(model),
        validation_accuracy(model, val_x, val_y),
    )


# ---------------------------------------------------------------- bad calls

_LABELS = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])  # 8 examples of 3 classes
_FEATURES = randn(2, 8, 3, seed=1)  # (S, n, d)
_INPUTS = randn(8, 3, seed=2, dtype=torch.float32)  # (n, d)
_NAN_INPUTS = _INPUTS.clone()
_NAN_INPUTS[0, 0] = math.nan
_BATCH = (randn(4, 3, seed=3), randn(4, 2, 3, seed=4), randn(4, 2, 3, seed=5))
_LATENT = EmpiricalClasses(_INPUTS, _LABELS)
_MANY_CLASSES = torch.arange(28) % 14  # N_C = 14: C(25, 12) count vectors for k = 13


def _identity(x):
    return x


def _three_logits(x):
    """A model of two seeds with three logits: (S, n, 3)."""
    return torch.zeros(2, x.shape[0], 3)


def score_of_head_accuracy(inputs, labels, model):
    """The score head_accuracy builds, applied to ``model``."""
    return curl.head_accuracy(inputs, labels)(model)


_TUNED = {
    "make_model": lambda: torch.nn.Linear(3, 3),
    "loss_fn": curl.cross_entropy_loss,
    "batches": lambda n, generator: curl.labelled_batches(
        _INPUTS, _LABELS, n, 4, generator
    ),
    "score": curl.head_accuracy(_INPUTS, _LABELS),
}
_TUNED_KEYWORDS = {"grid": [(0.1, 0.0)], "n_seeds": 2, "n_steps": 4, "eval_steps": [2]}


def _tuned(**changes):
    """train_tuned's keyword arguments, with ``changes``."""
    return {**_TUNED_KEYWORDS, **changes}


BAD_CALLS = [
    bad_call(
        curl.downstream_accuracies,
        "classifiers",
        *(_FEATURES, _LABELS) * 2,
        classifiers=("median",),
    ),
    bad_call(
        curl.downstream_accuracies,
        "task_sizes",
        *(_FEATURES, _LABELS) * 2,
        task_sizes=1,
    ),
    bad_call(
        curl.downstream_accuracies,
        "test_labels",
        _FEATURES,
        _LABELS,
        _FEATURES,
        _LABELS.int(),
    ),
    # the lemma
    bad_call(curl.mean_classifier_bound, "tau", 1.0, 1.0),
    bad_call(curl.mean_classifier_bound, "tau", 1.0, -0.1),
    bad_call(curl.mean_classifier_bound, "unsupervised_loss", math.nan, 0.3),
    bad_call(curl.mean_classifier_bound, "unsupervised_loss", torch.tensor([1]), 0.3),
    bad_call(curl.lemma_quantities, "features", _FEATURES[0, :, 0], _LABELS),
    bad_call(curl.lemma_quantities, "labels", _FEATURES, _LABELS.double()),
    bad_call(curl.lemma_quantities, "max_iter", _FEATURES, _LABELS, max_iter=0),
    bad_call(
        curl.lemma_quantities,
        "fit_features",
        _FEATURES,
        _LABELS,
        heldout_fit=(_FEATURES[..., :2], _LABELS),
    ),
    # k negatives
    bad_call(curl.k_negative_lemma, "features", _FEATURES[0], _LABELS, [1], 10),
    bad_call(curl.k_negative_lemma, "labels", _FEATURES, _LABELS[:6], [1], 10),
    bad_call(curl.k_negative_lemma, "negatives", _FEATURES, _LABELS, [0], 10),
    bad_call(curl.k_negative_lemma, r"negatives.*1\.\.2", _FEATURES, _LABELS, [3], 10),
    bad_call(curl.k_negative_lemma, "negatives", _FEATURES, _LABELS, 2, 10),
    bad_call(curl.k_negative_lemma, "negatives", _FEATURES, _LABELS, [], 10),
    bad_call(curl.k_negative_lemma, "n_samples", _FEATURES, _LABELS, [1], 1),
    bad_call(curl.k_negative_lemma, "generator", _FEATURES, _LABELS, [1], 10, 0),
    bad_call(
        curl.k_negative_lemma,
        "negatives=13",
        randn(1, 28, 2),
        _MANY_CLASSES,
        [13],
        10,
    ),
    # blocks
    bad_call(curl.block_evaluator, "block_size", _INPUTS, _LABELS, 0, 10),
    bad_call(curl.block_evaluator, "block_size", _INPUTS, _LABELS, 2.0, 10),
    bad_call(curl.block_evaluator, "n_samples", _INPUTS, _LABELS, 2, 1),
    bad_call(curl.block_evaluator, "inputs", _INPUTS[:6], _LABELS, 2, 10),
    bad_call(curl.block_evaluator, "inputs", _NAN_INPUTS, _LABELS, 2, 10),
    bad_call(curl.block_evaluator, "labels", _INPUTS, _LABELS.double(), 2, 10),
    bad_call(curl.block_evaluator, "labels must cover", _INPUTS, 2 * _LABELS, 2, 10),
    bad_call(curl.block_evaluator, "generator", _INPUTS, _LABELS, 2, 10, 0),
    # training: losses, batches, scores, the tuned procedure
    bad_call(curl.block_contrastive_loss, "forward", "encoder", _BATCH),
    bad_call(curl.block_contrastive_loss, "batch", _identity, _BATCH[:2]),
    bad_call(
        curl.block_contrastive_loss,
        "positives",
        _identity,
        (_BATCH[0], _BATCH[0], _BATCH[0]),
    ),
    bad_call(
        curl.block_contrastive_loss,
        r"batch\[0\]",
        _identity,
        (_BATCH[0].long(), *_BATCH[1:]),
    ),
    bad_call(curl.cross_entropy_loss, "forward", None, (_INPUTS, _LABELS)),
    bad_call(
        curl.cross_entropy_loss, r"batch\[1\]", _identity, (_INPUTS, _LABELS.float())
    ),
    bad_call(curl.cross_entropy_loss, "batch", _identity, _INPUTS),
    bad_call(curl.contrastive_batches, "latent", _INPUTS, 2, 4, torch.Generator()),
    bad_call(curl.contrastive_batches, "n_seeds", _LATENT, 0, 4, torch.Generator()),
    bad_call(curl.contrastive_batches, "batch_size", _LATENT, 2, 0, torch.Generator()),
    bad_call(curl.contrastive_batches, "generator", _LATENT, 2, 4, 0),
    bad_call(
        curl.contrastive_batches, "block_size", _LATENT, 2, 4, torch.Generator(), 0
    ),
    bad_call(curl.labelled_batches, "inputs", _INPUTS[:6], _LABELS, 2, 4, None),
    bad_call(curl.labelled_batches, "labels", _INPUTS, _LABELS.float(), 2, 4, None),
    bad_call(curl.labelled_batches, "batch_size", _INPUTS, _LABELS, 2, 0, None),
    bad_call(curl.labelled_batches, "generator", _INPUTS, _LABELS, 2, 4, 0),
    bad_call(curl.head_accuracy, "inputs", _INPUTS[:6], _LABELS),
    bad_call(curl.head_accuracy, "labels", _INPUTS, _LABELS.float()),
    bad_call(
        score_of_head_accuracy,
        r"labels must lie in 0\.\.2.*got a label 7",
        _INPUTS,
        _LABELS + 5,
        _three_logits,
    ),
    bad_call(curl.probe_accuracy, "fit_inputs", _INPUTS[:6], _LABELS, _INPUTS, _LABELS),
    bad_call(curl.probe_accuracy, "val_labels", _INPUTS, _LABELS, _INPUTS, -_LABELS),
    bad_call(
        curl.probe_accuracy,
        "val_inputs",
        _INPUTS,
        _LABELS,
        _INPUTS[:, :2],
        _LABELS,
    ),
    bad_call(
        curl.probe_accuracy, "max_iter", _INPUTS, _LABELS, _INPUTS, _LABELS, max_iter=0
    ),
    bad_call(curl.train_tuned, "grid", *_TUNED.values(), **_tuned(grid=[])),
    bad_call(curl.train_tuned, "lr", *_TUNED.values(), **_tuned(grid=[(0.0, 0.0)])),
    bad_call(
        curl.train_tuned,
        "loss_fn",
        _TUNED["make_model"],
        "cross_entropy",
        _TUNED["batches"],
        _TUNED["score"],
        **_tuned(),
    ),
    bad_call(
        curl.train_tuned, "search_seeds", *_TUNED.values(), **_tuned(search_seeds=3)
    ),
    bad_call(
        curl.train_tuned, "eval_steps", *_TUNED.values(), **_tuned(eval_steps=[5])
    ),
    bad_call(curl.train_tuned, "tolerance", *_TUNED.values(), **_tuned(tolerance=-0.1)),
    bad_call(curl.train_tuned, "n_steps", *_TUNED.values(), **_tuned(n_steps=0)),
    bad_call(
        curl.train_tuned, "device", *_TUNED.values(), **_tuned(device=lacking_device())
    ),
    bad_call(curl.train_tuned, "device", *_TUNED.values(), **_tuned(device="gpu")),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
