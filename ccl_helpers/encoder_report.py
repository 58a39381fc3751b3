"""The book's bounds on a user's own encoder: :func:`report`.

The labelled images given are taken as the distribution: the latent classes are the
labels, ρ(c) their frequencies and D_c uniform over the images of class c, as in the
chapters. On it, the losses of the theory are computed exactly where they are finite
sums (L_un, the mean classifiers' losses) and by Monte Carlo where they are not (L^N_un
for N > 1; Lee's bounds, which draw augmentations), with standard errors. Every bound
is then set against the quantity it bounds: its *slack* is bound − quantity, ≥ 0 when
the bound holds.

- Arora et al. (2019), the simple lemma, eq. (2): L^µ_sup over the binary tasks
  ≤ (L_un − τ log 2)/(1 − τ), τ = Σ_c ρ(c)² (:func:`ccl_helpers.curl.lemma_quantities`).
- Merad et al. (2020), Lemma 1: L^µ_sup(f, C) ≤ L_un/p_min + log N_C; Lemma 2:
  L^µ_sup(f, C) ≤ L^N_un/p^ρ_cc(N) (:func:`ccl_helpers.multineg.lemma1_bound`,
  :func:`ccl_helpers.multineg.lemma2_bound`).
- Lee (2025), Theorem 4.4 (attracting) and Theorem 4.6 (repelling, as printed, and its
  corrected form) on l2-normalised representations
  (:func:`ccl_helpers.supervised_approx.bound_terms`).

The rows of the table are :data:`REPORT_ROWS`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import NamedTuple

import pandas as pd
import torch
from torch import Tensor

from . import coupon, curl, metrics, multineg, supervised_approx
from ._checks import (
    check_callable,
    check_choice,
    check_frame,
    check_inputs,
    check_int,
    check_positive,
    check_tensor,
)
from .data import BASE, STRATEGIES
from .verdicts import format_estimate

__all__ = [
    "REPORT_ROWS",
    "LOSS_BOUNDS",
    "COLUMNS",
    "report",
    "readable",
    "draw_loss_bounds",
]


class _Row(NamedTuple):
    """One row of :func:`report`: what it is, the row it bounds ("" for a quantity),
    and its source."""

    meaning: str
    bounds: str
    source: str


_ARORA = "Arora et al. (2019)"
_MERAD = "Merad et al. (2020)"
_LEE = "Lee (2025)"

REPORT_ROWS = {
    "L_un": _Row("L_un, one negative, logistic loss (exact)", "", f"{_ARORA}, eq. (1)"),
    "L_un_N": _Row("L^N_un, N negatives (Monte Carlo)", "", f"{_MERAD}, eq. (6)"),
    "L_mu_binary": _Row(
        "L^µ_sup over the binary tasks (exact)", "", f"{_ARORA}, the simple lemma"
    ),
    "L_mu": _Row("L^µ_sup(f, C), all the classes (exact)", "", f"{_MERAD}, eq. (5)"),
    "accuracy_mu": _Row("mean-classifier accuracy, all classes (exact)", "", "N_C-way"),
    "accuracy_probe": _Row(
        "linear-probe accuracy, all classes (held-out)", "", "N_C-way"
    ),
    "curl_bound": _Row("(L_un − τ log 2)/(1 − τ)", "L_mu_binary", f"{_ARORA}, eq. (2)"),
    "lemma1_bound": _Row("L_un/p_min + log N_C", "L_mu", f"{_MERAD}, Lemma 1"),
    "lemma2_bound": _Row("L^N_un/p_cc(N)", "L_mu", f"{_MERAD}, Lemma 2"),
    "attracting_lhs": _Row(
        "−s(f(t(x)), m̂(x)), m̂ the mean view", "", f"{_LEE}, Theorem 4.4"
    ),
    "attracting_bound": _Row(
        "−mean_k s(f(t(x)), f(t_k(x)))", "attracting_lhs", f"{_LEE}, eq. (8)"
    ),
    "repelling_lhs": _Row("max_{y'≠y} s(f(t(x)), µ_{y'})", "", f"{_LEE}, Theorem 4.6"),
    "repelling_bound": _Row("B/ν, as printed", "repelling_lhs", f"{_LEE}, eq. (10)"),
    "repelling_bound_corrected": _Row(
        "max(B, B/ν)", "repelling_lhs", f"{_LEE}, eq. (10) corrected"
    ),
}
"""The rows of :func:`report`, by name: their meaning, the row each bound bounds, and
the source. Losses are in nats; Lee's rows are means over the images."""

LOSS_BOUNDS = {
    "curl_bound": "CURL's lemma",
    "lemma1_bound": "Lemma 1",
    "lemma2_bound": "Lemma 2",
}
"""The bounds in nats on a mean classifier's loss, by row, with their short names:
what :func:`draw_loss_bounds` draws."""

COLUMNS = ("value", "se", "bounds", "slack", "slack_se", "meaning", "source")
"""The columns of :func:`report`."""


def _class_counts(labels: Tensor) -> Tensor:
    """Images per class (N_C,); ValueError unless the labels cover 0..N_C − 1, N_C ≥ 2,
    with two images or more in every class."""
    counts = torch.bincount(labels)
    if counts.numel() < 2 or bool((counts < 2).any()):
        raise ValueError(
            "labels must hold at least two classes, 0..N_C − 1 each with at least two "
            f"images, got counts {counts.tolist()}"
        )
    return counts


def _halves(labels: Tensor) -> tuple[Tensor, Tensor]:
    """Indices of two halves with every class in both: within each class, in the order
    given, alternately the first and the second half."""
    order = torch.sort(labels, stable=True).indices
    sorted_labels = labels[order]
    starts = torch.searchsorted(sorted_labels, sorted_labels, right=False)
    rank = torch.arange(labels.numel(), device=labels.device) - starts
    return order[rank % 2 == 0], order[rank % 2 == 1]


@contextlib.contextmanager
def _evaluation_mode(encoder: Callable[[Tensor], Tensor]):
    """An ``nn.Module`` in eval mode (its mode restored after), gradients off."""
    training = isinstance(encoder, torch.nn.Module) and encoder.training
    if training:
        encoder.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        if training:
            encoder.train()


def _check_pixels(images: Tensor) -> None:
    """ValueError, with the fix, for images (n, C, H, W) that are channels-last or
    outside [0, 1], the range the augmentations assume."""
    n, channels, height, width = images.shape
    if channels not in (1, 3) and width in (1, 3):
        raise ValueError(
            f"images must be (n, C, H, W), got {tuple(images.shape)}, which looks "
            "channels-last: pass images.permute(0, 3, 1, 2)"
        )
    low, high = float(images.min()), float(images.max())
    if low < 0 or high > 1:
        hint = ": divide 0–255 pixels by 255" if high > 1 and low >= 0 else ""
        raise ValueError(
            f"images must hold values in [0, 1], the augmentations' range, got "
            f"[{low:.4g}, {high:.4g}]{hint}"
        )


def _valid_embeddings(features, n: int) -> Tensor:
    """``features`` if they are floating embeddings (n, d); else ValueError."""
    if (
        not isinstance(features, Tensor)
        or features.ndim != 2
        or features.shape[0] != n
        or not features.is_floating_point()
    ):
        got = (
            f"{features.dtype} {tuple(features.shape)}"
            if isinstance(features, Tensor)
            else type(features).__name__
        )
        raise ValueError(
            "encoder must map images (n, C, H, W) to floating embeddings (n, d), got "
            f"{got} for n = {n} (a stack of models with a leading seed axis is not one "
            "encoder"
            + (
                "; for a model that returns several outputs, pass one that picks the "
                "embeddings, e.g. lambda x: model(x)[0]"
                if isinstance(features, tuple | list | dict)
                else ""
            )
            + ")"
        )
    return features


def _embeddings(encoder: Callable[[Tensor], Tensor], images: Tensor) -> Tensor:
    """f(images) (n, d), validated: two dimensions, one row per image (on two images
    first, for a clear error before the chunked pass), finite."""
    _valid_embeddings(encoder(images[:2]), min(2, images.shape[0]))
    features = _valid_embeddings(metrics.encode(encoder, images), images.shape[0])
    if not bool(torch.isfinite(features).all()):
        raise ValueError("encoder returned NaN or infinite embeddings")
    return features


def report(
    encoder: Callable[[Tensor], Tensor],
    images: Tensor,
    labels: Tensor,
    *,
    n_negatives: int,
    strategy: str = BASE,
    alpha: float = 1.0,
    n_samples: int = 20_000,
    n_transforms_attract: int = 16,
    n_transforms_repel: int = 4,
    seed: int = 0,
) -> pd.DataFrame:
    """The book's bounds on one encoder, each against the quantity it bounds.

    Args:
        encoder: any callable (e.g. a ``torch.nn.Module``) mapping images (n, C, H, W)
            to embeddings (n, d), no seed axis; a module is evaluated in eval mode,
            without gradients (its mode is restored).
        images: (n, C, H, W), floating, finite, values in [0, 1] (the augmentations'
            range), on the encoder's device; taken as the distribution.
        labels: (n,) integers covering 0..N_C − 1, N_C ≥ 2, at least two images per
            class.
        n_negatives: the N of L^N_un and of Lemma 2 (Lemma 2's bound is +∞ for N <
            N_C, and loose until N is several times N_C log N_C).
        strategy: the augmentation T of Lee's theorems, a name of
            :data:`ccl_helpers.data.STRATEGIES`.
        alpha: the α > 0 of Theorem 4.6 (the loss's inverse temperature).
        n_samples: Monte Carlo draws of (x, x⁺, x⁻_1 … x⁻_N) for L^N_un.
        n_transforms_attract, n_transforms_repel: the K of Theorems 4.4 (≥ 2) and 4.6.
        seed: seeds every draw; the table is a function of it.

    Returns:
        A frame indexed by :data:`REPORT_ROWS` with the columns of :data:`COLUMNS`:
        ``value`` and its standard error ``se`` (0 where computed exactly on the
        images); for a bound, ``bounds`` names the row it bounds, ``slack`` = value −
        that row's value (≥ 0 when the bound holds) and ``slack_se`` its standard
        error; ``meaning`` and ``source`` from :data:`REPORT_ROWS`. Lee's rows are
        means over the images, their standard errors over the images (transformations
        included). The linear probe is fitted on half of each class's images
        (:func:`ccl_helpers.metrics.linear_probe`, features standardised on that half)
        and scored on the other half (binomial standard error).
    """
    check_callable("encoder", encoder)
    check_tensor("images", images, ndim=4, floating=True)
    n_negatives = check_int("n_negatives", n_negatives)
    check_choice("strategy", strategy, STRATEGIES)
    alpha = check_positive("alpha", alpha)
    n_samples = check_int("n_samples", n_samples, 2)
    n_transforms_attract = check_int("n_transforms_attract", n_transforms_attract, 2)
    n_transforms_repel = check_int("n_transforms_repel", n_transforms_repel, 1)
    seed = check_int("seed", seed, 0)
    check_inputs("images", images, labels)
    _check_pixels(images)
    counts = _class_counts(labels)
    generator = torch.Generator(device=images.device).manual_seed(seed)
    with _evaluation_mode(encoder):
        features = _embeddings(encoder, images).double()
        attract, repel = supervised_approx.bound_terms(
            encoder,
            images,
            labels,
            images,
            labels,
            strategy,
            generator,
            alpha,
            n_transforms_attract=n_transforms_attract,
            n_transforms_repel=n_transforms_repel,
        )
    rho = counts.double() / labels.numel()
    curl_sides = curl.lemma_quantities(features, labels, fit_linear=False)
    l_un_n, l_un_n_se = metrics.unsupervised_loss_monte_carlo(
        features, labels, n_negatives, n_samples, generator
    )
    p_cc = coupon.p_cc(n_negatives, rho)
    fit, held_out = _halves(labels)
    fit_features, held_out_features = metrics.standardise(
        features[fit], features[held_out]
    )
    probe = float(
        metrics.linear_probe(
            fit_features, labels[fit], held_out_features, labels[held_out]
        )["accuracy"]
    )

    def mean_se(values: Tensor) -> tuple[float, float]:
        values = values.reshape(-1).double()
        return float(values.mean()), float(values.std() / math.sqrt(values.numel()))

    exact = 0.0
    values = {
        "L_un": (float(curl_sides["L_un"]), exact),
        "L_un_N": (float(l_un_n), float(l_un_n_se)),
        "L_mu_binary": (float(curl_sides["L_mu"]), exact),
        "L_mu": (
            float(
                multineg.average_mean_classifier_loss(
                    features, labels, rho.numel(), class_probs=rho
                )
            ),
            exact,
        ),
        "accuracy_mu": (
            float(
                metrics.mean_classifier(features, labels, task_size=None)["accuracy"]
            ),
            exact,
        ),
        "accuracy_probe": (
            probe,
            math.sqrt(probe * (1 - probe) / held_out.numel()),
        ),
        "curl_bound": (float(curl_sides["bound"]), exact),
        "lemma1_bound": (float(multineg.lemma1_bound(curl_sides["L_un"], rho)), exact),
        "lemma2_bound": (
            float(l_un_n) / p_cc if p_cc > 0 else math.inf,
            float(l_un_n_se) / p_cc if p_cc > 0 else math.nan,
        ),
        "attracting_lhs": mean_se(attract.lhs),
        "attracting_bound": mean_se(attract.rhs),
        "repelling_lhs": mean_se(repel.lhs),
        "repelling_bound": mean_se(repel.rhs),
        "repelling_bound_corrected": mean_se(repel.rhs_corrected),
    }
    # the slacks of Lee's bounds are per-image differences: their s.e. is the paired one
    paired = {
        "attracting_bound": attract.gap,
        "repelling_bound": repel.gap,
        "repelling_bound_corrected": repel.rhs_corrected - repel.lhs,
    }
    rows = []
    for name, row in REPORT_ROWS.items():
        value, se = values[name]
        slack = slack_se = math.nan
        if row.bounds:
            bounded, bounded_se = values[row.bounds]
            slack = value - bounded
            slack_se = (
                mean_se(paired[name])[1]
                if name in paired
                else math.hypot(se, bounded_se)  # at most one of the two is not exact
            )
        rows.append((value, se, row.bounds, slack, slack_se, row.meaning, row.source))
    return pd.DataFrame(rows, index=list(REPORT_ROWS), columns=list(COLUMNS))


def _as_text(value: float, se: float) -> str:
    """value ± se (an exact value to four significant digits, no ±); "" for NaN, "∞"
    for +∞."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if se == 0:
        return f"{value:.4g}".replace("-", "−")
    return format_estimate(value, se)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`report` table as text, for reading: ``value`` and ``slack`` as "value ±
    s.e." at the precision the standard error allows (exact values to four significant
    digits),
    and ``bounds``. (n_rows, 3) of strings."""
    check_frame("table", table, list(COLUMNS))
    return pd.DataFrame(
        {
            "value": [_as_text(v, se) for v, se in zip(table["value"], table["se"])],
            "bounds": table["bounds"],
            "slack": [
                _as_text(v, se) for v, se in zip(table["slack"], table["slack_se"])
            ],
        },
        index=table.index,
    )


def draw_loss_bounds(ax, table: pd.DataFrame) -> None:
    """Each bound of :data:`LOSS_BOUNDS` in a :func:`report` table (a dash, in its
    colour) and the loss it bounds (a dot, L^µ_sup's colour: over the binary tasks for
    CURL's lemma, over all the classes for Lemmas 1 and 2), one column each, ±2
    standard errors where not exact; log scale. Adds no axis labels."""
    from . import plotting  # matplotlib loads with the first figure

    check_frame("table", table, list(COLUMNS))
    if not set(REPORT_ROWS) <= set(table.index):
        raise ValueError(
            f"table must have the rows of REPORT_ROWS, got {list(table.index)}"
        )
    dot = dict(marker="o", markersize=6)
    dash = dict(marker="_", markersize=22, markeredgewidth=2.5)
    for x, (name, short) in enumerate(LOSS_BOUNDS.items()):
        bounded = table.loc[name, "bounds"]
        for row, look, shape, label in (
            (bounded, "L_mu", dot, r"$L^\mu_{\rm sup}$" if x == 0 else None),
            (name, name, dash, short),
        ):
            value, se = table.loc[row, ["value", "se"]]
            if math.isfinite(value):
                ax.errorbar(
                    x,
                    value,
                    yerr=2 * se,
                    capsize=3,
                    label=label,
                    **plotting.style(look, line=False, linestyle="none", **shape),
                )
    ax.set_xticks(range(len(LOSS_BOUNDS)), list(LOSS_BOUNDS.values()))
    ax.set_xlim(-0.5, len(LOSS_BOUNDS) - 0.5)
    ax.set_yscale("log")
