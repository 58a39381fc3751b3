"""Chapter 1: the CURL framework of Arora et al. (2019).

The "simple lemma", in nats, with τ = P(c⁺ = c⁻) = Σ_c ρ(c)² (the collision probability,
:func:`ccl_helpers.coupon.tau_plus` with one negative):

    L_sup(f) ≤ L^µ_sup(f) ≤ (L_un(f) − τ·log 2) / (1 − τ).

(The paper writes ℓ with log₂, where the collision term τ·ℓ(0) is τ·1; in nats it is
τ·log 2.)
"""

from __future__ import annotations

import math

import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from . import coupon, metrics
from .checks import check_int, check_positive
from .data import GaussianClasses, LatentClassModel
from .losses import logistic_loss
from .train import Forward, StackedModel


def mean_classifier_bound(
    unsupervised_loss: Tensor | float, tau: float
) -> Tensor | float:
    """The lemma's right-hand side (L_un − τ·log 2)/(1 − τ), in nats; τ in [0, 1)."""
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
    anchor, positives, negatives = batch
    if (
        positives.shape != negatives.shape
        or positives.shape[0] != anchor.shape[0]
        or positives.ndim != anchor.ndim + 1
    ):
        raise ValueError(
            "need x (B, ...), positives and negatives (B, b, ...); got "
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
    against labels (B,)."""
    inputs, labels = batch
    return F.cross_entropy(forward(inputs), labels)


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
    shape = (n_seeds, batch_size)

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

    def sample(step: int):
        index = torch.randint(
            labels.numel(),
            (n_seeds, batch_size),
            generator=generator,
            device=labels.device,
        )
        return inputs[index], labels[index]

    return sample


def lemma_quantities(
    features: Tensor, labels: Tensor, *, max_iter: int = 500
) -> dict[str, Tensor]:
    """The three sides of the lemma on a finite distribution (D_c uniform over class c's
    examples, ρ the label frequencies), for binary tasks: ``L_un`` (exact), ``L_mu``
    (mean classifier, µ from the same data), ``L_sup`` (best linear classifier fitted on
    the same data), ``bound`` = (L_un − τ log 2)/(1 − τ), and the mean classifier's
    AVG-2 ``accuracy_mu``. Each (...). Computed in float64, so the lemma (an exact
    inequality on this distribution) holds to rounding."""
    features = features.double()
    rho = metrics.class_frequencies(labels)
    unsupervised = metrics.exact_unsupervised_loss(features, labels, rho)
    mean = metrics.mean_classifier(features, labels, task_size=2, class_probs=rho)
    best = metrics.linear_probe(
        features, labels, task_size=2, class_probs=rho, max_iter=max_iter
    )
    return {
        "L_un": unsupervised,
        "L_mu": mean["loss"],
        "L_sup": best["loss"],
        "bound": mean_classifier_bound(unsupervised, coupon.tau_plus(1, rho)),
        "accuracy_mu": mean["accuracy"],
    }


@torch.no_grad()
def monte_carlo_lemma(
    model: StackedModel,
    latent: GaussianClasses,
    n_samples: int,
    generator: torch.Generator,
    n_batches: int = 20,
    n_fit: int = 20_000,
    max_iter: int = 200,
) -> pd.DataFrame:
    """The lemma's quantities on the population of a Gaussian latent-class model, by
    Monte Carlo.

    The means µ_c are computed from a first sample of ``n_samples`` points and the best
    binary linear classifiers W on its first ``n_fit`` points; L_un, L^µ_sup and
    L_sup(W) are then estimated on ``n_samples`` fresh triplets and points, in
    ``n_batches`` batches whose spread gives the standard error (batch means). A fitted
    W is one particular classifier, so its loss estimates an upper bound of L_sup =
    inf_W. Returns one row per seed: ``L_un``, ``L_mu``, ``L_sup``, ``bound`` and their
    standard errors ``se_L_un``, ... .
    """
    n_batches = check_int("n_batches", n_batches, 2)
    if check_int("n_samples", n_samples, 2) < n_batches:
        raise ValueError(
            "need n_batches ≥ 2 and n_samples ≥ n_batches, got "
            f"{n_samples}, {n_batches}"
        )
    rho, tau = latent.class_probs, coupon.tau_plus(1, latent.class_probs)
    tasks = metrics.all_tasks(latent.n_classes, 2, rho.device)
    fit_classes = latent.sample_classes((n_samples,), generator)
    fit_features = model(latent.sample_given(fit_classes, generator))
    means = metrics.class_means(fit_features, fit_classes, latent.n_classes)
    rows = metrics.fit_linear_classifiers(
        fit_features[:, :n_fit], fit_classes[:n_fit], tasks, max_iter=max_iter
    )
    batches: dict[str, list[Tensor]] = {"L_un": [], "L_mu": [], "L_sup": []}
    size = n_samples // n_batches
    for _ in range(n_batches):
        anchor, positive, _ = latent.sample_sim((size,), generator)
        negative, _ = latent.sample_neg((size,), generator)
        loss = logistic_loss(
            model(anchor), model(positive), model(negative), reduction="none"
        )
        batches["L_un"].append(loss.double().mean(-1))
        classes = latent.sample_classes((size,), generator)
        features = model(latent.sample_given(classes, generator))
        batches["L_mu"].append(
            metrics.task_loss_and_accuracy(features, classes, means, tasks, rho)[
                0
            ].double()
        )
        batches["L_sup"].append(
            metrics.task_loss_and_accuracy(features, classes, rows, tasks, rho)[
                0
            ].double()
        )
    batches["bound"] = [mean_classifier_bound(v, tau) for v in batches["L_un"]]
    table = pd.DataFrame({"seed": model.seeds})
    for name, values in batches.items():
        stacked = torch.stack(values)  # (n_batches, S)
        table[name] = stacked.mean(0).cpu().numpy()
        table[f"se_{name}"] = (stacked.std(0) / n_batches**0.5).cpu().numpy()
    return table


def downstream_accuracies(
    train_features: Tensor,
    train_labels: Tensor,
    test_features: Tensor,
    test_labels: Tensor,
    task_sizes: tuple[int, ...] = (2, 10),
    max_iter: int = 500,
) -> pd.DataFrame:
    """AVG-m test accuracy of the linear head (fitted on the training features) and of
    the mean classifier (µ from the training features), for each m in ``task_sizes``.

    features (S, n, d) for S seeds → tidy frame: seed, task_size, classifier ("linear" |
    "mean"), accuracy.
    """
    frames = []
    for m in task_sizes:
        for name, evaluate in (
            ("linear", metrics.linear_probe),
            ("mean", metrics.mean_classifier),
        ):
            extra = {"max_iter": max_iter} if name == "linear" else {}
            accuracy = evaluate(
                train_features,
                train_labels,
                test_features,
                test_labels,
                task_size=m,
                **extra,
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
