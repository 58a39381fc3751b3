"""The baselines of ``ccl_helpers.symbolic``."""

from __future__ import annotations

from .common import floats

BASELINES = {
    "symbolic.lse_hessian": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_gershgorin_bound": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_lambda_max": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_lambda_max_sup": lambda: (dict(k=2), ()),
    "symbolic.hessian_norm_formula": lambda: (
        dict(u=floats(3), grad_sq_norm=floats(3).abs()),
        (("grad_sq_norm", "u", -1),),
    ),
    "symbolic.smooth_max": lambda: (dict(x=floats(4), alpha=1.0), ()),
    "symbolic.smooth_max_bounds": lambda: (dict(x=floats(4), alpha=1.0), ()),
    "symbolic.smoothness_bound_secular": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_source": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_tight": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_weyl": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_sup_exact": lambda: (
        dict(radius=1.0, points=16, rounds=1),
        (),
    ),
    "symbolic.smoothness_sup_search": lambda: (
        dict(radius=1.0, dim=2, n_starts=2, n_steps=2, seed=0, device="cpu"),
        (),
    ),
    "symbolic.triplet_loss": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.triplet_hessian": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.triplet_hessian_norm": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.lemma3_gradient_difference": lambda: (dict(dim=1), ()),
    "symbolic.lemma3_hessian_difference": lambda: (dict(dim=1, form="source"), ()),
    "symbolic.lse_gershgorin_identity": lambda: (dict(k=2), ()),
    "symbolic.lse_hessian_difference": lambda: (dict(k=2), ()),
    "symbolic.lse_hessian_symbolic": lambda: (dict(k=2), ()),
    "symbolic.lse_probabilities_symbolic": lambda: (dict(k=2), ()),
    "symbolic.lse_symbols": lambda: (dict(k=2), ()),
    "symbolic.triplet_gradient_source_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_gradient_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_block_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_source_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_loss_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_symbols": lambda: (dict(dim=1), ()),
    "symbolic.lse_k1_gap": lambda: (dict(), ()),
    "symbolic.triplet_hessian_charpoly_difference": lambda: (dict(), ()),
    "symbolic.u_hessian_eigenvalues": lambda: (dict(), ()),
    "symbolic.smoothness_table": lambda: (
        dict(radii=[0.5], dim=2, n_starts=2, n_steps=2, seed=0, device="cpu"),
        (),
    ),
}
