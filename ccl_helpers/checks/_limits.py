"""The two limits on one call, memory and time, and the estimates checked on them.

A size argument (a number of seeds, a batch size, a width, a number of samples or of
steps, the rows of an O(n²) computation) decides how much memory a call allocates, or
how long it runs. An estimate declared next to those parameters gives the amount from
the call's arguments alone (sizes, shapes, dtypes: no tensor is read, nothing is
allocated), and the call raises a ``ValueError`` naming the arguments and the amount
when it exceeds its limit, before anything is allocated or run:

- :class:`Estimate`, bytes, against :func:`memory_limit` (``CCL_MEMORY_LIMIT``);
- :class:`Duration`, a lower bound on the seconds, against :func:`time_limit`
  (``CCL_TIME_LIMIT``).

Both limits are generous on purpose: every call the book makes, at every scale, passes,
while a size wrong by orders of magnitude fails at once."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence

import torch

MEMORY_LIMIT_VARIABLE = "CCL_MEMORY_LIMIT"
"""The environment variable that sets the memory limit (:func:`memory_limit`)."""

TIME_LIMIT_VARIABLE = "CCL_TIME_LIMIT"
"""The environment variable that sets the time limit (:func:`time_limit`)."""

DEFAULT_MEMORY_LIMIT = 256 * 2**30
"""256 GiB (275 GB): the default of :func:`memory_limit`."""

DEFAULT_TIME_LIMIT = 24 * 3600.0
"""24 hours: the default of :func:`time_limit`."""

SECONDS_PER_STEP = 1e-6
"""A lower bound on the time of one step of an iterative method (a gradient step, an
L-BFGS iteration, an ODE step): each runs at least one tensor or numpy operation, and
none of those takes less than a microsecond on any machine."""

SECONDS_PER_SYMBOLIC_TERM = 1e-6
"""A lower bound on sympy's time per term it builds, expands or differentiates (it
takes 10 to 100 µs)."""

_BYTE_UNITS = {
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

_SECOND_UNITS = {
    "": 1,
    "s": 1,
    "min": 60,
    "h": 3600,
    "d": 86400,
}


def _read_limit(
    variable: str, units: dict, base: str, default: float, examples: str
) -> float:
    """The limit set by the environment variable ``variable``: a number > 0 of ``base``
    units with an optional unit of ``units``, or "inf"; ``default`` where it is unset
    or blank."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    match = re.fullmatch(r"([0-9.eE+]+|inf)\s*([a-zA-Z]*)", text)
    unit = match and match.group(2).lower()
    try:
        limit = float(match.group(1)) * units[unit] if match else math.nan
    except (KeyError, ValueError):
        limit = math.nan
    if not limit > 0:
        raise ValueError(
            f"{variable} must be a number of {base} > 0 with an optional unit "
            f"(e.g. {examples}), or inf, got {text!r}"
        )
    return limit


def memory_limit() -> float:
    """The most bytes one call may plan to allocate (or, for an O(n²) computation done
    in blocks, the bytes of the n × n matrix it computes block by block).

    Read from the environment variable ``CCL_MEMORY_LIMIT`` at each call: a number of
    bytes with an optional unit (``"500GB"``, ``"1TiB"``, ``"2e12"``), or ``"inf"`` for
    no limit. Lift it for one shell with ``export CCL_MEMORY_LIMIT=1TB``, or in Python
    with ``os.environ["CCL_MEMORY_LIMIT"] = "1TB"``.

    The default, 256 GiB (275 GB), is above the memory of the largest accelerator the
    book runs on (an H200's 139 GB holds every chapter at the paper scale) and above the
    host memory of the machines it runs on (128 GB), so that every call that can run at
    all passes, at every scale; a size wrong by orders of magnitude (10⁹ where 10³ was
    meant) still fails at once, instead of allocating for minutes or hanging before
    torch reports that it cannot allocate memory."""
    return _read_limit(
        MEMORY_LIMIT_VARIABLE,
        _BYTE_UNITS,
        "bytes",
        DEFAULT_MEMORY_LIMIT,
        "500GB, 1TiB, 2e12",
    )


def time_limit() -> float:
    """The most seconds one call may plan to run, compared with a *lower bound* on its
    time (:class:`Duration`).

    Read from the environment variable ``CCL_TIME_LIMIT`` at each call: a number of
    seconds with an optional unit (``"90s"``, ``"30min"``, ``"12h"``, ``"7d"``), or
    ``"inf"`` for no limit. Lift it with ``export CCL_TIME_LIMIT=7d``.

    The default, 24 hours, is far above the longest call of the book (a chapter's
    training at the paper scale takes minutes on a GPU); since the estimates are lower
    bounds, a call that fails would run for at least a day on the fastest machine: a
    step count or a size wrong by orders of magnitude, not a long run."""
    return _read_limit(
        TIME_LIMIT_VARIABLE,
        _SECOND_UNITS,
        "seconds",
        DEFAULT_TIME_LIMIT,
        "90s, 30min, 12h, 7d",
    )


def format_bytes(n: float) -> str:
    """``n`` bytes in decimal units with 3 significant digits: "400 GB", "8.19 TB",
    "5.07e+16 PB"."""
    if math.isinf(n):
        return "no limit"
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            value = n / size
            return (
                f"{value:,.0f} {unit}" if 1e3 <= value < 1e6 else f"{value:.3g} {unit}"
            )
    return f"{n:.3g} bytes" if n >= 1000 else f"{int(n)} bytes"


_TIME_UNITS = (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60))


def format_seconds(s: float) -> str:
    """``s`` seconds in the largest unit of which it holds at least two, 3 significant
    digits: "45 s", "24 h", "4.02e+12 years"."""
    if math.isinf(s):
        return "no limit"
    for unit, size in _TIME_UNITS:
        if s >= 2 * size:
            return f"{s / size:.3g} {unit}"
    return f"{s:.3g} s"


def _shown(value) -> str:
    """An argument as the message shows it: a tensor's shape, a long sequence's length,
    else its repr."""
    if isinstance(value, torch.Tensor):
        return f"shape {tuple(value.shape)}"
    if isinstance(value, list | tuple | range) and len(value) > 8:
        return f"{len(value):,} entries"
    return repr(value)


def check_planned(
    what: str,
    sizes: str,
    amount: float,
    names: Sequence[str],
    *,
    seconds: bool = False,
    verb: str | None = None,
) -> None:
    """``ValueError`` if ``amount`` (bytes, or seconds where ``seconds``) exceeds the
    memory (or time) limit: the message says ``what`` is planned, the ``sizes`` that
    decide it ("n_steps=10**12"), the amount, the limit, and how to lift it.

    For checks in a body, where the amount depends on more than the declared sizes."""
    if seconds:
        limit, shown, verb = time_limit(), format_seconds, verb or "run for at least"
        kind, variable, example = "time limit", TIME_LIMIT_VARIABLE, "7d"
    else:
        limit, shown, verb = memory_limit(), format_bytes, verb or "allocate"
        kind, variable, example = "memory limit", MEMORY_LIMIT_VARIABLE, "1TB"
    if amount <= limit:
        return
    raise ValueError(
        f"{what}: {sizes} would {verb} {shown(amount)}, above the {kind} of "
        f"{shown(limit)}; reduce {' or '.join(names)}, or lift the limit with "
        f"the environment variable {variable} (e.g. {variable}={example})"
    )


class Estimate:
    """The bytes a call would allocate, from its arguments: declared once, next to the
    parameters ``names`` whose sizes decide them (each with :class:`~.Sized`).

    ``bytes_of(arguments)`` receives the call's arguments (defaults included) after
    their own rules checked them, and returns the bytes (a Python int, exact at any
    size) or ``None`` where it cannot tell; it reads sizes, shapes and dtypes only,
    never a tensor's values. ``what`` says what is allocated ("models.MLP's
    parameters"): the message names it, the arguments and the bytes. ``verb`` is
    "allocate", or "compute" for an O(n²) computation done in blocks, whose bytes
    measure its time. ``early`` checks it before the arguments' own rules, where a rule
    takes time in proportion to the size (a list of seeds, each checked):
    ``bytes_of`` then receives the arguments unchecked and returns ``None`` where it
    cannot read them."""

    seconds = False
    """Whether the amount is a time (:class:`Duration`) rather than bytes."""

    def __init__(
        self,
        what: str,
        names: Sequence[str],
        bytes_of: Callable[[dict], int | None],
        *,
        verb: str | None = None,
        early: bool = False,
    ):
        self.what, self.names, self.amount_of = what, tuple(names), bytes_of
        self.verb, self.early = verb, early

    def check(self, arguments: dict) -> None:
        """``ValueError`` naming the arguments and the amount if it exceeds its limit
        (:func:`check_planned`)."""
        amount = self.amount_of(arguments)
        if amount is None:
            return
        sizes = ", ".join(
            f"{name}={_shown(arguments[name])}"
            for name in self.names
            if name in arguments
        )
        check_planned(
            self.what, sizes, amount, self.names, seconds=self.seconds, verb=self.verb
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.what!r}, {self.names})"


class Duration(Estimate):
    """A lower bound on the seconds a call would run, from its arguments: declared like
    :class:`Estimate`, checked against :func:`time_limit`.

    ``seconds_of(arguments)`` counts the work the sizes decide (steps, pairs, terms)
    times a floor on the time of one unit that no machine beats (e.g.
    :data:`SECONDS_PER_STEP`), so that a call that fails would run at least that long
    anywhere."""

    seconds = True

    def __init__(
        self,
        what: str,
        names: Sequence[str],
        seconds_of: Callable[[dict], float | None],
    ):
        super().__init__(what, names, seconds_of)
