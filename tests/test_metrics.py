"""Tests of ccl_helpers.metrics against independent computations: enumerations of tasks
and ordered class tuples, naive loops over tasks and examples, autograd, and
scikit-learn."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from bad_calls import bad_call
from conftest import labels_with_counts, naive_unsupervised_loss, randn

from ccl_helpers import metrics
from ccl_helpers.data import EmpiricalClasses
from ccl_helpers.losses import logistic_loss
from ccl_helpers.metrics._classifiers import _task_probabilities

RHO4 = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)


def blobs(counts, dim, separation, noise, seed=0, dtype=torch.float64):
    """Gaussian clusters: features (n, dim), labels (n,)."""
    labels = labels_with_counts(counts, seed)
    centres = separation * randn(len(counts), dim, seed=seed + 1, dtype=dtype)
    return centres[labels] + noise * randn(
        labels.numel(), dim, seed=seed + 2, dtype=dtype
    ), labels


# ---------------------------------------------------------------- naive references


def naive_task_probabilities(n_classes, task_size, rho):
    """P(T) for T ⊂ classes drawn as an ordered tuple from ρ^m conditioned on distinct
    entries."""
    rho = rho.tolist()
    mass = {}
    for ordered in itertools.permutations(range(n_classes), task_size):
        key = tuple(sorted(ordered))
        mass[key] = mass.get(key, 0.0) + math.prod(rho[c] for c in ordered)
    total = sum(mass.values())
    return {task: value / total for task, value in mass.items()}


def naive_task_loss_and_accuracy(features, labels, rows_of, n_classes, task_size, rho):
    """Σ_T P(T) Σ_{c∈T} (1/m) mean_{x∈c} [−log softmax_{c'∈T}(w_{c'}ᵀf(x))_c], and the
    accuracy.

    features (n, d) as nested lists; rows_of(task) → list of m rows."""
    feats, labels = features.tolist(), labels.tolist()
    loss = accuracy = 0.0
    for task, p_task in naive_task_probabilities(n_classes, task_size, rho).items():
        rows = rows_of(task)
        for j, c in enumerate(task):
            members = [i for i, label in enumerate(labels) if label == c]
            for i in members:
                logits = [sum(w * x for w, x in zip(row, feats[i])) for row in rows]
                top = max(logits)
                lse = top + math.log(sum(math.exp(z - top) for z in logits))
                weight = p_task / (task_size * len(members))
                loss += weight * (lse - logits[j])
                accuracy += weight * (logits.index(top) == j)
    return loss, accuracy


def naive_task_loss(features, labels, task, rows):
    """One task's weighted cross-entropy, in torch (for autograd): rows (m, d)."""
    m = len(task)
    total = 0.0
    for j, c in enumerate(task):
        x = features[labels == c]
        logits = x @ rows.T
        total = total + (torch.logsumexp(logits, -1) - logits[:, j]).mean() / m
    return total


# ---------------------------------------------------------------- tasks


@pytest.mark.parametrize(
    "n_classes, task_size", [(2, 2), (4, 2), (5, 3), (6, 6), (10, 2), (7, 4)]
)
def test_all_tasks(n_classes, task_size):
    tasks = metrics.all_tasks(n_classes, task_size)
    assert tasks.shape == (math.comb(n_classes, task_size), task_size)
    assert tasks.dtype == torch.long
    rows = [tuple(row) for row in tasks.tolist()]
    assert len(set(rows)) == len(rows)  # distinct
    assert all(list(row) == sorted(set(row)) for row in rows)  # each a sorted set
    assert all(0 <= c < n_classes for row in rows for c in row)
    assert rows == sorted(rows)  # lexicographic order


@pytest.mark.parametrize(
    "rho, task_size",
    [
        ([0.1, 0.2, 0.3, 0.4], 2),
        ([0.1, 0.2, 0.3, 0.4], 3),
        ([0.05, 0.15, 0.5, 0.2, 0.1], 3),
        ([0.25] * 4, 2),
        ([0.3, 0.7], 2),
    ],
)
def test_task_probabilities_match_enumeration_of_ordered_tuples(rho, task_size):
    rho = torch.tensor(rho, dtype=torch.float64)
    tasks = metrics.all_tasks(rho.numel(), task_size)
    probabilities = _task_probabilities(tasks, rho)
    expected = naive_task_probabilities(rho.numel(), task_size, rho)
    torch.testing.assert_close(
        probabilities,
        torch.tensor([expected[tuple(t)] for t in tasks.tolist()], dtype=torch.float64),
    )
    assert float(probabilities.sum()) == pytest.approx(1.0)


# ---------------------------------------------------------------- class statistics


def test_class_frequencies():
    labels = torch.tensor([2, 0, 2, 2, 1, 0, 2])
    torch.testing.assert_close(
        metrics.class_frequencies(labels),
        torch.tensor([2, 1, 4], dtype=torch.float64) / 7,
    )
    torch.testing.assert_close(
        metrics.class_frequencies(labels, 5),
        torch.tensor([2, 1, 4, 0, 0], dtype=torch.float64) / 7,
    )


def test_class_means_match_a_loop():
    labels = labels_with_counts((3, 1, 4))
    features = randn(2, 3, labels.numel(), 5, seed=1)
    means = metrics.class_means(features, labels)
    assert means.shape == (2, 3, 3, 5)
    for a, b, c in itertools.product(range(2), range(3), range(3)):
        members = [i for i in range(labels.numel()) if labels[i] == c]
        expected = sum(features[a, b, i] for i in members) / len(members)
        torch.testing.assert_close(means[a, b, c], expected)


def test_class_members():
    labels = torch.tensor([2, 0, 2, 1, 0, 2])
    members, counts = metrics.class_members(labels, n_classes=4)
    assert counts.tolist() == [2, 1, 3, 0]
    assert members.shape == (4, 3)
    for c in range(4):
        row = members[c].tolist()
        real = [i for i in row if i >= 0]
        assert real == [i for i, label in enumerate(labels.tolist()) if label == c]
        assert row[len(real) :] == [-1] * (3 - len(real))


# ---------------------------------------------------------------- task loss and
# accuracy


@pytest.mark.parametrize("task_size", [2, 3, 4])
def test_task_loss_and_accuracy_class_rows_match_naive_loop(task_size):
    labels = labels_with_counts((3, 1, 4, 2), seed=3)
    features = randn(2, labels.numel(), 3, seed=4)
    classifier = randn(2, 4, 3, seed=5)
    tasks = metrics.all_tasks(4, task_size)
    loss, accuracy = metrics.task_loss_and_accuracy(
        features, labels, classifier, tasks, RHO4
    )
    assert loss.shape == accuracy.shape == (2,)
    for s in range(2):
        expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
            features[s],
            labels,
            lambda task, s=s: [classifier[s, c].tolist() for c in task],
            4,
            task_size,
            RHO4,
        )
        assert float(loss[s]) == pytest.approx(expected_loss, rel=1e-10)
        assert float(accuracy[s]) == pytest.approx(expected_accuracy, rel=1e-10)


def test_task_loss_and_accuracy_per_task_rows_match_naive_loop():
    labels = labels_with_counts((2, 3, 1, 3), seed=6)
    features = randn(labels.numel(), 3, seed=7)
    tasks = metrics.all_tasks(4, 3)
    rows = randn(
        tasks.shape[0], 3, 3, seed=8
    )  # one classifier per task, unrelated across tasks
    lookup = {tuple(t): rows[k].tolist() for k, t in enumerate(tasks.tolist())}
    loss, accuracy = metrics.task_loss_and_accuracy(features, labels, rows, tasks, RHO4)
    expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
        features, labels, lookup.__getitem__, 4, 3, RHO4
    )
    assert float(loss) == pytest.approx(expected_loss, rel=1e-10)
    assert float(accuracy) == pytest.approx(expected_accuracy, rel=1e-10)


@pytest.mark.parametrize("task_size", [2, 3])
def test_per_task_form_equals_class_rows_form(task_size):
    labels = labels_with_counts((3, 2, 4, 2), seed=9)
    features = randn(3, labels.numel(), 4, seed=10)
    classifier = randn(3, 4, 4, seed=11)
    tasks = metrics.all_tasks(4, task_size)
    gathered = torch.stack(
        [torch.stack([classifier[:, c] for c in task], 1) for task in tasks.tolist()], 1
    )
    assert gathered.shape == (3, tasks.shape[0], task_size, 4)
    by_class = metrics.task_loss_and_accuracy(features, labels, classifier, tasks, RHO4)
    by_task = metrics.task_loss_and_accuracy(features, labels, gathered, tasks, RHO4)
    torch.testing.assert_close(by_task[0], by_class[0])
    torch.testing.assert_close(by_task[1], by_class[1])


def test_zero_classifier_has_loss_log_m():
    labels = labels_with_counts((3, 2, 4))
    features = randn(labels.numel(), 2, seed=1)
    for m in (2, 3):
        loss, _ = metrics.task_loss_and_accuracy(
            features,
            labels,
            torch.zeros(3, 2, dtype=torch.float64),
            metrics.all_tasks(3, m),
            RHO4[:3] / RHO4[:3].sum(),
        )
        assert float(loss) == pytest.approx(math.log(m), rel=1e-12)


# ---------------------------------------------------------------- mean classifier


def test_mean_classifier_matches_naive_loop():
    train_features, train_labels = blobs((4, 3, 5), 3, 1.0, 1.0, seed=1)
    eval_features, eval_labels = blobs(
        (2, 5, 3), 3, 1.0, 1.0, seed=1
    )  # same centres, other points
    eval_features = eval_features + 0.3 * randn(*eval_features.shape, seed=20)
    means = [
        [float(v) for v in train_features[train_labels == c].mean(0)] for c in range(3)
    ]
    for m in (2, 3):
        result = metrics.mean_classifier(
            train_features, train_labels, eval_features, eval_labels, task_size=m
        )
        rho = (
            torch.tensor([2, 5, 3], dtype=torch.float64) / 10
        )  # eval label frequencies by default
        expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
            eval_features, eval_labels, lambda task: [means[c] for c in task], 3, m, rho
        )
        assert float(result["loss"]) == pytest.approx(expected_loss, rel=1e-10)
        assert float(result["accuracy"]) == pytest.approx(expected_accuracy, rel=1e-10)
    rho = torch.tensor([0.6, 0.1, 0.3], dtype=torch.float64)
    result = metrics.mean_classifier(
        train_features, train_labels, task_size=2, class_probs=rho
    )  # eval on train data
    expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
        train_features, train_labels, lambda task: [means[c] for c in task], 3, 2, rho
    )
    assert float(result["loss"]) == pytest.approx(expected_loss, rel=1e-10)
    assert float(result["accuracy"]) == pytest.approx(expected_accuracy, rel=1e-10)


def test_mean_classifier_with_seed_dimension_equals_per_seed_calls():
    labels = labels_with_counts((3, 4, 2, 3), seed=2)
    train_features = randn(3, labels.numel(), 5, seed=3)
    eval_features = randn(3, labels.numel(), 5, seed=4)
    for m in (2, 3):
        together = metrics.mean_classifier(
            train_features, labels, eval_features, labels, task_size=m
        )
        assert together["loss"].shape == together["accuracy"].shape == (3,)
        for s in range(3):
            alone = metrics.mean_classifier(
                train_features[s], labels, eval_features[s], labels, task_size=m
            )
            torch.testing.assert_close(together["loss"][s], alone["loss"])
            torch.testing.assert_close(together["accuracy"][s], alone["accuracy"])
        assert not torch.allclose(together["loss"][0], together["loss"][1])


# ---------------------------------------------------------------- best linear
# classifiers


def overlapping_problem():
    """Three overlapping Gaussian classes (not separable) of unequal sizes, in 3
    dimensions."""
    return blobs((12, 9, 15), 3, 1.0, 1.2, seed=5)


@pytest.mark.parametrize("task_size", [2, 3])
def test_fitted_classifiers_are_stationary_and_beat_zero_and_the_means(task_size):
    features, labels = overlapping_problem()
    tasks = metrics.all_tasks(3, task_size)
    rows = metrics.fit_linear_classifiers(features, labels, tasks)
    assert rows.shape == (tasks.shape[0], task_size, 3) and rows.dtype == torch.float64
    means = metrics.class_means(features, labels)
    for k, task in enumerate(tasks.tolist()):
        w = rows[k].clone().requires_grad_(True)
        loss = naive_task_loss(features, labels, task, w)
        (gradient,) = torch.autograd.grad(loss, w)
        loss = loss.detach()
        assert float(gradient.abs().max()) < 1e-4
        assert float(loss) < math.log(task_size) - 1e-3  # the loss at W = 0 is log m
        assert (
            float(loss)
            <= float(naive_task_loss(features, labels, task, means[task])) + 1e-7
        )
        # and it is a minimum: small perturbations do not decrease the loss
        for seed in range(3):
            nudged = rows[k] + 1e-2 * randn(*rows[k].shape, seed=seed)
            assert (
                float(naive_task_loss(features, labels, task, nudged))
                >= float(loss) - 1e-9
            )


def test_fitted_classifier_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    features, labels = blobs(
        (10, 10, 10), 3, 1.0, 1.2, seed=7
    )  # equal class sizes: uniform weights
    tasks = metrics.all_tasks(3, 3)
    rows = metrics.fit_linear_classifiers(features, labels, tasks, max_iter=1000)[0]
    ours = float(naive_task_loss(features, labels, [0, 1, 2], rows))
    reference = LogisticRegression(
        C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000
    )
    reference.fit(features.numpy(), labels.numpy())
    coefficients = torch.tensor(reference.coef_, dtype=torch.float64)
    theirs = float(naive_task_loss(features, labels, [0, 1, 2], coefficients))
    assert ours == pytest.approx(theirs, abs=1e-4)
    # same predicted probabilities (the rows themselves are defined up to a common
    # shift)
    ours_p = torch.softmax(features @ rows.T, -1)
    np.testing.assert_allclose(
        ours_p.numpy(), reference.predict_proba(features.numpy()), atol=1e-3
    )


def test_fit_with_seed_dimension_equals_per_seed_fits():
    labels = labels_with_counts((8, 6, 7), seed=4)
    features = randn(2, labels.numel(), 3, seed=5)
    tasks = metrics.all_tasks(3, 2)
    together = metrics.fit_linear_classifiers(features, labels, tasks)
    assert together.shape == (2, 3, 2, 3)
    for s in range(2):
        for k, task in enumerate(tasks.tolist()):
            joint = float(naive_task_loss(features[s], labels, task, together[s, k]))
            alone = float(
                naive_task_loss(
                    features[s],
                    labels,
                    task,
                    metrics.fit_linear_classifiers(features[s], labels, tasks)[k],
                )
            )
            assert joint == pytest.approx(alone, abs=1e-5)


def naive_weighted_loss(features, labels, task, rows, weight):
    """Σ_{i: y_i ∈ T} w_i ce_i / Σ_{i: y_i ∈ T} w_i, in torch (for autograd)."""
    inside = sum(labels == c for c in task).bool()
    logits = features[inside] @ rows.T
    own = torch.tensor([task.index(c) for c in labels[inside].tolist()])
    ce = torch.logsumexp(logits, -1) - logits[torch.arange(own.numel()), own]
    return (weight[inside] * ce).sum() / weight[inside].sum()


def test_fit_with_sample_weight_is_stationary_for_the_weighted_loss():
    features, labels = overlapping_problem()
    weight = 0.5 + torch.rand(
        labels.numel(), generator=torch.Generator().manual_seed(3), dtype=torch.float64
    )
    tasks = metrics.all_tasks(3, 2)
    rows = metrics.fit_linear_classifiers(
        features, labels, tasks, sample_weight=weight, dtype=torch.float64
    )
    for k, task in enumerate(tasks.tolist()):
        w = rows[k].clone().requires_grad_(True)
        (gradient,) = torch.autograd.grad(
            naive_weighted_loss(features, labels, task, w, weight), w
        )
        assert float(gradient.abs().max()) < 1e-6
    # the weights matter: the unweighted fit is a different classifier
    plain = metrics.fit_linear_classifiers(features, labels, tasks, dtype=torch.float64)
    assert float((plain - rows).abs().max()) > 1e-2


def test_weighted_fit_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    features, labels = overlapping_problem()
    weight = 0.5 + torch.rand(
        labels.numel(), generator=torch.Generator().manual_seed(4), dtype=torch.float64
    )
    rows = metrics.fit_linear_classifiers(
        features,
        labels,
        metrics.all_tasks(3, 3),
        sample_weight=weight,
        dtype=torch.float64,
        max_iter=1000,
    )[0]
    reference = LogisticRegression(
        C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000
    )
    reference.fit(features.numpy(), labels.numpy(), sample_weight=weight.numpy())
    np.testing.assert_allclose(
        torch.softmax(features @ rows.T, -1).numpy(),
        reference.predict_proba(features.numpy()),
        atol=1e-4,
    )


def test_integer_sample_weights_equal_repeated_examples():
    features, labels = overlapping_problem()
    repeats = 1 + torch.arange(labels.numel()) % 3
    tasks = metrics.all_tasks(3, 3)
    weighted = metrics.fit_linear_classifiers(
        features,
        labels,
        tasks,
        sample_weight=repeats.double(),
        dtype=torch.float64,
        tolerance=1e-10,
    )
    repeated = metrics.fit_linear_classifiers(
        features.repeat_interleave(repeats, 0),
        labels.repeat_interleave(repeats),
        tasks,
        sample_weight=torch.ones(int(repeats.sum()), dtype=torch.float64),
        dtype=torch.float64,
        tolerance=1e-10,
    )
    torch.testing.assert_close(weighted, repeated, atol=1e-6, rtol=0)


def test_fit_starts_from_init():
    features, labels = overlapping_problem()
    tasks = metrics.all_tasks(3, 3)
    means = metrics.class_means(features, labels)[tasks]  # (1, 3, d)
    one_step = metrics.fit_linear_classifiers(
        features, labels, tasks, init=means, max_iter=1, dtype=torch.float64
    )
    from_zero = metrics.fit_linear_classifiers(
        features, labels, tasks, max_iter=1, dtype=torch.float64
    )
    # one L-BFGS iteration moves along the gradient at the start: different starts,
    # different rows; and from the means the loss is below the mean classifier's
    assert float((one_step - from_zero).abs().max()) > 1e-3
    start = float(naive_task_loss(features, labels, [0, 1, 2], means[0]))
    assert float(naive_task_loss(features, labels, [0, 1, 2], one_step[0])) < start
    # from a stationary start, the fit stays there
    best = metrics.fit_linear_classifiers(features, labels, tasks, dtype=torch.float64)
    again = metrics.fit_linear_classifiers(
        features, labels, tasks, init=best, dtype=torch.float64
    )
    torch.testing.assert_close(again, best, atol=1e-6, rtol=0)


@pytest.mark.parametrize("task_size", [2, 4])
def test_linear_probe_on_separated_blobs_is_accurate(task_size):
    train_features, train_labels = blobs(
        (15, 15, 15, 15), 4, 10.0, 0.3, seed=11, dtype=torch.float32
    )
    eval_features, eval_labels = blobs(
        (10, 10, 10, 10), 4, 10.0, 0.3, seed=11, dtype=torch.float32
    )
    eval_features = eval_features + 0.3 * randn(
        *eval_features.shape, seed=12, dtype=torch.float32
    )
    result = metrics.linear_probe(
        train_features,
        train_labels,
        eval_features,
        eval_labels,
        task_size=task_size,
        max_iter=100,
    )
    assert float(result["accuracy"]) > 0.99
    assert 0 <= float(result["loss"]) < 0.05


@pytest.mark.parametrize("classifier", [metrics.linear_probe, metrics.mean_classifier])
def test_classifiers_default_to_one_task_of_all_the_classes(classifier):
    """The usual k-way classifier: the same as task_size = number of classes, not
    CURL's average over binary tasks (which is easier)."""
    features, labels = overlapping_problem()
    default = classifier(features, labels)
    all_classes = classifier(features, labels, task_size=3)
    assert torch.equal(default["accuracy"], all_classes["accuracy"])
    assert torch.equal(default["loss"], all_classes["loss"])
    binary = classifier(features, labels, task_size=2)
    assert float(binary["accuracy"]) > float(default["accuracy"])


def test_linear_probe_loss_is_below_the_mean_classifier_loss_on_its_training_data():
    features, labels = overlapping_problem()
    rho = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    for m in (2, 3):
        probe = metrics.linear_probe(features, labels, task_size=m, class_probs=rho)
        mean = metrics.mean_classifier(features, labels, task_size=m, class_probs=rho)
        assert float(probe["loss"]) <= float(mean["loss"]) + 1e-7
        assert float(probe["loss"]) < math.log(m)


# ---------------------------------------------------------------- the exact L_un

RHO = torch.tensor([0.5, 0.2, 0.3], dtype=torch.float64)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 64])
def test_exact_unsupervised_loss_matches_naive_triple_loop(chunk_size):
    labels = labels_with_counts((2, 4, 1), seed=1)
    features = randn(labels.numel(), 3, seed=2)
    value = metrics.exact_unsupervised_loss(
        features, labels, RHO, chunk_size=chunk_size
    )
    assert value.shape == () and value.dtype == torch.float64
    assert float(value) == pytest.approx(
        naive_unsupervised_loss(features, labels, RHO), rel=1e-12
    )


def test_exact_unsupervised_loss_default_rho_is_label_frequencies():
    labels = labels_with_counts((3, 1, 2), seed=3)
    features = randn(labels.numel(), 2, seed=4)
    frequencies = torch.tensor([3, 1, 2], dtype=torch.float64) / 6
    assert float(metrics.exact_unsupervised_loss(features, labels)) == pytest.approx(
        naive_unsupervised_loss(features, labels, frequencies), rel=1e-12
    )


@pytest.mark.parametrize("chunk_size", [2, 64])
def test_exact_unsupervised_loss_with_leading_dimensions(chunk_size):
    labels = labels_with_counts((2, 3, 2), seed=5)
    features = randn(2, 3, labels.numel(), 2, seed=6)
    value = metrics.exact_unsupervised_loss(
        features, labels, RHO, chunk_size=chunk_size
    )
    assert value.shape == (2, 3)
    for a in range(2):
        for b in range(3):
            assert float(value[a, b]) == pytest.approx(
                naive_unsupervised_loss(features[a, b], labels, RHO), rel=1e-12
            )


def test_exact_unsupervised_loss_float32_features_are_computed_in_float64():
    labels = labels_with_counts((2, 3, 2), seed=5)
    features = randn(labels.numel(), 2, seed=7, dtype=torch.float32)
    value = metrics.exact_unsupervised_loss(features, labels, RHO.float())
    assert value.dtype == torch.float64
    assert float(value) == pytest.approx(
        naive_unsupervised_loss(features.double(), labels, RHO), rel=1e-6
    )


def test_exact_unsupervised_loss_matches_monte_carlo_from_the_samplers():
    labels = labels_with_counts((3, 5, 2), seed=8)
    features = randn(labels.numel(), 3, seed=9) * 0.8
    exact = float(metrics.exact_unsupervised_loss(features, labels, RHO))
    latent = EmpiricalClasses(features, labels, class_probs=RHO)
    generator = torch.Generator().manual_seed(10)
    n = 100_000
    anchor, positive, _ = latent.sample_sim((n,), generator)
    negative, _ = latent.sample_neg((n,), generator)
    samples = logistic_loss(anchor, positive, negative, reduction="none")
    standard_error = float(samples.std()) / math.sqrt(n)
    assert abs(float(samples.mean()) - exact) < 4 * standard_error
    # the comparison has power: the estimate is far from L_un under other class weights
    uniform = float(metrics.exact_unsupervised_loss(features, labels))
    assert abs(uniform - exact) > 8 * standard_error


def test_class_frequencies_and_members_validate_labels():
    labels = torch.tensor([0, 2, 2, 1])
    torch.testing.assert_close(
        metrics.class_frequencies(labels),
        torch.tensor([0.25, 0.25, 0.5], dtype=torch.float64),
    )
    members, counts = metrics.class_members(labels)
    assert members.tolist() == [[0, -1], [3, -1], [1, 2]] and counts.tolist() == [
        1,
        1,
        2,
    ]
    for call in (metrics.class_frequencies, metrics.class_members):
        with pytest.raises(ValueError, match="labels must be an integer"):
            call(labels.float())
        with pytest.raises(ValueError, match=r"labels must be classes in 0\.\.1"):
            call(labels, 2)


def naive_mean_rows(train_features, train_labels, n_classes, centre, normalise):
    """Class means (list of rows) of the training features, computed with numpy after
    subtracting the training mean (centre), scaled to unit norm (normalise); and the
    offset subtracted."""
    x = train_features.numpy()
    offset = x.mean(0) if centre else np.zeros(x.shape[1])
    y = train_labels.numpy()
    rows = []
    for c in range(n_classes):
        mu = (x[y == c] - offset).mean(0)
        rows.append(mu / np.linalg.norm(mu) if normalise else mu)
    return [row.tolist() for row in rows], offset


@pytest.mark.parametrize(
    "centre, normalise", [(True, False), (False, True), (True, True)]
)
@pytest.mark.parametrize("task_size", [2, 3])
def test_mean_classifier_centred_and_normalised_match_naive(
    centre, normalise, task_size
):
    train_features, train_labels = blobs((4, 3, 5), 3, 1.0, 1.0, seed=1)
    train_features = train_features + torch.tensor([1.5, -0.5, 2.0])
    eval_features, eval_labels = blobs((2, 5, 3), 3, 1.0, 1.0, seed=1)
    eval_features = eval_features + 0.3 * randn(*eval_features.shape, seed=20) + 1.0
    rows, offset = naive_mean_rows(train_features, train_labels, 3, centre, normalise)
    rho = torch.tensor([2, 5, 3], dtype=torch.float64) / 10
    options = {"centre": centre, "normalise": normalise, "task_size": task_size}
    result = metrics.mean_classifier(
        train_features, train_labels, eval_features, eval_labels, **options
    )
    expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
        eval_features - torch.from_numpy(offset),
        eval_labels,
        lambda task: [rows[c] for c in task],
        3,
        task_size,
        rho,
    )
    assert float(result["loss"]) == pytest.approx(expected_loss, rel=1e-10)
    assert float(result["accuracy"]) == pytest.approx(expected_accuracy, rel=1e-10)
    # evaluated on the training data by default, centred by its own mean
    result = metrics.mean_classifier(train_features, train_labels, **options)
    expected_loss, expected_accuracy = naive_task_loss_and_accuracy(
        train_features - torch.from_numpy(offset),
        train_labels,
        lambda task: [rows[c] for c in task],
        3,
        task_size,
        torch.tensor([4, 3, 5], dtype=torch.float64) / 12,
    )
    assert float(result["loss"]) == pytest.approx(expected_loss, rel=1e-10)
    assert float(result["accuracy"]) == pytest.approx(expected_accuracy, rel=1e-10)
    # and the variant is not the plain mean classifier on these shifted features
    plain = metrics.mean_classifier(train_features, train_labels, task_size=task_size)
    assert float(plain["loss"]) != pytest.approx(float(result["loss"]), rel=1e-6)


def test_mean_classifier_centred_per_seed():
    labels = labels_with_counts((3, 4, 2), seed=2)
    shift = torch.tensor([[[3.0, 0.0]], [[-1.0, 2.0]]], dtype=torch.float64)
    train_features = randn(2, labels.numel(), 2, seed=3) + shift
    eval_features = randn(2, labels.numel(), 2, seed=4) + shift
    together = metrics.mean_classifier(
        train_features, labels, eval_features, labels, centre=True, normalise=True
    )
    for s in range(2):
        alone = metrics.mean_classifier(
            train_features[s] - train_features[s].mean(0),
            labels,
            eval_features[s] - train_features[s].mean(0),
            labels,
            normalise=True,
        )
        torch.testing.assert_close(together["loss"][s], alone["loss"])
        torch.testing.assert_close(together["accuracy"][s], alone["accuracy"])


def test_centring_features_of_mean_zero_changes_nothing():
    features, labels = blobs((4, 3, 5), 3, 1.0, 1.0, seed=5)
    features = features - features.mean(0)
    eval_features, eval_labels = blobs((3, 3, 3), 3, 1.0, 1.0, seed=6)
    for task_size in (2, 3):
        plain = metrics.mean_classifier(
            features, labels, eval_features, eval_labels, task_size=task_size
        )
        centred = metrics.mean_classifier(
            features,
            labels,
            eval_features,
            eval_labels,
            task_size=task_size,
            centre=True,
        )
        torch.testing.assert_close(centred["loss"], plain["loss"])
        torch.testing.assert_close(centred["accuracy"], plain["accuracy"])


def test_normalising_means_of_equal_norm_keeps_the_accuracy():
    features, labels = blobs((4, 3, 5), 3, 1.0, 1.0, seed=7)
    means = metrics.class_means(features, labels)
    # rescale each class so that every class mean has norm 2.5
    features = features * (2.5 / means.norm(dim=-1))[labels, None]
    torch.testing.assert_close(
        metrics.class_means(features, labels).norm(dim=-1),
        torch.full((3,), 2.5, dtype=torch.float64),
    )
    eval_features, eval_labels = blobs((3, 3, 3), 3, 1.0, 1.0, seed=8)
    for task_size in (2, 3):
        plain = metrics.mean_classifier(
            features, labels, eval_features, eval_labels, task_size=task_size
        )
        unit = metrics.mean_classifier(
            features,
            labels,
            eval_features,
            eval_labels,
            task_size=task_size,
            normalise=True,
        )
        torch.testing.assert_close(unit["accuracy"], plain["accuracy"])
        # the logits are divided by 2.5: the loss changes
        assert float(unit["loss"]) != pytest.approx(float(plain["loss"]), rel=1e-3)


# ---------------------------------------------------------------- differences of means


def test_encode_in_chunks_equals_one_call():
    from ccl_helpers.train import StackedModel

    model = StackedModel(lambda: torch.nn.Linear(5, 3), 2, seed=0)
    images = torch.rand(23, 5, generator=torch.Generator().manual_seed(0))
    whole = model(images)
    chunked = metrics.encode(model, images, chunk_size=4)
    assert chunked.shape == (2, 23, 3) and not chunked.requires_grad
    torch.testing.assert_close(chunked, whole.detach())


def test_standardise_moments_and_shapes():
    g = torch.Generator().manual_seed(1)
    fit = 3 + 5 * torch.randn(2, 50, 4, generator=g, dtype=torch.float64)
    other = torch.randn(2, 7, 4, generator=g, dtype=torch.float64)
    fit_s, other_s = metrics.standardise(fit, other)
    torch.testing.assert_close(fit_s.mean(-2), torch.zeros(2, 4, dtype=torch.float64))
    torch.testing.assert_close(fit_s.std(-2), torch.ones(2, 4, dtype=torch.float64))
    expected = (other - fit.mean(-2, keepdim=True)) / fit.std(-2, keepdim=True)
    torch.testing.assert_close(other_s, expected)


def test_knn_accuracy_keeps_the_features_dtype():
    features, labels = randn(6, 3), torch.arange(6) % 2
    assert metrics.knn_accuracy(features, labels, features, labels).dtype == (
        torch.float64
    )


def test_mean_classifier_over_every_task_of_three_of_six_classes_per_seed():
    features, labels = torch.randn(2, 12, 4), torch.arange(12) % 6
    found = metrics.mean_classifier(features, labels, task_size=3)
    assert found["accuracy"].shape == (2,)


# ---------------------------------------------------------------- bad calls

EMPTY_FEATURES, NO_LABELS = torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)
FEATURES, LABELS = randn(9, 2, seed=3), labels_with_counts((3, 3, 3))
FLOAT_FEATURES, EVEN_ODD = FEATURES[:6].float(), torch.arange(6) % 2
TASKS = torch.tensor([[0, 1], [0, 2], [1, 2]])
RHO3 = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)
TWO_CLASSES = labels_with_counts((2, 3))
SAMPLES = metrics.draw_unsupervised_samples(TWO_CLASSES, 2, 5)
BAD_CALLS = [
    *(
        bad_call(metrics.all_tasks, "task_size", n_classes, task_size)
        for n_classes, task_size in ((4, 1), (4, 5), (3, 0), (4, 2.0))
    ),
    bad_call(metrics.all_tasks, "n_classes", 1, 2),
    # C(N, m) explodes: refused by count, before listing one
    bad_call(
        metrics.all_tasks, "n_classes=40, task_size=20 give 137,846,528,820", 40, 20
    ),
    bad_call(metrics.all_tasks, "n_classes=1125899906842624, task_size=2", 2**50, 2),
    bad_call(metrics.all_tasks, "n_classes=1125899906842624, task_size=", 2**50, 2**49),
    bad_call(metrics.all_tasks, "device", 3, 2, device="bogus"),
    bad_call(metrics.class_frequencies, "labels must be an integer", LABELS.float()),
    bad_call(metrics.class_frequencies, r"labels must be classes in 0\.\.1", LABELS, 2),
    bad_call(metrics.class_frequencies, "labels must be torch.int64", LABELS.int()),
    bad_call(metrics.class_means, "every class", FEATURES[:5], TWO_CLASSES, 3),
    bad_call(metrics.class_means, "features", FEATURES[:4], TWO_CLASSES),  # n ≠ len
    bad_call(metrics.class_means, "features", FEATURES[:5, 0], TWO_CLASSES),  # no d
    bad_call(
        metrics.class_members, "labels must hold at least 1 example", NO_LABELS, 2
    ),
    bad_call(metrics.class_members, "labels must be an integer", LABELS.float()),
    bad_call(metrics.class_members, r"labels must be classes in 0\.\.1", LABELS, 2),
    bad_call(metrics.class_weights, "n_classes", None, 0, torch.tensor([2, 2]), True),
    bad_call(metrics.class_weights, "counts", None, 2, torch.tensor([2.0, 2.0]), True),
    bad_call(
        metrics.class_weights, "counts must hold", None, 3, torch.tensor([2, 2]), True
    ),
    bad_call(
        metrics.class_weights, "class_probs", [0.7, 0.7], 2, torch.tensor([2, 2]), True
    ),
    bad_call(metrics.labelled_set_sizes, "features", FEATURES[:5], TWO_CLASSES[:4]),
    bad_call(metrics.labelled_set_sizes, "every class", FEATURES[:5], TWO_CLASSES * 2),
    bad_call(
        metrics.task_loss_and_accuracy,
        "classifier",
        FEATURES,
        LABELS,
        randn(5, 2),
        TASKS,
        RHO3,
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "features",
        FEATURES[:-1],
        LABELS,
        randn(3, 2),
        TASKS,
        RHO3,
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "every class",
        FEATURES,
        LABELS.masked_fill(LABELS == 1, 0),  # class 1 has no example
        randn(3, 2),
        TASKS,
        RHO3,
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "class_probs must sum to 1",
        FEATURES,
        LABELS,
        randn(3, 2),
        TASKS,
        RHO3 * 2,
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "class_probs must have entries",
        FEATURES,
        LABELS,
        randn(3, 2),
        TASKS,
        torch.tensor([1.2, -0.1, -0.1]),
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "tasks",
        FEATURES,
        LABELS,
        randn(3, 2),
        TASKS.float(),
        RHO3,
    ),
    bad_call(
        metrics.task_loss_and_accuracy,
        "sample_weight",
        FEATURES,
        LABELS,
        randn(3, 2),
        TASKS,
        RHO3,
        sample_weight=torch.ones(5),
    ),
    bad_call(
        metrics.fit_linear_classifiers, "max_iter", FEATURES, LABELS, TASKS, max_iter=0
    ),
    bad_call(
        metrics.fit_linear_classifiers,
        "tolerance",
        FEATURES,
        LABELS,
        TASKS,
        tolerance=0.0,
    ),
    bad_call(metrics.fit_linear_classifiers, "features", FEATURES[1:], LABELS, TASKS),
    bad_call(
        metrics.fit_linear_classifiers,
        "dtype",
        FEATURES,
        LABELS,
        TASKS,
        dtype=torch.int64,
    ),
    bad_call(
        metrics.fit_linear_classifiers,
        "init",
        FEATURES,
        LABELS,
        TASKS,
        init=torch.zeros(2, 3),
    ),
    bad_call(
        metrics.fit_linear_classifiers,
        "init",
        FEATURES,
        LABELS,
        TASKS,
        init=torch.zeros(3, 2, 2, dtype=torch.long),
    ),
    *(
        bad_call(
            metrics.fit_linear_classifiers,
            "sample_weight",
            FEATURES,
            LABELS,
            TASKS,
            sample_weight=weight,
        )
        for weight in (torch.ones(5), -torch.ones(9), torch.ones(9, dtype=torch.long))
    ),
    bad_call(
        metrics.mean_classifier, "eval_labels", FEATURES, LABELS, eval_features=FEATURES
    ),
    bad_call(
        metrics.mean_classifier, "eval_labels", FEATURES, LABELS, eval_labels=LABELS
    ),
    bad_call(metrics.mean_classifier, "task_size", FEATURES, LABELS, task_size=1),
    bad_call(metrics.mean_classifier, "task_size", FEATURES, LABELS, task_size=4),
    bad_call(metrics.mean_classifier, "train_features", FEATURES[:-1], LABELS),
    bad_call(
        metrics.mean_classifier, "train_features", FEATURES[:-1], LABELS, centre=True
    ),
    bad_call(
        metrics.mean_classifier,
        "eval_features",
        FEATURES,
        LABELS,
        FEATURES[:-2],
        LABELS[:-1],
    ),
    # class 2 only in the evaluation set
    bad_call(
        metrics.mean_classifier,
        "every class",
        FEATURES[LABELS < 2],
        LABELS[LABELS < 2],
        FEATURES,
        LABELS,
    ),
    bad_call(
        metrics.mean_classifier,
        "eval_labels must hold at least 1 example",
        FEATURES,
        LABELS,
        EMPTY_FEATURES[:, :2],
        NO_LABELS,
    ),
    # C(40, 20) binary… tasks of 20 classes: refused by count
    bad_call(
        metrics.mean_classifier, "tasks", randn(40, 2), torch.arange(40), task_size=20
    ),
    bad_call(
        metrics.linear_probe, "eval_labels", FEATURES, LABELS, eval_features=FEATURES
    ),
    bad_call(
        metrics.linear_probe,
        "eval_labels must hold at least 1 example",
        FEATURES,
        LABELS,
        EMPTY_FEATURES[:, :2],
        NO_LABELS,
    ),
    bad_call(metrics.linear_probe, "max_iter", FEATURES, LABELS, max_iter=0),
    # mixed dtypes are refused before the fit (max_iter=10⁹ would run for ever)
    bad_call(
        metrics.linear_probe,
        "eval_features.*train_features.*float64",
        FEATURES,
        LABELS,
        FEATURES.float(),
        LABELS,
        max_iter=10**9,
    ),
    bad_call(
        metrics.knn_accuracy,
        "eval_labels must hold at least 1 example",
        FEATURES,
        LABELS,
        EMPTY_FEATURES[:, :2],
        NO_LABELS,
        k=3,
    ),
    bad_call(
        metrics.knn_accuracy,
        "eval_features.*train_features.*float64",
        FLOAT_FEATURES.double(),
        EVEN_ODD,
        FLOAT_FEATURES,
        EVEN_ODD,
    ),
    bad_call(
        metrics.knn_accuracy,
        "eval_features.*train_features.*float32",
        FLOAT_FEATURES,
        EVEN_ODD,
        FLOAT_FEATURES.double(),
        EVEN_ODD,
    ),
    bad_call(
        metrics.knn_accuracy,
        "train_features must be a floating-point",
        FLOAT_FEATURES.long(),
        EVEN_ODD,
        FLOAT_FEATURES.long(),
        EVEN_ODD,
    ),
    bad_call(
        metrics.knn_accuracy,
        "eval_labels must be an integer",
        FLOAT_FEATURES,
        EVEN_ODD,
        FLOAT_FEATURES,
        EVEN_ODD.double(),
    ),
    bad_call(metrics.knn_accuracy, "k", FEATURES, LABELS, FEATURES, LABELS, k=10),
    bad_call(
        metrics.knn_accuracy, "block", FEATURES, LABELS, FEATURES, LABELS, block=0
    ),
    bad_call(
        metrics.encode, "chunk_size", torch.nn.Linear(2, 3), FEATURES, chunk_size=0
    ),
    bad_call(metrics.encode, "encoder", "bogus", FEATURES),
    bad_call(
        metrics.encode, "images must be finite", torch.nn.Linear(2, 3), FEATURES / 0
    ),
    bad_call(metrics.standardise, r"others\[0\]", FEATURES, FEATURES[..., :1]),
    bad_call(metrics.standardise, "fit", FEATURES[:, 0]),
    bad_call(metrics.exact_unsupervised_loss, "features", FEATURES[:4], TWO_CLASSES),
    bad_call(metrics.exact_unsupervised_loss, "features", FEATURES[:5, 0], TWO_CLASSES),
    bad_call(
        metrics.exact_unsupervised_loss,
        "chunk_size",
        FEATURES[:5],
        TWO_CLASSES,
        chunk_size=0,
    ),
    bad_call(
        metrics.exact_unsupervised_loss,
        "every class",
        FEATURES[:5],
        TWO_CLASSES.masked_fill(TWO_CLASSES == 0, 2),
    ),
    bad_call(
        metrics.exact_unsupervised_loss,
        "class_probs",
        FEATURES[:5],
        TWO_CLASSES,
        torch.tensor([0.6, 0.6]),
    ),
    # 3 entries for 2 classes, then 2 for 3
    bad_call(
        metrics.exact_unsupervised_loss,
        "class_probs",
        FEATURES[:5],
        TWO_CLASSES,
        torch.tensor([0.5, 0.3, 0.2]),
    ),
    bad_call(
        metrics.exact_unsupervised_loss,
        "class_probs",
        FEATURES[:5],
        labels_with_counts((2, 2, 1)),
        torch.tensor([0.5, 0.5]),
    ),
    bad_call(
        metrics.exact_unsupervised_loss,
        "labels must hold at least 1",
        FEATURES[:0],
        NO_LABELS,
    ),
    bad_call(metrics.draw_unsupervised_samples, "n_negatives", TWO_CLASSES, 0, 5),
    bad_call(metrics.draw_unsupervised_samples, "n_samples", TWO_CLASSES, 2, 1),
    bad_call(metrics.draw_unsupervised_samples, "n_samples", TWO_CLASSES, 2, 5.0),
    bad_call(metrics.draw_unsupervised_samples, "labels", TWO_CLASSES.float(), 2, 5),
    bad_call(
        metrics.draw_unsupervised_samples,
        "class_probs",
        TWO_CLASSES,
        2,
        5,
        class_probs=torch.tensor([1.0, 0.0]),
    ),
    bad_call(metrics.unsupervised_loss_curve, "samples", FEATURES[:5], tuple(SAMPLES)),
    bad_call(metrics.unsupervised_loss_curve, "features", FEATURES[:5].long(), SAMPLES),
    bad_call(
        metrics.unsupervised_loss_curve, "samples index examples", FEATURES[:3], SAMPLES
    ),
    bad_call(
        metrics.unsupervised_loss_monte_carlo,
        "n_negatives",
        FEATURES[:5],
        TWO_CLASSES,
        0,
        5,
    ),
    bad_call(
        metrics.unsupervised_loss_monte_carlo,
        "n_samples",
        FEATURES[:5],
        TWO_CLASSES,
        2,
        1,
    ),
    bad_call(
        metrics.unsupervised_loss_monte_carlo,
        "features",
        FEATURES[:4],
        TWO_CLASSES,
        2,
        5,
    ),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
