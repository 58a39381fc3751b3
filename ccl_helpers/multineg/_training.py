"""Training with N negatives (Section 3, Figures 1–3).

It holds the batches from a shared pool, the loss, the evaluator and the runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pandas as pd
import torch
from torch import Tensor

from .. import metrics, train
from .._checks import (
    check_batch,
    check_callable,
    check_finite,
    check_instance,
    check_int,
    check_labels,
    check_positive,
    check_size_along,
    check_steps,
    check_tensor,
)
from ..data import LatentClassModel
from ..losses import info_nce_loss
from ..train import Forward, StackedModel
from ._exact import (
    _best_linear_loss,
    _output_norm_range,
    average_mean_classifier_loss,
)


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

    n_seeds S, batch_size B, n_negatives N: integers ≥ 1; ``generator`` a
    ``torch.Generator`` on the latent model's device.
    """
    check_instance("latent", latent, LatentClassModel)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    n = n_negatives = check_int("n_negatives", n_negatives, 1)
    check_instance("generator", generator, torch.Generator)
    if pool_size is not None:
        pool_size = check_int("pool_size", pool_size, n)
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
    One forward pass over the 2B + P inputs. Returns a scalar. Checks shapes and
    dtypes only, once (a NaN in the batch propagates)."""
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


def _evaluator(
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
    - ``L_sup``: the best linear classifier's loss, fitted on its own (if
      ``fit_linear``; ``_best_linear_loss``);
    - ``norm_min``, ``norm_max``: min and max of ‖f(x)‖ over the set (Assumption 2,
      Figure 3).

    The lemmas' bounds are added to the records by :func:`add_lemma_bounds`.
    """
    n = n_negatives
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
            result["L_sup"] = _best_linear_loss(
                features, labels, class_probs=rho, max_iter=max_iter
            )
        result["norm_min"], result["norm_max"] = _output_norm_range(features)
        return result

    return evaluate


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
    :func:`ccl_helpers.train.train`), evaluated on
    (eval_inputs, eval_labels) at step 0, the ``checkpoints`` and the end.
    ``fit_linear``: the N whose runs also record ``L_sup``. Every N starts from the
    same initial encoders and evaluates on its own fixed Monte Carlo draws.

    Returns the history, in the book's one format (long: step, seed, quantity, value,
    and the configuration column ``N``; :func:`ccl_helpers.train.wide` gives the
    records, one row per (step, seed, N) with the columns ``L_un`` (L^N_un, the Monte
    Carlo estimate on ``n_samples`` draws fixed per N), ``L_un_se`` (its standard
    error), ``L_mu`` (L^µ_sup(f, C), exact: :func:`average_mean_classifier_loss`),
    ``L_sup`` (the best linear classifier's loss, fitted on its own by L-BFGS from W =
    0, for the N of ``fit_linear``), ``norm_min``, ``norm_max`` (the range of ‖f(x)‖,
    Assumption 2) and ``train_loss``), and the trained models by N.
    """
    check_callable("make_encoder", make_encoder)
    check_instance("train_set", train_set, LatentClassModel)
    check_labels("eval_labels", eval_labels)
    check_tensor("eval_inputs", eval_inputs, min_ndim=1, floating=True)
    check_size_along("eval_inputs", eval_inputs, "eval_labels", eval_labels, 0)
    check_finite("eval_inputs", eval_inputs)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    n_steps = check_int("n_steps", n_steps, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    if pool_size is not None:
        pool_size = check_int("pool_size", pool_size, 1)
    n_samples = check_int("n_samples", n_samples, 2)
    check_positive("lr", lr)
    seed = check_int("seed", seed, 0)
    values = [check_int("negatives", n) for n in negatives]
    if not values:
        raise ValueError("negatives must hold at least one N ≥ 1")
    checkpoints = check_steps("checkpoints", checkpoints, n_steps)
    device = eval_inputs.device
    linear = set(fit_linear)
    tables, models = [], {}
    for n in values:
        models[n] = StackedModel(make_encoder, n_seeds, seed=seed, device=device)
        evaluate = _evaluator(
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
        tables.append(history.assign(N=n))
    return pd.concat(tables, ignore_index=True), models
