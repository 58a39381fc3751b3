"""The baselines of ``ccl_helpers.encoder_report``."""

from __future__ import annotations

import ccl_helpers

from .common import axes, flat_module, images, labels

BASELINES = {
    "report": lambda: (
        dict(
            encoder=flat_module(),
            images=images(8),
            labels=labels(8),
            n_negatives=2,
            strategy="none",
            alpha=1.0,
            n_samples=10,
            n_transforms_attract=2,
            n_transforms_repel=1,
            seed=0,
        ),
        (("labels", "images", 0),),
    ),
    "encoder_report.draw_loss_bounds": lambda: (
        dict(ax=axes(), table=ccl_helpers.report(**BASELINES["report"]()[0])),
        (),
    ),
    "encoder_report.readable": lambda: (
        dict(table=ccl_helpers.report(**BASELINES["report"]()[0])),
        (),
    ),
}
