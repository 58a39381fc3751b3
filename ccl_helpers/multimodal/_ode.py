"""The infinite-width ODE (A.18)–(A.23), its scores, and Lemma B.9's stage-one gap.

The solution (:func:`integrate_ode`), its matrices and scores (:func:`ode_matrices`,
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

from ..checks import (
    Estimate,
    FloatingDtype,
    Instance,
    Int,
    Optional,
    Positive,
    Sized,
    Steps,
    check_positive,
    checked,
)
from ._data_model import (
    GENERATOR,
    DataModel,
    Reparametrised,
    Sigmas,
    _check_input_dim,
    _sigma_rows,
    weight_pair,
)
from ._losses import LOSS_OPTIONS
from ._scores import _align_draw_bytes, _alignment_score, _scores
from ._training import (
    BATCH,
    Schedule,
    _check_record_steps,
    _long_history,
    _train,
    record_grid,
)


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


REAL = Positive(convert=True)
"""The rule of a step size, a temperature, a tolerance: a finite real > 0, passed on as
a float."""

ODE_DATA = {"sigmas": Sigmas(), "noise_std": REAL, "noise_dim": Int(1)}
"""The rules of the data model of the infinite-width limit: σ, σ_ξ and d_ξ."""


@checked(
    **ODE_DATA,
    schedule=Schedule(),
    loss=LOSS_OPTIONS["loss"],
    lr=REAL,
    tau=REAL,
    form=LOSS_OPTIONS["form"],
    rtol=REAL,
    atol=REAL,
)
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
    return _integrate_ode(
        sig,
        noise_std,
        noise_dim,
        schedule,
        loss=loss,
        lr=lr,
        tau=tau,
        form=form,
        steps=steps,
        rtol=rtol,
        atol=atol,
    )


def _integrate_ode(
    sig: np.ndarray,
    noise_std: float,
    noise_dim: int,
    schedule: list[tuple[float, int]],
    *,
    loss: str,
    lr: float,
    tau: float,
    form: str,
    steps: np.ndarray,
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> ODEState:
    """:func:`integrate_ode` of checked arguments: σ rows ``sig`` (B, r), the output
    ``steps`` (sorted, not empty)."""
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


def _gap_bytes(arguments: dict) -> int:
    """The bytes of :func:`stage_one_gap`: for each of its two integrations of B σ rows
    of r entries, the ``steps + 1`` recorded states of 2Br + 2B float64 entries, three
    times (the records, the solver's copy, the states ρ, a, e, N² taken from them),
    and the steps recorded (int64)."""
    rows, r = _sigma_rows(arguments["sigmas"]).shape
    return (2 * 3 * (2 * rows * r + 2 * rows) + 1) * (arguments["steps"] + 1) * 8


GAP = Estimate("multimodal.stage_one_gap's recorded states", ("steps",), _gap_bytes)
"""The memory of :func:`stage_one_gap`."""


@checked(**ODE_DATA, beta=REAL, steps=Sized(Int(1), GAP), lr=REAL, tau=REAL)
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
    sig = _sigma_rows(sigmas).cpu().numpy()
    record = np.arange(steps + 1)
    contrastive = _integrate_ode(
        sig,
        noise_std,
        noise_dim,
        [(beta, steps)],
        loss="contrastive",
        lr=lr,
        tau=tau,
        form="primary",
        steps=record,
    )
    plain = _integrate_ode(
        sig,
        noise_std,
        noise_dim,
        [(1.0, steps)],
        loss="non_contrastive",
        lr=lr * tau / (1 + tau),
        tau=1.0,
        form="primary",
        steps=record,
    )
    return {
        "kappa": float(np.abs(contrastive.kappa / plain.kappa - 1).max()),
        "rho": float(np.abs(contrastive.rho - plain.rho).max()),
    }


@checked(
    model=Instance(DataModel),
    **weight_pair(finite=True),
    steps=Steps(1),
    lr=REAL,
    tau=REAL,
    batch_size=Sized(Int(2), BATCH),
    seed=Int(0),
    similarity_dtype=Optional(FloatingDtype()),
)
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
    _check_input_dim(W_A, model)
    betas = [check_positive("betas", b) for b in betas]
    if not betas:
        raise ValueError("betas must not be empty")
    record = _check_record_steps(list(record_steps) or record_grid(steps, 40), steps)
    device = model.M_A.device

    def kappa(beta, loss, step_size, similarity_dtype=None):
        _, _, history = _train(
            model,
            W_A,
            W_B,
            [(beta, steps)],
            loss=loss,
            lr=step_size,
            batch_size=batch_size,
            tau=tau,
            form="primary",
            normalisation="population",
            generator=torch.Generator(device=device).manual_seed(seed),
            record=record,
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


def _matrices_bytes(n_runs: int, r: int, dxi: int) -> int:
    """The bytes of :func:`ode_matrices` for ``n_runs`` states: the identity of R^dim,
    dim = 2r + 2d_ξ, and the four matrices of every run (dim columns in all), each
    with one temporary (float64)."""
    dim = 2 * r + 2 * dxi
    return 8 * (dim * dim + 2 * n_runs * dim * dim)


def _ode_matrices_bytes(arguments: dict) -> int | None:
    """:func:`_matrices_bytes` of the state ``a`` (..., r) (``None`` for an ``a``
    without a shape: the body says why)."""
    shape = getattr(arguments["a"], "shape", None)
    if shape is None or not len(shape):
        return None
    return _matrices_bytes(math.prod(shape[:-1]), shape[-1], arguments["noise_dim"])


ODE_MATRICES = Estimate(
    "multimodal.ode_matrices's matrices", ("noise_dim",), _ode_matrices_bytes
)
"""The memory of :func:`ode_matrices`."""


def _ode_scores_bytes(arguments: dict) -> int:
    """The bytes of :func:`ode_scores`: the matrices of every state and, with
    ``n_align``, the alignment's draws on them (at most every state)."""
    B, T, r = arguments["state"].a.shape
    dxi = arguments["noise_dim"]
    dim = 2 * r + 2 * dxi
    draws = _align_draw_bytes(B * T, dim, r, dxi, arguments["n_align"], 8)
    return _matrices_bytes(B * T, r, dxi) + draws


ODE_SCORES = Estimate(
    "multimodal.ode_scores's matrices and draws",
    ("noise_dim", "n_align"),
    _ode_scores_bytes,
)
"""The memory of :func:`ode_scores`."""


@checked(noise_dim=Sized(Int(1), ODE_MATRICES))
def ode_matrices(
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


@checked(
    state=Instance(ODEState),
    noise_dim=Sized(Int(1), ODE_SCORES),
    n_align=Sized(Int(0), ODE_SCORES),
    generator=Optional(GENERATOR),
    align_every=Int(1),
)
def ode_scores(
    state: ODEState,
    noise_dim: int,
    *,
    n_align: int = 0,
    generator: torch.Generator | None = None,
    align_every: int = 1,
) -> pd.DataFrame:
    """The long history (step, beta, seed, quantity, value) of :func:`scores` along the
    ODE, seed the row of σ (:func:`~ccl_helpers.train.wide`: one row per step and
    row); κ = (max a/min a)^{1/2} exactly.

    The alignment (Monte Carlo on :func:`ode_matrices`, exact ties counted 1/2) is
    computed at every ``align_every``-th step and the last one only, on
    ``generator``'s device (the matrices are built on the CPU in float64)."""
    if n_align and generator is None:
        raise ValueError("generator must be given when n_align > 0")
    B, T, r = state.a.shape
    parts = ode_matrices(state.a, state.rho, state.noise, noise_dim)
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
    align = _alignment_score(picked[:4], n_align, generator, False, "half")
    computed = frame.loc[index.numpy(), keys].assign(
        quantity="align", value=align.cpu().numpy()
    )
    return pd.concat([history, computed], ignore_index=True)
