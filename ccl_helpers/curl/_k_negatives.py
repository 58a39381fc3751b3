"""The k-negative lemma of Arora et al. (2019): its collision terms and both sides.

Besides the collision terms: the exact tuple loss, and both sides of the lemma on a
finite distribution."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import torch
from torch import Tensor

from .. import metrics
from .._checks import (
    check_count,
    check_features,
    check_instance,
    check_int,
    check_tensor,
)

_MAX_COUNT_VECTORS = 10**6
"""The most count vectors of k negatives among the N_C − 1 classes other than c⁺,
C(k + N_C − 2, N_C − 2), that :func:`k_negative_lemma` enumerates: they are built one
by one in a Python loop (:func:`_negative_counts`), with no allocation to fail until
the loop has run its course, and the count explodes with N_C (with k = N_C − 1: 24,310
for the book's N_C = 10, 1.35·10⁶ for N_C = 13, 10¹⁰ for N_C = 20)."""


def _collision_terms(n_negatives: int, class_probs: Tensor) -> tuple[float, float]:
    """The two collision quantities of the k-negative lemma, exactly, for k =
    ``n_negatives`` and c⁺, c⁻_1 … c⁻_k i.i.d. from ρ = ``class_probs`` (N_C,):

    - τ_k = 1 − P(the k + 1 classes are distinct) = 1 − (k + 1)! e_{k+1}(ρ), e_j the
      elementary symmetric polynomial (τ_1 = Σ_c ρ(c)² = τ);
    - E log(1 + |I|), I = {i : c⁻_i = c⁺},
      = Σ_c ρ(c) Σ_j C(k, j) ρ(c)^j (1 − ρ(c))^{k−j} log(1 + j) (τ log 2 for k = 1).

    Needs k + 1 ≤ N_C (otherwise the classes cannot be distinct) and every ρ(c) > 0.
    """
    rho = class_probs.detach().double().cpu()
    rho = rho / rho.sum()
    k = n_negatives
    symmetric = torch.zeros(k + 2, dtype=torch.float64)
    symmetric[0] = 1.0
    for p in rho:  # e_j(ρ_1 … ρ_i) from e_j(ρ_1 … ρ_{i−1})
        symmetric[1:] = symmetric[1:] + p * symmetric[:-1]
    tau = 1.0 - math.factorial(k + 1) * float(symmetric[k + 1])
    j = torch.arange(k + 1, dtype=torch.float64)
    binomial = torch.tensor([math.comb(k, int(i)) for i in j], dtype=torch.float64)
    hits = binomial * rho[:, None] ** j * (1 - rho[:, None]) ** (k - j)  # (N_C, k+1)
    collision = float((rho[:, None] * hits * torch.log1p(j)).sum())
    return tau, collision


def _negative_counts(n_negatives: int, n_classes: int) -> Tensor:
    """Every way k = ``n_negatives`` negatives can fall into ``n_classes`` classes, as
    counts (V, n_classes), V = C(k + n_classes − 1, n_classes − 1) (stars and bars),
    float64."""
    k = n_negatives
    if n_classes == 1:  # one row; no pool of k positions to choose none from
        return torch.tensor([[k]], dtype=torch.float64)
    rows = []
    for bars in itertools.combinations(range(k + n_classes - 1), n_classes - 1):
        edges = (-1, *bars, k + n_classes - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(n_classes)])
    return torch.tensor(rows, dtype=torch.float64)


def _tuple_mean_classifier_loss(
    features: Tensor, labels: Tensor, n_negatives: int
) -> tuple[float, Tensor]:
    """The supervised side of the k-negative lemma that charges only the collisions
    with c⁺, exactly: with ρ the label frequencies, D_c uniform over class c's
    examples, c⁺ ~ ρ and c⁻_1 … c⁻_k i.i.d. from ρ,

        τ⁺_k = P(I ≠ ∅) = Σ_c ρ(c)(1 − (1 − ρ(c))^k),  I = {i : c⁻_i = c⁺},
        L^µ_tuple = E[ log(1 + Σ_i e^{f(x)ᵀ(µ_{c⁻_i} − µ_{c⁺})}) | I = ∅ ],

    x ~ D_{c⁺}: the mean classifier's cross-entropy on the tuple (c⁺; c⁻_1 … c⁻_k),
    a negative class drawn twice counted twice. The expectation over the negatives
    is a sum over their class counts (:func:`_negative_counts`), with the multinomial
    probabilities given c⁺. Each log(1 + Σ_c n_c e^{a_c}), a_c = f(x)ᵀ(µ_c − µ_{c⁺}),
    is m + log(e^{−m} + Σ_c n_c e^{a_c − m}), m = max(0, max_c a_c), one matrix
    product for all count vectors; where every term underflows it is recomputed as a
    log-sum-exp of 0 and the a_c + log n_c.
    features (S, n, d), labels (n,) of N_C ≥ 2 classes with P(I = ∅) > 0 → (τ⁺_k,
    L^µ_tuple (S,) float64). For k = 1 it is the binary mean-classifier loss L^µ_sup
    and τ⁺_1 = τ.
    """
    rho = metrics.class_frequencies(labels).to(features.device)
    n_classes = rho.numel()
    k = n_negatives
    features = features.double()
    scores = features @ metrics.class_means(features, labels).transpose(-1, -2)
    margins = scores - scores.gather(-1, labels.expand(*scores.shape[:-1])[..., None])
    classes = torch.arange(n_classes, device=features.device)
    others = torch.stack([classes[classes != c] for c in classes])  # (N_C, N_C − 1)
    counts = _negative_counts(k, n_classes - 1).to(features.device)  # (V, N_C − 1)
    log_q = torch.log(rho[others] / (1 - rho)[:, None])  # (N_C, N_C − 1)
    log_multinomial = torch.lgamma(torch.tensor(k + 1.0, dtype=torch.float64)) - (
        torch.lgamma(counts + 1).sum(-1)
    )
    terms = torch.where(counts > 0, counts * log_q[:, None, :], 0.0)
    probability = torch.exp(log_multinomial + terms.sum(-1))  # (N_C, V) given c⁺
    no_hit = rho * (1 - rho) ** k  # P(c⁺ = c, I = ∅)
    weight = (no_hit / no_hit.sum() / torch.bincount(labels, minlength=n_classes))[
        labels
    ]  # (n,): x ~ D_{c⁺}, c⁺ given I = ∅
    log_counts = torch.log(counts)  # −inf where a class is not drawn
    losses = []
    for seed_margins in margins:  # (n, N_C), one seed at a time
        a = seed_margins.gather(-1, others[labels])  # (n, N_C − 1)
        top = a.max(-1, keepdim=True).values.clamp_min(0)
        inner = torch.exp(-top) + torch.exp(a - top) @ counts.T  # (n, V)
        loss = top + torch.log(inner)
        lost = (inner < 1e-250).nonzero(as_tuple=True)  # every drawn term underflowed
        if len(lost[0]):
            exponents = a[lost[0]] + log_counts[lost[1]]  # exactly, by log-sum-exp
            one = torch.zeros_like(exponents[:, :1])
            loss[lost] = torch.logsumexp(torch.cat([one, exponents], -1), -1)
        expected = (loss * probability[labels]).sum(-1)
        losses.append((weight * expected).sum())
    tau_plus = float((rho * (1 - (1 - rho) ** k)).sum())
    return tau_plus, torch.stack(losses)


def k_negative_lemma(
    features: Tensor,
    labels: Tensor,
    negatives: list[int],
    n_samples: int,
    generator: torch.Generator | None = None,
) -> pd.DataFrame:
    """Both sides of the k-negative lemma on a finite distribution (D_c uniform over
    class c's examples, ρ the label frequencies), for every k in ``negatives``:

    L^µ_sup,k+1(f) ≤ (L^k_un(f) − E log(1 + |I|)) / (1 − τ_k),

    L^µ_sup,k+1 the mean classifier's loss averaged exactly over the (k + 1)-way tasks
    (:func:`ccl_helpers.metrics.mean_classifier`),
    L^k_un = E log(1 + Σ_i e^{f(x)ᵀ(f(x⁻_i) − f(x⁺))}) estimated on ``n_samples``
    draws shared by all k (:func:`ccl_helpers.metrics.unsupervised_loss_curve`);
    and the form that charges only the collisions with c⁺,

    L^µ_tuple(f) ≤ (L^k_un(f) − E log(1 + |I|)) / (1 − τ⁺_k)

    with τ_k = 1 − P(c⁺, c⁻_1 … c⁻_k distinct), E log(1 + |I|) over I = {i : c⁻_i =
    c⁺}, τ⁺_k = P(I ≠ ∅) = Σ_c ρ(c)(1 − (1 − ρ(c))^k), and

        L^µ_tuple = E[ log(1 + Σ_i e^{f(x)ᵀ(µ_{c⁻_i} − µ_{c⁺})}) | I = ∅ ],

    x ~ D_{c⁺}: the mean classifier's cross-entropy on the tuple (c⁺; c⁻_1 … c⁻_k), a
    negative class drawn twice counted twice, computed exactly as a sum over the
    negatives' class counts (for k = 1 it is the binary L^µ_sup and τ⁺_1 = τ).
    features (S, n, d), labels (n,) covering the classes 0..N_C − 1 (N_C ≥ 2), each k
    in 1..N_C − 1 → one row per (seed, k): L_un, L_un_se, L_mu, tau_k, collision,
    bound, bound_se (the bound's standard error, L_un_se / (1 − τ_k)), tau_plus_k,
    L_mu_tuple, bound_tuple, bound_tuple_se.
    """
    check_tensor("features", features, ndim=3, floating=True)
    check_features("features", features, labels)
    n_samples = check_int("n_samples", n_samples, 2)
    if generator is not None:
        check_instance("generator", generator, torch.Generator)
    rho = metrics.class_frequencies(labels)
    n_classes = rho.numel()
    if n_classes < 2:
        raise ValueError("labels must hold at least two classes")
    if isinstance(negatives, (str, bytes)) or not hasattr(negatives, "__iter__"):
        raise ValueError(f"negatives must be a sequence of k ≥ 1, got {negatives!r}")
    ks = [check_int("negatives", k, 1, n_classes - 1) for k in negatives]
    if not ks:
        raise ValueError("negatives must hold at least one k ≥ 1")
    k = max(ks)
    check_count(
        "count vectors of k negatives among the N_C − 1 other classes",
        math.comb(k + n_classes - 2, n_classes - 2),
        _MAX_COUNT_VECTORS,
        f"negatives={k} and the N_C={n_classes} classes of labels",
    )
    if not (rho * (1 - rho) ** k).sum() > 0:
        raise ValueError(
            f"negatives={k} is too many for these labels: P(I = ∅) = "
            "Σ_c ρ(c)(1 − ρ(c))^k underflows to 0 in float64, the loss given I = ∅ "
            "is undefined"
        )
    samples = metrics.draw_unsupervised_samples(labels, max(ks), n_samples, generator)
    estimate, standard_error = metrics.unsupervised_loss_curve(features, samples)
    frames = []
    for k in ks:
        tau, collision = _collision_terms(k, rho)
        l_un, se = estimate[..., k - 1], standard_error[..., k - 1]
        mean = metrics.mean_classifier(features.double(), labels, task_size=k + 1)
        tau_plus, tuple_loss = _tuple_mean_classifier_loss(features, labels, k)
        frames.append(
            pd.DataFrame(
                {
                    "seed": range(features.shape[0]),
                    "k": k,
                    "L_un": l_un.cpu().numpy(),
                    "L_un_se": se.cpu().numpy(),
                    "L_mu": mean["loss"].cpu().numpy(),
                    "tau_k": tau,
                    "collision": collision,
                    "bound": ((l_un - collision) / (1 - tau)).cpu().numpy(),
                    "bound_se": (se / (1 - tau)).cpu().numpy(),
                    "tau_plus_k": tau_plus,
                    "L_mu_tuple": tuple_loss.cpu().numpy(),
                    "bound_tuple": ((l_un - collision) / (1 - tau_plus)).cpu().numpy(),
                    "bound_tuple_se": (se / (1 - tau_plus)).cpu().numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
