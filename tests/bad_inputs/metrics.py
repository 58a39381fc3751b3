"""The baselines of ``ccl_helpers.metrics``."""

from __future__ import annotations

import torch

from .common import PUBLIC, floats, generator, labels, train_eval, uniform

BASELINES = {
    "metrics.all_tasks": lambda: (dict(n_classes=3, task_size=2, device="cpu"), ()),
    "metrics.class_frequencies": lambda: (dict(labels=labels(4), n_classes=2), ()),
    "metrics.class_means": lambda: (
        dict(features=floats(4, 3), labels=labels(4), n_classes=2),
        (("labels", "features", 0),),
    ),
    "metrics.class_members": lambda: (dict(labels=labels(4), n_classes=2), ()),
    "metrics.labelled_set_sizes": lambda: (
        dict(features=floats(4, 3), labels=labels(4), n_classes=2),
        (("labels", "features", 0),),
    ),
    "metrics.exact_unsupervised_loss": lambda: (
        dict(
            features=floats(4, 3),
            labels=labels(4),
            class_probs=uniform(),
            chunk_size=2,
        ),
        (("labels", "features", 0),),
    ),
    "metrics.draw_unsupervised_samples": lambda: (
        dict(
            labels=labels(4),
            n_negatives=2,
            n_samples=5,
            generator=generator(),
            class_probs=uniform(),
        ),
        (),
    ),
    "metrics.unsupervised_loss_monte_carlo": lambda: (
        dict(
            features=floats(4, 3),
            labels=labels(4),
            n_negatives=2,
            n_samples=5,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    "metrics.mean_classifier": lambda: train_eval(task_size=2),
    "metrics.linear_probe": lambda: train_eval(task_size=2, max_iter=5),
    "metrics.knn_accuracy": lambda: train_eval(k=3, block=2),
    "metrics.task_probabilities": lambda: (
        dict(tasks=torch.tensor([[0, 1], [0, 2], [1, 2]]), class_probs=uniform(3)),
        (),
    ),
    "metrics.standardise": lambda: (dict(fit=floats(4, 3)), ()),
    "metrics.fit_linear_classifiers": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6),
            tasks=torch.tensor([[0, 1]]),
            dtype=torch.float32,
            max_iter=5,
            tolerance=1e-6,
        ),
        (("labels", "features", 0),),
    ),
    "metrics.task_loss_and_accuracy": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6),
            classifier=floats(2, 3, seed=1),
            tasks=torch.tensor([[0, 1]]),
            class_probs=uniform(),
        ),
        (("labels", "features", 0), ("classifier", "features", -1)),
    ),
    "metrics.encode": lambda: (
        dict(encoder=torch.nn.Linear(3, 2), images=floats(4, 3), chunk_size=2),
        (),
    ),
    "metrics.class_weights": lambda: (
        dict(
            class_probs=uniform(),
            n_classes=2,
            counts=torch.tensor([2, 2]),
            uniform_default=True,
        ),
        (),
    ),
    "metrics.unsupervised_loss_curve": lambda: (
        dict(
            features=floats(4, 3),
            samples=PUBLIC["metrics.draw_unsupervised_samples"](
                labels(4), 2, 5, generator()
            ),
        ),
        (),
    ),
}
