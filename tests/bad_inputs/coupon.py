"""The baselines of ``ccl_helpers.coupon``."""

from __future__ import annotations

from .common import generator, uniform

BASELINES = {
    "coupon.probability_vector": lambda: (dict(class_probs=uniform()), ()),
    "coupon.p_cc": lambda: (dict(n_negatives=2, class_probs=uniform()), ()),
    "coupon.p_cc_anchor_excluded": lambda: (
        dict(n_negatives=2, class_probs=uniform()),
        (),
    ),
    "coupon.tau_plus": lambda: (dict(n_negatives=2, class_probs=uniform()), ()),
    "coupon.collection_time_mean": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_variance": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_variance_as_printed": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_tail": lambda: (dict(beta=1.0, n_classes=3), ()),
    "coupon.chebyshev_tail_bound": lambda: (dict(beta=1.0, n_classes=3), ()),
    "coupon.sample_collection_time": lambda: (
        dict(
            n_samples=5,
            class_probs=uniform(),
            generator=generator(),
            device="cpu",
            block=2,
        ),
        (),
    ),
    "coupon.collection_time_moments_exact": lambda: (dict(n_classes=3), ()),
}
