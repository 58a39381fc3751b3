"""The scores (A.14)–(A.17) and the sufficient conditions of Lemmas 4.4 and 4.5.

Condition number, alignment cosines and score, noise ratio, balance, all of them at
once (``_scores``, what the histories record), and the explicit margin and bound of the
two lemmas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from .._checks import (
    check_choice,
    check_instance,
    check_int,
    check_same_shape,
    check_tensor,
)
from ._data_model import Reparametrised, _signs

SCORES = (
    "max_one_minus_rho",
    "noise_ratio",
    "kappa",
    "balance_fro",
    "balance_tr",
    "align_margin",
    "align",
)
"""The scores a history records, per run: max_p(1 − ρ_p), ‖Ξ_A‖_F²/‖S_A‖_F², κ(S_A),
Balance (stable rank and trace), the margin μ of Lemma 4.4 and the alignment Align
(A.14)–(A.17)."""

TIES = ("strict", "half")
"""The values of ``ties``: exact ties count as lost (strict) or 1/2 (half)."""

VARIANTS = ("fro", "tr")
"""The balance's variants: Frobenius (stable rank) or trace."""


def _check_noise(name: str, Xi, signal_name: str, S: Tensor) -> None:
    """Ξ (..., m, d_ξ): a floating tensor with the leading dimensions (..., m) of the
    signal S (..., m, r)."""
    check_tensor(name, Xi, min_ndim=2, floating=True)
    if S.shape[:-1] != Xi.shape[:-1]:
        raise ValueError(
            f"{name} must have the leading dimensions (..., m) of {signal_name}, "
            f"{tuple(S.shape[:-1])}, got shape {tuple(Xi.shape)}"
        )


def _condition_number(S: Tensor) -> Tensor:
    """κ(S) = σ_max/σ_min (A.17) of the r singular values of S (R, m, r), shape (R,);
    its SVD needs finite entries."""
    values = torch.linalg.svdvals(S)
    return values[..., 0] / values[..., -1]


def _alignment_cosines(S_A: Tensor, S_B: Tensor) -> Tensor:
    """ρ_p = ⟨[S_A]_p, [S_B]_p⟩ / (‖[S_A]_p‖ ‖[S_B]_p‖) (A.17), shape (R, r)."""
    return (S_A * S_B).sum(-2) / (S_A.norm(dim=-2) * S_B.norm(dim=-2))


def _noise_ratio(S: Tensor, Xi: Tensor) -> Tensor:
    """The noise-to-signal ratio ‖Ξ‖_F² / ‖S‖_F² (A.17), shape (R,)."""
    return Xi.pow(2).sum((-2, -1)) / S.pow(2).sum((-2, -1))


def _balance(S: Tensor, Xi: Tensor, variant: str = "fro") -> Tensor:
    """Balance(f_A) (A.16) of Cov_A = SSᵀ + ΞΞᵀ, shape (R,).

    ``fro``: ‖Cov‖_F²/‖Cov‖_2² (stable rank); ``tr``: tr Cov/‖Cov‖_2. The eigenvalues
    need finite entries."""
    K = torch.cat([S, Xi], dim=-1)
    eig = torch.linalg.eigvalsh(K.mT @ K).clamp_min(
        0
    )  # the non-zero eigenvalues of Cov = K Kᵀ
    top = eig[..., -1]
    if variant == "fro":
        return eig.pow(2).sum(-1) / top.pow(2)
    return eig.sum(-1) / top


def alignment_score(
    S_A: Tensor,
    Xi_A: Tensor,
    S_B: Tensor,
    Xi_B: Tensor,
    n_samples: int,
    generator: torch.Generator,
    *,
    exclude_collisions: bool = False,
    ties: str = "strict",
) -> Tensor:
    """Monte Carlo Align (A.14), shape (R,).

    Align = P[‖f_A(x_A) − f_B(x_B)‖ < ‖f_A(x_A) − f_B(x_B⁻)‖] (strict).

    f_A(x_A) = S_A z + Ξ_A ξ_A etc.; (z⁻, ξ_B⁻) fresh; with ``exclude_collisions`` z⁻ is
    redrawn until z⁻ ≠ z. Since z⁻ = z with probability 2^{−r} and then the two
    distances differ only by noise, the score is capped near 1 − 2^{−(r+1)} unless
    collisions are excluded. ``ties="half"`` counts exact ties (up to 1e-12 relative) as
    1/2 (random tie-breaking): needed for the infinite-width matrices of
    :func:`ode_scores`, whose collision distances are exactly equal. A run whose
    matrices are not all finite scores NaN.
    """
    check_tensor("S_A", S_A, min_ndim=2, floating=True)
    _check_noise("Xi_A", Xi_A, "S_A", S_A)
    check_tensor("S_B", S_B, min_ndim=2, floating=True)
    check_same_shape("S_B", S_B, "S_A", S_A)
    _check_noise("Xi_B", Xi_B, "S_B", S_B)
    n_samples = check_int("n_samples", n_samples, 1)
    check_instance("generator", generator, torch.Generator)
    check_choice("ties", ties, TIES)
    if Xi_B.shape != Xi_A.shape:
        raise ValueError(
            f"Xi_B must have the shape of Xi_A, {tuple(Xi_A.shape)}, got "
            f"{tuple(Xi_B.shape)}"
        )
    R, r, dt = S_A.shape[0], S_A.shape[-1], S_A.dtype
    z = _signs((R, n_samples, r), generator, dt)
    z_neg = _signs((R, n_samples, r), generator, dt)
    if exclude_collisions:
        if r == 1:
            z_neg = -z
        else:
            same = (z_neg == z).all(-1, keepdim=True)
            while bool(same.any()):
                z_neg = torch.where(
                    same, _signs((R, n_samples, r), generator, dt), z_neg
                )
                same = (z_neg == z).all(-1, keepdim=True)
    dxi = Xi_A.shape[-1]
    stacked = torch.cat([S_A, Xi_A, S_B, Xi_B], dim=-1)
    finite = torch.isfinite(stacked).flatten(1).all(-1)
    if (
        stacked.shape[-2] > stacked.shape[-1]
    ):  # distances depend only on the Gram matrix: work in R^{2r+2d_ξ}
        stacked = torch.linalg.qr(stacked, mode="r").R
        S_A, Xi_A, S_B, Xi_B = stacked.split([r, dxi, r, Xi_B.shape[-1]], dim=-1)
    xi_A, xi_B, xi_neg = (_signs((R, n_samples, dxi), generator, dt) for _ in range(3))
    f_A = z @ S_A.mT + xi_A @ Xi_A.mT
    positive = (f_A - z @ S_B.mT - xi_B @ Xi_B.mT).pow(2).sum(-1)
    negative = (f_A - z_neg @ S_B.mT - xi_neg @ Xi_B.mT).pow(2).sum(-1)
    wins = (positive < negative).to(dt)
    if ties == "half":
        tied = (positive - negative).abs() <= 1e-12 * (positive + negative).clamp_min(
            1e-300
        )
        wins = torch.where(tied, torch.full_like(wins, 0.5), wins)
    return wins.mean(-1).masked_fill(~finite, math.nan)


def alignment_cap(latent_dim: int) -> float:
    """1 − 2^{−(r+1)} (A.15): Align when every non-colliding triple is won.

    Collisions z⁻ = z (probability 2^{−r}) are coin flips."""
    latent_dim = check_int("latent_dim", latent_dim, 1)
    return 1.0 - 2.0 ** -(latent_dim + 1)


def alignment_margin(parts: Reparametrised) -> Tensor:
    """μ = σ_min(S_B) − √r ‖S_A − S_B‖₂ − √d_ξ (‖Ξ_A‖₂ + ‖Ξ_B‖₂), shape (R,).

    Lemma 4.4 (sufficient condition for alignment) with explicit constants. With
    P = √r ‖S_A − S_B‖₂ + √d_ξ (‖Ξ_A‖₂ + ‖Ξ_B‖₂) (as ‖z‖ = √r, ‖ξ‖ = √d_ξ), the positive
    distance is ‖(S_A − S_B)z + Ξ_Aξ_A − Ξ_Bξ_B‖ ≤ P, and for z⁻ ≠ z (so ‖z − z⁻‖ ≥ 2)
    the negative one is ‖S_B(z − z⁻) + (S_A − S_B)z + Ξ_Aξ_A − Ξ_Bξ_B⁻‖
    ≥ 2σ_min(S_B) − P.
    So μ > 0 implies that every non-colliding triple is won: Align with collisions
    excluded equals 1. ‖·‖₂ is the spectral norm; σ_min the r-th singular value."""
    check_instance("parts", parts, Reparametrised)
    r, dxi = parts.S_A.shape[-1], parts.Xi_A.shape[-1]
    spectral = torch.linalg.matrix_norm
    return (
        torch.linalg.svdvals(parts.S_B)[..., -1]
        - math.sqrt(r) * spectral(parts.S_A - parts.S_B, ord=2)
        - math.sqrt(dxi) * (spectral(parts.Xi_A, ord=2) + spectral(parts.Xi_B, ord=2))
    )


def balance_lower_bound(
    kappa: Tensor, noise: Tensor, latent_dim: int, variant: str = "fro"
) -> Tensor:
    """Lemma 4.5 (sufficient condition for balance) with explicit constants.

    With κ = κ(S), ν = ‖Ξ‖_F²/‖S‖_F² and s₁ ≥ … ≥ s_r the singular values of S:
    ‖Cov‖₂ ≤ s₁² + ‖Ξ‖_F² ≤ s₁²(1 + rν) (as ‖S‖_F² ≤ r s₁²), ‖Cov‖_F² ≥ Σ s_p⁴ ≥
    s₁⁴(1 + (r − 1)κ⁻⁴) and tr Cov ≥ Σ s_p² ≥ s₁²(1 + (r − 1)κ⁻²), so

        Balance_fro ≥ (1 + (r − 1)κ⁻⁴)/(1 + rν)²,
        Balance_tr ≥ (1 + (r − 1)κ⁻²)/(1 + rν),

    both → r as κ → 1 and ν → 0. ``kappa``, ``noise``: tensors of one shape (≥ 1, ≥ 0).
    """
    latent_dim = check_int("latent_dim", latent_dim, 1)
    check_choice("variant", variant, VARIANTS)
    r = latent_dim
    kappa, noise = torch.as_tensor(kappa), torch.as_tensor(noise)
    check_tensor("kappa", kappa, floating=True)
    check_tensor("noise", noise, floating=True)
    if kappa.shape != noise.shape:
        raise ValueError(
            f"kappa and noise must have one shape, got {tuple(kappa.shape)} and "
            f"{tuple(noise.shape)}"
        )
    if bool((kappa < 1).any()) or bool(kappa.isinf().any()):
        raise ValueError(
            f"kappa must hold condition numbers κ ≥ 1, finite (NaN passes: a value not "
            f"recorded), got {kappa.tolist() if kappa.numel() <= 8 else kappa}"
        )
    power = 4 if variant == "fro" else 2
    return (1 + (r - 1) * kappa.pow(-power)) / (1 + r * noise).pow(power // 2)


def _scores(
    parts: Reparametrised,
    n_align: int = 0,
    generator: torch.Generator | None = None,
    ties: str = "strict",
    rows: Tensor | None = None,
) -> dict[str, Tensor]:
    """Every score of the chapter for each run (R,): max_p(1 − ρ_p), ‖Ξ_A‖²/‖S_A‖²,
    κ(S_A), both balances, the margin of Lemma 4.4 (:func:`alignment_margin`) and (if
    ``n_align`` > 0) the Monte Carlo alignment of the runs ``rows`` (all for None; NaN
    for the others). The SVD and the eigenvalues need finite S_A and Ξ_A."""
    out = {
        "max_one_minus_rho": (1 - _alignment_cosines(parts.S_A, parts.S_B)).amax(-1),
        "noise_ratio": _noise_ratio(parts.S_A, parts.Xi_A),
        "kappa": _condition_number(parts.S_A),
        "balance_fro": _balance(parts.S_A, parts.Xi_A, "fro"),
        "balance_tr": _balance(parts.S_A, parts.Xi_A, "tr"),
        "align_margin": alignment_margin(parts),
    }
    if n_align:
        if rows is None:
            out["align"] = alignment_score(*parts[:4], n_align, generator, ties=ties)
        else:
            rows = rows.to(parts.S_A.device)
            picked = [t[rows] for t in parts[:4]]
            align = alignment_score(*picked, n_align, generator, ties=ties)
            out["align"] = torch.full_like(out["kappa"], math.nan).index_copy_(
                0, rows, align
            )
    return out


def _check_runs(name: str, runs: Sequence[int], n_runs: int) -> Tensor:
    """The distinct run indices ``runs`` (each in 0 … n_runs − 1, at least one) as a
    sorted int64 tensor."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise ValueError(
            f"{name} must be a non-empty sequence of run indices, got {runs!r}"
        )
    return torch.tensor(
        sorted({check_int(name, i, 0, n_runs - 1) for i in runs}), dtype=torch.long
    )
