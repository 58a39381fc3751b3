"""The baselines of ``ccl_helpers.supervised_approx``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ccl_helpers import train

from .common import (
    PUBLIC,
    flat_encoder,
    flat_module,
    floats,
    generator,
    images,
    labels,
    results_table,
    run_arm,
    runs_table,
)

BASELINES = {
    "supervised_approx.attracting_terms": lambda: (
        dict(anchors=floats(4, 3), views=floats(2, 4, 3, seed=1)),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.repelling_terms": lambda: (
        dict(
            anchors=floats(4, 3),
            anchor_labels=labels(4),
            views=floats(2, 4, 3, seed=1),
            view_labels=labels(4),
            alpha=1.0,
        ),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.repelling_chain": lambda: (
        dict(
            anchors=floats(4, 3),
            anchor_labels=labels(4),
            views=floats(2, 4, 3, seed=1),
            view_labels=labels(4),
            alpha=1.0,
        ),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.eq10_counterexample": lambda: (dict(), ()),
    "supervised_approx.attracting_bound": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            strategy="none",
            generator=generator(),
            n_transforms=2,
        ),
        (),
    ),
    "supervised_approx.repelling_bound": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            generator=generator(),
            alpha=1.0,
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.prototype_bias": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            strategy="none",
            generator=generator(),
            method="eq51",
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.prototype_spread": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            strategy="none",
            generator=generator(),
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.two_view_batches": lambda: (
        dict(
            images=images(6),
            n_models=2,
            batch_size=2,
            strategy="none",
            generator=generator(),
            n_streams=1,
        ),
        (),
    ),
    "supervised_approx.member_loss": lambda: (
        dict(
            z1=floats(4, 3),
            z2=floats(4, 3, seed=1),
            alpha=1.0,
            lam=1.0,
            loss_code=torch.tensor(0),
            similarity_code=torch.tensor(0),
        ),
        (("z2", "z1", -1),),
    ),
    "supervised_approx.run_loss": lambda: (
        dict(
            forward=flat_encoder,
            batch=(
                images(4),
                images(4, seed=1),
                torch.tensor(1.0),
                torch.tensor(1.0),
                torch.tensor(0),
                torch.tensor(0),
            ),
        ),
        (),
    ),
    "supervised_approx.run_batches": lambda: (
        dict(pools={"p": images(6)}, runs=runs_table(), batch_size=2, seed=0),
        (),
    ),
    "supervised_approx.train_runs": lambda: (
        dict(
            runs=runs_table(),
            pools={"p": images(6)},
            make_module=flat_module,
            n_steps=1,
            batch_size=2,
            lr=1e-3,
            seed=0,
            desc=None,
        ),
        (),
    ),
    "supervised_approx.downstream": lambda: (
        dict(
            encoder=flat_encoder,
            fit_images=images(6),
            fit_labels=labels(6),
            test_images=images(4, seed=1),
            test_labels=labels(4),
            k=(3,),
            max_iter=5,
            chunk_size=2,
        ),
        (),
    ),
    "supervised_approx.arm_values": lambda: (
        dict(results=results_table(), metric="acc", arm={"strategy": "none"}),
        (),
    ),
    "supervised_approx.seed_matrix": lambda: (
        dict(results=results_table(), metric="acc", arms=[{"strategy": "none"}]),
        (),
    ),
    "supervised_approx.arm_contrast": lambda: (
        dict(
            results=results_table(),
            metric="acc",
            terms=[({"strategy": "none"}, 1.0), ({"strategy": "base"}, -1.0)],
        ),
        (),
    ),
    "supervised_approx.contrast_values": lambda: (
        dict(
            results=results_table(),
            contrasts={"c": [({"strategy": "none"}, 1.0)]},
            metrics=["acc"],
        ),
        (),
    ),
    "supervised_approx.estimates_table": lambda: (
        dict(values=pd.DataFrame([[1.0, 2.0, 4.0]])),
        (),
    ),
    "supervised_approx.seed_rank_correlations": lambda: (
        dict(x=np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]]), y=np.eye(3)[:, :2] + 1),
        (),
    ),
    "supervised_approx.curve_shape": lambda: (
        dict(curves=np.array([[0.1, 0.3, 0.2], [0.2, 0.4, 0.3]])),
        (),
    ),
    "supervised_approx.design_runs": lambda: (
        dict(arms={"a": run_arm()}, n_seeds=2, cells=[run_arm("base")]),
        (),
    ),
    "supervised_approx.pooled_seed_sd": lambda: (
        dict(results=results_table(), metric="acc"),
        (),
    ),
    "supervised_approx.bias_by_member": lambda: (
        dict(
            model=train.StackedModel(flat_module, 2),
            runs=runs_table(),
            images=images(4),
            labels=labels(4),
            seed=0,
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.bound_evaluator": lambda: (
        dict(
            members=[0],
            alphas=[1.0],
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            seed=0,
            n_transforms_attract=2,
            n_transforms_repel=1,
        ),
        (),
    ),
    "supervised_approx.bound_terms": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            generator=generator(),
            alphas=1.0,
            n_transforms_attract=2,
            n_transforms_repel=1,
        ),
        (),
    ),
    "supervised_approx.summarise_bounds": lambda: (
        dict(
            attract=PUBLIC["supervised_approx.attracting_terms"](
                floats(4, 3), floats(2, 4, 3, seed=1)
            ),
            repel=PUBLIC["supervised_approx.repelling_terms"](
                floats(4, 3), labels(4), floats(2, 4, 3, seed=1), labels(4)
            ),
        ),
        (),
    ),
}
