"""Tests of ccl_helpers.curl (Arora et al. 2019): the bound, the lemma L_sup ≤ L_mu ≤
bound, the block loss, the batch samplers, and the Monte Carlo lemma."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import labels_with_counts, naive_unsupervised_loss, randn

from ccl_helpers import curl, metrics
from ccl_helpers.data import EmpiricalClasses, GaussianClasses
from ccl_helpers.losses import logistic_loss
from ccl_helpers.models import MLP
from ccl_helpers.train import StackedModel, train

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


# ---------------------------------------------------------------- the Monte Carlo lemma


def test_monte_carlo_lemma_small():
    latent = GaussianClasses.random(
        3, 4, class_probs=torch.tensor([0.5, 0.3, 0.2]), separation=2.0, seed=4
    )
    model = StackedModel(lambda: MLP(4, (8,), 5), n_seeds=2, seed=1)
    before = {name: value.detach().clone() for name, value in model.params.items()}
    # called with gradients enabled, as a notebook would: no graph is kept, the model is
    # untouched
    table = curl.monte_carlo_lemma(
        model,
        latent,
        n_samples=4000,
        generator=torch.Generator().manual_seed(5),
        n_batches=10,
        n_fit=500,
        max_iter=50,
    )
    for name, value in model.params.items():
        assert torch.equal(value, before[name]) and value.grad is None
    names = ["L_un", "L_mu", "L_sup", "bound"]
    assert set(table.columns) == {"seed", *names, *(f"se_{n}" for n in names)}
    assert table["seed"].tolist() == [1, 2]
    for name in names:
        assert np.isfinite(table[name]).all() and (table[name] > 0).all()
        assert (
            np.isfinite(table[f"se_{name}"]).all() and (table[f"se_{name}"] > 0).all()
        )
    gap_se = np.sqrt(table["se_L_mu"] ** 2 + table["se_bound"] ** 2)
    assert (table["L_mu"] <= table["bound"] + 4 * gap_se).all()
    tau = 0.25 + 0.09 + 0.04
    np.testing.assert_allclose(
        table["bound"], (table["L_un"] - tau * math.log(2)) / (1 - tau), rtol=1e-6
    )


def test_monte_carlo_lemma_l_un_matches_a_large_sample_of_the_same_model():
    latent = GaussianClasses.random(2, 3, separation=2.0, seed=6)
    model = StackedModel(lambda: MLP(3, (), 2), n_seeds=1, seed=2)
    with torch.no_grad():
        table = curl.monte_carlo_lemma(
            model,
            latent,
            n_samples=4000,
            generator=torch.Generator().manual_seed(7),
            n_batches=10,
            n_fit=500,
            max_iter=30,
        )
        generator = torch.Generator().manual_seed(8)
        n = 100_000
        anchor, positive, _ = latent.sample_sim((n,), generator)
        negative, _ = latent.sample_neg((n,), generator)
        reference = logistic_loss(
            model(anchor), model(positive), model(negative), reduction="none"
        ).double()
    reference_se = float(reference.std()) / math.sqrt(n)
    se = math.hypot(float(table["se_L_un"][0]), reference_se)
    assert abs(float(table["L_un"][0]) - float(reference.mean())) < 4 * se


@pytest.mark.parametrize("n_samples, n_batches", [(100, 1), (5, 10)])
def test_monte_carlo_lemma_bad_sizes_raise(n_samples, n_batches):
    latent = GaussianClasses.random(2, 2)
    model = StackedModel(lambda: MLP(2, (), 2), n_seeds=1)
    with pytest.raises(ValueError, match="n_batches"):
        curl.monte_carlo_lemma(
            model, latent, n_samples, torch.Generator(), n_batches=n_batches
        )


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
