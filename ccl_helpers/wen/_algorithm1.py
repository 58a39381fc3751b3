"""Algorithm 1 of Wen (2020): two encoders trained end to end by gradient descent.

The two encoders are those of Definitions 3.1–3.2; the algorithm records its history."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import pandas as pd
import torch
from torch import Tensor, nn

from .._checks import (
    check_finite,
    check_instance,
    check_int,
    check_positive,
    check_sizes,
    check_tensor,
)
from ..models import DeepReLU
from ..runtime import progress
from ..train import (
    Evaluation,
    StackedModel,
    combined_norm,
    log_spaced_steps,
    loop,
    member_norms,
)
from ._loss import _exact_loss
from ._negative_sets import (
    _check_negative_count,
    _check_set_count,
    _negative_sets,
    _pairwise_logits,
)


def _spectral_norm(moved: Tensor, max_rank: int) -> Tensor:
    """‖D‖₂ of each matrix of D (S, p, q) whose rank is at most ``max_rank`` → (S,).

    A parameter's movement after T full-batch steps on n points is a sum of T
    gradients Σᵢ δᵢ hᵢᵀ over the n inputs, so its rank is ≤ nT. When 2(nT + 10) ≤
    min(p, q), a range finder with nT + 10 Gaussian columns (Halko, Martinsson &
    Tropp 2011, Algorithm 4.1), Q = orth(DΩ), spans D's range (with probability one),
    so ‖D‖₂ = ‖QᵀD‖₂, the SVD of a (nT + 10) × q matrix instead of p × q; otherwise
    the SVD of D."""
    columns = max_rank + 10
    if 2 * columns > min(moved.shape[-2:]):
        return torch.linalg.matrix_norm(moved, ord=2)
    draw = torch.Generator(device=moved.device).manual_seed(0)
    omega = torch.randn(
        moved.shape[-1], columns, generator=draw, device=moved.device, dtype=moved.dtype
    )
    basis = torch.linalg.qr(moved @ omega).Q  # (S, p, nT + 10)
    return torch.linalg.matrix_norm(basis.mT @ moved, ord=2)


class TwoEncoders(nn.Module):
    """Wen's query encoder f^q_W and key encoder f^k_θ (Definition 3.1) with the
    initialisation of Definition 3.2: two independent (L+1)-layer bias-free ReLU
    networks

        f(x) = W_L σ(W_{L−1} … σ(W_1 σ(W_0 x))),
            (W_0)_ij, (W_l)_ij ~ N(0, 2/m),   (W_L)_ij ~ N(0, 1/d),

    W_0 ∈ R^{m×b}, W_l ∈ R^{m×m} (1 ≤ l ≤ L−1), W_L ∈ R^{d×m}: each a
    :class:`~ccl_helpers.models.DeepReLU` of depth L − 1 with every layer trained
    (``trainable="all"``, Algorithm 1 updates all of W and θ). Parameter names
    ``query.A``, ``query.W1`` …, ``query.B`` (W) and ``key.A`` … (θ); A = W_0, B = W_L.
    ``forward``: x (n, b) → (q, k), each (n, d).
    """

    def __init__(self, in_features: int, width: int, n_layers: int, out_features: int):
        in_features = check_int("in_features", in_features, 1)
        width = check_int("width", width, 1)
        n_layers = check_int("n_layers", n_layers, 1)
        out_features = check_int("out_features", out_features, 1)
        super().__init__()
        self.n_layers, self.width, self.out_features = n_layers, width, out_features
        self.query = DeepReLU(
            in_features, width, n_layers - 1, out_features, trainable="all"
        )
        self.key = DeepReLU(
            in_features, width, n_layers - 1, out_features, trainable="all"
        )

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.query(x), self.key(x)


def step_size(width: int, out_features: int, scale: float = 1.0) -> float:
    """η = γ = scale · d / m: Theorem 4.2's Θ(d ε² δ² / (n⁷ L² k m)) with ε²δ²/(n⁷L²k)
    folded into ``scale``.

    With it the function-space step η‖∇_W f‖² ~ scale is the same for every width (Lemma
    4.3: ‖∇_W L_S‖²_F ∝ m/d), so the trajectory radius ‖W^(t) − W^(0)‖_F ~ η ‖∇_W L_S‖_F
    · t shrinks like m^{−1/2}. width m ≥ 1, out_features d ≥ 1, scale > 0.
    """
    width = check_int("width", width, 1)
    out_features = check_int("out_features", out_features, 1)
    scale = check_positive("scale", scale)
    return scale * out_features / width


HISTORY_COLUMNS = (
    "loss",
    "loss_norm",
    "tilde_sq",
    "hat_sq",
    "output_norm_max",
    "logit_max",
)
"""Quantities :func:`algorithm1` records at every step (see its docstring)."""

CHECKPOINT_COLUMNS = ("grad_W_sq", "grad_theta_sq", "movement_W", "movement_theta")
"""Quantities :func:`algorithm1` records at its checkpoints only (NaN at the other
steps)."""

FINAL_COLUMNS = ("spectral_W", "spectral_theta")
"""Quantities :func:`algorithm1` records at the last step T only: the largest per-layer
spectral norm max_l ‖W_l^(T) − W_l^(0)‖₂ of the query encoder's movement (the distance
of Lemma B.4, which defines the balls B(W^(0), ω) of Lemmas 4.3–4.4), and the same for
θ."""


def algorithm1(
    model: StackedModel,
    x: Tensor,
    n_negatives: int,
    n_steps: int,
    *,
    eta: float,
    gamma: float,
    checkpoints: int | Sequence[int] = 60,
    desc: str = "Algorithm 1",
) -> pd.DataFrame:
    """Algorithm 1 (end-to-end training by gradient descent) for every seed of ``model``
    at once (in place).

    W^(t+1) = W^(t) − η ∇_W L_S(W^(t), θ^(t)),  θ^(t+1) = θ^(t) − γ ∇_θ L_S(W^(t),
    θ^(t)),  t = 0 … T − 1,

    with L_S exact (:func:`contrastive_loss`). The seeds' losses are summed, so each
    seed follows its own trajectory. One forward and one backward per step give L_S, its
    parameter gradients and the loss vectors ∂L_S/∂q_i, ∂L_S/∂k_i (Definition 4.1, by
    autograd w.r.t. the outputs).

    Args:
        model: a StackedModel of :class:`TwoEncoders` (parameters ``query.*`` = W,
            ``key.*`` = θ).
        x: the training set S, (n, b), on the model's device (unit norm rows for
            Assumption 1).
        n_negatives: k; n_steps: T ≥ 1; eta, gamma: the step sizes η (query) and γ
            (key), > 0.
        checkpoints: an int (≈ that many log-spaced steps,
            :func:`~ccl_helpers.train.log_spaced_steps`) or explicit steps at which the
            parameter-sized quantities are computed too; 0 and T always are.

    Returns the long history (step, seed, quantity, value and the constants ``width``,
    ``out_features``, ``eta``, ``gamma``; :func:`~ccl_helpers.train.wide` gives one row
    per step and seed), all at (W^(t), θ^(t)):
        at every step: ``loss`` L_S; ``tilde_sq`` Σ_i‖loss~_i‖²; ``hat_sq``
        Σ_i‖loss^_i‖²; ``loss_norm`` ‖loss‖₂ = (tilde_sq + hat_sq)^{1/2};
        ``output_norm_max`` max_i max(‖q_i‖, ‖k_i‖); ``logit_max`` max_{i≠j} u_ij (all u
        < 0: every query ranks its own key first);
        at the checkpoints only: ``grad_W_sq`` ‖∇_W L_S‖²_F; ``grad_theta_sq`` ‖∇_θ
        L_S‖²_F; ``movement_W`` ‖W^(t) − W^(0)‖_F; ``movement_theta`` ‖θ^(t) − θ^(0)‖_F;
        at T only: ``spectral_W`` max_l ‖W_l^(T) − W_l^(0)‖₂, ``spectral_theta`` the
        same for θ (:data:`FINAL_COLUMNS`).

    Raises FloatingPointError when L_S or a loss vector becomes non-finite (lower η, γ).
    """
    check_instance("model", model, StackedModel)
    check_tensor("x", x, ndim=2, floating=True)
    check_finite("x", x)
    n_negatives = _check_negative_count(n_negatives, x.shape[-2], "x")
    _check_set_count(x.shape[-2], n_negatives)
    n_steps = check_int("n_steps", n_steps, 1)
    eta = check_positive("eta", eta)
    gamma = check_positive("gamma", gamma)
    if not isinstance(model.template, TwoEncoders):
        raise ValueError("model must be a StackedModel of TwoEncoders")
    n = x.shape[0]
    if isinstance(checkpoints, numbers.Integral) and not isinstance(checkpoints, bool):
        schedule = set(
            log_spaced_steps(n_steps, check_int("checkpoints", checkpoints, 1))
        )
    elif isinstance(checkpoints, Sequence):
        schedule = {int(s) for s in checkpoints if 0 <= int(s) <= n_steps} | {
            0,
            n_steps,
        }
    else:
        raise ValueError(
            "checkpoints must be an int ≥ 1 or a sequence of steps, got "
            f"{checkpoints!r}"
        )
    names = list(model.params)
    params = [model.params[name] for name in names]
    if x.device != params[0].device:
        raise ValueError(
            f"x must be on the model's device {params[0].device}, got {x.device}"
        )
    query = [name.startswith("query.") for name in names]
    initial = [p.detach().clone() for p in params]
    sets = _negative_sets(n, n_negatives, x.device)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=x.device)

    def split_norms(norms: list[Tensor]) -> tuple[Tensor, Tensor]:
        """The norms of the query's and of the key's tensors taken together."""
        return (
            combined_norm(v for v, is_q in zip(norms, query) if is_q),
            combined_norm(v for v, is_q in zip(norms, query) if not is_q),
        )

    def gradient(step: int, beta: float) -> Evaluation:
        q, k = model(x)
        loss = _exact_loss(q, k, sets)
        grads = torch.autograd.grad(loss.sum(), [q, k, *params])
        tilde, hat = grads[0], grads[1]
        with torch.no_grad():
            tilde_sq, hat_sq = tilde.square().sum((1, 2)), hat.square().sum((1, 2))
            quantities = {
                "loss_norm": (tilde_sq + hat_sq).sqrt(),
                "tilde_sq": tilde_sq,
                "hat_sq": hat_sq,
                "output_norm_max": torch.maximum(q.norm(dim=-1), k.norm(dim=-1)).amax(
                    -1
                ),
                "logit_max": _pairwise_logits(q, k)
                .masked_fill(~off_diagonal, -math.inf)
                .flatten(-2)
                .amax(-1),
            }
        return Evaluation(loss.detach(), grads[2:], quantities)

    def at_checkpoint(step: int, evaluation: Evaluation) -> dict[str, Tensor]:
        grad_w, grad_t = split_norms([member_norms(g) for g in evaluation.grads])
        move_w, move_t = split_norms(
            [member_norms(p - p0) for p, p0 in zip(params, initial)]
        )
        found = dict(
            zip(CHECKPOINT_COLUMNS, (grad_w.square(), grad_t.square(), move_w, move_t))
        )
        if step == n_steps:
            spectral = [
                _spectral_norm(p - p0, n * n_steps) for p, p0 in zip(params, initial)
            ]
            for column, side in zip(FINAL_COLUMNS, (True, False)):
                found[column] = torch.stack(
                    [s for s, is_q in zip(spectral, query) if is_q == side]
                ).amax(0)
        return found

    history = loop(
        model.params,
        gradient,
        n_steps,
        seeds=model.seeds,
        lr={"query.": eta, "key.": gamma},
        full_batch=True,
        checkpoints=schedule,
        on_checkpoint=at_checkpoint,
        every_step=HISTORY_COLUMNS,
        bar=lambda steps: progress(steps, desc=desc),
    )
    template = model.template
    recorded = history[
        history["quantity"].isin(HISTORY_COLUMNS + CHECKPOINT_COLUMNS + FINAL_COLUMNS)
    ]
    return recorded.assign(
        width=template.width, out_features=template.out_features, eta=eta, gamma=gamma
    ).reset_index(drop=True)


def run_widths(
    x: Tensor,
    widths: Sequence[int],
    *,
    n_layers: int,
    out_features: int,
    n_negatives: int,
    n_steps: int,
    n_seeds: int,
    step_scale: float = 1.0,
    seed: int = 0,
    checkpoints: int | Sequence[int] = 60,
) -> pd.DataFrame:
    """:func:`algorithm1` for each width m (η = γ = ``step_size(m, d, step_scale)``,
    :func:`step_size`), ``n_seeds`` seeds each (seeds ``seed`` …, the same for every
    width), L = ``n_layers``, d = ``out_features``, k = ``n_negatives``; the
    concatenated histories (column ``width``)."""
    check_tensor("x", x, ndim=2, floating=True)
    check_finite("x", x)
    check_sizes("widths", widths, 1)
    n_layers = check_int("n_layers", n_layers, 1)
    out_features = check_int("out_features", out_features, 1)
    n_negatives = _check_negative_count(n_negatives, x.shape[-2], "x")
    _check_set_count(x.shape[-2], n_negatives)
    n_steps = check_int("n_steps", n_steps, 1)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    check_positive("step_scale", step_scale)
    seed = check_int("seed", seed, 0)
    if not isinstance(widths, Sequence) or not widths:
        raise ValueError(
            f"widths must be a non-empty sequence of ints ≥ 1, got {widths!r}"
        )
    frames = []
    for width in widths:
        model = StackedModel(
            lambda width=width: TwoEncoders(x.shape[1], width, n_layers, out_features),
            n_seeds,
            seed=seed,
            device=x.device,
        )
        rate = step_size(width, out_features, step_scale)
        frames.append(
            algorithm1(
                model,
                x,
                n_negatives,
                n_steps,
                eta=rate,
                gamma=rate,
                checkpoints=checkpoints,
                desc=f"m = {width}",
            )
        )
    return pd.concat(frames, ignore_index=True)
