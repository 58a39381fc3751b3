"""Subsets of a labelled data set, as sorted index tensors.

They are class-balanced, with given class counts, long-tailed, or restricted to given
classes. Random ones are functions of the ``torch.Generator`` they are given (on the
labels' device)."""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor

from .._checks import check_int, check_labels


def _check_labels(labels) -> None:
    """ValueError unless ``labels`` is an int64 vector of classes ≥ 0, not empty: the
    ``labels`` of every subset."""
    check_labels("labels", labels)
    if not labels.numel():
        raise ValueError("labels must hold at least 1 example(s), got 0")


def _subset_with_counts(
    labels: Tensor, counts: Tensor, generator: torch.Generator
) -> Tensor:
    """Indices (Σ_c counts[c],) of a uniformly random subset with ``counts[c]`` examples
    of class c, drawn without replacement, sorted; ``counts`` (C,), integers from 0
    (the class left out) to the class sizes, one per class 0..max(labels) at least, on
    any device (trusted: built by the callers)."""
    counts = torch.as_tensor(counts, device=labels.device)
    available = torch.bincount(labels, minlength=counts.numel())
    keys = torch.rand(labels.shape, generator=generator, device=labels.device)
    by_key = keys.argsort()
    order = by_key[
        torch.argsort(labels[by_key], stable=True)
    ]  # by class, random within
    starts = torch.cumsum(available, 0) - available
    rank = torch.arange(labels.numel(), device=labels.device) - starts[labels[order]]
    wanted = torch.cat([counts, counts.new_zeros(available.numel() - counts.numel())])
    return order[rank < wanted[labels[order]]].sort().values


def balanced_subset(
    labels: Tensor, generator: torch.Generator, per_class: int | None = None
) -> Tensor:
    """Indices of a class-balanced subset: ``per_class`` (default: the smallest class
    count) random examples of every class present in ``labels`` (n,), sorted."""
    _check_labels(labels)
    counts = torch.bincount(labels)
    smallest = int(counts[counts > 0].min())
    per_class = (
        smallest
        if per_class is None
        else check_int("per_class", per_class, 1, smallest)
    )
    return _subset_with_counts(labels, torch.where(counts > 0, per_class, 0), generator)


def long_tailed_subset(
    labels: Tensor,
    imbalance_ratio: float,
    total: int,
    generator: torch.Generator,
) -> Tensor:
    """Indices (``total``,) of a random long-tailed subset, sorted: class c of the C
    classes present gets n_c ∝ ρ^{−c/(C−1)} examples, ρ = ``imbalance_ratio`` ≥ 1 =
    n_0 / n_{C−1} (up to rounding), Σ_c n_c = ``total`` exactly (largest remainders).
    Classes are ranked by label; each must hold its n_c examples."""
    _check_labels(labels)
    available = torch.bincount(labels)
    present = torch.nonzero(available).flatten()
    if present.numel() < 2:
        raise ValueError("labels must hold at least 2 classes")
    if (
        isinstance(imbalance_ratio, bool)
        or not isinstance(imbalance_ratio, numbers.Real)
        or not math.isfinite(imbalance_ratio)
        or imbalance_ratio < 1
    ):
        raise ValueError(
            f"imbalance_ratio must be a finite real number ≥ 1, got {imbalance_ratio!r}"
        )
    total = check_int("total", total, present.numel(), labels.numel())
    rank = torch.arange(present.numel(), dtype=torch.float64)
    weights = float(imbalance_ratio) ** (-rank / (present.numel() - 1))
    exact = total * weights / weights.sum()
    counts = exact.floor().long()
    remainder = total - int(counts.sum())
    counts[torch.argsort(exact - counts, descending=True)[:remainder]] += 1
    wanted = torch.zeros_like(available)
    wanted[present] = counts.to(available.device)
    if bool((wanted > available).any()):
        raise ValueError(
            f"total={total} with imbalance_ratio={imbalance_ratio} asks "
            f"{wanted.tolist()} examples per class, more than the class sizes "
            f"{available.tolist()}; lower total"
        )
    return _subset_with_counts(labels, wanted, generator)


def class_subset(
    labels: Tensor, classes: list[int] | Tensor, relabel: bool = False
) -> tuple[Tensor, Tensor]:
    """The examples of the given classes (e.g. held out for unseen-class experiments)
    → (indices (m,) sorted, their labels (m,)); with ``relabel`` the labels become
    0..k−1 in the order of ``classes`` (k distinct classes, each present in
    ``labels``)."""
    _check_labels(labels)
    classes = torch.as_tensor(classes, device=labels.device)
    if (
        classes.ndim != 1
        or classes.numel() == 0
        or classes.is_floating_point()
        or classes.unique().numel() != classes.numel()
        or int(classes.min()) < 0
    ):
        raise ValueError(
            f"classes must be a non-empty list of distinct integers ≥ 0, got "
            f"{classes.tolist()}"
        )
    match = labels[:, None] == classes[None, :]  # (n, k)
    missing = classes[~match.any(0)]
    if missing.numel():
        raise ValueError(
            f"classes must be present in labels (classes {labels.unique().tolist()}), "
            f"got {missing.tolist()} absent"
        )
    index = torch.nonzero(match.any(1)).flatten()
    new = match[index].int().argmax(1) if relabel else labels[index]
    return index, new.to(labels.dtype)
