"""The baselines of ``ccl_helpers.checks``."""

from __future__ import annotations

import torch

from .common import flat_encoder, floats, labels, ode_state, runs_table, uniform

BASELINES = {
    "checks.check_positive": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_int": lambda: (dict(name="x", value=1), ()),
    "checks.check_probabilities": lambda: (dict(name="rho", value=uniform()), ()),
    "checks.check_labels": lambda: (dict(name="y", labels=labels(4)), ()),
    "checks.check_classes": lambda: (
        dict(name="y", classes=labels(4), ndim=1, n_classes=2),
        (),
    ),
    "checks.check_features": lambda: (
        dict(name="f", features=floats(4, 2), labels=labels(4)),
        (),
    ),
    "checks.check_finite_real": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_positive_or_scalar_tensor": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_device": lambda: (dict(name="x", value="cpu"), ()),
    "checks.check_inputs": lambda: (
        dict(name="images", inputs=floats(4, 2, 2), labels=labels(4), labels_name="y"),
        (("labels", "inputs", 0),),
    ),
    "checks.check_callable": lambda: (dict(name="fn", value=flat_encoder), ()),
    "checks.check_instance": lambda: (
        dict(name="record", value=ode_state(), cls=type(ode_state())),
        (),
    ),
    "checks.check_frame": lambda: (
        dict(name="table", frame=runs_table(), columns=["seed"], min_rows=1),
        (),
    ),
    "checks.check_batch": lambda: (
        dict(
            name="pair", batch=(floats(2, 3), labels(2)), kinds=("floating", "integer")
        ),
        (),
    ),
    "checks.check_floating_dtype": lambda: (dict(name="x", value=torch.float32), ()),
    "checks.check_choice": lambda: (
        dict(name="x", value="a", choices=("a", "b")),
        (),
    ),
    "checks.check_finite": lambda: (dict(name="x", tensor=floats(3)), ()),
    "checks.check_tensor": lambda: (
        dict(name="x", value=floats(2, 3), ndim=2, floating=True),
        (),
    ),
    "checks.check_steps": lambda: (dict(name="x", steps=[0, 2]), ()),
}
