"""Algorithm 3.1 (A.11) and exact gradient descent on the population loss.

The two-stage schedule, minibatch training (:func:`train`), the population
non-contrastive descent in Gram form (:func:`population_descent`), width compression,
recording grids, and the long histories they return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from .._checks import (
    check_callable,
    check_choice,
    check_floating_dtype,
    check_instance,
    check_int,
    check_positive,
    check_steps,
)
from ..train import Evaluation, check_stages, loop
from ._data_model import (
    NORMALISATIONS,
    DataModel,
    _check_input_dim,
    _check_weights,
    reparametrise,
    sample_pairs,
)
from ._losses import FORMS, LOSSES, _gram_loss_and_gradients, _loss_and_gradients
from ._scores import SCORES, _check_runs, _scores


def two_stage(
    beta_1: float, steps_1: int, beta_2: float, steps_2: int
) -> list[tuple[float, int]]:
    """The contrastive schedule of Algorithm 3.1: β₁ for T₁ steps, then β₂ for T₂
    steps."""
    beta_1 = check_positive("beta_1", beta_1)
    steps_1 = check_int("steps_1", steps_1, 0)
    beta_2 = check_positive("beta_2", beta_2)
    steps_2 = check_int("steps_2", steps_2, 0)
    return [(beta_1, steps_1), (beta_2, steps_2)]


def _check_record_steps(record_steps: Sequence[int], total: int) -> list[int]:
    """The distinct recording steps, sorted; each must lie in 0..total."""
    return sorted(set(check_steps("record_steps", record_steps, total)))


def _long_history(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The book's long history (``keys``, quantity, value) of a table with the columns
    ``keys`` and one column per quantity; :func:`~ccl_helpers.train.wide` gives the
    table back."""
    history = table.melt(id_vars=keys, var_name="quantity", value_name="value")
    return history.astype({"value": "float64"})


def train(
    model: DataModel,
    W_A: Tensor,
    W_B: Tensor,
    schedule: Sequence[tuple[float, int]],
    *,
    loss: str = "contrastive",
    lr: float = 0.2,
    batch_size: int = 128,
    tau: float = 1.0,
    form: str = "primary",
    normalisation: str = "population",
    generator: torch.Generator,
    record_steps: Sequence[int] = (),
    n_align: int = 0,
    align_every: int = 1,
    align_runs: Sequence[int] | None = None,
    similarity_dtype: torch.dtype | None = None,
    progress=None,
) -> tuple[Tensor, Tensor, pd.DataFrame]:
    """Algorithm 3.1 (A.11): per step a fresh batch, W ← W − (η/β_t) ∇_W L̂.

    The gradient is in closed form through the d×d Gram blocks for the population
    normalisation and the primary form, by autograd of :func:`batch_loss` otherwise.

    β_t comes from ``schedule``.

    Args:
        schedule: [(β, steps), …] (:func:`two_stage`; the non-contrastive case uses [(1,
            T)]).
        lr: η; the step is η/β (the 1/β rescaling).
        record_steps: steps (0 … total) at which the scores (:data:`SCORES`) are
            recorded (step k = after k updates).
        n_align: Monte Carlo samples of the alignment score at recorded steps (0: not
            computed).
        align_every: the alignment is computed at every ``align_every``-th recorded
            step, the last one and the recorded stage boundaries (not elsewhere); it
            dominates the cost of recording.
        align_runs: the runs whose alignment is computed (default: all; NaN for the
            others).
        similarity_dtype: dtype of the contrastive n×n block of the closed-form
            gradient (default: the weights' dtype).
        progress: optional wrapper of the step iterator (e.g. ``ccl.progress``).

    Returns:
        W_A, W_B after training and the long history (step, beta, seed, quantity,
        value) of the scores, seed the run's index (:func:`~ccl_helpers.train.wide`:
        one row per step and run).
    """
    check_instance("model", model, DataModel)
    _check_weights(W_A, W_B, finite=True)
    schedule = check_stages("schedule", schedule)
    check_choice("loss", loss, LOSSES)
    lr = check_positive("lr", lr)
    batch_size = check_int("batch_size", batch_size, 2)
    tau = check_positive("tau", tau)
    check_choice("form", form, FORMS)
    check_choice("normalisation", normalisation, NORMALISATIONS)
    check_instance("generator", generator, torch.Generator)
    n_align = check_int("n_align", n_align, 0)
    align_every = check_int("align_every", align_every, 1)
    if similarity_dtype is not None:
        check_floating_dtype("similarity_dtype", similarity_dtype)
    if progress is not None:
        check_callable("progress", progress)
    _check_input_dim(W_A, model)
    total = sum(s for _, s in schedule)
    record = _check_record_steps(record_steps, total)
    align_rows = None
    if align_runs is not None:
        align_rows = _check_runs("align_runs", align_runs, model.n_runs)
    closed_form = normalisation == "population" and form == "primary"
    if similarity_dtype is not None:
        if not closed_form or loss != "contrastive":
            raise ValueError(
                "similarity_dtype applies to the closed-form contrastive gradient "
                "(loss='contrastive', normalisation='population', form='primary')"
            )
    boundaries = set(np.cumsum([0] + [s for _, s in schedule]).tolist())
    align_at = (
        set(record[::align_every]) | set(record[-1:]) | (boundaries & set(record))
    )
    align_generator = torch.Generator(device=generator.device)
    W_A, W_B = W_A.detach().clone(), W_B.detach().clone()
    record_set = set(record)
    options = {"loss": loss, "tau": tau, "form": form, "normalisation": normalisation}

    covariances = model.covariances()

    def gradient(step: int, beta: float) -> Evaluation:
        pairs = sample_pairs(model, batch_size, generator)
        beta = beta if loss == "contrastive" else 1.0
        if closed_form:
            losses, grads = _gram_loss_and_gradients(
                W_A,
                W_B,
                covariances,
                pairs,
                loss=loss,
                beta=beta,
                tau=tau,
                similarity_dtype=similarity_dtype,
            )
        else:
            losses, grads = _loss_and_gradients(
                W_A, W_B, model, pairs, beta=beta, **options
            )
        return Evaluation(losses, grads)

    def at_checkpoint(step: int, evaluation: Evaluation | None) -> dict[str, Tensor]:
        if step not in record_set:
            return {}
        align_generator.manual_seed(step)  # the same triples for every run and method
        return _scores(
            reparametrise(W_A, W_B, model),
            n_align if step in align_at else 0,
            align_generator,
            "strict",
            align_rows,
        )

    history = loop(
        {"W_A": W_A, "W_B": W_B},
        gradient,
        total,
        seeds=range(model.n_runs),
        lr=lr,
        beta=schedule,
        checkpoints=record,
        on_checkpoint=at_checkpoint,
        bar=progress,
    )
    history = history[history["quantity"].isin(SCORES)]
    return W_A, W_B, history.reset_index(drop=True)


def _gram_weights(gram: Tensor) -> tuple[Tensor, Tensor]:
    """W_A, W_B (R, 2d, d) with [W_A W_B]ᵀ[W_A W_B] = ``gram`` (R, 2d, 2d): G^{1/2}."""
    values, vectors = torch.linalg.eigh(gram)
    root = (vectors * values.clamp_min(0).sqrt().unsqueeze(-2)) @ vectors.mT
    d = gram.shape[-1] // 2
    return root[..., :d], root[..., d:]


def compress_width(W_A: Tensor, W_B: Tensor) -> tuple[Tensor, Tensor]:
    """Weights of width 2d with the Gram matrix of [W_A W_B] (R, m, 2d), each of shape
    (R, 2d, d).

    Every quantity of the model (N, S_AᵀS_B, the scores, the population loss) depends
    on the weights only through that Gram matrix, so the result stands for W_A, W_B of
    any width m; S and Ξ change only by a rotation of ℝ^m. Runs of different widths can
    then be stacked, e.g. for :func:`population_descent`."""
    _check_weights(W_A, W_B, finite=True)
    W = torch.cat([W_A, W_B], dim=-1)
    return _gram_weights(W.mT @ W)


def population_descent(
    W_A: Tensor,
    W_B: Tensor,
    model: DataModel,
    steps: int,
    *,
    lr: float = 0.2,
    record_steps: Sequence[int] = (),
) -> pd.DataFrame:
    """Gradient descent W ← W − η ∇_W L_NC on the population non-contrastive loss.

    L_NC = E‖f_A − f_B‖² = ‖S_A − S_B‖_F² + ‖Ξ_A‖_F² + ‖Ξ_B‖_F² = 2 − 2c/(N_A N_B) with
    c = tr(M_Aᵀ W_AᵀW_B M_B): (A.10) in expectation, exact, with no sampling noise, so
    the only finite-width effect left is the initialisation. L_NC depends on
    W = [W_A W_B] (m × 2d) only through G = WᵀW, with ∂L/∂G_AB = −2M_AM_Bᵀ/(N_AN_B),
    ∂L/∂G_AA = c Σ_A/(N_A³N_B), ∂L/∂G_BB = c Σ_B/(N_AN_B³). So ∇_W L = W K,
    K = ∂L/∂G + ∂L/∂Gᵀ, a step is W ← WΦ with Φ = I − ηK, and G ← ΦᵀGΦ: the width m
    enters through G₀ only, and a step costs O(d³) at every m. The scores
    (:data:`SCORES` but the alignment) are computed on :func:`compress_width` weights.

    Args:
        W_A, W_B: initial weights (R, m, d).
        record_steps: steps (0 … ``steps``) at which the scores (no alignment) are
            recorded.

    Returns:
        The long history (step, seed, quantity, value) of the scores, seed the run's
        index (:func:`~ccl_helpers.train.wide`: one row per recorded step and run).
    """
    _check_weights(W_A, W_B, finite=True)
    check_instance("model", model, DataModel)
    steps = check_int("steps", steps, 0)
    lr = check_positive("lr", lr)
    _check_input_dim(W_A, model)
    record = _check_record_steps(record_steps, steps)
    d = model.input_dim
    W = torch.cat([W_A, W_B], dim=-1)
    gram = W.mT @ W
    cov_A, cov_B = model.covariances()
    cross_MM = model.M_A @ model.M_B.mT  # M_A M_Bᵀ (R, d, d)
    eye = torch.eye(2 * d, dtype=gram.dtype, device=gram.device)
    rows = []
    for step in range(steps + 1):
        if record and step == record[0]:
            record.pop(0)
            parts = reparametrise(*_gram_weights(gram), model)
            values = _scores(parts, 0, None, "strict", None)
            frame = pd.DataFrame({k: v.cpu().numpy() for k, v in values.items()})
            rows.append(frame.rename_axis("seed").reset_index().assign(step=step))
        if step == steps:
            break
        norm_A = (gram[..., :d, :d] * cov_A).sum((-2, -1)).sqrt()[:, None, None]
        norm_B = (gram[..., d:, d:] * cov_B).sum((-2, -1)).sqrt()[:, None, None]
        c = (gram[..., :d, d:] * cross_MM).sum((-2, -1))[:, None, None]
        K = torch.cat(
            [
                torch.cat(
                    [
                        2 * c * cov_A / (norm_A**3 * norm_B),
                        -2 * cross_MM / (norm_A * norm_B),
                    ],
                    -1,
                ),
                torch.cat(
                    [
                        -2 * cross_MM.mT / (norm_A * norm_B),
                        2 * c * cov_B / (norm_A * norm_B**3),
                    ],
                    -1,
                ),
            ],
            -2,
        )
        Phi = eye - lr * K
        gram = Phi.mT @ gram @ Phi
    table = pd.concat(rows, ignore_index=True)
    return _long_history(table, ["step", "seed"])


def record_grid(total: int, n_points: int = 60) -> list[int]:
    """About ``n_points`` recording steps in 0..total: dense early (geometric), then
    evenly spaced."""
    total = check_int("total", total, 0)
    n_points = check_int("n_points", n_points, 2)
    geometric = np.unique(
        np.round(np.geomspace(1, max(total, 1), n_points // 2)).astype(int)
    )
    linear = np.linspace(0, total, n_points - n_points // 2).round().astype(int)
    return sorted({0, total, *map(int, geometric), *map(int, linear)})
