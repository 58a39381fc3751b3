"""The baselines of ``ccl_helpers.multimodal``."""

from __future__ import annotations

import torch

from .common import (
    data_model,
    floats,
    generator,
    ode_state,
    ode_state_arrays,
    pairs,
    reparametrised,
    weights,
)

BASELINES = {
    "multimodal.alignment_cap": lambda: (dict(latent_dim=3), ()),
    "multimodal.geometric_sigmas": lambda: (dict(kappa_m=2.0, latent_dim=3), ()),
    "multimodal.two_stage": lambda: (
        dict(beta_1=1.0, steps_1=2, beta_2=0.5, steps_2=3),
        (),
    ),
    "multimodal.record_grid": lambda: (dict(total=10, n_points=3), ()),
    "multimodal.haar_orthogonal": lambda: (
        dict(n_runs=2, dim=3, generator=generator(), dtype=torch.float64, device="cpu"),
        (),
    ),
    "multimodal.init_weights": lambda: (
        dict(
            n_runs=2, width=3, input_dim=4, generator=generator(), dtype=torch.float64
        ),
        (),
    ),
    "multimodal.alignment_cosines": lambda: (
        dict(S_A=floats(2, 3), S_B=floats(2, 3, seed=1)),
        (("S_B", "S_A", -1),),
    ),
    "multimodal.condition_number": lambda: (dict(S=floats(3, 3)), ()),
    "multimodal.noise_ratio": lambda: (
        dict(S=floats(3, 3), Xi=floats(3, 2, seed=1)),
        (("Xi", "S", 0),),
    ),
    "multimodal.balance": lambda: (
        dict(S=floats(3, 3), Xi=floats(3, 2, seed=1), variant="fro"),
        (("Xi", "S", 0),),
    ),
    "multimodal.contrastive_loss": lambda: (
        dict(f_A=floats(4, 3), f_B=floats(4, 3, seed=1), beta=1.0, tau=1.0),
        (("f_B", "f_A", -1),),
    ),
    "multimodal.non_contrastive_loss": lambda: (
        dict(f_A=floats(4, 3), f_B=floats(4, 3, seed=1)),
        (("f_B", "f_A", -1),),
    ),
    "multimodal.symbolic_negative_expectations": lambda: (dict(latent_dim=2), ()),
    "multimodal.symbolic_norm_identity": lambda: (
        dict(width=2, input_dim=3, latent_dim=2, noise_dim=1),
        (),
    ),
    "multimodal.make_data_model": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            input_dim=4,
            generator=generator(),
            noise_dim=1,
            dtype=torch.float64,
        ),
        (),
    ),
    "multimodal.sample_pairs": lambda: (
        dict(model=data_model(), n=4, generator=generator()),
        (),
    ),
    "multimodal.population_norm": lambda: (
        dict(W=weights()[0], covariance=data_model().covariances()[0]),
        (("covariance", "W", -1),),
    ),
    "multimodal.features": lambda: (
        dict(
            W=weights()[0],
            x=floats(1, 5, 4, seed=1).double(),
            covariance=data_model().covariances()[0],
            normalisation="population",
        ),
        (("x", "W", -1), ("covariance", "W", -1)),
    ),
    "multimodal.reparametrise": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1], model=data_model()),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.batch_loss": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            pairs=pairs(),
            loss="contrastive",
            beta=1.0,
            tau=1.0,
            form="primary",
            normalisation="population",
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.gradients": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1], model=data_model(), pairs=pairs()),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.closed_form_gradients": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            pairs=pairs(),
            loss="contrastive",
            beta=1.0,
            tau=1.0,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.compress_width": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1]),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.population_descent": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            steps=2,
            lr=0.2,
            record_steps=[0, 2],
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.train": lambda: (
        dict(
            model=data_model(),
            W_A=weights()[0],
            W_B=weights()[1],
            schedule=[(1.0, 2)],
            loss="contrastive",
            lr=0.2,
            batch_size=4,
            tau=1.0,
            form="primary",
            normalisation="population",
            generator=generator(),
            record_steps=[0, 2],
            n_align=4,
            align_every=1,
            align_runs=[0],
            similarity_dtype=torch.float32,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.alignment_score": lambda: (
        dict(
            S_A=floats(1, 3, 2),
            Xi_A=floats(1, 3, 1, seed=1),
            S_B=floats(1, 3, 2, seed=2),
            Xi_B=floats(1, 3, 1, seed=3),
            n_samples=4,
            generator=generator(),
            ties="strict",
        ),
        (("S_B", "S_A", -1), ("Xi_A", "S_A", -2), ("Xi_B", "Xi_A", -1)),
    ),
    "multimodal.alignment_margin": lambda: (dict(parts=reparametrised()), ()),
    "multimodal.balance_lower_bound": lambda: (
        dict(
            kappa=torch.tensor([1.5, 2.0]),
            noise=torch.tensor([0.1, 0.2]),
            latent_dim=2,
            variant="fro",
        ),
        (("noise", "kappa", 0),),
    ),
    "multimodal.scores": lambda: (
        dict(
            parts=reparametrised(),
            n_align=4,
            generator=generator(),
            ties="strict",
            align_runs=[0],
        ),
        (),
    ),
    "multimodal.integrate_ode": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            noise_dim=1,
            schedule=[(1.0, 2)],
            loss="contrastive",
            lr=0.2,
            tau=1.0,
            form="primary",
            record_steps=[0, 2],
            rtol=1e-6,
            atol=1e-8,
        ),
        (),
    ),
    "multimodal.stage_one_gap": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            noise_dim=1,
            beta=0.1,
            steps=2,
            lr=0.2,
            tau=1.0,
        ),
        (),
    ),
    "multimodal.stage_one_gap_finite_width": lambda: (
        dict(
            model=data_model(),
            W_A=weights()[0],
            W_B=weights()[1],
            betas=[0.1],
            steps=2,
            lr=0.2,
            tau=1.0,
            batch_size=4,
            seed=0,
            record_steps=[0, 2],
            similarity_dtype=torch.float32,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.ode_matrices": lambda: (
        dict(**ode_state_arrays(), noise_dim=1),
        (),
    ),
    "multimodal.ode_scores": lambda: (
        dict(
            state=ode_state(),
            noise_dim=1,
            n_align=4,
            generator=generator(),
            align_every=1,
        ),
        (),
    ),
}
