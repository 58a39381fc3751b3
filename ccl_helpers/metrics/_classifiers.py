"""Classification tasks and the classifiers of a representation on them.

Task weights, class statistics, linear and mean classifiers, the probe, k-NN."""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from .._checks import (
    check_callable,
    check_classes,
    check_count,
    check_device,
    check_feature_dims,
    check_features,
    check_finite,
    check_floating_dtype,
    check_int,
    check_labels,
    check_min_size,
    check_positive,
    check_probabilities,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)
from ..coupon import probability_vector

_MAX_TASKS = 10**6
"""The most tasks :func:`all_tasks` lists. It enumerates the C(N, m) sets in a Python
loop (``itertools.combinations``) into a list of tuples before the tensor: no
allocation fails early on a huge count, which grows combinatorially (C(40, 20) ≈
1.4·10¹¹). Every call of the book and the tests lists at most a few thousand tasks;
an evaluation gathers each task's examples, (T, m·n_max, d), so 10⁶ tasks is already
far beyond what one evaluates."""


def all_tasks(
    n_classes: int, task_size: int, device: torch.device | str = "cpu"
) -> Tensor:
    """Every set of ``task_size`` distinct classes out of ``n_classes``, in
    lexicographic order → (T, m), T = C(N, m) (at most 10⁶ tasks: a larger count is
    refused before any is listed).
    """
    n_classes = check_int("n_classes", n_classes, 2)
    device = check_device("device", device)
    task_size = check_int("task_size", task_size, 2, n_classes)
    smaller = min(task_size, n_classes - task_size)
    # C(N, m) = C(N, k), k = min(m, N − m), grows with k: for k > 32 it exceeds
    # C(66, 33) ≈ 7·10¹⁸, a lower bound that spares a product of up to 2⁴⁹ factors
    check_count(
        "tasks" if smaller <= 32 else "tasks at the least",
        math.comb(n_classes, smaller) if smaller <= 32 else math.comb(66, 33),
        _MAX_TASKS,
        f"n_classes={n_classes}, task_size={task_size}",
    )
    return torch.tensor(
        list(itertools.combinations(range(n_classes), task_size)), device=device
    )


def _check_tasks(tasks: Tensor, n_classes: int | None = None) -> Tensor:
    """tasks (T, m): an integer matrix of classes (:func:`check_classes`)."""
    return check_classes("tasks", tasks, ndim=2, n_classes=n_classes)


def _task_probabilities(tasks: Tensor, class_probs: Tensor) -> Tensor:
    """P(T) ∝ Π_{c∈T} ρ(c) for tasks (T, m) drawn from ρ^m conditioned on distinct
    classes → (T,)."""
    weight = class_probs.to(tasks.device)[tasks].prod(-1)
    return weight / weight.sum()


def class_frequencies(labels: Tensor, n_classes: int | None = None) -> Tensor:
    """Empirical ρ(c) = n_c / n of labels (n,) → (N_C,)."""
    check_labels("labels", labels, n_classes=n_classes)
    return torch.bincount(labels, minlength=n_classes or 0).double() / labels.numel()


def class_means(
    features: Tensor, labels: Tensor, n_classes: int | None = None
) -> Tensor:
    """µ_c = mean of f(x) over the examples of class c: features (..., n, d) → (...,
    N_C, d)."""
    check_features("features", features, labels)
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    check_labels("labels", labels, n_classes=n_classes)
    one_hot = torch.nn.functional.one_hot(labels, n_classes).to(features.dtype)
    counts = one_hot.sum(0)
    if bool((counts == 0).any()):
        raise ValueError("every class must have at least one example in labels")
    return torch.einsum("nc,...nd->...cd", one_hot / counts, features)


def class_members(
    labels: Tensor, n_classes: int | None = None
) -> tuple[Tensor, Tensor]:
    """The examples of each class: members (N_C, n_max) of indices into labels, padded
    with −1, and counts (N_C,) = n_c."""
    check_labels("labels", labels, n_classes=n_classes)
    check_min_size("labels", labels, 1)
    counts = torch.bincount(labels, minlength=n_classes or 0)
    order = torch.argsort(labels, stable=True)
    rank = (
        torch.arange(labels.numel(), device=labels.device)
        - (torch.cumsum(counts, 0) - counts)[labels[order]]
    )
    members = torch.full((counts.numel(), int(counts.max())), -1, device=labels.device)
    members[labels[order], rank] = order
    return members, counts


def labelled_set_sizes(
    features: Tensor, labels: Tensor, n_classes: int | None = None
) -> tuple[int, Tensor]:
    """Validate features (..., n, d) and labels (n,) covering 0..N_C−1 (every class
    present, N_C ≥ 2); return N_C and the counts n_c."""
    if check_features("features", features, labels) == 0:
        raise ValueError("labels must hold at least one example")
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    check_labels("labels", labels, n_classes=n_classes)
    counts = torch.bincount(labels, minlength=n_classes)
    if n_classes < 2 or bool((counts == 0).any()):
        raise ValueError(
            f"every class 0..{n_classes - 1} (N_C ≥ 2) must have at least "
            "one example in labels"
        )
    check_finite("features", features)
    return n_classes, counts


def class_weights(
    class_probs, n_classes: int, counts: Tensor, uniform_default: bool
) -> Tensor:
    """ρ on the labels' device (float64): the given one, else uniform or the label
    frequencies ``counts`` (N_C,), integers ≥ 0."""
    n_classes = check_int("n_classes", n_classes)
    check_tensor("counts", counts, ndim=1, integer=True)
    if counts.numel() != n_classes:
        raise ValueError(
            f"counts must hold n_classes = {n_classes} entries, got {counts.numel()}"
        )
    if bool((counts < 0).any()):
        raise ValueError("counts must be ≥ 0")
    if class_probs is None:
        rho = (
            torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)
            if uniform_default
            else counts.double().cpu() / counts.sum().item()
        )
    else:
        rho = probability_vector(class_probs)
        if rho.numel() != n_classes:
            raise ValueError(
                f"class_probs must have one entry per class ({n_classes}), got "
                f"{rho.numel()}"
            )
    return rho.to(counts.device)


def _check_sample_weight(sample_weight: Tensor, labels: Tensor) -> None:
    """``ValueError`` unless ``sample_weight`` is a floating vector of one finite
    weight > 0 per label."""
    check_tensor("sample_weight", sample_weight, ndim=1, floating=True)
    check_same_shape("sample_weight", sample_weight, "labels", labels)
    check_finite("sample_weight", sample_weight)
    if not bool((sample_weight > 0).all()):
        raise ValueError("sample_weight must be > 0")


def _check_task_classes(labels: Tensor, tasks: Tensor) -> None:
    """``ValueError`` unless every class of the tasks has an example in labels."""
    counts = torch.bincount(labels, minlength=int(tasks.max()) + 1)
    if not bool((counts[tasks] > 0).all()):
        raise ValueError(
            "every class of the tasks must have at least one example in labels"
        )


def _example_weights(labels: Tensor, sample_weight: Tensor | None) -> Tensor:
    """Each example's weight (n,), float64: ``sample_weight`` or 1/n_c."""
    if sample_weight is None:
        return 1.0 / torch.bincount(labels)[labels].double()
    return sample_weight.double()


def _task_examples(
    features: Tensor, members: Tensor, tasks: Tensor, example_weight: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Every task's examples, gathered once for :func:`_task_cross_entropy`.

    members: (N_C, n_max), :func:`class_members` of the labels. The examples of task t
    are gathered as m blocks of n_max slots (class by class, padded). Returns the
    features (..., T, m·n_max, d), each slot's position in its task (m·n_max,) and
    weight (T, m·n_max): the examples' weights w_i (:func:`_example_weights`)
    normalised to sum 1 over each task's examples (1/(m·n_c) for w_i = 1/n_c), 0 on
    padding.
    """
    index = members[tasks].flatten(1)  # (T, m·n_max)
    weight = example_weight[index.clamp_min(0)].masked_fill(index < 0, 0.0)
    weight = (weight / weight.sum(-1, keepdim=True)).to(features.dtype)
    gathered = features[..., index.clamp_min(0), :]  # (..., T, m·n_max, d)
    position = torch.arange(tasks.shape[1], device=tasks.device).repeat_interleave(
        members.shape[-1]
    )
    return gathered, position, weight


def _task_cross_entropy(
    gathered: Tensor, position: Tensor, rows: Tensor
) -> tuple[Tensor, Tensor]:
    """Per-example cross-entropy (..., T, m·n_max) of the rows (..., T, m, d) on the
    examples of :func:`_task_examples`, and the logits (..., T, m·n_max, m)."""
    logits = torch.einsum("...tkd,...tmd->...tkm", gathered, rows)
    chosen = logits[..., torch.arange(position.numel(), device=rows.device), position]
    return torch.logsumexp(logits, -1) - chosen, logits


def task_loss_and_accuracy(
    features: Tensor,
    labels: Tensor,
    classifier: Tensor,
    tasks: Tensor,
    class_probs: Tensor,
    *,
    sample_weight: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Average loss and accuracy over the tasks (weighted by P(T)) of linear
    classifiers.

    Args:
        features: (..., n, d); labels: (n,); tasks: (T, m); class_probs: ρ (N_C,).
        classifier: (..., N_C, d) one row per class (rows of T gathered, e.g. the means
            µ), or (..., T, m, d) rows fitted per task.
        sample_weight: w (n,) > 0, the examples' weights inside a task, normalised over
            its examples; default 1/n_c (each class of a task weighs 1/m).
    Returns: loss (...), accuracy (...).
    """
    check_features("features", features, labels)
    check_tensor("classifier", classifier, min_ndim=2, floating=True)
    check_probabilities("class_probs", class_probs)
    _check_tasks(tasks, class_probs.numel())
    if sample_weight is not None:
        _check_sample_weight(sample_weight, labels)
    if classifier.shape[-1] != features.shape[-1]:
        raise ValueError(
            f"classifier must have the feature dimension d of features (..., n, d) = "
            f"{tuple(features.shape)}, got shape {tuple(classifier.shape)}"
        )
    if classifier.ndim >= 3 and classifier.shape[-3:-1] == tasks.shape:
        rows = classifier
    elif classifier.shape[-2] == class_probs.numel():
        rows = classifier[..., tasks, :]
    else:
        raise ValueError(
            f"classifier must have shape (..., N_C, d) or (..., T, m, d) with (T, m) = "
            f"{tuple(tasks.shape)}, got {tuple(classifier.shape)}"
        )
    _check_task_classes(labels, tasks)
    p_task = _task_probabilities(tasks, class_probs).to(features.dtype)
    members, _ = class_members(labels)
    gathered, position, weight = _task_examples(
        features, members, tasks, _example_weights(labels, sample_weight)
    )
    ce, logits = _task_cross_entropy(gathered, position, rows)
    correct = (logits.argmax(-1) == position).to(features.dtype)
    return ((ce * weight).sum(-1) * p_task).sum(-1), (
        (correct * weight).sum(-1) * p_task
    ).sum(-1)


def fit_linear_classifiers(
    features: Tensor,
    labels: Tensor,
    tasks: Tensor,
    *,
    init: Tensor | None = None,
    sample_weight: Tensor | None = None,
    dtype: torch.dtype = torch.float32,
    max_iter: int = 500,
    tolerance: float = 1e-6,
) -> Tensor:
    """Fit, for every task, the unregularised multinomial logistic regression (no bias).

    Minimises each task's weighted cross-entropy (:func:`task_loss_and_accuracy`)
    with L-BFGS (strong Wolfe line search), all tasks and leading dimensions
    together, until the largest gradient entry is below ``tolerance`` or
    ``max_iter`` iterations. It returns the fitted rows, whatever their loss: they
    are not compared with any other classifier.
    For separable tasks the infimum 0 is not attained; the loss reached is then an upper
    estimate of it. Any W's loss bounds the infimum from above, so a float64 caller
    evaluating the rows in float64 gets an exact upper estimate.

    Args:
        features: f(x), (..., n, d); labels: (n,); tasks: (T, m) classes per task.
        init: the starting rows, broadcastable to (..., T, m, d), e.g. the class means
            ``class_means(...)[..., tasks, :]`` (the mean classifier); default zero.
        sample_weight: w (n,) > 0, as in :func:`task_loss_and_accuracy`.
        dtype: the dtype of the fit (float32 by default; float64 for a tight fit).
        max_iter: L-BFGS iterations ≥ 1; tolerance: > 0.
    Returns: rows (..., T, m, d) in the features' dtype.
    """
    check_features("features", features, labels)
    if init is not None:
        check_tensor("init", init, floating=True)
    check_floating_dtype("dtype", dtype)
    max_iter = check_int("max_iter", max_iter)
    tolerance = check_positive("tolerance", tolerance)
    _check_tasks(tasks)
    shape = (*features.shape[:-2], *tasks.shape, features.shape[-1])
    if init is None:
        init = torch.zeros((), dtype=dtype, device=features.device)
    else:
        try:
            torch.broadcast_shapes(init.shape, shape)
        except RuntimeError:
            raise ValueError(
                f"init must broadcast to (..., T, m, d) = {shape}, "
                f"got {tuple(init.shape)}"
            ) from None
    if sample_weight is not None:
        _check_sample_weight(sample_weight, labels)
    _check_task_classes(labels, tasks)
    fit_features = features.detach().to(dtype)
    example_weight = _example_weights(labels, sample_weight)
    members, _ = class_members(labels)
    rows = (
        init.detach()
        .to(device=features.device, dtype=dtype)
        .expand(shape)
        .clone(memory_format=torch.contiguous_format)
        .requires_grad_(True)
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

    # gathered once, outside the closure that every L-BFGS step runs
    gathered, position, weight = _task_examples(
        fit_features, members, tasks, example_weight
    )

    def closure() -> Tensor:
        optimizer.zero_grad()
        ce, _ = _task_cross_entropy(gathered, position, rows)
        loss = (ce * weight).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    return rows.detach().to(features.dtype)


def _check_train_eval(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None,
    eval_labels: Tensor | None,
) -> None:
    """The checks of a classifier's sets, before fitting: labels of ≥ 1 example each,
    features (..., n, d) of one floating dtype with finite entries and one d, and both
    evaluation arguments or neither."""
    check_labels("train_labels", train_labels)
    check_min_size("train_labels", train_labels, 1)
    if eval_labels is not None:
        check_labels("eval_labels", eval_labels)
        check_min_size("eval_labels", eval_labels, 1)
    check_tensor("train_features", train_features, min_ndim=2, floating=True)
    if eval_features is not None:
        check_tensor("eval_features", eval_features, floating=True)
        check_same_dtype(
            "eval_features", eval_features, "train_features", train_features
        )
    if (eval_features is None) != (eval_labels is None):
        raise ValueError("give both eval_features and eval_labels, or neither")
    check_features("train_features", train_features, train_labels, "train_labels")
    if eval_features is not None:
        check_features("eval_features", eval_features, eval_labels, "eval_labels")
        check_feature_dims(
            "eval_features", eval_features, "train_features", train_features
        )


def _evaluate(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None,
    eval_labels: Tensor | None,
    task_size: int | None,
    class_probs: Tensor | None,
    classifier_of,
) -> dict[str, Tensor]:
    """Loss and accuracy of ``classifier_of(tasks, n_classes)`` over the tasks of
    ``task_size`` classes (None: one task of all the classes), on arguments checked by
    :func:`_check_train_eval`."""
    if eval_features is None:
        eval_features, eval_labels = train_features, train_labels
    n_classes = int(max(train_labels.max(), eval_labels.max())) + 1
    if class_probs is None:
        class_probs = class_frequencies(eval_labels, n_classes)
    task_size = n_classes if task_size is None else task_size
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
    task_size: int | None = None,
    class_probs: Tensor | None = None,
    centre: bool = False,
    normalise: bool = False,
) -> dict[str, Tensor]:
    """The mean classifier W^µ (rows µ_c from the training features), evaluated on
    AVG-``task_size``: by default (``task_size=None``) one task of all the classes, as
    :func:`linear_probe`; ``task_size=2`` gives CURL's average over the binary tasks.

    L^µ_sup(f) = E_T E_{c∈T} E_{x~D_c} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c, and its
    accuracy. Evaluated on (eval_features, eval_labels), by default the training data
    (the population quantity when the data is the distribution). ρ defaults to the
    evaluation labels' frequencies. Two variants (for representations trained with a
    head and a bias): ``centre`` subtracts the training features' mean f̄ from every
    feature first, so the logits are (µ_c − f̄)ᵀ(f(x) − f̄), a bias −(µ_c − f̄)ᵀf̄ per
    class; ``normalise`` scales each row to unit norm, µ_c/‖µ_c‖ (after centring, if
    both). Returns {"loss": (...), "accuracy": (...)}.
    """
    _check_train_eval(train_features, train_labels, eval_features, eval_labels)
    if task_size is not None:
        task_size = check_int("task_size", task_size, 2)
    if centre:
        offset = train_features.mean(-2, keepdim=True)
        train_features = train_features - offset
        if eval_features is not None:
            eval_features = eval_features - offset

    def rows(tasks: Tensor, n_classes: int) -> Tensor:
        means = class_means(train_features, train_labels, n_classes)
        if normalise:
            means = means / means.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        return means

    return _evaluate(
        train_features,
        train_labels,
        eval_features,
        eval_labels,
        task_size,
        class_probs,
        rows,
    )


def linear_probe(
    train_features: Tensor,
    train_labels: Tensor,
    eval_features: Tensor | None = None,
    eval_labels: Tensor | None = None,
    *,
    task_size: int | None = None,
    class_probs: Tensor | None = None,
    max_iter: int = 500,
) -> dict[str, Tensor]:
    """The best linear classifier of every task, fitted on the training features (see
    :func:`fit_linear_classifiers`) and evaluated like :func:`mean_classifier`.

    By default (``task_size=None``) there is one task, of all the classes: the usual
    linear probe. ``task_size=2`` gives CURL's average over the binary tasks; evaluated
    on the training data itself it is L_sup(f) = E_T inf_W L_sup(f, T, W).
    """
    _check_train_eval(train_features, train_labels, eval_features, eval_labels)
    if task_size is not None:
        task_size = check_int("task_size", task_size, 2)
    max_iter = check_int("max_iter", max_iter)
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

    Each evaluation point gets the most frequent label among its ``k`` most
    cosine-similar training points; ties go to the class whose members rank nearer
    (votes weighted 1 + 10⁻³·(k − rank)/k). Features (..., n, d) with leading batch
    dimensions (e.g. seeds); evaluated in blocks of ``block`` evaluation points to bound
    memory.
    """
    for name, labels in (("train_labels", train_labels), ("eval_labels", eval_labels)):
        check_labels(name, labels)
        check_min_size(name, labels, 1)
    check_features("train_features", train_features, train_labels, "train_labels")
    check_features("eval_features", eval_features, eval_labels, "eval_labels")
    check_same_dtype("eval_features", eval_features, "train_features", train_features)
    block = check_int("block", block)
    check_feature_dims("eval_features", eval_features, "train_features", train_features)
    k = check_int("k", k, 1, train_labels.numel())
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


def encode(encoder, images: Tensor, *, chunk_size: int = 1000) -> Tensor:
    """f(x) of ``images`` (n, ...) without gradients, in chunks of ``chunk_size`` images
    (one call on many images through a vmapped stack of models is memory-bound and
    several times slower), concatenated along the sample axis: (..., n, d) for an
    encoder with leading dimensions (a StackedModel gives (S, n, d))."""
    check_callable("encoder", encoder)
    check_tensor("images", images, min_ndim=2, floating=True)
    check_finite("images", images)
    chunk_size = check_int("chunk_size", chunk_size)
    with torch.no_grad():
        return torch.cat(
            [
                encoder(images[start : start + chunk_size])
                for start in range(0, images.shape[0], chunk_size)
            ],
            dim=-2,
        )


def standardise(fit: Tensor, *others: Tensor) -> tuple[Tensor, ...]:
    """(x − μ)/σ for ``fit`` and each of ``others``, with μ, σ the per-dimension mean
    and standard deviation of ``fit`` over its sample axis (features (..., n, d); σ
    clamped at 1e-12): a linear probe on the result does not depend on the features'
    scale."""
    check_tensor("fit", fit, min_ndim=2, floating=True)
    check_finite("fit", fit)
    for i, other in enumerate(others):
        check_tensor(f"others[{i}]", other, min_ndim=2, floating=True)
        if other.shape[:-2] != fit.shape[:-2] or other.shape[-1] != fit.shape[-1]:
            raise ValueError(
                f"others[{i}] must have shape (..., n, {fit.shape[-1]}) with the "
                f"leading dimensions of fit {tuple(fit.shape[:-2])}, got "
                f"{tuple(other.shape)}"
            )
        check_finite(f"others[{i}]", other)
    mean = fit.mean(-2, keepdim=True)
    scale = fit.std(-2, keepdim=True).clamp_min(1e-12)
    return tuple((x - mean) / scale for x in (fit, *others))
