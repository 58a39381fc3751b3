"""The baselines of ``ccl_helpers.wen``."""

from __future__ import annotations

import torch

from .common import floats, sphere, two_encoders, wen_history

BASELINES = {
    "wen.n_negative_sets": lambda: (dict(n=4, n_negatives=2), ()),
    "wen.late_slopes": lambda: (
        dict(
            history=wen_history(),
            column="loss_norm",
            decades=1.0,
            offset=0.0,
            n_points=25,
            by=("width", "seed"),
        ),
        (),
    ),
    "wen.negative_sets": lambda: (dict(n=4, n_negatives=2, device="cpu"), ()),
    "wen.all_triplets": lambda: (dict(n=4, device="cpu"), ()),
    "wen.pairwise_logits": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1)),
        (("k", "q", -1),),
    ),
    "wen.negative_set_logits": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.log_one_plus_sum_exp": lambda: (dict(u=floats(4, 3)), ()),
    "wen.contrastive_loss": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, reduction="mean"),
        (("k", "q", -1),),
    ),
    "wen.contrastive_loss_loop": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.negative_weights": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, form="full"),
        (("k", "q", -1),),
    ),
    "wen.loss_tilde": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, form="corrected"),
        (("k", "q", -1),),
    ),
    "wen.loss_vectors": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.loss_vectors_autograd": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.fact1_comparison": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.shared_loss_vectors": lambda: (dict(f=floats(4, 3), n_negatives=2), ()),
    "wen.step_size": lambda: (dict(width=4, out_features=2, scale=1.0), ()),
    "wen.proof_descent_constant": lambda: (
        dict(step_scale=1.0, delta=0.5, n=4),
        (),
    ),
    "wen.movement_radius": lambda: (dict(n=4, n_layers=2, delta=0.5, width=8), ()),
    "wen.lemma44_radius_range": lambda: (
        dict(width=8, out_features=2, n_layers=2),
        (),
    ),
    "wen.radius_meeting_width": lambda: (dict(out_features=2, prefactor=0.1), ()),
    "wen.theorem42_orders": lambda: (
        dict(n=4, n_layers=2, n_negatives=2, delta=0.5, epsilon=0.1),
        (),
    ),
    "wen.TwoEncoders": lambda: (
        dict(in_features=3, width=4, n_layers=2, out_features=2),
        (),
    ),
    "wen.algorithm1": lambda: (
        dict(
            model=two_encoders(),
            x=sphere(4, 3),
            n_negatives=1,
            n_steps=2,
            eta=0.1,
            gamma=0.1,
            checkpoints=2,
            desc=None,
        ),
        (),
    ),
    "wen.run_widths": lambda: (
        dict(
            x=sphere(4, 3),
            widths=[4],
            n_layers=1,
            out_features=2,
            n_negatives=1,
            n_steps=2,
            n_seeds=1,
            step_scale=1.0,
            seed=0,
            checkpoints=2,
        ),
        (),
    ),
    "wen.running_average": lambda: (
        dict(history=wen_history(), column="loss_norm", by=("width", "seed")),
        (),
    ),
    "wen.descent_constant": lambda: (
        dict(history=wen_history(), by=("width", "seed")),
        (),
    ),
    "wen.lemma43_ratios": lambda: (dict(history=wen_history()), ()),
    "wen.shared_evaluator": lambda: (dict(x=sphere(4, 3), n_negatives=1), ()),
    "wen.triplet_loss": lambda: (
        dict(forward=lambda x: x, data=(sphere(4, 3), torch.tensor([[0, 1, 2]]))),
        (),
    ),
}
