"""The infinite-width ODE (A.18)–(A.23), its scores, and Lemma B.9's stage-one gap.

The solution (:func:`integrate_ode`), its matrices and scores (``_ode_matrices``,
:func:`ode_scores`), and the gap between stage 1 and slowed non-contrastive training, in
the ODE (:func:`stage_one_gap`) and at finite width.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch
from scipy.integrate import solve_ivp
from torch import Tensor

from .._checks import (
    check_choice,
    check_floating_dtype,
    check_instance,
    check_int,
    check_positive,
)
from ..train import check_stages
from ._data_model import (
    DataModel,
    Reparametrised,
    _check_input_dim,
    _check_weights,
    _sigma_rows,
)
from ._losses import FORMS, LOSSES
from ._scores import _scores, alignment_score
from ._training import _check_record_steps, _long_history, record_grid, train


class ODEState(NamedTuple):
    """The infinite-width state (A.18) along ``steps``.

    a_p = ‖[S_A]_p‖² (B, T, r), ρ_p (B, T, r), noise mass e = ‖Ξ_A‖_F² (B, T),
    N² (B, T), β (T,)."""

    steps: np.ndarray
    a: np.ndarray
    rho: np.ndarray
    noise: np.ndarray
    norm2: np.ndarray
    beta: np.ndarray

    @property
    def kappa(self) -> np.ndarray:
        """κ(S_A) = (max_p a_p / min_p a_p)^{1/2}, shape (B, T)."""
        return np.sqrt(self.a.max(-1) / self.a.min(-1))

    @property
    def alignment_drive(self) -> np.ndarray:
        """ρ_p − Ω with Ω = Σ_q a_q ρ_q, shape (B, T, r): for the non-contrastive loss
        (u = ρ) the factor of γσ_p² in d ln a_p/dt (A.22), so that
        d ln(a_p/a_q)/dt = γ[σ_p²(ρ_p − Ω) − σ_q²(ρ_q − Ω)].

        With ρ ∈ [0, 1] and Σ_q a_q ≤ 1 it is at most 1 − a_p (the unit norm caps the
        drive of the direction that holds most of it)."""
        return self.rho - (self.a * self.rho).sum(-1, keepdims=True)


def _ode_rhs(
    y: np.ndarray,
    sig2: np.ndarray,
    noise_var: np.ndarray,
    *,
    beta: float,
    tau: float,
    lr: float,
    loss: str,
    form: str,
) -> np.ndarray:
    B, r = sig2.shape
    log_gap, log_a = y[: B * r].reshape(B, r), y[B * r : 2 * B * r].reshape(B, r)
    log_e, norm2 = y[2 * B * r : 2 * B * r + B], y[2 * B * r + B :]
    rho, a, e = 1 - np.exp(log_gap), np.exp(log_a), np.exp(log_e)
    c = rho * a
    if loss == "non_contrastive":
        w, speed = np.ones_like(a), 4 * lr * np.ones(B)
    elif form == "primary":
        # 1 − p_+ = τΠcosh(βc)/(e^{βΣc} + τΠcosh(βc)), log cosh(x) = logaddexp(x, −x) −
        # log 2
        log_neg = math.log(tau) + (np.logaddexp(beta * c, -beta * c) - math.log(2)).sum(
            -1
        )
        one_minus_p = 1 / (1 + np.exp(beta * c.sum(-1) - log_neg))
        w, speed = 1 - np.tanh(beta * c), 4 * lr * one_minus_p
    else:
        w, speed = 1 - tau * np.tanh(beta * c), 4 * lr * np.ones(B)
    gamma = speed / norm2
    u = w * rho
    omega = (a * u).sum(-1)
    drift = (a * sig2 * (u - omega[:, None])).sum(-1)
    energy = (a * sig2).sum(-1) + noise_var * e
    d_log_gap = -gamma[:, None] * sig2 * w * (1 + rho)
    d_log_a = gamma[:, None] * (
        sig2 * (u - omega[:, None]) - drift[:, None] + (omega * noise_var * e)[:, None]
    )
    d_log_e = gamma * (-omega * noise_var * (1 - e) - drift)
    d_norm2 = speed * ((a * sig2 * u).sum(-1) - omega * energy)
    return np.concatenate([d_log_gap.ravel(), d_log_a.ravel(), d_log_e, d_norm2])


def integrate_ode(
    sigmas: Tensor | Sequence,
    noise_std: float,
    noise_dim: int,
    schedule: Sequence[tuple[float, int]],
    *,
    loss: str = "contrastive",
    lr: float = 0.2,
    tau: float = 1.0,
    form: str = "primary",
    record_steps: Sequence[int] | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> ODEState:
    """The infinite-width ODE (A.21)–(A.22) in the time of Algorithm 3.1.

    One time unit is one step of size η/β::

        d ρ_p = γ σ_p² w_p (1 − ρ_p²),   γ = 4η(1 − p_+)/N²,
            w_p = 1 − tanh(β ρ_p a_p),   u_p = w_p ρ_p,
        d ln a_p = γ[σ_p²(u_p − Ω) − Σ_q a_q σ_q²(u_q − Ω) + Ω σ_ξ² e],
            Ω = Σ_q a_q u_q,
        d ln e = γ[−Ω σ_ξ²(1 − e) − Σ_q a_q σ_q²(u_q − Ω)],
        dN² = γN²[Σ_q a_q σ_q² u_q − Ω E],   E = Σ_q a_q σ_q² + σ_ξ² e;
        start ρ = 0, N² = Σσ² + d_ξσ_ξ², a = σ²/N², e = d_ξσ_ξ²/N².

    Non-contrastive: w ≡ 1, γ = 4η/N². Alternative form: w = 1 − τ tanh(βc), γ = 4η/N².
    Solved with scipy's ``solve_ivp`` (DOP853) for a batch of σ rows at once; ρ is
    carried as ln(1 − ρ) (accurate near 1).

    Args:
        sigmas: (r,) or (B, r) σ_p.
        schedule: [(β, steps), …] as for :func:`train` (β is ignored for the
            non-contrastive loss).
        record_steps: output steps (default: every step).
    """
    sig = _sigma_rows(sigmas).cpu().numpy()
    noise_std = check_positive("noise_std", noise_std)
    noise_dim = check_int("noise_dim", noise_dim, 1)
    schedule = check_stages("schedule", schedule)
    check_choice("loss", loss, LOSSES)
    lr = check_positive("lr", lr)
    tau = check_positive("tau", tau)
    check_choice("form", form, FORMS)
    rtol = check_positive("rtol", rtol)
    atol = check_positive("atol", atol)
    if form == "alternative" and tau > 1 and loss == "contrastive":
        raise ValueError(
            "tau must be ≤ 1 for form='alternative' (else the alignment "
            f"pull turns negative), got {tau}"
        )
    total = sum(s for _, s in schedule)
    steps = (
        np.arange(total + 1)
        if record_steps is None
        else np.array(_check_record_steps(record_steps, total))
    )
    if steps.size == 0:
        raise ValueError(f"record_steps must be a non-empty subset of 0..{total}")
    B, r = sig.shape
    sig2 = sig**2
    noise_var = np.full(B, noise_std**2)
    norm2 = sig2.sum(-1) + noise_dim * noise_std**2
    y = np.concatenate(
        [
            np.zeros(B * r),
            np.log(sig2 / norm2[:, None]).ravel(),
            np.log(noise_dim * noise_std**2 / norm2),
            norm2,
        ]
    )
    out = np.empty((steps.size, y.size))
    betas = np.empty(steps.size)
    start = 0
    for index, (beta, length) in enumerate(schedule):
        end = start + length
        last = index == len(schedule) - 1
        inside = (steps >= start) & ((steps <= end) if last else (steps < end))
        if length == 0:
            out[inside], betas[inside] = y, beta
            continue
        wanted = steps[inside]
        t_eval = np.append(wanted[wanted < end], end).astype(float)
        solution = solve_ivp(
            lambda t, v, beta=beta: _ode_rhs(
                v, sig2, noise_var, beta=beta, tau=tau, lr=lr, loss=loss, form=form
            ),
            (start, end),
            y,
            method="DOP853",
            rtol=rtol,
            atol=atol,
            t_eval=t_eval,
        )
        if not solution.success:
            raise RuntimeError(f"the ODE solver failed: {solution.message}")
        out[inside], betas[inside] = solution.y[:, : wanted.size].T, beta
        y = solution.y[:, -1]
        start = end
    T = steps.size
    rho = 1 - np.exp(out[:, : B * r].reshape(T, B, r))
    a = np.exp(out[:, B * r : 2 * B * r].reshape(T, B, r))
    e = np.exp(out[:, 2 * B * r : 2 * B * r + B])
    n2 = out[:, 2 * B * r + B :]
    return ODEState(
        steps, a.transpose(1, 0, 2), rho.transpose(1, 0, 2), e.T, n2.T, betas
    )


def stage_one_gap(
    sigmas: Tensor | Sequence,
    noise_std: float,
    noise_dim: int,
    beta: float,
    steps: int,
    *,
    lr: float = 0.2,
    tau: float = 1.0,
) -> dict[str, float]:
    """Lemma B.9: stage 1 (small β) equals non-contrastive training up to a constant
    factor in time, with an error that vanishes with β.

    As β → 0, p_+ → 1/(1 + τ) and tanh(βc) → 0, so the contrastive ODE becomes the
    non-contrastive one with its speed γ multiplied by 1 − p_+ = τ/(1 + τ). Integrates
    the contrastive ODE at (β, τ) and the non-contrastive one with the step
    ητ/(1 + τ) for ``steps`` steps, and returns the largest gaps over every step and
    every σ row: ``kappa`` max |κ_C/κ_NC − 1| and ``rho`` max_p |ρ_p^C − ρ_p^NC|.
    """
    _sigma_rows(sigmas)
    noise_std = check_positive("noise_std", noise_std)
    noise_dim = check_int("noise_dim", noise_dim, 1)
    beta = check_positive("beta", beta)
    steps = check_int("steps", steps, 1)
    lr = check_positive("lr", lr)
    tau = check_positive("tau", tau)
    contrastive = integrate_ode(
        sigmas, noise_std, noise_dim, [(beta, steps)], lr=lr, tau=tau
    )
    plain = integrate_ode(
        sigmas,
        noise_std,
        noise_dim,
        [(1.0, steps)],
        loss="non_contrastive",
        lr=lr * tau / (1 + tau),
    )
    return {
        "kappa": float(np.abs(contrastive.kappa / plain.kappa - 1).max()),
        "rho": float(np.abs(contrastive.rho - plain.rho).max()),
    }


def stage_one_gap_finite_width(
    model: DataModel,
    W_A: Tensor,
    W_B: Tensor,
    betas: Sequence[float],
    steps: int,
    *,
    lr: float = 0.2,
    tau: float = 1.0,
    batch_size: int = 128,
    seed: int = 0,
    record_steps: Sequence[int] = (),
    similarity_dtype: torch.dtype | None = None,
) -> pd.DataFrame:
    """Lemma B.9 at finite width: stage 1 at each β of ``betas`` against
    non-contrastive training with the step ητ/(1 + τ), from the same weights and on the
    same batches (each run of :func:`train` draws them from a generator seeded with
    ``seed``), so that the gap between the two is the effect of β alone.

    Args:
        model, W_A, W_B: as for :func:`train` (R runs).
        betas: the stage-1 inverse temperatures β₁ (each > 0).
        record_steps: steps (0 … ``steps``) over which the gap is taken (default: a
            :func:`record_grid` of 40 points).
        similarity_dtype: as for :func:`train`, in the contrastive runs.

    Returns:
        One row per β and run: ``beta``, ``seed`` (the run's index) and ``gap``, the
        largest |κ_C/κ_NC − 1| of κ(S_A) over the recorded steps.
    """
    check_instance("model", model, DataModel)
    _check_weights(W_A, W_B, finite=True)
    steps = check_int("steps", steps, 1)
    lr = check_positive("lr", lr)
    tau = check_positive("tau", tau)
    batch_size = check_int("batch_size", batch_size, 2)
    seed = check_int("seed", seed, 0)
    if similarity_dtype is not None:
        check_floating_dtype("similarity_dtype", similarity_dtype)
    _check_input_dim(W_A, model)
    betas = [check_positive("betas", b) for b in betas]
    if not betas:
        raise ValueError("betas must not be empty")
    record = _check_record_steps(list(record_steps) or record_grid(steps, 40), steps)
    device = model.M_A.device

    def kappa(beta, loss, step_size, similarity_dtype=None):
        _, _, history = train(
            model,
            W_A,
            W_B,
            [(beta, steps)],
            loss=loss,
            lr=step_size,
            batch_size=batch_size,
            tau=tau,
            generator=torch.Generator(device=device).manual_seed(seed),
            record_steps=record,
            similarity_dtype=similarity_dtype,
        )
        history = history[history["quantity"] == "kappa"]
        return history.pivot(index="step", columns="seed", values="value")

    plain = kappa(1.0, "non_contrastive", lr * tau / (1 + tau))
    gaps = {
        beta: (kappa(beta, "contrastive", lr, similarity_dtype) / plain - 1).abs().max()
        for beta in betas
    }
    frame = pd.DataFrame(gaps).rename_axis(columns="beta").stack().rename("gap")
    return frame.reset_index()[["beta", "seed", "gap"]]


def _ode_matrices(
    a: Tensor, rho: Tensor, noise: Tensor, noise_dim: int
) -> Reparametrised:
    """Infinite-width S_A, Ξ_A, S_B, Ξ_B realised in R^{2r + 2d_ξ} from a state (any
    leading shape flattened
    to runs): orthogonal columns, ‖[S_A]_p‖² = ‖[S_B]_p‖² = a_p, ⟨[S_A]_p, [S_B]_p⟩ =
    ρ_p a_p, noise columns of squared norm e/d_ξ, A's and B's noise orthogonal. N_A =
    N_B = 1 (placeholders)."""
    a, rho, noise = (torch.as_tensor(v, dtype=torch.float64) for v in (a, rho, noise))
    r = a.shape[-1]
    a, rho, noise = a.reshape(-1, r), rho.reshape(-1, r), noise.reshape(-1)
    R, dxi = a.shape[0], noise_dim
    dim = 2 * r + 2 * dxi
    eye = torch.eye(dim, dtype=a.dtype)
    root = a.sqrt()
    S_A = eye[:, :r] * root[:, None, :]
    S_B = (
        eye[:, :r] * rho[:, None, :]
        + eye[:, r : 2 * r] * (1 - rho**2).clamp_min(0).sqrt()[:, None, :]
    ) * root[:, None, :]
    scale = (noise / dxi).sqrt()[:, None, None]
    Xi_A = eye[:, 2 * r : 2 * r + dxi].expand(R, dim, dxi) * scale
    Xi_B = eye[:, 2 * r + dxi :].expand(R, dim, dxi) * scale
    ones = torch.ones(R, dtype=a.dtype)
    return Reparametrised(S_A, Xi_A, S_B, Xi_B, ones, ones)


def ode_scores(
    state: ODEState,
    noise_dim: int,
    *,
    n_align: int = 0,
    generator: torch.Generator | None = None,
    align_every: int = 1,
) -> pd.DataFrame:
    """The long history (step, beta, seed, quantity, value) of the scores
    (:data:`SCORES`) along the ODE, seed the row of σ (:func:`~ccl_helpers.train.wide`:
    one row per step and row); κ = (max a/min a)^{1/2} exactly.

    The alignment (Monte Carlo on the matrices of ``_ode_matrices``, exact ties counted
    1/2) is computed at every ``align_every``-th step and the last one only, on
    ``generator``'s device (the matrices are built on the CPU in float64)."""
    check_instance("state", state, ODEState)
    noise_dim = check_int("noise_dim", noise_dim, 1)
    n_align = check_int("n_align", n_align, 0)
    if generator is not None:
        check_instance("generator", generator, torch.Generator)
    align_every = check_int("align_every", align_every, 1)
    if n_align and generator is None:
        raise ValueError("generator must be given when n_align > 0")
    B, T, r = state.a.shape
    parts = _ode_matrices(state.a, state.rho, state.noise, noise_dim)
    values = _scores(parts, 0, None, "strict", None)
    frame = pd.DataFrame({k: v.numpy() for k, v in values.items()})
    frame["kappa"] = state.kappa.reshape(-1)
    frame.insert(0, "seed", np.repeat(np.arange(B), T))
    frame.insert(0, "beta", np.tile(state.beta, B))
    frame.insert(0, "step", np.tile(state.steps, B))
    keys = ["step", "beta", "seed"]
    history = _long_history(frame, keys)
    if not n_align:
        return history
    chosen = np.zeros((B, T), dtype=bool)
    chosen[:, ::align_every] = True
    chosen[:, -1] = True
    index = torch.as_tensor(np.flatnonzero(chosen.reshape(-1)))
    picked = Reparametrised(*(m[index].to(generator.device) for m in parts))
    align = alignment_score(*picked[:4], n_align, generator, ties="half")
    computed = frame.loc[index.numpy(), keys].assign(
        quantity="align", value=align.cpu().numpy()
    )
    return pd.concat([history, computed], ignore_index=True)
