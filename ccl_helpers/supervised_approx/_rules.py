"""The argument rules shared by Chapter 5's functions.

Images are read once per call (finite entries: an evaluation, not a training step);
labels are an integer vector with one class per example of another argument. Tables
are :class:`~ccl_helpers.checks.Frame`."""

from __future__ import annotations

from ..checks import (
    BadValue,
    Labels,
    TensorOf,
    check_labels,
)


def finite_images(min_ndim: int = 3) -> TensorOf:
    """A floating tensor (n, C, H, W) (≥ ``min_ndim`` dimensions) with finite
    entries."""
    return TensorOf(min_ndim=min_ndim, floating=True, finite=True)


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
