"""Downstream quality of a representation f on classification tasks.

A task T is a set of m distinct classes. Following Arora et al. (2019), tasks are drawn
from ρ^m conditioned on distinct classes, so P(T) ∝ Π_{c∈T} ρ(c), and inside a task each
class has weight 1/m and each example of class c weight 1/n_c. A linear classifier on T
has one row w_c ∈ R^d per class (no bias) and loss ℓ(x, c) = −log
softmax_{c'∈T}(w_{c'}ᵀf(x))_c. The averages over all C(N_C, m) tasks (AVG-m) are
computed exactly and vectorised.

Every function accepts features with leading batch dimensions (e.g. seeds): (..., n, d).

Where it lives: the tasks, class statistics and classifiers (``_classifiers``); the
unsupervised loss L_un, exact and by Monte Carlo (``_unsupervised``).
"""

from ._classifiers import (
    all_tasks,
    class_frequencies,
    class_means,
    class_members,
    class_weights,
    encode,
    fit_linear_classifiers,
    knn_accuracy,
    labelled_set_sizes,
    linear_probe,
    mean_classifier,
    standardise,
    task_loss_and_accuracy,
)
from ._unsupervised import (
    CHUNK_ELEMENTS,
    draw_unsupervised_samples,
    exact_unsupervised_loss,
    unsupervised_loss_curve,
    unsupervised_loss_monte_carlo,
)

__all__ = [
    "CHUNK_ELEMENTS",
    "all_tasks",
    "class_frequencies",
    "class_means",
    "class_members",
    "class_weights",
    "draw_unsupervised_samples",
    "encode",
    "exact_unsupervised_loss",
    "fit_linear_classifiers",
    "knn_accuracy",
    "labelled_set_sizes",
    "linear_probe",
    "mean_classifier",
    "standardise",
    "task_loss_and_accuracy",
    "unsupervised_loss_curve",
    "unsupervised_loss_monte_carlo",
]


# Transitional (issue 49), not part of the API: the memory estimate of the Monte Carlo
# draws, which other groups' modules still read at import (encoder_report,
# curl/_k_negatives, multineg/_proposition1: ``metrics.DRAWS``). Nothing here uses it;
# it goes once those modules no longer do.
from ..checks import Estimate as _Estimate  # noqa: E402


def _draws_bytes(arguments: dict) -> int | None:
    negatives = arguments["n_negatives"]
    negatives = [negatives] if isinstance(negatives, int) else negatives
    if not isinstance(negatives, (list, tuple)) or not negatives:
        return None
    if not all(isinstance(n, int) for n in negatives):
        return None
    return 24 * arguments["n_samples"] * (max(negatives) + 2)


DRAWS = _Estimate(
    "the Monte Carlo draws of L^N_un", ("n_negatives", "n_samples"), _draws_bytes
)
