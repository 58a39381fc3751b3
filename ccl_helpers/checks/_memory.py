"""The memory limit: the most bytes one call may plan, and the estimates checked on it.

A size argument (a number of seeds, a batch size, a width, a number of samples, the rows
of an O(n²) computation) decides how much memory a call allocates, or how long it runs.
An :class:`Estimate` declared next to those parameters gives the bytes from the call's
arguments alone (sizes, shapes, dtypes: no tensor is read, nothing is allocated), and
the call raises a ``ValueError`` naming the arguments and the bytes when they exceed
:func:`memory_limit`, before anything is allocated."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence

import torch

MEMORY_LIMIT_VARIABLE = "CCL_MEMORY_LIMIT"
"""The environment variable that sets the memory limit (:func:`memory_limit`)."""

DEFAULT_MEMORY_LIMIT = 256 * 2**30
"""256 GiB (275 GB): the default of :func:`memory_limit`."""

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}


def memory_limit() -> float:
    """The most bytes one call may plan to allocate (or, for an O(n²) computation done
    in blocks, the bytes of the n × n matrix it computes block by block).

    Read from the environment variable ``CCL_MEMORY_LIMIT`` at each call: a number of
    bytes with an optional unit (``"500GB"``, ``"1TiB"``, ``"2e12"``), or ``"inf"`` for
    no limit. Lift it for one shell with ``export CCL_MEMORY_LIMIT=1TB``, or in Python
    with ``os.environ["CCL_MEMORY_LIMIT"] = "1TB"``.

    The default, 256 GiB (275 GB), is generous on purpose: it is above the memory of the
    largest accelerator the book runs on (an H200's 139 GB holds every chapter at the
    paper scale) and above the host memory of the machines it runs on (128 GB), so that
    every call that can run at all passes, at every scale; a size wrong by orders of
    magnitude (10⁹ where 10³ was meant) still fails at once, instead of allocating for
    minutes or hanging before torch reports that it cannot allocate memory."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MEMORY_LIMIT
    match = re.fullmatch(r"([0-9.eE+]+|inf)\s*([a-zA-Z]*)", text)
    unit = match and match.group(2).lower()
    try:
        if match is None or unit not in _UNITS:
            raise ValueError
        limit = float(match.group(1)) * _UNITS[unit]
    except ValueError:
        raise ValueError(
            f"{MEMORY_LIMIT_VARIABLE} must be a number of bytes with an optional unit "
            f"(e.g. 500GB, 1TiB, 2e12, inf), got {text!r}"
        ) from None
    if not limit > 0:
        raise ValueError(f"{MEMORY_LIMIT_VARIABLE} must be > 0, got {text!r}")
    return limit


def format_bytes(n: float) -> str:
    """``n`` bytes in decimal units with 3 significant digits: "400 GB", "8.19 TB"."""
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            if math.isinf(n):
                return "no limit"
            value = n / size
            return f"{value:,.0f} {unit}" if value >= 1000 else f"{value:.3g} {unit}"
    return f"{n:.3g} bytes" if n >= 1000 else f"{int(n)} bytes"


def _shown(value) -> str:
    """An argument as the message shows it: a tensor's shape, else its repr."""
    if isinstance(value, torch.Tensor):
        return f"shape {tuple(value.shape)}"
    return repr(value)


class Estimate:
    """The bytes a call would allocate, from its arguments: declared once, next to the
    parameters ``names`` whose sizes decide them (each with :class:`~.Sized`).

    ``bytes_of(arguments)`` receives the call's arguments (defaults included) after
    their own rules checked them, and returns the bytes (a Python int, exact at any
    size) or ``None`` where it cannot tell; it reads sizes, shapes and dtypes only,
    never a tensor's values. ``what`` says what is allocated ("models.MLP's
    parameters"): the message names it, the arguments and the bytes. ``verb`` is
    "allocate", or "compute" for an O(n²) computation done in blocks, whose bytes
    measure its time."""

    def __init__(
        self,
        what: str,
        names: Sequence[str],
        bytes_of: Callable[[dict], int | None],
        *,
        verb: str = "allocate",
    ):
        self.what, self.names, self.bytes_of = what, tuple(names), bytes_of
        self.verb = verb

    def check(self, arguments: dict) -> None:
        """``ValueError`` naming the arguments and the bytes if the estimate exceeds
        :func:`memory_limit`."""
        nbytes = self.bytes_of(arguments)
        limit = memory_limit()
        if nbytes is None or nbytes <= limit:
            return
        sizes = ", ".join(
            f"{name}={_shown(arguments[name])}"
            for name in self.names
            if name in arguments
        )
        raise ValueError(
            f"{self.what}: {sizes} would {self.verb} {format_bytes(nbytes)}, above the "
            f"memory limit of {format_bytes(limit)}; use a smaller "
            f"{' or '.join(self.names)}, "
            f"or lift the limit with the environment variable {MEMORY_LIMIT_VARIABLE} "
            f"(e.g. {MEMORY_LIMIT_VARIABLE}=1TB)"
        )

    def __repr__(self) -> str:
        return f"Estimate({self.what!r}, {self.names})"
