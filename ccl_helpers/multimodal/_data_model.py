"""The data model (A.1)–(A.5) and the learners (A.6)–(A.7) of the two towers.

σ_p, Haar-random M and H, positive pairs, the initial weights, the normalised features
f = W x / N and the reparametrisation S, Ξ of the weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from .._checks import (
    check_finite,
    check_floating_dtype,
    check_instance,
    check_int,
    check_positive,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)

NORMALISATIONS = ("population", "batch")
"""The normalisers N of the features (A.6): population, N² = E‖W x‖², or batch, N² the
batch mean of ‖W x‖²."""


def _check_weights(W_A: Tensor, W_B: Tensor, *, finite: bool = False) -> None:
    """W_A, W_B (runs, width, input_dim): floating, of one shape and dtype; with
    ``finite``, their values too (once per call, never per step)."""
    check_tensor("W_A", W_A, ndim=3, floating=True)
    check_tensor("W_B", W_B, ndim=3, floating=True)
    check_same_dtype("W_B", W_B, "W_A", W_A)
    check_same_shape("W_B", W_B, "W_A", W_A)
    if finite:
        check_finite("W_A", W_A)
        check_finite("W_B", W_B)


def _check_input_dim(W_A: Tensor, model: DataModel) -> None:
    """W_A (and W_B, of its shape) must have the input dimension of ``model``."""
    if W_A.shape[-1] != model.input_dim:
        raise ValueError(
            f"W_A and W_B must have the input dimension d = {model.input_dim} of "
            f"model, got shape {tuple(W_A.shape)}"
        )


def _sigma_rows(sigmas, dtype=torch.float64, name: str = "sigmas") -> Tensor:
    """σ (r,) or (R, r), finite and positive, as a tensor (R, r) of ``dtype`` (on the
    device of a tensor σ); else ``ValueError`` naming ``name``."""
    if isinstance(sigmas, Tensor):
        check_tensor(name, sigmas, floating=True)
    try:
        rows = torch.as_tensor(sigmas, dtype=dtype)
    except (TypeError, ValueError, RuntimeError):
        rows = torch.empty(0)
    if rows.ndim == 1:
        rows = rows.unsqueeze(0)
    if (
        rows.ndim != 2
        or rows.numel() == 0
        or not bool(torch.isfinite(rows).all())
        or bool((rows <= 0).any())
    ):
        raise ValueError(
            f"{name} must be finite and positive numbers, of shape (r,) or (runs, r), "
            f"got {_shape_of(sigmas)}"
        )
    return rows


def _shape_of(value) -> str:
    """How bad σ are shown: a tensor's shape, else the type."""
    return (
        str(tuple(value.shape)) if isinstance(value, Tensor) else type(value).__name__
    )


def geometric_sigmas(kappa_m: float, latent_dim: int) -> Tensor:
    """σ_p = κ_M^{(r−p)/(r−1)} (A.5): geometric from κ_M down to 1, float64, CPU."""
    kappa_m = check_positive("kappa_m", kappa_m)
    latent_dim = check_int("latent_dim", latent_dim, 1)
    if kappa_m < 1:
        raise ValueError(f"kappa_m must be ≥ 1, got {kappa_m}")
    if latent_dim == 1:
        return torch.ones(1, dtype=torch.float64)
    exponents = torch.linspace(1.0, 0.0, latent_dim, dtype=torch.float64)
    return kappa_m**exponents


def _haar_orthogonal(
    n_runs: int,
    dim: int,
    generator: torch.Generator,
    dtype=torch.float64,
    device=None,
) -> Tensor:
    """(n_runs, dim, dim) Haar-random orthogonal matrices (QR of a Gaussian with the
    sign fix), on ``device`` (default: the generator's)."""
    device = device if device is not None else generator.device
    g = torch.randn(n_runs, dim, dim, generator=generator, dtype=dtype, device=device)
    q, r = torch.linalg.qr(g)
    signs = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))
    signs = torch.where(signs == 0, torch.ones_like(signs), signs)
    return q * signs.unsqueeze(-2)


class DataModel(NamedTuple):
    """x_A = M_A z + H_A ξ_A, x_B = M_B z + H_B ξ_B, one model per run.

    M_A, M_B: (R, d, r); H_A, H_B: (R, d, d_ξ); sigmas: (R, r) the σ_p; noise_std: σ_ξ.
    """

    M_A: Tensor
    H_A: Tensor
    M_B: Tensor
    H_B: Tensor
    sigmas: Tensor
    noise_std: float

    @property
    def latent_dim(self) -> int:
        return self.M_A.shape[-1]

    @property
    def input_dim(self) -> int:
        return self.M_A.shape[-2]

    @property
    def noise_dim(self) -> int:
        return self.H_A.shape[-1]

    @property
    def n_runs(self) -> int:
        return self.M_A.shape[0]

    def covariances(self) -> tuple[Tensor, Tensor]:
        """Σ_A = M_A M_Aᵀ + H_A H_Aᵀ and Σ_B (each (R, d, d)): E x xᵀ, as E zzᵀ = I and
        E ξξᵀ = I."""
        return (
            self.M_A @ self.M_A.mT + self.H_A @ self.H_A.mT,
            self.M_B @ self.M_B.mT + self.H_B @ self.H_B.mT,
        )


def make_data_model(
    sigmas: Tensor | Sequence[float],
    noise_std: float,
    input_dim: int,
    generator: torch.Generator,
    *,
    noise_dim: int | None = None,
    dtype=torch.float64,
) -> DataModel:
    """The Haar construction (A.4): M_* = U_*[:, :r] diag(σ), H_* = σ_ξ U_*[:, r:r+d_ξ].

    U_A, U_B are independent Haar-random orthogonal matrices; the result meets (A.3).

    Args:
        sigmas: (r,) or (R, r) positive σ_p (one row per run; a vector gives one run).
        noise_std: σ_ξ > 0.
        input_dim: d ≥ r + d_ξ.
        noise_dim: d_ξ (default d − r).
        generator: torch generator; its device is the device of the result.
    """
    _sigma_rows(sigmas)
    noise_std = check_positive("noise_std", noise_std)
    input_dim = check_int("input_dim", input_dim, 1)
    check_instance("generator", generator, torch.Generator)
    if noise_dim is not None:
        noise_dim = check_int("noise_dim", noise_dim, 1)
    check_floating_dtype("dtype", dtype)
    rows = _sigma_rows(sigmas, dtype)
    n_runs, r = rows.shape
    noise_dim = input_dim - r if noise_dim is None else noise_dim
    if r + noise_dim > input_dim or noise_dim < 1:
        raise ValueError(
            f"input_dim must be ≥ latent_dim + noise_dim = {r} + "
            f"{noise_dim}, got {input_dim}"
        )
    device = generator.device
    rows = rows.to(device)
    U_A = _haar_orthogonal(n_runs, input_dim, generator, dtype, device)
    U_B = _haar_orthogonal(n_runs, input_dim, generator, dtype, device)
    return DataModel(
        U_A[..., :r] * rows.unsqueeze(-2),
        noise_std * U_A[..., r : r + noise_dim],
        U_B[..., :r] * rows.unsqueeze(-2),
        noise_std * U_B[..., r : r + noise_dim],
        rows,
        noise_std,
    )


def _signs(shape, generator: torch.Generator, dtype) -> Tensor:
    return (
        torch.randint(0, 2, shape, generator=generator, device=generator.device).to(
            dtype
        )
        * 2
        - 1
    )


class Pairs(NamedTuple):
    """A batch of positive pairs: latents z (R, n, r), noises (R, n, d_ξ), inputs x_A,
    x_B (R, n, d)."""

    z: Tensor
    xi_A: Tensor
    xi_B: Tensor
    x_A: Tensor
    x_B: Tensor


def sample_pairs(model: DataModel, n: int, generator: torch.Generator) -> Pairs:
    """n positive pairs per run (shared z, independent ±1 noises). Negatives of pair i:
    the other rows."""
    check_instance("model", model, DataModel)
    n = check_int("n", n, 1)
    check_instance("generator", generator, torch.Generator)
    R, dt = model.n_runs, model.M_A.dtype
    z = _signs((R, n, model.latent_dim), generator, dt)
    xi_A = _signs((R, n, model.noise_dim), generator, dt)
    xi_B = _signs((R, n, model.noise_dim), generator, dt)
    return Pairs(
        z,
        xi_A,
        xi_B,
        z @ model.M_A.mT + xi_A @ model.H_A.mT,
        z @ model.M_B.mT + xi_B @ model.H_B.mT,
    )


def init_weights(
    n_runs: int,
    width: int,
    input_dim: int,
    generator: torch.Generator,
    *,
    dtype=torch.float64,
) -> tuple[Tensor, Tensor]:
    """W_A, W_B of shape (R, m, d) with iid N(0, 1/m) entries."""
    n_runs = check_int("n_runs", n_runs, 1)
    width = check_int("width", width, 1)
    input_dim = check_int("input_dim", input_dim, 1)
    check_instance("generator", generator, torch.Generator)
    check_floating_dtype("dtype", dtype)
    shape = (n_runs, width, input_dim)
    scale = 1.0 / math.sqrt(width)
    W_A = (
        torch.randn(shape, generator=generator, dtype=dtype, device=generator.device)
        * scale
    )
    W_B = (
        torch.randn(shape, generator=generator, dtype=dtype, device=generator.device)
        * scale
    )
    return W_A, W_B


def _population_norm(W: Tensor, covariance: Tensor) -> Tensor:
    """N = (tr(W Σ Wᵀ))^{1/2} = (E‖W x‖²)^{1/2}, shape (R,)."""
    return ((W @ covariance) * W).sum(dim=(-2, -1)).sqrt()


def _features(
    W: Tensor,
    x: Tensor,
    *,
    covariance: Tensor | None = None,
    normalisation: str = "population",
) -> Tensor:
    """The normalised linear features f(x) = W x / N (A.6) of the inputs x (R, n, d),
    shape (R, n, m).

    N is the population norm (``_population_norm``, needs ``covariance``) or the
    batch one, N² the batch mean of ‖W x‖²."""
    raw = x @ W.mT
    if normalisation == "population":
        return raw / _population_norm(W, covariance)[:, None, None]
    return raw / raw.pow(2).sum(-1).mean(-1).sqrt()[:, None, None]


class Reparametrised(NamedTuple):
    """S_A = W_A M_A/N_A (R, m, r), Ξ_A = W_A H_A/N_A (R, m, d_ξ), likewise for B; N_A,
    N_B (R,)."""

    S_A: Tensor
    Xi_A: Tensor
    S_B: Tensor
    Xi_B: Tensor
    N_A: Tensor
    N_B: Tensor


def reparametrise(W_A: Tensor, W_B: Tensor, model: DataModel) -> Reparametrised:
    """S_*, Ξ_* of (A.7): the maps of latents and noises to the normalised outputs."""
    _check_weights(W_A, W_B)
    check_instance("model", model, DataModel)
    _check_input_dim(W_A, model)
    WMA, WHA, WMB, WHB = (
        W_A @ model.M_A,
        W_A @ model.H_A,
        W_B @ model.M_B,
        W_B @ model.H_B,
    )
    N_A = (WMA.pow(2).sum((-2, -1)) + WHA.pow(2).sum((-2, -1))).sqrt()
    N_B = (WMB.pow(2).sum((-2, -1)) + WHB.pow(2).sum((-2, -1))).sqrt()
    a, b = N_A[:, None, None], N_B[:, None, None]
    return Reparametrised(WMA / a, WHA / a, WMB / b, WHB / b, N_A, N_B)
