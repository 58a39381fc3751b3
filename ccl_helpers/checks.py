"""Argument checks shared by the whole package: each returns the checked value or raises
``ValueError`` naming the argument and the allowed range."""

from __future__ import annotations

import math
import numbers
import operator


def check_positive(name: str, value, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a finite real number (not a bool) > 0 (≥ 0 with ``allow_zero``); else
    ``ValueError`` naming ``name`` and the allowed range. Shared by every step size, temperature and scale."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
    ):
        raise ValueError(
            f"{name} must be a finite real number {'≥ 0' if allow_zero else '> 0'}, got {value!r}"
        )
    return float(value)


def check_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int if it is an integer (not a bool) in [minimum, maximum]; else ``ValueError``
    naming ``name`` and the allowed range. Shared by the chapter modules' argument checks."""
    allowed = f"{minimum}..{maximum}" if maximum is not None else f"≥ {minimum}"
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise ValueError(
            f"{name} must be an integer {allowed}, got {value!r}"
        ) from None
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {allowed}, got {value}")
    return value
