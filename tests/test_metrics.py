"""Tests of ccl_helpers.metrics against independent computations: enumerations of tasks
and ordered class tuples, naive loops over tasks and examples, autograd, and
scikit-learn."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from conftest import labels_with_counts, naive_unsupervised_loss, nominal_bytes, randn

from ccl_helpers import metrics
from ccl_helpers.data import EmpiricalClasses
from ccl_helpers.losses import logistic_loss

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


@pytest.mark.parametrize("n_classes, task_size", [(4, 1), (4, 5), (3, 0), (40, 20)])
def test_all_tasks_bad_sizes_raise(n_classes, task_size):
    with pytest.raises(ValueError, match="task"):
        metrics.all_tasks(n_classes, task_size)


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
    probabilities = metrics.task_probabilities(tasks, rho)
    expected = naive_task_probabilities(rho.numel(), task_size, rho)
    torch.testing.assert_close(
        probabilities,
        torch.tensor([expected[tuple(t)] for t in tasks.tolist()], dtype=torch.float64),
    )
    assert float(probabilities.sum()) == pytest.approx(1.0)


def test_task_probabilities_validate_rho():
    tasks = metrics.all_tasks(3, 2)
    with pytest.raises(ValueError, match="class_probs"):
        metrics.task_probabilities(tasks, torch.tensor([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match="class_probs"):
        metrics.task_probabilities(tasks, torch.tensor([1.2, -0.1, -0.1]))


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


def test_class_means_bad_input_raises():
    labels = labels_with_counts((3, 2))
    with pytest.raises(ValueError, match="every class"):
        metrics.class_means(randn(5, 2), labels, n_classes=3)  # class 2 missing
    with pytest.raises(ValueError, match="features"):
        metrics.class_means(randn(4, 2), labels)  # n mismatch
    with pytest.raises(ValueError, match="features"):
        metrics.class_means(randn(5), labels)  # no feature dimension


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


def test_task_loss_bad_input_raises():
    labels = labels_with_counts((3, 2, 4))
    features = randn(labels.numel(), 2)
    tasks = metrics.all_tasks(3, 2)
    rho = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)
    with pytest.raises(ValueError, match="classifier"):
        metrics.task_loss_and_accuracy(features, labels, randn(5, 2), tasks, rho)
    with pytest.raises(ValueError, match="features"):
        metrics.task_loss_and_accuracy(features[:-1], labels, randn(3, 2), tasks, rho)
    missing = labels.masked_fill(labels == 1, 0)  # class 1 has no example
    with pytest.raises(ValueError, match="every class"):
        metrics.task_loss_and_accuracy(features, missing, randn(3, 2), tasks, rho)
    with pytest.raises(ValueError, match="class_probs"):
        metrics.task_loss_and_accuracy(features, labels, randn(3, 2), tasks, rho * 2)


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


def test_mean_classifier_bad_input_raises():
    features, labels = blobs((3, 3, 3), 2, 1.0, 1.0)
    with pytest.raises(ValueError, match="eval_labels"):
        metrics.mean_classifier(features, labels, eval_features=features)
    with pytest.raises(ValueError, match="eval_labels"):
        metrics.mean_classifier(features, labels, eval_labels=labels)
    for m in (1, 4):
        with pytest.raises(ValueError, match="task_size"):
            metrics.mean_classifier(features, labels, task_size=m)
    with pytest.raises(ValueError, match="train_features"):
        metrics.mean_classifier(features[:-1], labels)
    with pytest.raises(ValueError, match="eval_features"):
        metrics.mean_classifier(features, labels, features[:-2], labels[:-1].roll(1))
    with pytest.raises(
        ValueError, match="every class"
    ):  # class 2 only in the evaluation set
        metrics.mean_classifier(
            features[labels < 2], labels[labels < 2], features, labels
        )


def test_too_many_tasks_raise():
    labels = torch.arange(40)
    features = randn(40, 2)
    with pytest.raises(ValueError, match="tasks"):
        metrics.mean_classifier(features, labels, task_size=20)


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


def test_fit_bad_arguments_raise():
    features, labels = overlapping_problem()
    tasks = metrics.all_tasks(3, 2)
    with pytest.raises(ValueError, match="max_iter"):
        metrics.fit_linear_classifiers(features, labels, tasks, max_iter=0)
    with pytest.raises(ValueError, match="tolerance"):
        metrics.fit_linear_classifiers(features, labels, tasks, tolerance=0.0)
    with pytest.raises(ValueError, match="features"):
        metrics.fit_linear_classifiers(features[1:], labels, tasks)


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


def test_fit_rejects_bad_init_and_sample_weight():
    features, labels = overlapping_problem()
    tasks = metrics.all_tasks(3, 2)
    with pytest.raises(ValueError, match="init"):
        metrics.fit_linear_classifiers(features, labels, tasks, init=torch.zeros(2, 2))
    with pytest.raises(ValueError, match="init"):
        metrics.fit_linear_classifiers(
            features, labels, tasks, init=torch.zeros(3, 2, 3, dtype=torch.long)
        )
    for weight in (
        torch.ones(5),
        -torch.ones(labels.numel()),
        torch.ones(labels.numel(), dtype=torch.long),
    ):
        with pytest.raises(ValueError, match="sample_weight"):
            metrics.fit_linear_classifiers(
                features, labels, tasks, sample_weight=weight
            )


# ---------------------------------------------------------------- linear probe


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
    with pytest.raises(ValueError, match="eval_labels"):
        metrics.linear_probe(features, labels, eval_features=features)


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


def test_exact_unsupervised_loss_bad_input_raises():
    labels = labels_with_counts((2, 3))
    features = randn(5, 2)
    with pytest.raises(ValueError, match="features"):
        metrics.exact_unsupervised_loss(features[:-1], labels)
    with pytest.raises(ValueError, match="features"):
        metrics.exact_unsupervised_loss(features[:, 0], labels)
    with pytest.raises(ValueError, match="chunk_size"):
        metrics.exact_unsupervised_loss(features, labels, chunk_size=0)
    with pytest.raises(ValueError, match="every class"):
        metrics.exact_unsupervised_loss(features, labels.masked_fill(labels == 0, 2))
    with pytest.raises(ValueError, match="class_probs"):
        metrics.exact_unsupervised_loss(features, labels, torch.tensor([0.6, 0.6]))
    with pytest.raises(ValueError, match="class_probs"):
        metrics.exact_unsupervised_loss(
            features, labels, torch.tensor([0.5, 0.3, 0.2])
        )  # 3 entries, 2 classes
    with pytest.raises(ValueError, match="class_probs"):
        metrics.exact_unsupervised_loss(
            features, labels_with_counts((2, 2, 1)), torch.tensor([0.5, 0.5])
        )  # 2 for 3


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


def test_mean_classifier_centre_validates_the_training_features():
    features, labels = blobs((3, 3, 3), 2, 1.0, 1.0)
    with pytest.raises(ValueError, match="train_features"):
        metrics.mean_classifier(features[:-1], labels, centre=True)


# ---------------------------------------------------------------- differences of means


def test_encode_in_chunks_equals_one_call():
    from ccl_helpers.train import StackedModel

    model = StackedModel(lambda: torch.nn.Linear(5, 3), 2, seed=0)
    images = torch.rand(23, 5, generator=torch.Generator().manual_seed(0))
    whole = model(images)
    chunked = metrics.encode(model, images, chunk_size=4)
    assert chunked.shape == (2, 23, 3) and not chunked.requires_grad
    torch.testing.assert_close(chunked, whole.detach())
    with pytest.raises(ValueError, match="chunk_size"):
        metrics.encode(model, images, chunk_size=0)


def test_standardise_moments_and_shapes():
    g = torch.Generator().manual_seed(1)
    fit = 3 + 5 * torch.randn(2, 50, 4, generator=g, dtype=torch.float64)
    other = torch.randn(2, 7, 4, generator=g, dtype=torch.float64)
    fit_s, other_s = metrics.standardise(fit, other)
    torch.testing.assert_close(fit_s.mean(-2), torch.zeros(2, 4, dtype=torch.float64))
    torch.testing.assert_close(fit_s.std(-2), torch.ones(2, 4, dtype=torch.float64))
    expected = (other - fit.mean(-2, keepdim=True)) / fit.std(-2, keepdim=True)
    torch.testing.assert_close(other_s, expected)
    with pytest.raises(ValueError, match="others\\[0\\]"):
        metrics.standardise(fit, other[..., :3])


EMPTY_FEATURES, NO_LABELS = torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)


@pytest.mark.parametrize(
    "evaluate",
    [
        lambda: metrics.knn_accuracy(
            randn(6, 3), torch.arange(6) % 2, EMPTY_FEATURES, NO_LABELS, k=3
        ),
        lambda: metrics.mean_classifier(
            randn(6, 3), torch.arange(6) % 2, EMPTY_FEATURES, NO_LABELS
        ),
        lambda: metrics.linear_probe(
            randn(6, 3), torch.arange(6) % 2, EMPTY_FEATURES, NO_LABELS
        ),
        lambda: metrics.class_members(NO_LABELS, 2),
    ],
)
def test_evaluations_reject_an_empty_set(evaluate):
    with pytest.raises(ValueError, match="labels must hold at least 1 example"):
        evaluate()


def test_knn_accuracy_checks_its_dtypes():
    """Floating features of one dtype (no promotion), integer labels: a ValueError
    naming the arguments, not torch's matrix-product error."""
    features, labels = randn(6, 3).float(), torch.arange(6) % 2
    with pytest.raises(ValueError, match="eval_features.*train_features.*float64"):
        metrics.knn_accuracy(features.double(), labels, features, labels, k=3)
    with pytest.raises(ValueError, match="eval_features.*train_features.*float32"):
        metrics.knn_accuracy(features, labels, features.double(), labels, k=3)
    with pytest.raises(ValueError, match="train_features must be a floating-point"):
        metrics.knn_accuracy(features.long(), labels, features.long(), labels, k=3)
    with pytest.raises(ValueError, match="eval_labels must be an integer"):
        metrics.knn_accuracy(features, labels, features, labels.double(), k=3)
    wide = metrics.knn_accuracy(features.double(), labels, features.double(), labels)
    assert wide.dtype == torch.float64


def test_linear_probe_rejects_mixed_dtypes_before_fitting():
    features, labels = randn(6, 3).double(), torch.arange(6) % 2
    with pytest.raises(ValueError, match="eval_features.*train_features.*float64"):
        metrics.linear_probe(features, labels, features.float(), labels, max_iter=10**9)


def test_monte_carlo_draws_estimate(monkeypatch):
    from ccl_helpers.checks import estimated_bytes

    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 2])
    samples = metrics.draw_unsupervised_samples(labels, 4, 9)
    drawn = nominal_bytes(samples)  # int64 indices
    # with the uniforms (float64) and the classes (int64) drawn alongside them
    assert estimated_bytes(metrics.draw_unsupervised_samples, labels, 4, 9) == 3 * drawn
    with pytest.raises(ValueError, match="n_negatives=4, n_samples=10000000000"):
        metrics.draw_unsupervised_samples(labels, 4, 10**10)


@pytest.mark.parametrize("task_size", [2, 2**49])
def test_all_tasks_too_many_name_n_classes(task_size):
    with pytest.raises(ValueError, match="n_classes=1125899906842624, task_size="):
        metrics.all_tasks(2**50, task_size)


def test_all_tasks_estimate_and_the_gathered_examples(monkeypatch):
    from ccl_helpers.checks import estimated_bytes

    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    tasks = metrics.all_tasks(6, 3)
    # C(6, 3) tuples of 3 ints (≥ 48 + 8·3 bytes each) and the int64 tensor (8·3 each)
    assert estimated_bytes(metrics.all_tasks, 6, 3) == 20 * (48 + 16 * 3)
    assert estimated_bytes(metrics.all_tasks, 6, 3) >= tasks.nbytes
    features, labels = torch.randn(2, 12, 4), torch.arange(12) % 6
    found = metrics.mean_classifier(features, labels, task_size=3)
    assert found["accuracy"].shape == (2,)
    # the examples of every task, (2 members, 20 tasks, 3 × 2 examples, d = 4) float32
    monkeypatch.setenv("CCL_MEMORY_LIMIT", str(2 * 20 * 3 * 2 * 4 * 4 - 1))
    with pytest.raises(ValueError, match="20 tasks of task_size=3 .* CCL_MEMORY_LIMIT"):
        metrics.mean_classifier(features, labels, task_size=3)
