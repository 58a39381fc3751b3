"""Training the encoders that Table 1 compares, tuned and early-stopped.

It holds their losses and batches, the validation scores, and one tuned,
early-stopped procedure."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from .. import metrics, train
from .._checks import (
    check_batch,
    check_callable,
    check_device,
    check_inputs,
    check_instance,
    check_int,
    check_positive,
    check_steps,
)
from .._precision import at_least_float32, result_dtype
from ..data import LatentClassModel
from ..losses import logistic_loss
from ..train import Forward, StackedModel


def block_contrastive_loss(
    forward: Forward, batch: tuple[Tensor, Tensor, Tensor]
) -> Tensor:
    """Mean over the batch of ℓ(f(x)ᵀ(f̄⁻ − f̄⁺)), ℓ(z) = log(1 + e^z), f̄^± the mean of
    f over a block.

    batch: x (B, *input), positives (B, b, *input), negatives (B, b, *input), B ≥ 1.
    With b = 1 this is L_un of eq. (1) (:func:`ccl_helpers.losses.logistic_loss`);
    with b > 1 it is the block variant (averages of b positives / b negatives). A
    training loss: it reads the batch's dtypes and shapes, never its values.
    """
    check_callable("forward", forward)
    anchor, positives, negatives = check_batch("batch", batch, ("floating",) * 3)
    if (
        anchor.ndim == 0
        or positives.ndim != anchor.ndim + 1
        or positives.shape != negatives.shape
        or positives.shape[0] != anchor.shape[0]
        or anchor.shape[0] == 0
    ):
        raise ValueError(
            "batch must be x (B, ...), positives and negatives (B, b, ...), B ≥ 1; got "
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
    n_seeds = check_int("n_seeds", n_seeds, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    check_instance("generator", generator, torch.Generator)
    block_size = check_int("block_size", block_size, 1)
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
    with replacement from inputs (n, ...) and labels (n,)."""
    check_inputs("inputs", inputs, labels)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    check_instance("generator", generator, torch.Generator)
    shape = (n_seeds, batch_size)

    def sample(step: int):
        index = torch.randint(
            labels.numel(),
            shape,
            generator=generator,
            device=labels.device,
        )
        return inputs[index], labels[index]

    return sample


def head_accuracy(inputs: Tensor, labels: Tensor):
    """A validation score of :func:`train_tuned` for a classifier: model ↦ N_C-way
    accuracy (S,) of its logits model(inputs) (S, n, N_C) against labels (n,), each
    label in 0..N_C − 1 (else ValueError: a label beyond the logits is never right)."""
    check_inputs("inputs", inputs, labels)
    top = int(labels.max())

    def score(model: StackedModel) -> Tensor:
        logits = model(inputs)
        if top >= logits.shape[-1]:
            raise ValueError(
                f"labels must lie in 0..{logits.shape[-1] - 1}, the model's "
                f"{logits.shape[-1]} logits, got a label {top}"
            )
        return (logits.argmax(-1) == labels).double().mean(-1)

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
    max_iter = check_int("max_iter", max_iter, 1)
    if val_inputs.shape[1:] != fit_inputs.shape[1:]:
        raise ValueError(
            "val_inputs must have the example shape of fit_inputs, "
            f"{tuple(fit_inputs.shape[1:])}, got {tuple(val_inputs.shape[1:])}"
        )
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


class _TunedRun(NamedTuple):
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
) -> tuple[StackedModel, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
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

    Returns a named tuple (model, search, final, history): the chosen configuration's
    model, each seed at its best step; the search's frame (lr, weight_decay, seed,
    best_step, val_accuracy, chosen); the returned model's (seed, best_step,
    val_accuracy); and the final run's tidy history (:func:`ccl_helpers.train.train`).
    """
    check_callable("make_model", make_model)
    check_callable("loss_fn", loss_fn)
    check_callable("batches", batches)
    check_callable("score", score)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    n_steps = check_int("n_steps", n_steps, 1)
    search_seeds = check_int("search_seeds", search_seeds, 1, n_seeds)
    seed = check_int("seed", seed, 0)
    if evaluate is not None:
        check_callable("evaluate", evaluate)
    tolerance = check_positive("tolerance", tolerance, allow_zero=True)
    device = check_device("device", device)
    if not grid:
        raise ValueError("grid must hold at least one (lr, weight_decay)")
    for i, (lr, weight_decay) in enumerate(grid):
        check_positive(f"grid[{i}]: lr", lr)
        check_positive(f"grid[{i}]: weight_decay", weight_decay, allow_zero=True)
    eval_steps = check_steps("eval_steps", eval_steps, n_steps)
    evaluate_steps = check_steps("evaluate_steps", evaluate_steps, n_steps)

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
    return _TunedRun(model, search, best, history)
