"""The baselines of ``ccl_helpers.curl``."""

from __future__ import annotations

import torch

from .common import PUBLIC, empirical_classes, floats, generator, labels, uniform

BASELINES = {
    "curl.downstream_accuracies": lambda: (
        dict(
            train_features=floats(2, 8, 3),
            train_labels=labels(8, 4),
            test_features=floats(2, 8, 3, seed=1),
            test_labels=labels(8, 4),
            task_sizes=(2,),
            classifiers=("mean",),
            max_iter=5,
        ),
        (
            ("train_labels", "train_features", 0),
            ("test_labels", "test_features", 0),
            ("test_features", "train_features", -1),
        ),
    ),
    "curl.mean_classifier_bound": lambda: (
        dict(unsupervised_loss=1.0, tau=0.5),
        (),
    ),
    "curl.collision_terms": lambda: (dict(n_negatives=2, class_probs=uniform(3)), ()),
    "curl.k_negative_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=2, class_probs=uniform(3)),
        (),
    ),
    "curl.negative_counts": lambda: (dict(n_negatives=2, n_classes=3), ()),
    "curl.tuple_mean_classifier_loss": lambda: (
        dict(features=floats(2, 8, 3), labels=labels(8), n_negatives=2),
        (("labels", "features", 0),),
    ),
    "curl.draw_block_samples": lambda: (
        dict(labels=labels(8), block_size=2, n_samples=4, generator=generator()),
        (),
    ),
    "curl.block_evaluator": lambda: (
        dict(
            inputs=floats(8, 3),
            labels=labels(8),
            block_size=2,
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    "curl.lemma_quantities": lambda: (
        dict(features=floats(8, 3), labels=labels(8), max_iter=5),
        (("labels", "features", 0),),
    ),
    "curl.k_negative_lemma": lambda: (
        dict(
            features=floats(2, 8, 3),
            labels=labels(8),
            negatives=[1],
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    "curl.block_contrastive_loss": lambda: (
        dict(
            forward=lambda x: x,
            batch=(floats(4, 3), floats(4, 2, 3, seed=1), floats(4, 2, 3, seed=2)),
        ),
        (),
    ),
    "curl.cross_entropy_loss": lambda: (
        dict(forward=lambda x: x, batch=(floats(4, 2), labels(4))),
        (),
    ),
    "curl.contrastive_batches": lambda: (
        dict(
            latent=empirical_classes(),
            n_seeds=2,
            batch_size=3,
            generator=generator(),
            block_size=2,
        ),
        (),
    ),
    "curl.labelled_batches": lambda: (
        dict(
            inputs=floats(6, 3),
            labels=labels(6),
            n_seeds=2,
            batch_size=3,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    "curl.block_losses": lambda: (
        dict(
            features=floats(2, 8, 3),
            samples=PUBLIC["curl.draw_block_samples"](labels(8), 2, 4, generator()),
        ),
        (),
    ),
    "curl.train_tuned": lambda: (
        dict(
            make_model=lambda: torch.nn.Linear(3, 2),
            loss_fn=PUBLIC["curl.cross_entropy_loss"],
            batches=lambda n, g: PUBLIC["curl.labelled_batches"](
                floats(6, 3), labels(6), n, 3, g
            ),
            score=PUBLIC["curl.head_accuracy"](floats(4, 3, seed=1), labels(4)),
            grid=[(0.1, 0.0)],
            n_seeds=1,
            n_steps=2,
            eval_steps=[1],
        ),
        (),
    ),
    "curl.head_accuracy": lambda: (
        dict(inputs=floats(4, 3), labels=labels(4)),
        (("labels", "inputs", 0),),
    ),
    "curl.probe_accuracy": lambda: (
        dict(
            fit_inputs=floats(6, 3),
            fit_labels=labels(6),
            val_inputs=floats(4, 3, seed=1),
            val_labels=labels(4),
        ),
        (
            ("fit_labels", "fit_inputs", 0),
            ("val_labels", "val_inputs", 0),
            ("val_inputs", "fit_inputs", -1),
        ),
    ),
}
