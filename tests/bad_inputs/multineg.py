"""The baselines of ``ccl_helpers.multineg``."""

from __future__ import annotations

import pandas as pd
import torch

from .common import (
    descent_case,
    empirical_classes,
    floats,
    generator,
    labels,
    sphere_triplets,
    uniform,
)

BASELINES = {
    "multineg.best_linear_loss": lambda: (
        dict(features=floats(6, 3), labels=labels(6), max_iter=5),
        (("labels", "features", 0),),
    ),
    "multineg.lemma1_bound": lambda: (
        dict(unsupervised_loss=1.0, class_probs=uniform(3)),
        (),
    ),
    "multineg.lemma2_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=4, class_probs=uniform(3)),
        (),
    ),
    "multineg.proposition1_factor": lambda: (
        dict(n_negatives=2, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=2, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_part1_bound": lambda: (
        dict(unsupervised_loss=1.0, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_part1_bound_as_printed": lambda: (
        dict(unsupervised_loss=1.0, task_size=2, n_classes=3),
        (),
    ),
    "multineg.average_mean_classifier_loss": lambda: (
        dict(features=floats(6, 3), labels=labels(6, 3), task_size=2),
        (("labels", "features", 0),),
    ),
    "multineg.output_norm_range": lambda: (dict(features=floats(4, 3)), ()),
    "multineg.proposition1_grid": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6, 3),
            n_negatives=[1, 2],
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    "multineg.make_evaluator": lambda: (
        dict(
            inputs=floats(6, 3),
            labels=labels(6, 3),
            n_negatives=1,
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    "multineg.seed_summary": lambda: (
        dict(
            frame=pd.DataFrame({"width": [1, 1], "seed": [0, 1], "steps": [1.0, 2.0]}),
            by="width",
            columns=["steps"],
        ),
        (),
    ),
    "multineg.contrastive_loss": lambda: (
        dict(
            forward=lambda x: x,
            batch=(
                floats(4, 3),
                floats(4, 3, seed=1),
                floats(5, 3, seed=2),
                torch.tensor([[0, 1], [2, 3], [4, 0], [1, 2]]),
            ),
        ),
        (),
    ),
    "multineg.triplet_objective": lambda: (
        dict(
            forward=lambda x: x,
            triplets=sphere_triplets(),
        ),
        (),
    ),
    "multineg.triplet_evaluator": lambda: (
        dict(triplets=sphere_triplets()),
        (),
    ),
    "multineg.contrastive_batches": lambda: (
        dict(
            latent=empirical_classes(),
            n_seeds=2,
            batch_size=3,
            n_negatives=2,
            generator=generator(),
            pool_size=4,
        ),
        (),
    ),
    "multineg.add_lemma_bounds": lambda: (
        dict(
            runs=pd.DataFrame(
                {"N": [1, 2], "L_un": [0.5, 1.0], "L_un_se": [0.01, 0.02]}
            ),
            class_probs=uniform(3),
            confidence=2.0,
        ),
        (),
    ),
    "multineg.lemma_runs": lambda: (
        dict(
            make_encoder=lambda: torch.nn.Linear(3, 2),
            train_set=empirical_classes(),
            eval_inputs=floats(6, 3, seed=1),
            eval_labels=labels(6),
            negatives=[1],
            n_seeds=1,
            n_steps=2,
            batch_size=2,
            pool_size=None,
            checkpoints=[1],
            n_samples=4,
            fit_linear=[],
        ),
        (("eval_labels", "eval_inputs", 0),),
    ),
    "multineg.descent_to_targets": lambda: (descent_case(), ()),
    "multineg.descent_sweep": lambda: (
        dict(
            parameter="delta",
            values=[1.0],
            case=lambda delta: (sphere_triplets(), 4, 1.0),
            **{
                k: v
                for k, v in descent_case().items()
                if k not in ("triplets", "width", "lr_constant")
            },
        ),
        (),
    ),
    "multineg.width_scaled_targets": lambda: (
        dict(
            steps=pd.DataFrame({"width": [4, 8], "threshold": [0.2, 0.1]}),
            product=0.8,
        ),
        (),
    ),
    "multineg.lazy_values": lambda: (
        dict(
            frame=pd.DataFrame(
                {
                    "seed": [0, 1, 0, 1],
                    "n": [2, 2, 4, 4],
                    "steps": [3.0, 4.0, 5.0, 6.0],
                    "relative_movement": [0.01, 0.02, 0.2, 0.01],
                }
            ),
            x="n",
            threshold=0.1,
        ),
        (),
    ),
    "multineg.endpoint_ratio": lambda: (
        dict(
            frame=pd.DataFrame(
                {"seed": [0, 1, 0, 1], "n": [2, 2, 4, 4], "steps": [3.0, 4, 6, 6]}
            ),
            x="n",
            y="steps",
        ),
        (),
    ),
    "multineg.progress_gap": lambda: (
        dict(
            runs=pd.DataFrame(
                {
                    "N": [1] * 6,
                    "seed": [0, 0, 0, 1, 1, 1],
                    "step": [0, 1, 2] * 2,
                    "L_un": [3.0, 2.0, 1.0, 3.0, 2.5, 1.0],
                    "L_mu": [2.0, 1.5, 1.0, 2.0, 1.2, 1.0],
                }
            ),
        ),
        (),
    ),
    "multineg.lazy_width": lambda: (
        dict(
            steps=pd.DataFrame(
                {"width": [4, 4, 8, 8], "relative_movement": [0.2, 0.3, 0.01, 0.02]}
            ),
            threshold=0.1,
            confidence=0.9,
        ),
        (),
    ),
}
