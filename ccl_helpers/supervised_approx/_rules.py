"""The argument rules shared by Chapter 5's functions.

Images are read once per call (finite entries: an evaluation, not a training step);
labels are an integer vector with one class per example of another argument. Tables
are :class:`~ccl_helpers.checks.Frame`."""

from __future__ import annotations

import torch

from ..checks import (
    BadValue,
    Estimate,
    Labels,
    Rule,
    TensorOf,
    check_labels,
    check_tensor,
)


def finite_images(min_ndim: int = 3, min_size: int = 0) -> TensorOf:
    """A floating tensor (n, C, H, W) (≥ ``min_ndim`` dimensions) with finite
    entries and n ≥ ``min_size``."""
    return TensorOf(min_ndim=min_ndim, floating=True, finite=True, min_size=min_size)


def augmented_views(*views: tuple[str, str, int]) -> Estimate:
    """The memory of a call's augmented views: for each (count, images, extra) of
    ``views``, ``count + extra`` augmented copies of the argument ``images`` (n, C, H,
    W), its bytes each."""

    def views_bytes(arguments: dict) -> int:
        return sum(
            (arguments[count] + extra) * arguments[images].nbytes
            for count, images, extra in views
        )

    return Estimate(
        "supervised_approx's augmented views",
        tuple(count for count, _, _ in views),
        views_bytes,
    )


class LabelsOf(Labels):
    """An integer vector of classes ≥ 0 with one entry per example of the argument
    ``like`` = (name, dim): as many as its size along ``dim`` (:func:`check_labels`;
    reads the values)."""

    def __init__(self, like: tuple[str, int]):
        super().__init__()
        self.like = like

    def check(self, name, value, arguments):
        check_labels(name, value)
        reference, dim = self.like
        n = arguments[reference].shape[dim]
        if value.numel() != n:
            raise ValueError(
                f"{name} must hold one label per example of {reference}, n = {n} "
                f"(shape {tuple(arguments[reference].shape)}), got {value.numel()}"
            )
        return value

    def bad_values(self, valid):
        bad = super().bad_values(valid)
        if hasattr(valid, "shape") and valid.numel():
            bad.append(
                BadValue(
                    f"one label fewer than {self.like[0]}", valid[:-1], self.like[:1]
                )
            )
        return bad


def check_code(name: str, value, kinds: tuple[str, ...]):
    """``value`` if it is a 0-dim integer tensor in 0..len(kinds)−1, the code of
    ``kinds[value]``; else ``ValueError`` naming ``name``, the code and the known ones.
    The value is read (one device synchronisation) except inside a ``torch.func``
    transform (``vmap``, ``grad``): there the codes were checked where the batch was
    built (:func:`~ccl_helpers.supervised_approx.run_batches`)."""
    check_tensor(name, value, ndim=0, integer=True)
    if not torch._C._functorch.is_functorch_wrapped_tensor(value):
        code = int(value)
        if not 0 <= code < len(kinds):
            known = ", ".join(f"{i} ({kind})" for i, kind in enumerate(kinds))
            raise ValueError(f"{name} must be one of the codes {known}, got {code}")
    return value


class Code(Rule):
    """A 0-dim integer tensor, the code of one of ``kinds`` (:func:`check_code`): read
    outside ``torch.func`` transforms only."""

    def __init__(self, kinds):
        self.kinds = tuple(kinds)

    def check(self, name, value, arguments):
        return check_code(name, value, self.kinds)

    def bad_values(self, valid):
        return [
            BadValue("not a tensor", 0),
            BadValue("floating tensor", torch.tensor(0.0)),
            BadValue("vector", torch.zeros(1, dtype=torch.long)),
            BadValue("negative code", torch.tensor(-1)),
            BadValue("unknown code", torch.tensor(len(self.kinds))),
        ]
