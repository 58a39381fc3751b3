"""Table 1's downstream AVG-m accuracies: linear heads and mean classifiers.

The accuracies are test accuracies of downstream classification."""

from __future__ import annotations

import pandas as pd
from torch import Tensor

from .. import metrics
from .._checks import check_feature_dims, check_features, check_int, check_tensor

CLASSIFIERS = {
    "linear": (metrics.linear_probe, {}),
    "mean": (metrics.mean_classifier, {}),
    "mean, centred": (metrics.mean_classifier, {"centre": True}),
    "mean, normalised": (metrics.mean_classifier, {"normalise": True}),
}
"""The downstream classifiers of :func:`downstream_accuracies`, by name: the linear
head fitted on the training features, and the mean classifier as it is, with centred
features, and with unit-norm rows (:func:`ccl_helpers.metrics.mean_classifier`)."""


def downstream_accuracies(
    train_features: Tensor,
    train_labels: Tensor,
    test_features: Tensor,
    test_labels: Tensor,
    task_sizes: tuple[int, ...] = (2, 10),
    classifiers: tuple[str, ...] = ("linear", "mean"),
    max_iter: int = 500,
) -> pd.DataFrame:
    """AVG-m test accuracy of each of ``classifiers`` (names of :data:`CLASSIFIERS`),
    fitted on the training features, for each m in ``task_sizes``.

    features (S, n, d) for S seeds → tidy frame: seed, task_size, classifier,
    accuracy.
    """
    check_tensor("train_features", train_features, ndim=3, floating=True)
    check_tensor("test_features", test_features, ndim=3, floating=True)
    max_iter = check_int("max_iter", max_iter, 1)
    check_features("train_features", train_features, train_labels, "train_labels")
    check_features("test_features", test_features, test_labels, "test_labels")
    check_feature_dims("test_features", test_features, "train_features", train_features)
    if isinstance(task_sizes, (str, bytes)) or not hasattr(task_sizes, "__iter__"):
        raise ValueError(
            f"task_sizes must be a sequence of integers ≥ 2, got {task_sizes!r}"
        )
    task_sizes = [check_int("task_sizes", m, 2) for m in task_sizes]
    unknown = [name for name in classifiers if name not in CLASSIFIERS]
    if isinstance(classifiers, str) or unknown or not classifiers:
        raise ValueError(
            f"classifiers must be names from {sorted(CLASSIFIERS)}, got {classifiers}"
        )
    frames = []
    for m in task_sizes:
        for name in classifiers:
            evaluate, options = CLASSIFIERS[name]
            if name == "linear":
                options = {"max_iter": max_iter}
            accuracy = evaluate(
                train_features,
                train_labels,
                test_features,
                test_labels,
                task_size=m,
                **options,
            )["accuracy"]
            frames.append(
                pd.DataFrame(
                    {
                        "seed": range(accuracy.shape[0]),
                        "task_size": m,
                        "classifier": name,
                        "accuracy": accuracy.double().cpu().numpy(),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
