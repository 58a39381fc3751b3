"""The baselines of ``ccl_helpers.losses``."""

from __future__ import annotations

import torch

from .common import floats

BASELINES = {
    "losses.masked_logsumexp": lambda: (
        dict(
            logits=floats(3, 4),
            excluded=torch.eye(3, 4, dtype=torch.bool).roll(1, -1),
        ),
        (),
    ),
    "losses.balanced_terms": lambda: (
        dict(
            sims=floats(4, 4),
            alpha=2.0,
            lam=1.0,
            excluded=torch.eye(4, dtype=torch.bool).roll(1, -1),
            positive=floats(4, seed=1),
        ),
        (("positive", "sims", 0),),
    ),
    "losses.logistic_loss": lambda: (
        dict(anchor=floats(4, 3), positive=floats(4, 3, seed=1), negative=floats(4, 3)),
        (("positive", "anchor", -1), ("negative", "anchor", -1)),
    ),
    "losses.info_nce_loss": lambda: (
        dict(
            anchor=floats(4, 3),
            positive=floats(4, 3, seed=1),
            negatives=floats(4, 2, 3),
            temperature=0.5,
            reduction="mean",
            chunk_size=1,
        ),
        (("positive", "anchor", -1), ("negatives", "anchor", -1)),
    ),
    "losses.nt_xent_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), temperature=0.5),
        (("z2", "z1", -1),),
    ),
    "losses.balanced_contrastive_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), alpha=1.0, lam=1.0),
        (("z2", "z1", -1),),
    ),
    "losses.generalized_nt_xent_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), alpha=1.0, lam=1.0),
        (("z2", "z1", -1),),
    ),
    "losses.bound_derived_loss": lambda: (
        dict(anchors=floats(4, 3), views=floats(2, 4, 3), alpha=1.0, lam=1.0, nu=1.0),
        (("views", "anchors", -1),),
    ),
    "losses.pairwise_similarity": lambda: (
        dict(a=floats(4, 3), b=floats(5, 3), similarity="cosine"),
        (("b", "a", -1),),
    ),
    "losses.reduce": lambda: (dict(per_sample=floats(4), reduction="mean"), ()),
    "losses.softplus": lambda: (dict(gap=floats(4)), ()),
}
