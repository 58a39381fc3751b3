"""The baselines of ``ccl_helpers.train``."""

from __future__ import annotations

import torch

from ccl_helpers import train

from .common import floats, long_history, mean_output, stacked

BASELINES = {
    "train.log_spaced_steps": lambda: (dict(n_steps=10, n_points=3), ()),
    "train.StackedModel": lambda: (
        dict(make_module=lambda: torch.nn.Linear(2, 2), n_seeds=2, device="cpu"),
        (),
    ),
    "train.check_stages": lambda: (dict(name="x", stages=[(0.1, 2)]), ()),
    "train.train": lambda: (
        dict(
            model=stacked(),
            loss_fn=mean_output,
            sample_batch=lambda t: floats(2, 4, 2),
            n_steps=2,
            lr=0.1,
            optimizer="sgd",
            weight_decay=0.0,
            desc=None,
        ),
        (),
    ),
    "train.gradient_descent": lambda: (
        dict(
            model=stacked(),
            loss_fn=mean_output,
            data=floats(4, 2),
            max_steps=2,
            lr=0.1,
            checkpoints=2,
            desc=None,
        ),
        (),
    ),
    "train.loop": lambda: (
        dict(
            params={"w": torch.zeros(2, 3, requires_grad=True)},
            gradient=lambda t, beta: train.Evaluation(
                torch.zeros(2), [torch.ones(2, 3)]
            ),
            n_steps=2,
            seeds=[0, 1],
            lr=0.1,
            optimizer="sgd",
            weight_decay=0.0,
        ),
        (),
    ),
    "train.stacked_gradient": lambda: (
        dict(model=stacked(), loss_fn=mean_output, data=lambda t: floats(4, 2)),
        (),
    ),
    "train.wide": lambda: (dict(history=long_history()), ()),
}


METHODS = {
    "train.StackedModel.seed_module": lambda: (
        stacked(2).seed_module,
        dict(index=1),
        [("index", "one past the last", 2)],
    ),
    "train.StackedModel.subset": lambda: (
        stacked(2).subset,
        dict(indices=[1, 0]),
        [("indices", "one past the last", [0, 2])],
    ),
}
"""The public methods that take a member's index: name → (the bound method of a
fresh two-member model, the keyword arguments of a valid call, [(argument, label, a
value out of this model's range)]); the API-wide test tries their declared rules'
bad values and these (``test_method_indices_fail_clearly``)."""
