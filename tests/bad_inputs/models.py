"""The baselines of ``ccl_helpers.models``."""

from __future__ import annotations

import torch

BASELINES = {
    "models.MLP": lambda: (dict(in_features=3, hidden=(4,), out_features=2), ()),
    "models.ConvNet": lambda: (
        dict(
            in_channels=1,
            image_size=12,
            channels=(2,),
            out_features=2,
            kernel_size=3,
            padding=0,
        ),
        (),
    ),
    "models.DeepReLU": lambda: (
        dict(in_features=3, width=4, depth=2, out_features=2, trainable="hidden"),
        (),
    ),
    "models.Classifier": lambda: (
        dict(encoder=torch.nn.Linear(3, 2), n_classes=2),
        (),
    ),
}
