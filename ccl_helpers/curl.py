"""Chapter 1: the CURL framework of Arora et al. (2019).

The "simple lemma", in nats, with τ = P(c⁺ = c⁻) = Σ_c ρ(c)² (the collision probability,
:func:`ccl_helpers.coupon.tau_plus` with one negative):

    L_sup(f) ≤ L^µ_sup(f) ≤ (L_un(f) − τ·log 2) / (1 − τ).

(The paper writes ℓ with log₂, where the collision term τ·ℓ(0) is τ·1; in nats it is
τ·log 2.) Its two extensions: k negatives with (k + 1)-way tasks
(:func:`k_negative_bound`, :func:`k_negative_lemma`) and blocks of similar points
(:func:`block_losses`, :func:`block_evaluator`).
The encoders of the source's Table 1, supervised and contrastive, are trained by one
procedure, :func:`train_tuned` (a grid of step sizes and weight decays, early stopping
on a validation split). The
claims of the source that the chapter tests, with their margins, are :data:`CLAIMS`.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from . import coupon, metrics, train
from .checks import (
    check_batch,
    check_callable,
    check_device,
    check_feature_dims,
    check_features,
    check_finite,
    check_finite_real,
    check_inputs,
    check_instance,
    check_int,
    check_positive,
    check_steps,
    check_tensor,
)
from .data import LatentClassModel
from .losses import at_least_float32, logistic_loss, result_dtype
from .train import Forward, StackedModel
from .verdicts import Claim, claims_by_key


def mean_classifier_bound(
    unsupervised_loss: Tensor | float, tau: float
) -> Tensor | float:
    """The lemma's right-hand side (L_un − τ·log 2)/(1 − τ), in nats; τ in [0, 1);
    L_un a finite real or floating tensor."""
    check_finite_real("unsupervised_loss", unsupervised_loss)
    if not 0 <= check_positive("tau", tau, allow_zero=True) < 1:
        raise ValueError(f"tau must be in [0, 1), got {tau}")
    return (unsupervised_loss - tau * math.log(2)) / (1 - tau)


def block_contrastive_loss(
    forward: Forward, batch: tuple[Tensor, Tensor, Tensor]
) -> Tensor:
    """Mean over the batch of ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), ℓ(z) = log(1 + e^z), f̄^± the mean of
    f over a block.

    batch: x (B, *input), positives (B, b, *input), negatives (B, b, *input). With b = 1
    this is L_un of eq. (1); with b > 1 it is the block variant (averages of b positives
    / b negatives).
    """
    check_callable("forward", forward)
    anchor, positives, negatives = check_batch("batch", batch, ("floating",) * 3)
    if (
        positives.shape != negatives.shape
        or positives.shape[0] != anchor.shape[0]
        or positives.ndim != anchor.ndim + 1
    ):
        raise ValueError(
            "batch must be x (B, ...), positives and negatives (B, b, ...); got "
            f"{tuple(anchor.shape)}, "
            f"{tuple(positives.shape)}, {tuple(negatives.shape)}"
        )
    blocks = forward(torch.cat([positives, negatives]).flatten(0, 1)).unflatten(
        0, (2 * anchor.shape[0], -1)
    )
    positive_mean, negative_mean = blocks.mean(1).chunk(2)
    return logistic_loss(forward(anchor), positive_mean, negative_mean)


def cross_entropy_loss(forward: Forward, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Supervised training loss: mean cross-entropy of logits forward(x) (B, N_C)
    against labels (B,); its log-softmax in at least float32, the result in the logits'
    dtype (float32 for float16)."""
    check_callable("forward", forward)
    inputs, labels = check_batch("batch", batch, ("floating", "integer"))
    logits = forward(inputs)
    return F.cross_entropy(at_least_float32(logits), labels).to(result_dtype(logits))


def contrastive_batches(
    latent: LatentClassModel,
    n_seeds: int,
    batch_size: int,
    generator: torch.Generator,
    block_size: int = 1,
):
    """step ↦ (x, positives, negatives), each with leading shape (n_seeds, batch_size),
    drawn from D_sim and D_neg of ``latent``; positives and negatives are blocks of
    ``block_size``."""
    check_instance("latent", latent, LatentClassModel)
    shape = (check_int("n_seeds", n_seeds), check_int("batch_size", batch_size))
    block_size = check_int("block_size", block_size)

    def sample(step: int):
        anchor, positives, _ = latent.sample_sim(
            shape, generator, block_size=block_size
        )
        negatives, _ = latent.sample_neg(shape, generator, block_size=block_size)
        return anchor, positives, negatives

    return sample


def labelled_batches(
    inputs: Tensor,
    labels: Tensor,
    n_seeds: int,
    batch_size: int,
    generator: torch.Generator,
):
    """step ↦ (x, y) with leading shape (n_seeds, batch_size), examples drawn uniformly
    with replacement."""
    check_inputs("inputs", inputs, labels)
    shape = (check_int("n_seeds", n_seeds), check_int("batch_size", batch_size))

    def sample(step: int):
        index = torch.randint(
            labels.numel(),
            shape,
            generator=generator,
            device=labels.device,
        )
        return inputs[index], labels[index]

    return sample


def lemma_quantities(
    features: Tensor,
    labels: Tensor,
    *,
    fit_linear: bool = True,
    heldout_fit: tuple[Tensor, Tensor] | None = None,
    max_iter: int = 500,
) -> dict[str, Tensor]:
    """The three sides of the lemma on a finite distribution (D_c uniform over class c's
    examples, ρ the label frequencies), for binary tasks: ``L_un`` (exact), ``L_mu``
    (mean classifier, µ from the same data), ``L_sup`` (best linear classifier fitted on
    the same data), ``bound`` = (L_un − τ log 2)/(1 − τ), and the mean classifier's
    AVG-2 ``accuracy_mu``. Each (...). Computed in float64, so the lemma (an exact
    inequality on this distribution) holds to rounding. Without ``fit_linear``,
    ``L_sup`` (the costly part) is left out. With ``heldout_fit`` = (fit_features
    (..., m, d), fit_labels (m,)), ``L_sup_heldout`` is the binary tasks' loss on this
    distribution of one N_C-way head fitted on other data, each task using its two
    rows: one W per task, so an upper estimate of the population's L_sup, which the
    in-sample fit of a small distribution underestimates (towards 0)."""
    check_tensor("features", features, min_ndim=2, floating=True)
    features = features.double()
    rho = metrics.class_frequencies(labels)
    unsupervised = metrics.exact_unsupervised_loss(features, labels, rho)
    mean = metrics.mean_classifier(features, labels, task_size=2, class_probs=rho)
    sides = {
        "L_un": unsupervised,
        "L_mu": mean["loss"],
        "bound": mean_classifier_bound(unsupervised, coupon.tau_plus(1, rho)),
        "accuracy_mu": mean["accuracy"],
    }
    if fit_linear:
        sides["L_sup"] = metrics.linear_probe(
            features, labels, task_size=2, class_probs=rho, max_iter=max_iter
        )["loss"]
    if heldout_fit is not None:
        fit_features, fit_labels = heldout_fit
        check_feature_dims("fit_features", fit_features, "features", features)
        n_classes = rho.numel()
        every_class = metrics.all_tasks(n_classes, n_classes, features.device)
        head = metrics.fit_linear_classifiers(
            fit_features, fit_labels, every_class, max_iter=max_iter
        )[..., 0, :, :]  # (..., N_C, d)
        tasks = metrics.all_tasks(n_classes, 2, features.device)
        sides["L_sup_heldout"] = metrics.task_loss_and_accuracy(
            features, labels, head[..., tasks, :].double(), tasks, rho
        )[0]
    return sides


# ---------------------------------------------------------------- k negatives


def collision_terms(n_negatives: int, class_probs: Tensor) -> tuple[float, float]:
    """The two collision quantities of the k-negative lemma, exactly, for k =
    ``n_negatives`` and c⁺, c⁻_1 … c⁻_k i.i.d. from ρ = ``class_probs`` (N_C,):

    - τ_k = 1 − P(the k + 1 classes are distinct) = 1 − (k + 1)! e_{k+1}(ρ), e_j the
      elementary symmetric polynomial (τ_1 = Σ_c ρ(c)² = τ);
    - E log(1 + |I|), I = {i : c⁻_i = c⁺},
      = Σ_c ρ(c) Σ_j C(k, j) ρ(c)^j (1 − ρ(c))^{k−j} log(1 + j) (τ log 2 for k = 1).

    Needs k + 1 ≤ N_C (otherwise the classes cannot be distinct).
    """
    rho = coupon.probability_vector(class_probs)
    k = check_int("n_negatives", n_negatives, 1, rho.numel() - 1)
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


def negative_counts(n_negatives: int, n_classes: int) -> Tensor:
    """Every way k = ``n_negatives`` negatives can fall into ``n_classes`` classes, as
    counts (V, n_classes), V = C(k + n_classes − 1, n_classes − 1) (stars and bars),
    float64."""
    k = check_int("n_negatives", n_negatives, 1)
    n_classes = check_int("n_classes", n_classes, 1)
    rows = []
    for bars in itertools.combinations(range(k + n_classes - 1), n_classes - 1):
        edges = (-1, *bars, k + n_classes - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(n_classes)])
    return torch.tensor(rows, dtype=torch.float64)


def tuple_mean_classifier_loss(
    features: Tensor, labels: Tensor, n_negatives: int
) -> tuple[float, Tensor]:
    """The supervised side of the k-negative lemma that charges only the collisions
    with c⁺, exactly: with ρ the label frequencies, D_c uniform over class c's
    examples, c⁺ ~ ρ and c⁻_1 … c⁻_k i.i.d. from ρ,

        τ⁺_k = P(I ≠ ∅) = Σ_c ρ(c)(1 − (1 − ρ(c))^k),  I = {i : c⁻_i = c⁺},
        L^µ_tuple = E[ log(1 + Σ_i e^{f(x)ᵀ(µ_{c⁻_i} − µ_{c⁺})}) | I = ∅ ],

    x ~ D_{c⁺}: the mean classifier's cross-entropy on the tuple (c⁺; c⁻_1 … c⁻_k),
    a negative class drawn twice counted twice. The expectation over the negatives
    is a sum over their class counts (:func:`negative_counts`), with the multinomial
    probabilities given c⁺. Each log(1 + Σ_c n_c e^{a_c}), a_c = f(x)ᵀ(µ_c − µ_{c⁺}),
    is m + log(e^{−m} + Σ_c n_c e^{a_c − m}), m = max(0, max_c a_c), one matrix
    product for all count vectors; where every term underflows it is recomputed as a
    log-sum-exp of 0 and the a_c + log n_c.
    features (S, n, d) → (τ⁺_k, L^µ_tuple (S,) float64). For k = 1 it is the binary
    mean-classifier loss L^µ_sup and τ⁺_1 = τ.
    """
    check_tensor("features", features, ndim=3, floating=True)
    check_features("features", features, labels)
    rho = metrics.class_frequencies(labels).to(features.device)
    n_classes = rho.numel()
    k = check_int("n_negatives", n_negatives, 1)
    if n_classes < 2:
        raise ValueError("labels must hold at least two classes")
    features = features.double()
    scores = features @ metrics.class_means(features, labels).transpose(-1, -2)
    margins = scores - scores.gather(-1, labels.expand(*scores.shape[:-1])[..., None])
    classes = torch.arange(n_classes, device=features.device)
    others = torch.stack([classes[classes != c] for c in classes])  # (N_C, N_C − 1)
    counts = negative_counts(k, n_classes - 1).to(features.device)  # (V, N_C − 1)
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


def k_negative_bound(
    unsupervised_loss: Tensor | float, n_negatives: int, class_probs: Tensor
) -> Tensor | float:
    """The k-negative lemma's right-hand side (L^k_un − E log(1 + |I|)) / (1 − τ_k), in
    nats (:func:`collision_terms`); for k = 1 it is :func:`mean_classifier_bound`."""
    check_finite_real("unsupervised_loss", unsupervised_loss)
    tau, collision = collision_terms(n_negatives, class_probs)
    return (unsupervised_loss - collision) / (1 - tau)


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

    (:func:`tuple_mean_classifier_loss`, exact).
    features (S, n, d) → one row per (seed, k): L_un, L_un_se, L_mu, tau_k,
    collision, bound, bound_se (the bound's standard error, L_un_se / (1 − τ_k)),
    tau_plus_k, L_mu_tuple, bound_tuple, bound_tuple_se.
    """
    if features.ndim != 3:
        raise ValueError(
            f"features must have shape (S, n, d), got {tuple(features.shape)}"
        )
    ks = [check_int("negatives", k, 1) for k in negatives]
    if not ks:
        raise ValueError("negatives must hold at least one k ≥ 1")
    rho = metrics.class_frequencies(labels)
    samples = metrics.draw_unsupervised_samples(labels, max(ks), n_samples, generator)
    estimate, standard_error = metrics.unsupervised_loss_curve(features, samples)
    frames = []
    for k in ks:
        tau, collision = collision_terms(k, rho)
        l_un, se = estimate[..., k - 1], standard_error[..., k - 1]
        mean = metrics.mean_classifier(features.double(), labels, task_size=k + 1)
        tau_plus, tuple_loss = tuple_mean_classifier_loss(features, labels, k)
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


# ---------------------------------------------------------------- blocks


class BlockSamples(NamedTuple):
    """Indices into a labelled set of M draws of (x, x⁺_1 … x⁺_b, x⁻_1 … x⁻_b): x⁺_j
    i.i.d. from D_{c⁺} (c⁺ the class of x), x⁻_j i.i.d. from D_{c⁻}, c⁻ ~ ρ."""

    anchor: Tensor  #: (M,)
    positives: Tensor  #: (M, b)
    negatives: Tensor  #: (M, b)


def draw_block_samples(
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
) -> BlockSamples:
    """Draw M = ``n_samples`` anchors with a positive and a negative block of
    ``block_size`` each, on the finite distribution of labels (n,) (D_c uniform over
    class c's examples, ρ the label frequencies, so x is uniform over the set)."""
    b = check_int("block_size", block_size)
    m = check_int("n_samples", n_samples, 2)
    members, counts = metrics.class_members(labels)
    if bool((counts == 0).any()) or counts.numel() < 2:
        raise ValueError("labels must cover the classes 0..N_C−1 (N_C ≥ 2)")
    if generator is None:
        generator = torch.Generator(device=labels.device).manual_seed(0)
    device = labels.device

    def uniform_members(classes: Tensor) -> Tensor:  # (M,) classes → (M, b) examples
        u = torch.rand((m, b), generator=generator, device=device, dtype=torch.float64)
        within = (u * counts[classes, None]).long().clamp_max(counts[classes, None] - 1)
        return members[classes[:, None], within]

    anchor = torch.randint(labels.numel(), (m,), generator=generator, device=device)
    negative_class = labels[
        torch.randint(labels.numel(), (m,), generator=generator, device=device)
    ]
    return BlockSamples(
        anchor, uniform_members(labels[anchor]), uniform_members(negative_class)
    )


def block_losses(features: Tensor, samples: BlockSamples) -> dict[str, Tensor]:
    """Paired Monte Carlo estimates of L_un and of the block loss
    L^block_un = E ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), f̄^± the mean of f over the block, ℓ(z) =
    log(1 + e^z); L_un uses the first element of each block, so the two share draws.

    features (..., n, d) → {"L_un", "L_un_se", "L_block", "L_block_se", "gap_se"}, each
    (...) float64 (``gap_se``: the standard error of L_un − L^block_un). Jensen's
    inequality gives L^block_un ≤ L_un for every f.
    """
    anchor, positives, negatives = check_instance("samples", samples, BlockSamples)
    check_tensor("features", features, min_ndim=2, floating=True)
    check_finite("features", features)
    n = features.shape[-2]
    if any(int(index.max()) >= n for index in samples):
        raise ValueError(
            f"samples index examples beyond the n = {n} rows of features (..., n, d)"
        )
    f = features.double()
    a = f[..., anchor, :]  # (..., M, d)
    single = F.softplus(
        (a * (f[..., negatives[:, 0], :] - f[..., positives[:, 0], :])).sum(-1)
    )
    block = F.softplus(
        (a * (f[..., negatives, :].mean(-2) - f[..., positives, :].mean(-2))).sum(-1)
    )
    m = anchor.numel()

    def standard_error(values: Tensor) -> Tensor:
        return values.std(-1) / math.sqrt(m)

    return {
        "L_un": single.mean(-1),
        "L_un_se": standard_error(single),
        "L_block": block.mean(-1),
        "L_block_se": standard_error(block),
        "gap_se": standard_error(single - block),
    }


def block_evaluator(
    inputs: Tensor,
    labels: Tensor,
    block_size: int,
    n_samples: int,
    generator: torch.Generator | None = None,
):
    """An ``evaluate`` for :func:`ccl_helpers.train.train`: model ↦ {quantity: (S,)}
    on the finite distribution (inputs, labels), with draws made once here
    (:func:`draw_block_samples`) and shared by every checkpoint: the entries of
    :func:`block_losses`, ``L_mu`` (the mean classifier on AVG-2, exact), and the
    lemma's bound from each loss, ``bound`` (L_un − τ log 2)/(1 − τ) and
    ``block_bound`` (L^block_un − τ log 2)/(1 − τ)."""
    check_inputs("inputs", inputs, labels)
    samples = draw_block_samples(labels, block_size, n_samples, generator)
    tau = coupon.tau_plus(1, metrics.class_frequencies(labels))

    def evaluate(model) -> dict[str, Tensor]:
        features = model(inputs).double()
        losses = block_losses(features, samples)
        return {
            **losses,
            "L_mu": metrics.mean_classifier(features, labels, task_size=2)["loss"],
            "bound": mean_classifier_bound(losses["L_un"], tau),
            "block_bound": mean_classifier_bound(losses["L_block"], tau),
        }

    return evaluate


# ---------------------------------------------------------------- Table 1

CLASSIFIERS = {
    "linear": (metrics.linear_probe, {}),
    "mean": (metrics.mean_classifier, {}),
    "mean, centred": (metrics.mean_classifier, {"centre": True}),
    "mean, normalised": (metrics.mean_classifier, {"normalise": True}),
}
"""The downstream classifiers of :func:`downstream_accuracies`, by name: the linear
head fitted on the training features, and the mean classifier as it is, with centred
features, and with unit-norm rows (:func:`ccl_helpers.metrics.mean_classifier`)."""


def downstream_accuracies(
    train_features: Tensor,
    train_labels: Tensor,
    test_features: Tensor,
    test_labels: Tensor,
    task_sizes: tuple[int, ...] = (2, 10),
    classifiers: tuple[str, ...] = ("linear", "mean"),
    max_iter: int = 500,
) -> pd.DataFrame:
    """AVG-m test accuracy of each of ``classifiers`` (names of :data:`CLASSIFIERS`),
    fitted on the training features, for each m in ``task_sizes``.

    features (S, n, d) for S seeds → tidy frame: seed, task_size, classifier,
    accuracy.
    """
    check_tensor("train_features", train_features, ndim=3, floating=True)
    check_tensor("test_features", test_features, ndim=3, floating=True)
    check_features("train_features", train_features, train_labels, "train_labels")
    check_features("test_features", test_features, test_labels, "test_labels")
    check_feature_dims("test_features", test_features, "train_features", train_features)
    if isinstance(task_sizes, (str, bytes)) or not hasattr(task_sizes, "__iter__"):
        raise ValueError(
            f"task_sizes must be a sequence of integers ≥ 2, got {task_sizes!r}"
        )
    task_sizes = [check_int("task_sizes", m, 2) for m in task_sizes]
    max_iter = check_int("max_iter", max_iter)
    unknown = [name for name in classifiers if name not in CLASSIFIERS]
    if isinstance(classifiers, str) or unknown or not classifiers:
        raise ValueError(
            f"classifiers must be names from {sorted(CLASSIFIERS)}, got {classifiers}"
        )
    frames = []
    for m in task_sizes:
        for name in classifiers:
            evaluate, options = CLASSIFIERS[name]
            if name == "linear":
                options = {"max_iter": max_iter}
            accuracy = evaluate(
                train_features,
                train_labels,
                test_features,
                test_labels,
                task_size=m,
                **options,
            )["accuracy"]
            frames.append(
                pd.DataFrame(
                    {
                        "seed": range(accuracy.shape[0]),
                        "task_size": m,
                        "classifier": name,
                        "accuracy": accuracy.double().cpu().numpy(),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def head_accuracy(inputs: Tensor, labels: Tensor):
    """A validation score of :func:`train_tuned` for a classifier: model ↦ N_C-way
    accuracy (S,) of its logits model(inputs) (S, n, N_C) against labels (n,)."""
    check_inputs("inputs", inputs, labels)

    def score(model: StackedModel) -> Tensor:
        return (model(inputs).argmax(-1) == labels).double().mean(-1)

    return score


def probe_accuracy(
    fit_inputs: Tensor,
    fit_labels: Tensor,
    val_inputs: Tensor,
    val_labels: Tensor,
    *,
    submodule: str | None = None,
    max_iter: int = 100,
):
    """A validation score of :func:`train_tuned` for a representation: model ↦ the
    N_C-way accuracy (S,) on (val_inputs, val_labels) of the linear head fitted on the
    features of (fit_inputs, fit_labels) (:func:`ccl_helpers.metrics.linear_probe`,
    ``max_iter`` L-BFGS iterations). ``submodule`` names the representation inside the
    model (e.g. ``"encoder"`` of a classifier); None: the model's output."""
    check_inputs("fit_inputs", fit_inputs, fit_labels, "fit_labels")
    check_inputs("val_inputs", val_inputs, val_labels, "val_labels")
    if val_inputs.shape[1:] != fit_inputs.shape[1:]:
        raise ValueError(
            "val_inputs must have the example shape of fit_inputs, "
            f"{tuple(fit_inputs.shape[1:])}, got {tuple(val_inputs.shape[1:])}"
        )
    max_iter = check_int("max_iter", max_iter)
    n_classes = int(fit_labels.max()) + 1

    def score(model: StackedModel) -> Tensor:
        def encode(x):
            return model(x) if submodule is None else model(x, submodule=submodule)

        return metrics.linear_probe(
            encode(fit_inputs),
            fit_labels,
            encode(val_inputs),
            val_labels,
            task_size=n_classes,
            max_iter=max_iter,
        )["accuracy"].double()

    return score


class TunedRun(NamedTuple):
    """A model trained with its step size and weight decay chosen on a validation
    score, early-stopped; and the record of the search and of the final run."""

    model: StackedModel  #: the chosen configuration, each seed at its best step
    search: pd.DataFrame  #: lr, weight_decay, seed, best_step, val_accuracy, chosen
    final: pd.DataFrame  #: seed, best_step, val_accuracy of the returned model
    history: pd.DataFrame  #: the final run's tidy history (:func:`.train.train`)


class _EarlyStopping:
    """An ``evaluate`` of :func:`ccl_helpers.train.train` recording ``val_accuracy``
    (the score) at every evaluation, and ``extra``'s quantities at ``extra_steps``,
    and keeping, per seed, the parameters of the best score so far (the first one, on
    ties); :meth:`restore` writes them back into the model. ``steps``: the steps at
    which train.train evaluates, in order."""

    def __init__(self, model, score, steps, extra=None, extra_steps=()):
        self.model, self.score = model, score
        self.steps, self.extra, self.extra_steps = iter(steps), extra, set(extra_steps)
        self.best = {k: v.detach().clone() for k, v in model.params.items()}
        self.accuracy = None

    def __call__(self, model: StackedModel) -> dict[str, Tensor]:
        step = next(self.steps)
        accuracy = self.score(model)
        better = (
            torch.ones_like(accuracy, dtype=torch.bool)
            if self.accuracy is None
            else accuracy > self.accuracy
        )
        for name, value in model.params.items():
            mask = better.view(-1, *([1] * (value.ndim - 1)))
            self.best[name] = torch.where(mask, value.detach(), self.best[name])
        self.accuracy = (
            accuracy if self.accuracy is None else self.accuracy.maximum(accuracy)
        )
        found = {"val_accuracy": accuracy}
        if self.extra is not None and step in self.extra_steps:
            found.update(self.extra(model))
        return found

    @torch.no_grad()
    def restore(self) -> None:
        for name, value in self.best.items():
            self.model.params[name].copy_(value)


def train_tuned(
    make_model,
    loss_fn,
    batches,
    score,
    *,
    grid: list[tuple[float, float]],
    n_seeds: int,
    n_steps: int,
    eval_steps: list[int],
    search_seeds: int = 1,
    seed: int = 0,
    evaluate=None,
    evaluate_steps: list[int] = (),
    tolerance: float = 0.0,
    device: torch.device | str = "cpu",
    desc: str | None = None,
) -> TunedRun:
    """A model trained with Adam, its step size and weight decay chosen on a validation
    score, with early stopping: one procedure for every encoder compared.

    Every (lr, weight_decay) of ``grid`` is trained with ``search_seeds`` seeds (the
    same initialisations and batches for every configuration); each seed keeps its
    parameters at the evaluated step (0, ``eval_steps``, the end) of highest score.
    The first configuration of the grid whose mean of those scores is within
    ``tolerance`` of the highest is chosen (with the grid listed from the most
    cautious step size, the one-standard-error rule: a tie within the validation
    noise goes to the cautious side, not to the noise) and trained the same way with
    ``n_seeds`` seeds (the search's run is kept when ``search_seeds == n_seeds``),
    recording ``evaluate``'s quantities at ``evaluate_steps`` too.

    make_model: () ↦ module; loss_fn: (forward, batch) ↦ scalar, as in
    :func:`ccl_helpers.train.train`; batches: (n_seeds, generator) ↦ its
    ``sample_batch``; score: model ↦ (S,) validation accuracy, higher is better
    (:func:`head_accuracy`, :func:`probe_accuracy`); evaluate: model ↦ {quantity: (S,)};
    device: where the models and the batches' generator live.
    """
    if not grid:
        raise ValueError("grid must hold at least one (lr, weight_decay)")
    for i, (lr, weight_decay) in enumerate(grid):
        check_positive(f"grid[{i}]: lr", lr)
        check_positive(f"grid[{i}]: weight_decay", weight_decay, allow_zero=True)
    for name, value in [
        ("make_model", make_model),
        ("loss_fn", loss_fn),
        ("batches", batches),
        ("score", score),
    ]:
        check_callable(name, value)
    device = check_device("device", device)
    n_seeds = check_int("n_seeds", n_seeds)
    n_steps = check_int("n_steps", n_steps)
    tolerance = check_positive("tolerance", tolerance, allow_zero=True)
    search_seeds = check_int("search_seeds", search_seeds, 1, n_seeds)
    eval_steps = check_steps("eval_steps", eval_steps, n_steps)
    evaluate_steps = check_steps("evaluate_steps", evaluate_steps, n_steps)
    if evaluate is not None:
        check_callable("evaluate", evaluate)

    def run(lr: float, weight_decay: float, seeds: int, final: bool):
        model = StackedModel(make_model, seeds, seed=seed, device=device)
        extra_steps = evaluate_steps if final else []
        steps = sorted({0, n_steps, *eval_steps, *extra_steps})
        stopping = _EarlyStopping(
            model, score, steps, evaluate if final else None, extra_steps
        )
        generator = torch.Generator(device=device).manual_seed(seed + 1)
        history = train.train(
            model,
            loss_fn,
            batches(seeds, generator),
            n_steps,
            lr=lr,
            weight_decay=weight_decay,
            evaluate=stopping,
            eval_steps=steps,
            desc=None if desc is None else f"{desc}, lr {lr:g}, wd {weight_decay:g}",
        )
        stopping.restore()
        accuracy = train.wide(history).dropna(subset=["val_accuracy"])
        best = accuracy.loc[accuracy.groupby("seed")["val_accuracy"].idxmax()]
        best = best.rename(columns={"step": "best_step"})
        best = best[["seed", "best_step", "val_accuracy"]].reset_index(drop=True)
        return model, best, history

    final = search_seeds == n_seeds
    runs = [run(lr, wd, search_seeds, final) for lr, wd in grid]
    mean_accuracy = [best["val_accuracy"].mean() for _, best, _ in runs]
    best = max(mean_accuracy)
    chosen = next(i for i, a in enumerate(mean_accuracy) if a >= best - tolerance)
    tables = [
        best.assign(lr=lr, weight_decay=wd, chosen=i == chosen)
        for i, ((lr, wd), (_, best, _)) in enumerate(zip(grid, runs))
    ]
    columns = ["lr", "weight_decay", "seed", "best_step", "val_accuracy", "chosen"]
    search = pd.concat(tables, ignore_index=True)[columns]
    model, best, history = (
        runs[chosen] if final else run(*grid[chosen], n_seeds, final=True)
    )
    return TunedRun(model, search, best, history)


# ---------------------------------------------------------------- the claims tested

_COMPETES = (
    "the largest gap the source reads as competing: 0.7 points (Table 1, Wiki-3029, "
    "AVG-10 with trained heads, 88.4 against 89.1 %); one criterion for every "
    "comparison of two encoders"
)
_MEANS = (
    "the largest gap between the mean classifier and the trained head that the source "
    "reads as good classification: 1.9 points (Table 1, Wiki-3029, supervised "
    "features, AVG-10, 87.2 against 89.1 %)"
)
_POINT = "one point of accuracy, below what a reader would act on"
_TABLE_1 = "Arora et al. (2019), Table 1 (Wiki-3029)"
_UNSEEN_SCOPE = (
    "FashionMNIST, conv net → ℝ³², contrastive encoders trained on 5 classes and on "
    "all 10, same procedure and budget; tasks among the 5 other classes, outside the "
    "training ρ's support (beyond the lemma)"
)
_UNSEEN_SOURCE = "Arora et al. (2019), the framework's aim, beyond the lemma"
_BLOCK_SCOPE = (
    "FashionMNIST, conv net → ℝ³², b = 1, 2, 5, 10, short unsaturated training with "
    "the same number of images per step for every b"
)


def _competes(task_size: int, source: str) -> Claim:
    return Claim(
        key=f"competes_avg{task_size}",
        source=_TABLE_1,
        statement=f"contrastive representations compete with supervised ones on "
        f"AVG-{task_size} ({source} with trained heads)",
        metric=f"AVG-{task_size} test accuracy of a linear head, contrastive − "
        "supervised encoder (fraction)",
        expected="equal",
        margin=0.007,
        margin_reason=_COMPETES,
        section="curl-table-1",
    )


def _means(encoder: str, source: str) -> Claim:
    surprise = "" if encoder == "contrastive" else ", surprisingly"
    return Claim(
        key=f"means_{encoder}",
        source=_TABLE_1,
        statement=f"class means classify {encoder} representations as well as a "
        f"trained head{surprise} (AVG-2: {source})",
        metric=f"AVG-2 test accuracy of the {encoder} encoder, mean classifier − "
        "linear head (fraction)",
        expected="equal",
        margin=0.019,
        margin_reason=_MEANS,
        section="curl-table-1" if encoder == "contrastive" else "curl-means-supervised",
    )


def _unseen(classifier: str) -> Claim:
    head = "linear head" if classifier == "linear" else "mean classifier"
    return Claim(
        key=f"unseen_{classifier}",
        source=_UNSEEN_SOURCE,
        statement="representations learnt contrastively serve tasks of classes "
        f"unseen in training ({head})",
        metric="AVG-2 test accuracy on unseen classes, encoder trained on the 5 "
        f"others − encoder trained on all 10, {head} (fraction)",
        expected="equal",
        margin=0.007,
        margin_reason=_COMPETES,
        scope=_UNSEEN_SCOPE,
        section="curl-unseen-classes",
    )


CLAIMS: dict[str, Claim] = claims_by_key(
    # theorem rows (checked by asserts in the chapter)
    Claim(
        key="simple_lemma",
        source="Arora et al. (2019), eq. (2)",
        statement="L_sup(f) ≤ α L_un(f) for every f, α depending on ρ",
        metric="L_sup ≤ L^µ_sup ≤ (L_un − τ log 2)/(1 − τ) ≤ α L_un, exact on a "
        "held-out distribution (nats); L_sup also from heads fitted on training images",
        section="curl-lemma-training",
    ),
    Claim(
        key="k_negatives",
        source="Arora et al. (2019), k negatives",
        statement="with k negatives a statement like (2) holds for the average "
        "(k + 1)-way loss",
        metric="L^µ_sup,k+1 ≤ (L^k_un − E log(1 + |I|))/(1 − τ_k) and L^µ_tuple ≤ "
        "(L^k_un − E log(1 + |I|))/(1 − τ⁺_k), L^k_un by Monte Carlo (nats)",
        section="curl-k-negatives",
    ),
    Claim(
        key="block_bound",
        source="Arora et al. (2019), blocks of similar points",
        statement="averaging over blocks of similar points gives stronger guarantees",
        metric="L^block_un ≤ L_un and L^µ_sup ≤ (L^block_un − τ log 2)/(1 − τ), "
        "Monte Carlo with shared draws (nats)",
        scope=_BLOCK_SCOPE,
        section="curl-blocks",
    ),
    # Table 1: two encoders compared, and the mean classifier against a trained head
    _competes(2, "97.3 against 97.8 %"),
    _competes(10, "88.4 against 89.1 %"),
    _means("contrastive", "97.7 against 97.3 %"),
    _means("supervised", "97.7 against 97.8 %"),
    # two readings of why means classify supervised features (the chapter's)
    Claim(
        key="bias_centring",
        source="the chapter's reading of Arora et al. (2019), Table 1",
        statement="a head with a bias leaves supervised classes off their means: "
        "centring the features helps the mean classifier",
        metric="AVG-10 test accuracy of the supervised encoder, mean classifier on "
        "centred features − on raw features (fraction)",
        expected="greater",
        margin=0.01,
        margin_reason=_POINT,
        section="curl-means-supervised",
    ),
    Claim(
        key="norms_normalising",
        source="the chapter's reading of Arora et al. (2019), Table 1",
        statement="supervised class means differ in norm: unit-norm means help the "
        "mean classifier",
        metric="AVG-10 test accuracy of the supervised encoder, unit-norm − raw "
        "class means (fraction)",
        expected="greater",
        margin=0.01,
        margin_reason=_POINT,
        section="curl-means-supervised",
    ),
    # classes never seen in training
    _unseen("linear"),
    _unseen("mean"),
    Claim(
        key="unseen_untrained",
        source=_UNSEEN_SOURCE,
        statement="contrastive training helps on classes unseen in training: the "
        "trained encoder beats the untrained one",
        metric="AVG-2 test accuracy on unseen classes, linear head, encoder trained on "
        "the 5 others − the same encoder at its initialisation (fraction)",
        expected="greater",
        margin=0.01,
        margin_reason=_POINT,
        scope=_UNSEEN_SCOPE,
        section="curl-unseen-classes",
    ),
    # blocks of similar points
    Claim(
        key="block_gain",
        source="Arora et al. (2019), blocks of similar points",
        statement="the block objective gives better downstream performance in practice",
        metric="AVG-2 test accuracy of the mean classifier, block size b − b = 1, "
        "averaged over b = 2, 5, 10 per seed (fraction)",
        expected="greater",
        margin=0.01,
        margin_reason=_POINT,
        scope=_BLOCK_SCOPE,
        section="curl-blocks",
    ),
)
"""The claims of the source the chapter tests, by key
(:class:`~ccl_helpers.verdicts.Claim`), stated before the runs that test them: the
theorem rows (the simple lemma, its extension to k negatives, the block guarantee),
then the empirical ones, one primary metric each. The framework measures a
representation by linear classifiers on binary tasks, so AVG-2 is the primary task size
(Table 1's AVG-10 is a second claim of the source's, "competes" on AVG-2 and AVG-10) and
the linear head the primary classifier of two encoders compared. The margins: two
encoders "compete" within the largest gap the source reads as competing (0.7 points, one
criterion for Table 1 and for unseen classes); class means classify "as well as a
trained head" within the largest such gap the source reports (1.9 points); a gain is
absent below one point of accuracy."""
