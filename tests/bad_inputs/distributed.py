"""The baselines of ``ccl_helpers.distributed``."""

from __future__ import annotations

import torch

from .common import floats

BASELINES = {
    "distributed.nt_xent_loss_distributed": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), temperature=0.5),
        (("z2", "z1", -1),),
    ),
    "distributed.local_shard": lambda: (dict(batch=floats(4, 3), dim=0), ()),
    "distributed.gather_with_grad": lambda: (dict(tensor=floats(4, 3), dim=0), ()),
    "distributed.wrap_ddp": lambda: (
        dict(model=torch.nn.Linear(3, 2), device="cpu"),
        (),
    ),
    "distributed.ddp_train_step": lambda: (
        dict(
            model=(model := torch.nn.Linear(3, 2)),
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            x1=floats(4, 3),
            x2=floats(4, 3, seed=1),
            temperature=0.5,
        ),
        (("x2", "x1", 0),),
    ),
    "distributed.ddp_train": lambda: (
        dict(
            model=torch.nn.Linear(3, 2),
            sample_views=lambda step: (floats(4, 3), floats(4, 3, seed=1)),
            n_steps=1,
            temperature=0.5,
            lr=1e-3,
            device="cpu",
            desc=None,
        ),
        (),
    ),
}
