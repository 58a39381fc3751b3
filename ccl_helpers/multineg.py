"""Chapter 2: multiple negatives — Merad, Yu, Bacry, Gaïffas, *About contrastive
unsupervised representation learning for classification and its convergence* (arXiv
2012.01064), Section 3.

The setting is the latent-class model of :mod:`ccl_helpers.data`: classes c with
probabilities ρ(c) > 0 over a set C of N_C classes, D_c one distribution per class, (x,
x⁺) ~ D_sim (c ~ ρ, x, x⁺ i.i.d. D_c), N negatives x⁻_1 … x⁻_N i.i.d. D_neg = Σ_c ρ(c)
D_c. All losses are in nats.

- L^N_un(f) = E −log( e^{f(x)ᵀf(x⁺)} / (e^{f(x)ᵀf(x⁺)} + Σ_i e^{f(x)ᵀf(x⁻_i)}) )
  (eq. 6), L_un = L^1_un;
- L^µ_sup(f, T) = E_{(x,c)~D_T} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c with
  µ_c = E_{D_c} f(x) and D_T(c) = ρ(c | c ∈ T)   (eq. 5);
  L^µ_sup,k(f) = E_{T ~ D_{k+1}} L^µ_sup(f, T), D_{k+1} uniform over the C(N_C, k+1)
  sets of k + 1 distinct classes   (eq. 10).

The results, as implemented here (right-hand sides in nats):

- Lemma 1:  L^µ_sup(f, C) ≤ L_un(f) / p_min + log N_C,  p_min = min_c ρ(c)
  (:func:`lemma1_bound`). The log N_C is not needed: Σ_{c⁻} log(1 + e^{a_{c⁻}}) ≥ log(1
  + Σ_{c⁻} e^{a_{c⁻}}) replaces the proof's max-then-log-sum-exp step, so L^µ_sup(f, C)
  ≤ L_un(f)/p_min already (``with_log_term=False``; unit-tested on random encoders).
- Lemma 2:  L^µ_sup(f, C) ≤ L^N_un(f) / p^ρ_cc(N)   (:func:`lemma2_bound`),
  p^ρ_cc(N) = P(|J| = N_C) with J the set of classes of the N *negatives*
  (:func:`ccl_helpers.coupon.p_cc`). The proof only needs the negatives to cover
  C∖{c} (the positive term e^0 stands for the anchor's own class), so the larger
  min_c P(J ⊇ C∖{c}) (:func:`ccl_helpers.coupon.p_cc_anchor_excluded`) also works
  (``anchor_excluded=True``).
- Proposition 1 (ρ uniform, 2 ≤ k + 1 ≤ N_C), part (2): L^µ_sup,k(f) ≤ k/(1 − τ⁺_N) ·
  (L^N_un(f) − τ⁺_N log(N + 1)),  τ⁺_N = Σ_c ρ(c)^{N+1} = N_C^{−N}
  (:func:`proposition1_bound`, :func:`ccl_helpers.coupon.tau_plus`); part (1), N = 1, in
  nats: k/(1 − τ⁺) · (L_un(f) − τ⁺ log 2), τ⁺ = Σ_c ρ(c)²
  (:func:`proposition1_part1_bound`). The source prints part (1) with "− τ⁺": its
  proof uses log₂, where the collision term ζ(0) is 1, so that form
  (:func:`proposition1_part1_bound_as_printed`) is the same bound with L_un in bits; fed
  L_un in nats it would fail (the zero encoder has L^µ_sup,1 = log 2 above it).

Exact quantities on a finite labelled set (D_c uniform over the examples of class c):
:func:`average_mean_classifier_loss` (all C(N_C, k+1) tasks, exactly) and, since L^N_un
is an N-fold sum over the examples, the unbiased Monte Carlo estimators of the core
(:func:`ccl_helpers.metrics.unsupervised_loss_curve`, with standard errors).
Training and the figures of Section 3: :func:`contrastive_batches` (N
negatives per anchor, drawn from a shared pool), :func:`contrastive_loss`,
:func:`make_evaluator`, :func:`lemma_runs`, :func:`add_lemma_bounds`,
:func:`draw_lemma_curves`, :func:`draw_stored_runs`, :func:`proposition1_grid`,
:func:`output_norm_range`. Section 4 (gradient descent on fixed triplets):
:func:`triplet_objective`, :func:`triplet_evaluator` and the Theorem 1 experiment
(:func:`descent_to_targets`, :func:`descent_sweep`, :func:`lazy_width`). The chapter's
verdicts: :data:`CLAIMS` (the claims it tests, one per row of its verdict table) and
:func:`seed_summary` (a table of "mean ± s.e." over the seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch
from scipy import stats
from torch import Tensor

from . import coupon, metrics, plotting, train
from .checks import (
    check_batch,
    check_callable,
    check_finite,
    check_finite_real,
    check_frame,
    check_inputs,
    check_instance,
    check_int,
    check_positive,
    check_steps,
    check_tensor,
)
from .data import LatentClassModel
from .losses import info_nce_loss, logistic_loss
from .models import DeepReLU
from .train import Forward, StackedModel, gradient_descent, wide
from .verdicts import Claim, claims_by_key, format_estimate

# ---------------------------------------------------------------- the bounds
# (right-hand sides, in nats)


def lemma1_bound(
    unsupervised_loss: Tensor | float,
    class_probs: Tensor | Sequence[float],
    *,
    with_log_term: bool = True,
) -> Tensor | float:
    r"""Lemma 1's right-hand side: L^µ_sup(f, C) ≤ L_un(f)/p^ρ_min + log N_C, p^ρ_min =
    min_c ρ(c).

    With ``with_log_term=False``: L_un(f)/p^ρ_min, which also holds — in the proof,
    replace "E_{c⁻~ρ} ζ(a_{c⁻}) ≥ p_min max_{c⁻} ζ(a_{c⁻})" and the LSE ≤ max + log N_C
    step by E_{c⁻~ρ} ζ(a_{c⁻}) ≥ p_min Σ_{c⁻} log(1 + e^{a_{c⁻}}) ≥ p_min log(1 + Σ_{c⁻}
    e^{a_{c⁻}}) ≥ p_min ℓ^µ(x, c), with a_{c⁻} = f(x)ᵀ(µ_{c⁻} − µ_c) (a_c = 0), since
    Π(1 + e^{a}) ≥ 1 + Σ e^{a}.

    Args:
        unsupervised_loss: L_un(f) in nats (N = 1), a finite float or tensor of any
            shape.
        class_probs: ρ, shape (N_C,), every entry > 0.
    Returns: the bound, of the type and shape of ``unsupervised_loss``.
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    rho = coupon.probability_vector(class_probs)
    bound = loss / float(rho.min())
    return bound + math.log(rho.numel()) if with_log_term else bound


def lemma2_bound(
    unsupervised_loss: Tensor | float,
    n_negatives: int,
    class_probs: Tensor | Sequence[float],
    *,
    anchor_excluded: bool = False,
) -> Tensor | float:
    r"""Lemma 2's right-hand side: L^µ_sup(f, C) ≤ L^N_un(f) / p^ρ_cc(N)
    (see :func:`ccl_helpers.coupon.p_cc`).

    The source assumes N = Ω(N_C log N_C) but the inequality holds for every N ≥ 1 (the
    bound is +∞ when p^ρ_cc(N) = 0, i.e. N < N_C). With ``anchor_excluded=True`` the
    factor is the larger :func:`ccl_helpers.coupon.p_cc_anchor_excluded` (a tighter
    bound, see there).

    Args:
        unsupervised_loss: L^N_un(f) in nats, a finite float or tensor of any shape.
        n_negatives: N ≥ 1; class_probs: ρ (N_C,), every entry > 0.
    Returns: the bound, of the type and shape of ``unsupervised_loss`` (+∞ where the
        factor is 0).
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    probability = (coupon.p_cc_anchor_excluded if anchor_excluded else coupon.p_cc)(
        n_negatives, class_probs
    )
    if probability == 0.0:
        return torch.full_like(loss, math.inf) if isinstance(loss, Tensor) else math.inf
    return loss / probability


def _check_task(task_size: int, n_classes: int) -> tuple[int, int]:
    n_classes = check_int("n_classes", n_classes, 2)
    return check_int("task_size", task_size, 2, n_classes), n_classes


def proposition1_factor(n_negatives: int, task_size: int, n_classes: int) -> float:
    """k / (1 − τ⁺_N) of Proposition 1 for uniform ρ over n_classes classes, k =
    task_size − 1.

    It decreases to k as N grows (τ⁺_N = N_C^{−N} → 0). Args: n_negatives N ≥ 1,
    task_size k + 1 in 2..n_classes, n_classes N_C ≥ 2. Returns: a float."""
    task_size, n_classes = _check_task(task_size, n_classes)
    tau = coupon.tau_plus(
        n_negatives, torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)
    )
    return (task_size - 1) / (1 - tau)


def proposition1_bound(
    unsupervised_loss: Tensor | float, n_negatives: int, task_size: int, n_classes: int
) -> Tensor | float:
    r"""Proposition 1 (2) (ρ uniform over N_C classes, k = task_size − 1,
    1 ≤ k ≤ N_C − 1):

        L^µ_sup,k(f) ≤ k / (1 − τ⁺_N) · (L^N_un(f) − τ⁺_N log(N + 1)),
            τ⁺_N = N_C^{−N},

    the term τ⁺_N log(N + 1) being the loss when all N negatives share the positive's
    class (all logits equal: log(N + 1) nats). At N = 1 this is part (1) in nats.

    Args:
        unsupervised_loss: L^N_un(f) in nats, a finite float or tensor of any shape.
        n_negatives: N ≥ 1; task_size: k + 1 in 2..n_classes; n_classes: N_C ≥ 2.
    Returns: the bound, of the type and shape of ``unsupervised_loss``.
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    task_size, n_classes = _check_task(task_size, n_classes)
    n = check_int("n_negatives", n_negatives)
    tau = coupon.tau_plus(
        n, torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)
    )
    return (task_size - 1) / (1 - tau) * (loss - tau * math.log(n + 1))


def proposition1_part1_bound(
    unsupervised_loss: Tensor | float, task_size: int, n_classes: int
) -> Tensor | float:
    r"""Proposition 1 (1) in nats (ρ uniform, N = 1, k = task_size − 1):

        L^µ_sup,k(f) ≤ k / (1 − τ⁺) · (L_un(f) − τ⁺ log 2),
            τ⁺ = P(c = c⁻) = Σ_c ρ(c)² = 1/N_C,

    log 2 = ζ(0) being the loss of a collision c⁻ = c. Equals :func:`proposition1_bound`
    at N = 1 and, for k = 1, the CURL lemma
    (:func:`ccl_helpers.curl.mean_classifier_bound`).
    Args: unsupervised_loss L_un(f) (float or tensor); task_size in 2..n_classes;
        n_classes ≥ 2.
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    task_size, n_classes = _check_task(task_size, n_classes)
    tau = 1.0 / n_classes
    return (task_size - 1) * (loss - tau * math.log(2)) / (1 - tau)


def proposition1_part1_bound_as_printed(
    unsupervised_loss: Tensor | float, task_size: int, n_classes: int
) -> Tensor | float:
    r"""Proposition 1 (1) as the source prints it: k/(1 − τ⁺) · (L_un(f) − τ⁺), τ⁺ =
    1/N_C.

    Its proof sets log = log₂, where ζ(0) = 1: with L_un in bits this is the bound of
    :func:`proposition1_part1_bound` in bits (times log 2 it is the nats form). Fed
    L_un in nats it is smaller than the nats bound by k τ⁺ (1 − log 2)/(1 − τ⁺) and
    fails, e.g. for the zero encoder at k = 1: L^µ_sup,1 = log 2 > (log 2 − 1/N_C)/(1 −
    1/N_C).
    Args: as :func:`proposition1_part1_bound`, ``unsupervised_loss`` in bits.
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    task_size, n_classes = _check_task(task_size, n_classes)
    tau = 1.0 / n_classes
    return (task_size - 1) * (loss - tau) / (1 - tau)


# ---------------------------------------------------------------- exact supervised
# quantities on a labelled set


def average_mean_classifier_loss(
    features: Tensor,
    labels: Tensor,
    task_size: int,
    *,
    class_probs: Tensor | None = None,
    means: Tensor | None = None,
) -> Tensor:
    r"""L^µ_sup,k(f) = E_{T~D_{k+1}} L^µ_sup(f, T), averaged exactly over all
    C(N_C, k+1) tasks (eq. 10).

        L^µ_sup,k(f) = C(N_C, k+1)^{−1} Σ_{|T| = k+1} Σ_{c∈T} ρ(c)/ρ(T)
                       · mean_{x ∈ class c} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c,

    D_{k+1} uniform over the sets of k + 1 distinct classes and D_T(c) = ρ(c | c ∈ T),
    as in the source; D_c uniform over the examples of class c. For uniform ρ (the
    default, as Proposition 1 assumes) this is
    :func:`ccl_helpers.metrics.mean_classifier`'s AVG-(k+1) loss (whose tasks are drawn
    ∝ Π_{c∈T} ρ(c), with weight 1/(k+1) per class: the same for uniform ρ only). With
    task_size = N_C it is L^µ_sup(f, C) = Σ_c ρ(c) E_{D_c}[ℓ^µ] of Lemmas 1 and 2.

    Args:
        features: f(x), shape (..., n, d); labels: (n,) covering 0..N_C−1 (N_C =
            means.shape[-2] if means is given).
        task_size: k + 1, in 2..N_C (at most 100,000 tasks).
        class_probs: ρ (N_C,), every entry > 0; default uniform.
        means: µ_c, shape (..., N_C, d) broadcastable with features; default the class
            means of ``features`` (the population value on this finite distribution).
    Returns: (...) float64, on the features' device. Vectorised over tasks (in
        memory-bounded chunks).
    """
    n_classes = None if means is None else means.shape[-2]
    n_classes, counts = metrics.labelled_set_sizes(features, labels, n_classes)
    tasks = metrics.all_tasks(
        n_classes, check_int("task_size", task_size, 2, n_classes), features.device
    )
    rho = metrics.class_weights(class_probs, n_classes, counts, uniform_default=True)
    if means is None:
        means = metrics.class_means(features, labels, n_classes)
    elif (
        means.ndim < 2
        or means.shape[-1] != features.shape[-1]
        or not bool(torch.isfinite(means).all())
    ):
        raise ValueError(
            f"means must be finite with shape (..., N_C, d={features.shape[-1]}), "
            f"got {tuple(means.shape)}"
        )
    logits = features.double() @ means.double().transpose(-1, -2)  # (..., n, N_C)
    own = logits.gather(
        -1, labels.expand(*logits.shape[:-2], -1).unsqueeze(-1)
    ).squeeze(-1)  # (..., n)
    member = torch.zeros(
        tasks.shape[0], n_classes, dtype=torch.bool, device=features.device
    )
    member.scatter_(1, tasks, True)
    weight = (
        member[:, labels]
        * (rho[labels] / counts[labels])[None, :]
        / rho[tasks].sum(-1, keepdim=True)
    )
    log_mask = torch.zeros(
        member.shape, dtype=torch.float64, device=features.device
    ).masked_fill(~member, -math.inf)
    batch = math.prod(logits.shape[:-2])
    chunk = max(1, metrics.CHUNK_ELEMENTS // (batch * labels.numel() * n_classes))
    total = torch.zeros(logits.shape[:-2], dtype=torch.float64, device=features.device)
    for start in range(0, tasks.shape[0], chunk):  # memory-bounded chunks of tasks
        stop = start + chunk
        lse = torch.logsumexp(
            logits.unsqueeze(-3) + log_mask[start:stop, None, :], dim=-1
        )  # (..., t, n)
        total = total + ((lse - own.unsqueeze(-2)) * weight[start:stop]).sum((-1, -2))
    return total / tasks.shape[0]


def best_linear_loss(
    features: Tensor,
    labels: Tensor,
    *,
    class_probs: Tensor | None = None,
    max_iter: int = 300,
) -> Tensor:
    r"""An upper estimate of L_sup(f, C) = inf_W Σ_c ρ(c) mean_{x∈c} ℓ(W f(x), c),
    ℓ the cross-entropy (eq. 3, T = C).

    W (N_C × d, no bias) is fitted on its own: L-BFGS in float64 from W = 0, example
    weights ρ(c)/n_c (:func:`ccl_helpers.metrics.fit_linear_classifiers`), all leading
    dimensions together; its loss is returned as it is. Nothing of the mean classifier
    enters, so L_sup ≤ L^µ_sup is a check between two independent computations: it
    fails if the fit stops above the mean classifier's loss. On a set of examples that
    is not linearly separable the infimum is positive and attained. ρ defaults to the
    label frequencies. features (..., n, d), labels (n,) → (...) float64.
    """
    n_classes, counts = metrics.labelled_set_sizes(features, labels)
    rho = metrics.class_weights(class_probs, n_classes, counts, uniform_default=False)
    features = features.detach().double()
    task = torch.arange(n_classes, device=labels.device)[None]  # T = C, (1, N_C)
    example_weight = rho[labels] / counts[labels]
    rows = metrics.fit_linear_classifiers(
        features,
        labels,
        task,
        sample_weight=example_weight,
        dtype=torch.float64,
        max_iter=max_iter,
        tolerance=1e-9,
    )
    loss, _ = metrics.task_loss_and_accuracy(
        features, labels, rows, task, rho, sample_weight=example_weight
    )
    return loss


def output_norm_range(features: Tensor) -> tuple[Tensor, Tensor]:
    """min_x ‖f(x)‖ and max_x ‖f(x)‖ over the n examples (Assumption 2's η < ‖f(x)‖ <
    C).

    features (..., n, d) → (min (...), max (...)), in the features' dtype and device."""
    check_tensor("features", features, min_ndim=2, floating=True)
    if features.shape[-2] == 0:
        raise ValueError("features must hold n ≥ 1 examples (shape (..., n, d))")
    norms = torch.linalg.vector_norm(features, dim=-1)
    return norms.amin(-1), norms.amax(-1)


# ---------------------------------------------------------------- L^N_un by Monte Carlo


# ---------------------------------------------------------------- training and the
# figures


def contrastive_batches(
    latent: LatentClassModel,
    n_seeds: int,
    batch_size: int,
    n_negatives: int,
    generator: torch.Generator,
    *,
    pool_size: int | None = None,
) -> Callable[[int], tuple[Tensor, Tensor, Tensor, Tensor]]:
    """step ↦ (x, x⁺, pool, choice), one minibatch of eq. (6) per seed.

    x, x⁺: (S, B, *input), B anchors and their positives from D_sim; pool: (S, P,
    *input), P i.i.d. draws from D_neg (collisions with the positive's class included,
    as in eq. 6); choice: (S, B, N) int64, anchor b's negatives are pool[choice[b]].

    - ``pool_size=None``: P = B·N and anchor b takes the entries bN … bN + N − 1: every
      anchor has N negatives of its own.
    - ``pool_size=P`` (P ≥ N): every anchor takes N *distinct* entries of one shared
      pool, uniformly. Distinct entries of an i.i.d. pool are i.i.d. draws from D_neg,
      so each anchor's term is still an unbiased estimate of L^N_un; the anchors'
      negatives overlap, and the encoder runs on 2B + P inputs instead of 2B + BN.
    """
    check_instance("latent", latent, LatentClassModel)
    n_seeds = check_int("n_seeds", n_seeds)
    batch_size = check_int("batch_size", batch_size)
    n = check_int("n_negatives", n_negatives)
    if pool_size is not None:
        check_int("pool_size", pool_size, n)
    device = latent.class_probs.device

    def sample(step: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        anchor, positive, _ = latent.sample_sim((n_seeds, batch_size), generator)
        if pool_size is None:
            pool, _ = latent.sample_neg((n_seeds, batch_size * n), generator)
            choice = torch.arange(batch_size * n, device=device).view(batch_size, n)
            choice = choice.expand(n_seeds, -1, -1)
        else:
            pool, _ = latent.sample_neg((n_seeds, pool_size), generator)
            keys = torch.rand(
                n_seeds, batch_size, pool_size, generator=generator, device=device
            )
            choice = keys.argsort(-1)[..., :n]  # N distinct entries, uniformly
        return anchor, positive, pool, choice

    return sample


def contrastive_loss(
    forward: Forward, batch: tuple[Tensor, Tensor, Tensor, Tensor]
) -> Tensor:
    r"""The empirical L^N_un of one seed on a batch: mean over anchors of
    −log(e^{f(x)ᵀf(x⁺)} / (e^{f(x)ᵀf(x⁺)} + Σ_{i=1}^N e^{f(x)ᵀf(x⁻_i)}))
    (:func:`ccl_helpers.losses.info_nce_loss`).

    batch: x (B, *input), x⁺ (B, *input), pool (P, *input), choice (B, N) (one seed's
    slice of :func:`contrastive_batches`; x⁻_i of anchor b is pool[choice[b, i]]).
    One forward pass over the 2B + P inputs. Returns a scalar."""
    check_callable("forward", forward)
    anchor, positive, pool, choice = check_batch(
        "batch", batch, ("floating", "floating", "floating", "integer")
    )
    if (
        positive.shape != anchor.shape
        or pool.shape[1:] != anchor.shape[1:]
        or choice.ndim != 2
        or choice.shape[0] != anchor.shape[0]
    ):
        raise ValueError(
            "batch must be x (B, ...), x⁺ (B, ...), pool (P, ...), choice (B, N); got "
            f"{tuple(anchor.shape)}, {tuple(positive.shape)}, {tuple(pool.shape)}, "
            f"{tuple(choice.shape)}"
        )
    b = anchor.shape[0]
    out = forward(torch.cat([anchor, positive, pool]))
    return info_nce_loss(out[:b], out[b : 2 * b], out[2 * b :][choice])


def make_evaluator(
    inputs: Tensor,
    labels: Tensor,
    *,
    n_negatives: int = 1,
    class_probs: Tensor | None = None,
    n_samples: int = 20_000,
    generator: torch.Generator | None = None,
    fit_linear: bool = True,
    max_iter: int = 300,
) -> Callable[[Callable[[Tensor], Tensor]], dict[str, Tensor]]:
    r"""An ``evaluate`` for :func:`ccl_helpers.train.train` (Figures 1–3): model ↦
    {quantity: (S,)}.

    On the labelled set (inputs, labels), D_c uniform over class c's examples, ρ =
    class_probs (default the label frequencies), features = model(inputs) of shape (S,
    n, d):

    - ``L_un``: L^N_un(f), the Monte Carlo estimate on M = n_samples draws made once,
      here, so that every checkpoint uses the same draws
      (:func:`ccl_helpers.metrics.unsupervised_loss_curve`; for N = 1 the exact sum
      over all n·n_c·n triples,
      :func:`ccl_helpers.metrics.exact_unsupervised_loss`, costs n³/N_C terms);
      ``L_un_se`` its standard error;
    - ``L_mu``: L^µ_sup(f, C) (µ from the same features;
      :func:`average_mean_classifier_loss`);
    - ``L_sup``: :func:`best_linear_loss`, fitted on its own (if ``fit_linear``);
    - ``norm_min``, ``norm_max``: min and max of ‖f(x)‖ over the set (Assumption 2,
      Figure 3).

    The lemmas' bounds are added to the records by :func:`add_lemma_bounds`.
    """
    n = check_int("n_negatives", n_negatives)
    check_inputs("inputs", inputs, labels)
    n_classes, counts = metrics.labelled_set_sizes(
        torch.zeros(labels.numel(), 1), labels
    )
    rho = metrics.class_weights(class_probs, n_classes, counts, uniform_default=False)
    samples = metrics.draw_unsupervised_samples(labels, n, n_samples, generator, rho)

    def evaluate(model: Callable[[Tensor], Tensor]) -> dict[str, Tensor]:
        with torch.no_grad():
            features = model(inputs).double()
            l_un, se = (
                value[..., -1]
                for value in metrics.unsupervised_loss_curve(features, samples)
            )
            result = {
                "L_un": l_un,
                "L_un_se": se,
                "L_mu": average_mean_classifier_loss(
                    features, labels, n_classes, class_probs=rho
                ),
            }
        if fit_linear:
            result["L_sup"] = best_linear_loss(
                features, labels, class_probs=rho, max_iter=max_iter
            )
        result["norm_min"], result["norm_max"] = output_norm_range(features)
        return result

    return evaluate


LEMMA_BOUNDS = {
    "lemma1": "L_un/p_min + log N_C (Lemma 1; N = 1)",
    "lemma1_no_log": "L_un/p_min (Lemma 1 without log N_C; N = 1)",
    "lemma2": "L^N_un/p_cc(N) (Lemma 2; N > 1)",
    "lemma2_anchor_excluded": "L^N_un/min_c P(J ⊇ C∖{c}) (Lemma 2, anchor excluded)",
}
"""The bound columns of :func:`add_lemma_bounds`."""


def add_lemma_bounds(
    runs: pd.DataFrame, class_probs: Tensor | Sequence[float], confidence: float = 4.0
) -> pd.DataFrame:
    r"""The records of :func:`make_evaluator` (columns ``N``, ``L_un``, ``L_un_se``)
    with the lemmas' right-hand sides (:data:`LEMMA_BOUNDS`) evaluated at the upper
    confidence limit L^N_un + z·se, z = ``confidence`` (the book's one convention, as
    :func:`proposition1_grid`), so that ``L_mu ≤ bound`` fails only on a violation
    beyond the Monte Carlo noise, never through it, even where a bound is tight.
    Lemma 1's columns are filled on the rows with N = 1, Lemma 2's on those with N > 1
    (+∞ where the coverage probability is 0), NaN elsewhere. Returns a new frame."""
    check_frame("runs", runs, ["N", "L_un", "L_un_se"])
    confidence = check_positive("confidence", confidence, allow_zero=True)
    rho = coupon.probability_vector(class_probs)
    out = runs.copy()
    high = torch.tensor((out["L_un"] + confidence * out["L_un_se"]).to_numpy())
    single = torch.tensor((out["N"] == 1).to_numpy())
    nan = torch.full_like(high, math.nan)
    out["lemma1"] = torch.where(single, lemma1_bound(high, rho), nan).numpy()
    out["lemma1_no_log"] = torch.where(
        single, lemma1_bound(high, rho, with_log_term=False), nan
    ).numpy()
    for column, excluded in (("lemma2", False), ("lemma2_anchor_excluded", True)):
        out[column] = math.nan
        for n in sorted(set(out["N"]) - {1}):  # one coverage probability per N
            rows = (out["N"] == n).to_numpy()
            out.loc[rows, column] = lemma2_bound(
                high[torch.tensor(rows)], int(n), rho, anchor_excluded=excluded
            ).numpy()
    return out


def lemma_runs(
    make_encoder: Callable[[], torch.nn.Module],
    train_set: LatentClassModel,
    eval_inputs: Tensor,
    eval_labels: Tensor,
    negatives: Sequence[int],
    *,
    n_seeds: int,
    n_steps: int,
    batch_size: int,
    pool_size: int | None,
    checkpoints: Iterable[int],
    n_samples: int,
    lr: float = 1e-3,
    lr_factor: train.Stages | None = None,
    fit_linear: Iterable[int] = (1,),
    seed: int = 0,
) -> tuple[pd.DataFrame, dict[int, StackedModel]]:
    """Contrastive training with N negatives for every N in ``negatives`` (Figures
    1–3): ``n_seeds`` encoders per N (seeds ``seed`` …, trained together with Adam on
    :func:`contrastive_loss`, batches from :func:`contrastive_batches` on
    ``train_set``; step size ``lr`` times the schedule ``lr_factor``, see
    :func:`ccl_helpers.train.train`), evaluated by :func:`make_evaluator` on
    (eval_inputs, eval_labels) at step 0, the ``checkpoints`` and the end.
    ``fit_linear``: the N whose runs also record ``L_sup``. Every N starts from the
    same initial encoders and evaluates on its own fixed Monte Carlo draws.

    Returns the records, one row per (N, seed, checkpoint) with the columns of
    :func:`make_evaluator` and ``train_loss``, and the trained models by N.
    """
    values = [check_int("negatives", n) for n in negatives]
    if not values:
        raise ValueError("negatives must hold at least one N ≥ 1")
    check_callable("make_encoder", make_encoder)
    check_instance("train_set", train_set, LatentClassModel)
    check_inputs("eval_inputs", eval_inputs, eval_labels, "eval_labels")
    checkpoints = check_steps("checkpoints", checkpoints, check_int("n_steps", n_steps))
    device = eval_inputs.device
    linear = set(fit_linear)
    tables, models = [], {}
    for n in values:
        models[n] = StackedModel(make_encoder, n_seeds, seed=seed, device=device)
        evaluate = make_evaluator(
            eval_inputs,
            eval_labels,
            n_negatives=n,
            n_samples=n_samples,
            generator=torch.Generator(device=device).manual_seed(100 + n),
            fit_linear=n in linear,
        )
        batches = contrastive_batches(
            train_set,
            n_seeds,
            batch_size,
            n,
            torch.Generator(device=device).manual_seed(200 + n),
            pool_size=pool_size,
        )
        history = train.train(
            models[n],
            contrastive_loss,
            batches,
            n_steps,
            lr=lr,
            lr_factor=lr_factor,
            evaluate=evaluate,
            eval_steps=checkpoints,
            desc=f"N = {n}",
        )
        tables.append(train.wide(history).assign(N=n))
    runs = pd.concat(tables, ignore_index=True).dropna(subset=["L_un"])
    return runs.reset_index(drop=True), models


LEMMA1_CURVES = (
    ("L_un", r"$L_{\rm un}(f)$", "L_un"),
    ("L_mu", r"$L^\mu_{\rm sup}(f, \mathcal{C})$", "L_mu"),
    ("L_sup", r"$L_{\rm sup}(f, \mathcal{C})$ (fitted)", "L_sup"),
    ("lemma1", r"Lemma 1: $L_{\rm un}/p_{\min} + \log N_C$", "lemma1_bound"),
    ("lemma1_no_log", r"$L_{\rm un}/p_{\min}$ (no $\log N_C$)", "lemma1_bound_no_log"),
)
"""The curves of Figure 1 (Lemma 1), each as (column, legend label, the quantity's name
in :data:`ccl_helpers.plotting.QUANTITIES`)."""
LEMMA2_CURVES = (
    ("L_un", r"$L^N_{\rm un}(f)$", "L_un"),
    ("L_mu", r"$L^\mu_{\rm sup}(f, \mathcal{C})$", "L_mu"),
    ("lemma2", r"Lemma 2: $L^N_{\rm un}/p_{cc}(N)$", "lemma2_bound"),
    (
        "lemma2_anchor_excluded",
        r"$L^N_{\rm un}/\min_c P(J \supseteq \mathcal{C}\setminus\{c\})$",
        "lemma2_bound_anchor_excluded",
    ),
)
"""The curves of Figure 2 (Lemma 2), as :data:`LEMMA1_CURVES`."""


def draw_lemma_curves(ax, runs: pd.DataFrame, curves) -> None:
    """Draw ``curves`` (:data:`LEMMA1_CURVES` or :data:`LEMMA2_CURVES`) of ``runs``
    (the records of one N, with :func:`add_lemma_bounds`' columns) against the training
    step: the seeds thin, their mean in the quantity's look, with a ±1 s.e. band for
    the losses (the bounds are dashed)."""
    for column, label, name in curves:
        bound = plotting.quantity(name).linestyle == "--"
        plotting.runs_and_mean(
            ax, runs, "step", column, look=name, label=label, error_band=not bound
        )


def draw_stored_runs(runs: pd.DataFrame, negatives: Sequence[int] = (1, 35)):
    """Figures 1 and 2 of stored runs (e.g. the paper scale's, read back from JSON):
    for every data set of the ``data`` column and every N in ``negatives``, one panel
    of :func:`draw_lemma_curves` (Lemma 1's curves for N = 1, Lemma 2's otherwise; log
    scale for N > 1), at most 3 panels a row. Returns the figure."""
    check_frame("runs", runs, ["data", "N", "step", "seed"])
    panels = [
        (name, int(n))
        for name in runs["data"].unique()
        for n in negatives
        if bool(((runs["data"] == name) & (runs["N"] == n)).any())
    ]
    if not panels:
        raise ValueError(f"runs hold none of N = {list(negatives)}")
    n_rows = -(-len(panels) // plotting.MAX_PANELS)
    fig, axes = plotting.figure(min(len(panels), plotting.MAX_PANELS), n_rows)
    for ax, (name, n) in zip(np.ravel(axes), panels):
        one = runs[(runs["data"] == name) & (runs["N"] == n)]
        draw_lemma_curves(ax, one, LEMMA1_CURVES if n == 1 else LEMMA2_CURVES)
        if n > 1:
            ax.set_yscale("log")
        plotting.finish(
            ax, xlabel="training step", ylabel="nats", title=f"{name}, N = {n}"
        )
    for ax in np.ravel(axes)[len(panels) :]:
        ax.set_visible(False)
    return fig


def proposition1_grid(
    features: Tensor,
    labels: Tensor,
    n_negatives: Sequence[int],
    *,
    n_samples: int = 20_000,
    generator: torch.Generator | None = None,
    means: Tensor | None = None,
    confidence: float = 4.0,
) -> pd.DataFrame:
    r"""Proposition 1 on a k × N grid: L^µ_sup,k(f) against k/(1 − τ⁺_N)(L^N_un(f) −
    τ⁺_N log(N + 1)).

    ρ uniform over the N_C classes of ``labels`` (as the proposition assumes), D_c
    uniform over the examples of class c. For every k = 1 … N_C − 1 the exact
    :func:`average_mean_classifier_loss`; for every N in ``n_negatives`` L^N_un, the
    Monte Carlo estimate of :func:`ccl_helpers.metrics.unsupervised_loss_curve` (one
    set of M = n_samples draws with max(N) negatives; N uses the first N).

    Args: features (S, n, d) or (n, d); labels (n,); n_negatives: N values ≥ 1;
        generator on the labels' device; means: µ (…, N_C, d), default the class means
        of ``features``; confidence: z.
    Returns: a tidy frame, one row per (seed, n_negatives, task_size): k, L_mu, L_un,
        L_un_se, tau_plus, factor = k/(1 − τ⁺_N), bound, and bound_high, the bound at
        L_un + z·se (the book's one convention, as :func:`add_lemma_bounds`): L_mu >
        bound_high is a violation beyond the Monte Carlo noise.
    """
    values = [check_int("n_negatives", n) for n in n_negatives]
    if not values:
        raise ValueError("n_negatives must hold at least one value ≥ 1")
    confidence = check_positive("confidence", confidence, allow_zero=True)
    n_classes, _ = metrics.labelled_set_sizes(features, labels)
    features = features.double().reshape(-1, *features.shape[-2:])  # (S, n, d)
    rho = torch.full(
        (n_classes,), 1.0 / n_classes, dtype=torch.float64, device=labels.device
    )
    task_sizes = range(2, n_classes + 1)
    l_mu = torch.stack(
        [
            average_mean_classifier_loss(
                features, labels, m, class_probs=rho, means=means
            )
            for m in task_sizes
        ],
        -1,
    )  # (S, N_C − 1)
    samples = metrics.draw_unsupervised_samples(
        labels, max(values), n_samples, generator, rho
    )
    estimate, se = metrics.unsupervised_loss_curve(features, samples)
    frames = []
    for n in values:  # a handful of N values, each vectorised over seeds and tasks
        l_un, l_se = estimate[:, n - 1], se[:, n - 1]
        tau = coupon.tau_plus(n, rho)
        factor = torch.tensor(
            [proposition1_factor(n, m, n_classes) for m in task_sizes],
            dtype=torch.float64,
        )
        log_term = tau * math.log(n + 1)
        bound = factor[None, :] * (l_un.cpu()[:, None] - log_term)
        high = factor[None, :] * ((l_un + confidence * l_se).cpu()[:, None] - log_term)
        seeds, sizes = torch.meshgrid(
            torch.arange(features.shape[0]),
            torch.tensor(list(task_sizes)),
            indexing="ij",
        )
        frames.append(
            pd.DataFrame(
                {
                    "seed": seeds.flatten().numpy(),
                    "n_negatives": n,
                    "task_size": sizes.flatten().numpy(),
                    "k": (sizes - 1).flatten().numpy(),
                    "L_mu": l_mu.cpu().flatten().numpy(),
                    "L_un": l_un.cpu()[:, None]
                    .expand(-1, len(task_sizes))
                    .flatten()
                    .numpy(),
                    "L_un_se": l_se.cpu()[:, None]
                    .expand(-1, len(task_sizes))
                    .flatten()
                    .numpy(),
                    "tau_plus": tau,
                    "factor": factor[None, :]
                    .expand(features.shape[0], -1)
                    .flatten()
                    .numpy(),
                    "bound": bound.flatten().numpy(),
                    "bound_high": high.flatten().numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------- Section 4: gradient
# descent on fixed triplets


def triplet_objective(
    forward: Forward, triplets: tuple[Tensor, Tensor, Tensor]
) -> Tensor:
    r"""L̂_un(f) = Σ_{i=1}^n ζ(f(xᵢ)ᵀ(f(xᵢ⁻) − f(xᵢ⁺))), ζ(u) = log(1 + eᵘ) — eq. (11),
    a *sum* over the n
    fixed triplets. triplets: (anchor, positive, negative), each (n, …) → a 0-dim
    tensor. A ``loss_fn`` for :func:`ccl_helpers.train.gradient_descent`.

    One forward pass over the 3n inputs, then :func:`ccl_helpers.losses.logistic_loss`
    with ``reduction="sum"`` (it takes ζ(f(xᵢ)ᵀf(xᵢ⁻) − f(xᵢ)ᵀf(xᵢ⁺)), the same
    argument). Chapter 3's :func:`ccl_helpers.wen.triplet_loss` is the same loss on
    index triplets, divided by their number."""
    check_callable("forward", forward)
    inputs, n = _stack_triplets(triplets)
    return logistic_loss(*_split_triplets(forward(inputs), n), reduction="sum")


def _stack_triplets(triplets: tuple[Tensor, Tensor, Tensor]) -> tuple[Tensor, int]:
    """(the 3n inputs: anchors, then positives, then negatives; n) for one forward
    pass."""
    anchor, positive, negative = check_batch("triplets", triplets, ("floating",) * 3)
    if not (anchor.shape == positive.shape == negative.shape) or anchor.ndim < 2:
        raise ValueError(
            "triplets must be three tensors of one shape (n, …), got "
            f"{tuple(anchor.shape)}, "
            f"{tuple(positive.shape)}, {tuple(negative.shape)}"
        )
    return torch.cat([anchor, positive, negative]), anchor.shape[0]


def _split_triplets(outputs: Tensor, n: int) -> tuple[Tensor, Tensor, Tensor]:
    """Outputs (…, 3n, d) of :func:`_stack_triplets`'s inputs → (z₁, z₂, z₃) = (f(xᵢ),
    f(xᵢ⁺), f(xᵢ⁻)), each (…, n, d)."""
    return outputs.unflatten(-2, (3, n)).unbind(-3)


def triplet_evaluator(
    triplets: tuple[Tensor, Tensor, Tensor],
) -> Callable[[Callable[[Tensor], Tensor]], dict[str, Tensor]]:
    r"""An ``evaluate`` for :func:`ccl_helpers.train.gradient_descent` on fixed triplets
    (Lemma 4, Assumption 2).

    With zᵢ = (f(xᵢ), f(xᵢ⁺), f(xᵢ⁻)), uᵢ = z_{i,1}ᵀ(z_{i,3} − z_{i,2}) and ℓ(zᵢ) =
    ζ(uᵢ) (per triplet, :func:`ccl_helpers.losses.logistic_loss` with
    ``reduction="none"``, as in :func:`triplet_objective`), the loss vector of triplet i
    is ∇_{zᵢ}ℓ = σ(uᵢ)(z_{i,3} − z_{i,2}, −z_{i,1}, z_{i,1}) (σ the logistic function,
    taken as σ(uᵢ) = 1 − e^{−ℓ(zᵢ)} since ℓ = log(1 + eᵘ)). As the 3n inputs are
    distinct (Assumption 1), the gradient of L̂_un with respect to all outputs stacks
    them. Computed in float64. Returns, per seed (S,):

    - ``loss_max`` max_i ℓ(zᵢ); ``output_grad_norm`` ε = ‖∇_z L̂_un‖ = (Σᵢ
      ‖∇_{zᵢ}ℓ‖²)^{1/2};
    - ``norm_min`` η and ``norm_max`` C: the min and max of ‖f(x)‖ over the 3n inputs
      (Assumption 2);
    - ``lemma4_bound`` 2ε/η, which bounds every ℓ(zᵢ) when ε < η/2 (Lemma 4);
      ``lemma4_applies`` 1.0 where ε < η/2, else 0.0.
    """
    inputs, n = _stack_triplets(triplets)
    check_finite("triplets", inputs)

    def evaluate(model: Callable[[Tensor], Tensor]) -> dict[str, Tensor]:
        outputs = model(inputs).double()  # (S, 3n, d)
        z1, z2, z3 = _split_triplets(outputs, n)
        loss = logistic_loss(z1, z2, z3, reduction="none")  # ℓ(zᵢ), (S, n)
        sigma = -torch.expm1(-loss)  # σ(uᵢ)
        vector_sq = sigma**2 * ((z3 - z2).square().sum(-1) + 2 * z1.square().sum(-1))
        epsilon = vector_sq.sum(-1).sqrt()
        norms = outputs.norm(dim=-1)
        eta = norms.amin(-1)
        return {
            "loss_max": loss.amax(-1),
            "output_grad_norm": epsilon,
            "norm_min": eta,
            "norm_max": norms.amax(-1),
            "lemma4_bound": 2 * epsilon / eta,
            "lemma4_applies": (epsilon < eta / 2).double(),
        }

    return evaluate


class TargetDescent(NamedTuple):
    """The outcome of :func:`descent_to_targets` or :func:`descent_sweep`.

    steps: one row per (seed, target, threshold): ``target`` ``"loss"`` (L̂_un ≤ ε,
    Theorem 1) or ``"output_grad_norm"`` (‖∇_z L̂_un‖ ≤ ε', Lemma 6), ``threshold``
    ε, ``steps`` the first recorded step at which it held (NaN if never) and
    ``relative_movement`` ‖W^(t) − W^(0)‖_F / ‖W^(0)‖_F at that step.
    history: :func:`ccl_helpers.train.wide` of the descent's checkpoints, with
    :func:`triplet_evaluator`'s quantities.
    """

    steps: pd.DataFrame
    history: pd.DataFrame


def _first_steps(
    history: pd.DataFrame, thresholds: dict[str, list[float]]
) -> pd.DataFrame:
    """Per seed, target quantity and threshold ε (``thresholds``: target ↦ its ε's),
    the first recorded step with target ≤ ε and the relative movement there (NaN
    when never)."""
    rows = []
    for target, threshold in (
        (target, threshold)
        for target, values in thresholds.items()
        for threshold in values
    ):
        below = history[history[target] <= threshold]
        first = below.loc[below.groupby("seed")["step"].idxmin()].set_index("seed")
        found = first.reindex(sorted(history["seed"].unique()))
        rows.append(
            pd.DataFrame(
                {
                    "seed": found.index.to_numpy(),
                    "target": target,
                    "threshold": float(threshold),
                    "steps": found["step"].to_numpy(dtype=float),
                    "relative_movement": found["relative_movement"].to_numpy(),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _check_thresholds(
    name: str, values: Sequence[float], allow_empty: bool = False
) -> list[float]:
    values = [check_positive(name, v) for v in values]
    if not values and not allow_empty:
        raise ValueError(f"{name} must hold at least one value > 0")
    return values


def descent_to_targets(
    triplets: tuple[Tensor, Tensor, Tensor],
    width: int,
    *,
    lr_constant: float,
    epsilons: Sequence[float],
    grad_epsilons: Sequence[float] = (),
    max_steps: int,
    n_seeds: int = 3,
    depth: int = 1,
    out_features: int = 16,
    checkpoints: int = 100,
    seed: int = 0,
) -> TargetDescent:
    r"""Full-batch gradient descent on L̂_un (eq. (11), :func:`triplet_objective`) as
    in Theorem 1: the encoder :class:`~ccl_helpers.models.DeepReLU` (D, m, L, d) with
    A, B fixed and W_1 … W_L trained, step size ν = c/m (c = ``lr_constant``), all
    ``n_seeds`` initialisations at once, until L̂_un ≤ min ε for every seed or
    ``max_steps``.

    triplets: (anchor, positive, negative), each (n, D) on the unit sphere. Records
    ``checkpoints`` log-spaced steps (plus the step reaching min ε): the steps to each
    ε of ``epsilons`` (Theorem 1) and to each ε' of ``grad_epsilons`` on ‖∇_z L̂_un‖
    (Lemma 6) are the first checkpoints below them, so they are resolved to the
    checkpoints' spacing (a factor T^{1/checkpoints}), except min ε, which is exact.
    """
    width = check_int("width", width)
    lr_constant = check_positive("lr_constant", lr_constant)
    epsilons = _check_thresholds("epsilons", epsilons)
    grad_epsilons = _check_thresholds("grad_epsilons", grad_epsilons, True)
    inputs, _ = _stack_triplets(triplets)
    model = StackedModel(
        lambda: DeepReLU(inputs.shape[1], width, depth, out_features),
        n_seeds,
        seed=seed,
        device=inputs.device,
    )
    outcome = gradient_descent(
        model,
        triplet_objective,
        triplets,
        max_steps,
        lr=lr_constant / width,
        target=("loss", min(epsilons)),
        checkpoints=checkpoints,
        evaluate=triplet_evaluator(triplets),
        desc=None,
    )
    history = wide(outcome.history)
    steps = _first_steps(history, {"loss": epsilons, "output_grad_norm": grad_epsilons})
    return TargetDescent(steps, history)


def descent_sweep(
    parameter: str,
    values: Sequence[float],
    case: Callable[[float], tuple[tuple[Tensor, Tensor, Tensor], int, float]],
    **descent: object,
) -> TargetDescent:
    """:func:`descent_to_targets` for each value v of a swept ``parameter`` (width m,
    number of triplets n, separation δ, …): ``case(v)`` gives (triplets, width m,
    lr_constant c, so ν = c/m), the other arguments are ``descent``'s. Both frames
    gain the columns ``parameter`` and ``lr_constant``."""
    if not values:
        raise ValueError("values must hold at least one value of the parameter")
    check_callable("case", case)
    for i, value in enumerate(values):
        check_finite_real(f"values[{i}]", value)
    outcomes = []
    for value in values:
        triplets, width, lr_constant = case(value)
        outcome = descent_to_targets(
            triplets, width, lr_constant=lr_constant, **descent
        )
        outcomes.append(
            [
                frame.assign(**{parameter: value, "lr_constant": lr_constant})
                for frame in outcome
            ]
        )
    return TargetDescent(
        *(pd.concat(frames, ignore_index=True) for frames in zip(*outcomes))
    )


def lazy_width(
    steps: pd.DataFrame,
    threshold: float = 0.1,
    confidence: float = 0.95,
) -> int | None:
    """m*: the smallest width from which on the relative movement ‖W^(T) − W^(0)‖_F /
    ‖W^(0)‖_F is below ``threshold`` with the given confidence — the upper end of the
    one-sided t interval of its mean over seeds, mean + t·s/√k, is below
    ``threshold`` at that width and every wider one. steps: rows (width, seed,
    relative_movement) (the runs' movement at the target; NaN for a run that never
    reached it, which makes its width not lazy); None when no width qualifies."""
    threshold = check_positive("threshold", threshold)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    check_frame("steps", steps, ["width", "relative_movement"])
    by_width = steps.groupby("width")["relative_movement"]
    size, count = by_width.size(), by_width.count()
    if (size < 2).any():
        raise ValueError("steps must hold at least two seeds at every width")
    quantile = stats.t.ppf(confidence, np.maximum(count - 1, 1))
    upper = by_width.mean() + quantile * by_width.std() / np.sqrt(count)
    lazy = ((upper < threshold) & (count == size))[::-1].cummin()[::-1]
    return int(lazy.index[lazy.to_numpy()][0]) if lazy.any() else None


def width_scaled_targets(steps: pd.DataFrame, product: float) -> pd.DataFrame:
    """The rows of a width sweep's ``steps`` (:func:`descent_sweep` over ``width``)
    whose threshold ε is ``product``/m: Theorem 1 (and Lemma 6) ask for m ≥ Ω(d/ε), so
    along an ε sweep the width grows like 1/ε, here at m·ε = ``product``. Returns
    those rows (both targets), an ε sweep whose every point has its own width."""
    product = check_positive("product", product)
    check_frame("steps", steps, ["width", "threshold"])
    scaled = steps["width"] * steps["threshold"] / product
    return steps[np.isclose(scaled, 1.0, rtol=1e-9, atol=0.0)]


def lazy_values(frame: pd.DataFrame, x: str, threshold: float) -> pd.DataFrame:
    """The rows of a sweep's ``frame`` (columns seed, ``x``, steps,
    relative_movement) at the values of ``x`` where every seed's run reached its
    target after at least one step in the lazy regime, relative movement ‖W −
    W^(0)‖_F/‖W^(0)‖_F below ``threshold``: the runs within the theorem's hypotheses
    (a target met at initialisation says nothing of the descent). Returns those
    rows."""
    threshold = check_positive("threshold", threshold)
    check_frame(
        "frame", frame, ["seed", x, "steps", "relative_movement"], columns_from="x"
    )
    lazy = (frame["relative_movement"] < threshold) & (frame["steps"] > 0)
    every_seed = lazy.groupby(frame[x]).transform("all")
    return frame[every_seed.to_numpy()]


def endpoint_ratio(frame: pd.DataFrame, x: str, y: str) -> pd.Series:
    """Per seed, ``y`` at the largest ``x`` over ``y`` at the smallest ``x`` (one row
    per (seed, x), every y finite and > 0): how much y changes across the sweep, with
    no assumption on the curve's shape between. Returns a Series indexed by seed."""
    check_frame("frame", frame, ["seed", x, y], columns_from="x/y")
    if frame[x].nunique() < 2:
        raise ValueError(f"frame must hold at least two values of {x}")
    values = frame.pivot(index="seed", columns=x, values=y)
    if not (np.isfinite(values.to_numpy()).all() and (values.to_numpy() > 0).all()):
        raise ValueError(f"{y} must be finite and > 0 at every (seed, {x})")
    return (values[values.columns.max()] / values[values.columns.min()]).rename(
        f"{y} at the largest {x} / at the smallest"
    )


def progress_gap(
    runs: pd.DataFrame, first: str = "L_un", second: str = "L_mu", by: str = "N"
) -> pd.Series:
    """Per seed, how far apart two losses fall along training: with p_X(t) = (X(0) −
    X(t))/(X(0) − X(T)) the share of X's whole fall (step 0 to the last step T)
    reached at step t, the mean of p_first(t) − p_second(t) over the checkpoints 0 < t
    < T and over the groups ``by`` (e.g. N). 0 when the two fall in step; > 0 when
    ``first`` falls earlier. runs: one row per (``by``, seed, step). Returns a Series
    indexed by seed."""
    check_frame("runs", runs, ["seed", "step", by, first, second])
    gaps = {}
    for (group, seed), one in runs.sort_values("step").groupby([by, "seed"]):
        if len(one) < 3:
            raise ValueError("runs must hold at least 3 checkpoints per (by, seed)")
        shares = []
        for column in (first, second):
            values = one[column].to_numpy(dtype=float)
            fall = values[0] - values[-1]
            if not fall > 0:
                raise ValueError(
                    f"{column} must fall along training (N = {group}, seed {seed})"
                )
            shares.append((values[0] - values[1:-1]) / fall)
        gaps[(group, seed)] = float(np.mean(shares[0] - shares[1]))
    per_run = pd.Series(gaps).rename_axis([by, "seed"])
    return per_run.groupby(level="seed").mean().rename("progress gap")


def seed_summary(frame: pd.DataFrame, by, columns: Sequence[str]) -> pd.DataFrame:
    """For each group of the column(s) ``by`` of a tidy frame (one row per seed in a
    group), each of ``columns`` as "mean ± s.e." over the seeds
    (:func:`ccl_helpers.verdicts.format_estimate`); NaN values (runs that never got
    there) are left out: "(one seed)" where one is left, "—" where none is. Returns a
    frame of strings indexed by ``by``."""
    keys = [by] if isinstance(by, str) else list(by)
    columns = list(columns)
    if not keys or not columns:
        raise ValueError("by and columns must each name at least one column")
    check_frame("frame", frame, [*keys, *columns], columns_from="by/columns")
    groups = frame.groupby(keys if len(keys) > 1 else keys[0], sort=True)[columns]
    means, errors, counts = groups.mean(), groups.sem(), groups.count()
    if (groups.size() < 2).any():
        raise ValueError("frame must hold at least two seeds in every group of by")

    def cell(mean, se, count):
        if count == 0:
            return "—"
        return f"{mean:.4g} (one seed)" if count == 1 else format_estimate(mean, se)

    return pd.DataFrame(
        {
            column: [
                cell(m, e, c)
                for m, e, c in zip(means[column], errors[column], counts[column])
            ]
            for column in columns
        },
        index=means.index,
    )


# ---------------------------------------------------------------- the chapter's claims

_MERAD = "Merad et al. (2020)"
CHAPTER_SCOPE = (
    "FashionMNIST: conv nets → ℝ³² trained with Adam (Sections 3, 5); deep ReLU nets "
    "trained by gradient descent on fixed triplets (Section 4)"
)
"""The chapter's scope; each claim of :data:`CLAIMS` states its own."""
_LEMMA = "{lemma}"
_DESCENT = "{descent}"


CLAIMS: dict[str, Claim] = claims_by_key(
    # ---- Section 3: theorem rows (asserted in the chapter)
    Claim(
        key="lemma1",
        source=f"{_MERAD}, Lemma 1, eq. (7)",
        statement="L^µ_sup(f, C) ≤ L_un(f)/p_min + log N_C for every encoder f",
        metric="L^µ_sup exact on the held-out set, bound at L_un + 4 Monte Carlo s.e. "
        "(nats), at every checkpoint",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lsup_below_lmu",
        source=f"{_MERAD}, Lemma 1, eq. (7)",
        statement="L_sup(f, C) ≤ L^µ_sup(f, C): the best linear classifier beats the "
        "mean classifier",
        metric="L_sup fitted by L-BFGS, L^µ_sup exact, two independent computations "
        "(nats), at every checkpoint",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lemma1_without_log",
        source=f"{_MERAD}, Section 5, Figure 1",
        statement="inequality (7) holds even when the log N_C term is discarded",
        metric="L^µ_sup ≤ L_un/p_min, proven for every f and checked at every "
        "checkpoint (nats)",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lemma2",
        source=f"{_MERAD}, Lemma 2, eq. (8)",
        statement="L^µ_sup(f, C) ≤ L^N_un(f)/p_cc(N), for N = Ω(N_C log N_C)",
        metric="L^µ_sup exact, bound at L^N_un + 4 Monte Carlo s.e. (nats), at every "
        "checkpoint; the proof needs no assumption on N, and the factor "
        "min_c P(J ⊇ C∖{c}) ≥ p_cc(N) suffices",
        scope=_LEMMA,
        section="multineg-exact",
    ),
    Claim(
        key="coupon_moments",
        source=f"{_MERAD}, Section 3.1",
        statement="the coupon-collector time T has E T = N_C H_{N_C} and Var T = "
        "(N_C π)²/6",
        metric="E T and Var T as exact rationals, against (N_C π)²/6",
        scope="exact law of T, uniform ρ, N_C = 10",
        section="multineg-coupon",
    ),
    Claim(
        key="coupon_tail",
        source=f"{_MERAD}, Section 3.1",
        statement="P(|T − N_C H_{N_C}| ≥ βN_C) ≤ π²/(6β²) for every β > 0 (Chebyshev)",
        metric="the exact tail of T against Var T/(βN_C)² and π²/(6β²), β = 0.05 to 3",
        scope="exact law of T, uniform ρ, N_C = 10",
        section="multineg-coupon",
    ),
    Claim(
        key="prop1_part1",
        source=f"{_MERAD}, Proposition 1 (1)",
        statement="L^µ_sup,k(f) ≤ k/(1 − τ⁺)·(L_un(f) − τ⁺) (N = 1)",
        metric="the printed form in bits against part (2) at N = 1 in nats, exact at "
        "f ≡ 0",
        scope="exact, zero encoder, N_C = 10, k = 1",
        section="multineg-prop1-units",
    ),
    Claim(
        key="prop1_part2",
        source=f"{_MERAD}, Proposition 1 (2)",
        statement="L^µ_sup,k(f) ≤ k/(1 − τ⁺_N)·(L^N_un(f) − τ⁺_N log(N + 1)) for "
        "uniform ρ and 1 ≤ k ≤ N_C − 1",
        metric="L^µ_sup,k exact (all tasks), bound at L^N_un + 4 Monte Carlo s.e. "
        "(nats), every (seed, k, N)",
        scope="the N = 15 encoders of {lemma}; k = 1 to 9, N = 1 to 64",
        section="multineg-prop1-grid",
    ),
    # ---- Section 5 (Figures 1–3): empirical claims, one number per seed
    Claim(
        key="lemma2_without_factor",
        source=f"{_MERAD}, Section 5, Figure 2",
        statement="inequality (8) seems to hold even without the 1/p_cc factor",
        metric="min over checkpoints and N = 15, 25, 35 of L^N_un − L^µ_sup, per seed "
        "(nats)",
        expected="greater",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="similar_trend",
        source=f"{_MERAD}, Section 5, Figures 1–2",
        statement="the unsupervised and the supervised loss follow a similar trend "
        "along training",
        metric="lag between the shares of their whole fall that L^N_un and L^µ_sup "
        "have reached, mean over the checkpoints and N, per seed",
        expected="equal",
        null=0.0,
        margin=0.1,
        margin_reason="a lag of a tenth of the fall, about a line's width on the "
        "figures, is the smallest a reader would call a different trend",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="assumption2",
        source=f"{_MERAD}, Assumption 2, Figure 3",
        statement="the output norms stay away from 0 along training, η < ‖f(x)‖ < C",
        metric="η: the smallest output norm over the held-out images, checkpoints "
        "and N, per seed",
        expected="greater",
        scope=_LEMMA,
        section="multineg-assumption2",
    ),
    Claim(
        key="prop1_more_negatives",
        source=f"{_MERAD}, Section 3.2 (what its remark on the factor suggests)",
        statement="with its factor k/(1 − τ⁺_N) falling to k, more negatives bring "
        "the bound of Proposition 1 closer to the loss it bounds",
        metric="bound / L^µ_sup,1 of the encoder trained with the largest N, through "
        "its own L^N_un, minus that of the encoder trained with N = 1 (k = 1), per "
        "seed",
        expected="less",
        scope="the encoders of {lemma}; k = 1",
        section="multineg-prop1-grid",
    ),
    # ---- Section 4: theorem rows
    Claim(
        key="lemma3_hessian",
        source=f"{_MERAD}, Lemma 3, proof",
        statement="the Hessian of ℓ is (v₁ − 1)∂²cos₁₂ + v₂∂²cos₁₃ + (∂cos₁₂ ∂cos₁₃)∂v",
        metric="sympy: the source's form minus the Hessian of ℓ",
        scope="symbolic, d = 2",
        section="multineg-lemma3",
    ),
    Claim(
        key="lemma3_smoothness",
        source=f"{_MERAD}, Lemma 3",
        statement="ℓ is L_smooth-smooth on B₃ with L_smooth ≤ 2 + 8C²",
        metric="the exact sup of ‖∇²ℓ‖ over B₃ (a one-dimensional maximisation), "
        "against B(C) and 2 + 8C²",
        scope="C = 0.5 to 8",
        section="multineg-lemma3",
    ),
    Claim(
        key="lemma4",
        source=f"{_MERAD}, Lemma 4",
        statement="if ‖∇_z L̂_un‖ ≤ ε' < η/2 then ℓ(z_i) ≤ 2ε'/η for every i",
        metric="max_i ℓ(z_i) against 2ε'/η at every checkpoint of every descent run "
        "where ε' < η/2",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    # ---- Section 4: empirical claims, one number per seed (an initialisation)
    Claim(
        key="lazy_movement",
        source="Merad et al. (2020), Theorem 1 (the lazy regime of Allen-Zhu et al.)",
        statement="with ν ∝ 1/m the relative weight movement falls like m^{−1}",
        metric="log-log slope of ‖W^(T) − W^(0)‖_F/‖W^(0)‖_F in m, m = 16 to 2048, "
        "per seed",
        expected="equal",
        null=-1.0,
        margin=0.2,
        margin_reason="a fifth of the predicted exponent: a slope of −0.8 or −1.2 "
        "would no longer be read as m^{−1}",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="lazy_width",
        source="Merad et al. (2020), Theorem 1 (the lazy regime of Allen-Zhu et al.)",
        statement="from some width on the weights barely move (relative movement "
        "< 0.1)",
        metric="relative movement ‖W^(T) − W^(0)‖_F/‖W^(0)‖_F at the widest width, "
        "per seed",
        expected="less",
        null=0.1,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_free_of_width",
        source=f"{_MERAD}, Theorem 1",
        statement="with ν ∝ 1/m the number of steps T does not depend on m",
        metric="log-log slope of the steps to L̂_un ≤ ε in m for m ≥ m*, per seed",
        expected="equal",
        null=0.0,
        margin=0.25,
        margin_reason="T ∝ m^{±1/4}, a factor 1.19 per doubling of the width, is "
        "the smallest dependence a reader would act on",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_epsilon",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(ε^{−2}): the steps grow no faster than ε^{−2}",
        metric="log-log slope of the steps to L̂_un ≤ ε in ε, width m ∝ 1/ε, lazy "
        "runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_gradient",
        source=f"{_MERAD}, Lemma 6",
        statement="‖∇_z L̂_un‖ ≤ ε' within O(ε'^{−2}) steps",
        metric="log-log slope of the steps to ‖∇_z L̂_un‖ ≤ ε' in ε', width m ∝ 1/ε', "
        "lazy runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_delta",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(δ^{−2}): the steps grow no faster than δ^{−2}",
        metric="log-log slope of the steps to L̂_un ≤ 0.2 in the separation δ of "
        "hard negatives, ν ∝ δ, lazy runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_triplets",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(poly(n)): more triplets take more steps, polynomially (no "
        "exponent given)",
        metric="steps to L̂_un ≤ ε at the largest over the smallest number n of "
        "triplets, ν ∝ 1/n, lazy runs, per seed",
        expected="greater",
        null=1.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="width_delta",
        source=f"{_MERAD}, Theorem 1",
        statement="the width needed grows with 1/δ (m ≥ poly(δ^{−1})): at a fixed m "
        "the weights move more as δ shrinks",
        metric="relative movement at m* at the largest over the smallest δ, ν ∝ δ, "
        "per seed",
        expected="less",
        null=1.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="width_triplets",
        source=f"{_MERAD}, Theorem 1",
        statement="the width needed grows with n (m ≥ poly(n)): at a fixed m the "
        "weights move more as n grows",
        metric="relative movement at m* at the largest over the smallest n, ν ∝ 1/n, "
        "per seed",
        expected="greater",
        null=1.0,
        scope=_DESCENT,
        section="multineg-descent",
    ),
)
"""The claims of the source the chapter tests, by key
(:class:`~ccl_helpers.verdicts.Claim`), stated before the runs that test them: the
theorem rows of Section 3 (Lemmas 1 and 2, the coupon collector, Proposition 1), the
empirical claims of Section 5 (one number per seed of the conv-net runs), the theorem
rows of Section 4 (Lemmas 3 and 4) and its empirical claims (one number per
initialisation seed of the descent runs; a slope is fitted to each seed's runs alone). A
scope may hold the fields ``{lemma}`` and ``{descent}``: the chapter fills them
(``str.format``) with the settings of its conv-net runs and of its descent runs. The two
"equal" claims state their margins with their reasons; the directional claims state none
(the source gives no effect size for them, so the chapter does not read "absent" there).
"""
