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
    UnsupervisedSamples,
    draw_unsupervised_samples,
    exact_unsupervised_loss,
    unsupervised_loss_curve,
    unsupervised_loss_monte_carlo,
)

__all__ = [
    "UnsupervisedSamples",
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
