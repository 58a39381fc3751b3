"""Downstream quality of a representation f on classification tasks.

A task T is a set of m distinct classes. Following Arora et al. (2019), tasks are drawn
from ρ^m conditioned on distinct classes, so P(T) ∝ Π_{c∈T} ρ(c), and inside a task each
class has weight 1/m and each example of class c weight 1/n_c. A linear classifier on T
has one row w_c ∈ R^d per class (no bias) and loss ℓ(x, c) = −log softmax_{c'∈T}(w_{c'}ᵀf(x))_c.
The averages over all C(N_C, m) tasks (AVG-m) are computed exactly and vectorised.

Every function accepts features with leading batch dimensions (e.g. seeds): (..., n, d).
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from .data import check_class_probs

MAX_TASKS = 100_000


def all_tasks(
    n_classes: int, task_size: int, device: torch.device | str = "cpu"
) -> Tensor:
    """Every set of ``task_size`` distinct classes out of ``n_classes``, in lexicographic order → (T, m)."""
    if not 2 <= task_size <= n_classes:
        raise ValueError(
            f"task_size must be in 2..n_classes={n_classes}, got {task_size}"
        )
    if math.comb(n_classes, task_size) > MAX_TASKS:
        raise ValueError(
            f"C({n_classes}, {task_size}) tasks exceed {MAX_TASKS}: too many to average exactly"
        )
    return torch.tensor(
        list(itertools.combinations(range(n_classes), task_size)), device=device
    )


def task_probabilities(tasks: Tensor, class_probs: Tensor) -> Tensor:
    """P(T) ∝ Π_{c∈T} ρ(c) for tasks (T, m) drawn from ρ^m conditioned on distinct classes → (T,)."""
    check_class_probs(class_probs)
    weight = class_probs.to(tasks.device)[tasks].prod(-1)
    return weight / weight.sum()


def _check_features(features: Tensor, labels: Tensor, name: str = "features") -> None:
    if features.ndim < 2 or labels.ndim != 1 or features.shape[-2] != labels.shape[0]:
        raise ValueError(
            f"{name} must have shape (..., n, d) with n = len(labels) = {labels.shape[0]}, "
            f"got {tuple(features.shape)}"
        )


def class_frequencies(labels: Tensor, n_classes: int | None = None) -> Tensor:
    """Empirical ρ(c) = n_c / n of labels (n,) → (N_C,)."""
    return torch.bincount(labels, minlength=n_classes or 0).double() / labels.numel()


def class_means(
    features: Tensor, labels: Tensor, n_classes: int | None = None
) -> Tensor:
    """µ_c = mean of f(x) over the examples of class c: features (..., n, d) → (..., N_C, d)."""
    _check_features(features, labels)
    one_hot = torch.nn.functional.one_hot(
        labels, n_classes or int(labels.max()) + 1
    ).to(features.dtype)
    counts = one_hot.sum(0)
    if bool((counts == 0).any()):
        raise ValueError("every class must have at least one example in labels")
    return torch.einsum("nc,...nd->...cd", one_hot / counts, features)


def class_members(
    labels: Tensor, n_classes: int | None = None
) -> tuple[Tensor, Tensor]:
    """The examples of each class: members (N_C, n_max) of indices into labels, padded with −1,
    and counts (N_C,) = n_c."""
    counts = torch.bincount(labels, minlength=n_classes or 0)
    order = torch.argsort(labels, stable=True)
    rank = (
        torch.arange(labels.numel(), device=labels.device)
        - (torch.cumsum(counts, 0) - counts)[labels[order]]
    )
    members = torch.full((counts.numel(), int(counts.max())), -1, device=labels.device)
    members[labels[order], rank] = order
    return members, counts


def _task_terms(
    features: Tensor, labels: Tensor, rows: Tensor, tasks: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-example cross-entropy and correctness in every task, over the examples of its classes only.

    rows: (..., T, m, d) classifier rows per task. The examples of task t are gathered as m blocks of
    n_max slots (class by class, padded). Returns ce (..., T, m·n_max), correct (..., T, m·n_max) and
    weight (T, m·n_max) = 1/(m · n_c) on real examples, 0 on padding.
    """
    members, counts = class_members(labels, int(tasks.max()) + 1)
    if not bool((counts[tasks] > 0).all()):
        raise ValueError(
            "every class of the tasks must have at least one example in labels"
        )
    index = members[tasks]  # (T, m, n_max)
    weight = (
        (index >= 0).to(features.dtype) / (tasks.shape[1] * counts[tasks].unsqueeze(-1))
    ).flatten(1)
    gathered = features[..., index.clamp_min(0).flatten(1), :]  # (..., T, m·n_max, d)
    logits = torch.einsum("...tkd,...tmd->...tkm", gathered, rows)
    position = torch.arange(tasks.shape[1], device=tasks.device).repeat_interleave(
        index.shape[-1]
    )
    chosen = logits[..., torch.arange(position.numel(), device=tasks.device), position]
    ce = torch.logsumexp(logits, -1) - chosen
    correct = (logits.argmax(-1) == position).to(features.dtype)
    return ce, correct, weight


def task_loss_and_accuracy(
    features: Tensor,
    labels: Tensor,
    classifier: Tensor,
    tasks: Tensor,
    class_probs: Tensor,
) -> tuple[Tensor, Tensor]:
    """Average loss and accuracy over the tasks (weighted by P(T)) of linear classifiers.

    Args:
        features: (..., n, d); labels: (n,); tasks: (T, m); class_probs: ρ (N_C,).
        classifier: (..., N_C, d) one row per class (rows of T gathered, e.g. the means µ),
            or (..., T, m, d) rows fitted per task.
    Returns: loss (...), accuracy (...).
    """
    _check_features(features, labels)
    if classifier.ndim >= 3 and classifier.shape[-3:-1] == tasks.shape:
        rows = classifier
    elif classifier.shape[-2] == class_probs.numel():
        rows = classifier[..., tasks, :]
    else:
        raise ValueError(
            f"classifier must have shape (..., N_C, d) or (..., T, m, d) with (T, m) = "
            f"{tuple(tasks.shape)}, got {tuple(classifier.shape)}"
        )
    p_task = task_probabilities(tasks, class_probs).to(features.dtype)
    ce, correct, weight = _task_terms(features, labels, rows, tasks)
    return ((ce * weight).sum(-1) * p_task).sum(-1), (
        (correct * weight).sum(-1) * p_task
    ).sum(-1)


def fit_linear_classifiers(
    features: Tensor,
    labels: Tensor,
    tasks: Tensor,
    *,
    max_iter: int = 500,
    tolerance: float = 1e-6,
) -> Tensor:
    """Fit, for every task, the unregularised multinomial logistic regression (no bias) to convergence.

    Minimises each task's weighted cross-entropy (see module docstring) with L-BFGS (strong Wolfe
    line search) from zero, all tasks and leading dimensions together, until the largest gradient
    entry is below ``tolerance`` or ``max_iter`` iterations. The fit runs in float32 and the rows are
    returned in the features' dtype: any W's loss bounds the infimum from above, so a float64 caller
    still evaluates an exact upper estimate. For separable tasks the infimum 0 is not attained; the
    loss reached is then an upper estimate of it. features (..., n, d) → rows (..., T, m, d).
    """
    _check_features(features, labels)
    if max_iter < 1 or not tolerance > 0:
        raise ValueError(
            f"need max_iter ≥ 1 and tolerance > 0, got {max_iter}, {tolerance}"
        )
    dtype = features.dtype
    features = features.detach().float()
    rows = torch.zeros(
        *features.shape[:-2],
        *tasks.shape,
        features.shape[-1],
        dtype=features.dtype,
        device=features.device,
        requires_grad=True,
    )
    optimizer = torch.optim.LBFGS(
        [rows],
        lr=1,
        max_iter=max_iter,
        tolerance_grad=tolerance,
        tolerance_change=1e-12,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure() -> Tensor:
        optimizer.zero_grad()
        ce, _, weight = _task_terms(features, labels, rows, tasks)
        loss = (ce * weight).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    return rows.detach().to(dtype)


def _evaluate(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None,
    eval_labels: Tensor | None,
    task_size: int,
    class_probs: Tensor | None,
    classifier_of,
) -> dict[str, Tensor]:
    if (eval_features is None) != (eval_labels is None):
        raise ValueError("give both eval_features and eval_labels, or neither")
    if eval_features is None:
        eval_features, eval_labels = train_features, train_labels
    _check_features(train_features, train_labels, "train_features")
    _check_features(eval_features, eval_labels, "eval_features")
    n_classes = int(max(train_labels.max(), eval_labels.max())) + 1
    if class_probs is None:
        class_probs = class_frequencies(eval_labels, n_classes)
    tasks = all_tasks(n_classes, task_size, train_features.device)
    loss, accuracy = task_loss_and_accuracy(
        eval_features,
        eval_labels,
        classifier_of(tasks, n_classes),
        tasks,
        class_probs.to(train_features.device),
    )
    return {"loss": loss, "accuracy": accuracy}


def mean_classifier(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None = None,
    eval_labels: Tensor | None = None,
    *,
    task_size: int = 2,
    class_probs: Tensor | None = None,
) -> dict[str, Tensor]:
    """The mean classifier W^µ (rows µ_c from the training features), evaluated on AVG-``task_size``.

    L^µ_sup(f) = E_T E_{c∈T} E_{x~D_c} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c, and its accuracy.
    Evaluated on (eval_features, eval_labels), by default the training data (the population
    quantity when the data is the distribution). ρ defaults to the evaluation labels' frequencies.
    Returns {"loss": (...), "accuracy": (...)}.
    """
    return _evaluate(
        train_features,
        train_labels,
        eval_features,
        eval_labels,
        task_size,
        class_probs,
        lambda tasks, n_classes: class_means(train_features, train_labels, n_classes),
    )


def linear_probe(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None = None,
    eval_labels: Tensor | None = None,
    *,
    task_size: int = 2,
    class_probs: Tensor | None = None,
    max_iter: int = 500,
) -> dict[str, Tensor]:
    """The best linear classifier of every task, fitted on the training features (see
    :func:`fit_linear_classifiers`) and evaluated like :func:`mean_classifier`.

    Evaluated on the training data itself this is L_sup(f) = E_T inf_W L_sup(f, T, W).
    """
    return _evaluate(
        train_features,
        train_labels,
        eval_features,
        eval_labels,
        task_size,
        class_probs,
        lambda tasks, n_classes: fit_linear_classifiers(
            train_features, train_labels, tasks, max_iter=max_iter
        ),
    )


def knn_accuracy(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor,
    eval_labels: Tensor,
    *,
    k: int = 5,
    block: int = 1024,
) -> Tensor:
    """k-nearest-neighbour accuracy with cosine similarity and majority vote → (...,).

    Each evaluation point gets the most frequent label among its ``k`` most cosine-similar training
    points; ties go to the class whose members rank nearer (votes weighted 1 + 10⁻³·(k − rank)/k).
    Features (..., n, d) with leading batch dimensions (e.g. seeds); evaluated in blocks of ``block``
    evaluation points to bound memory.
    """
    _check_features(train_features, train_labels, "train_features")
    _check_features(eval_features, eval_labels, "eval_features")
    if (
        isinstance(k, bool)
        or not isinstance(k, int)
        or not 1 <= k <= train_labels.numel()
    ):
        raise ValueError(f"k must be an int in 1..{train_labels.numel()}, got {k!r}")
    n_classes = int(max(train_labels.max(), eval_labels.max())) + 1
    train_n = torch.nn.functional.normalize(train_features, dim=-1, eps=1e-12)
    eval_n = torch.nn.functional.normalize(eval_features, dim=-1, eps=1e-12)
    weights = (
        1
        + 1e-3
        * (k - torch.arange(k, device=train_features.device, dtype=train_n.dtype))
        / k
    )
    correct = []
    for start in range(0, eval_labels.numel(), block):
        sims = eval_n[..., start : start + block, :] @ train_n.transpose(
            -2, -1
        )  # (..., b, n)
        nearest = sims.topk(k, dim=-1).indices  # (..., b, k)
        votes = torch.nn.functional.one_hot(train_labels[nearest], n_classes).to(
            train_n.dtype
        )
        predicted = (votes * weights[:, None]).sum(-2).argmax(-1)
        correct.append(
            (predicted == eval_labels[start : start + block]).to(train_n.dtype)
        )
    return torch.cat(correct, -1).mean(-1)
