"""Rules: the constraint on one argument, and the values it must reject.

A rule checks a value and lists the values it must reject, each with the argument
names the error message must show."""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import torch

from ._devices import check_available, lacking_device
from ._limits import SECONDS_PER_STEP, Estimate, check_planned
from ._values import (
    check_callable,
    check_choice,
    check_device,
    check_finite,
    check_floating_dtype,
    check_frame,
    check_instance,
    check_int,
    check_labels,
    check_min_size,
    check_positive,
    check_positive_or_scalar_tensor,
    check_probabilities,
    check_same_dtype,
    check_same_shape,
    check_tensor,
)

UNKNOWN = "bogus"
"""The string no choice, device or number accepts."""


class BadValue(NamedTuple):
    """A value a rule must reject: ``label`` says what is wrong with ``value``;
    ``also`` lists the other arguments the message must name (the reference of a
    shape mismatch)."""

    label: str
    value: Any
    also: tuple[str, ...] = ()


class Rule:
    """The constraint on one argument.

    :meth:`check` returns the value the function receives (the argument itself, or its
    converted form where :attr:`converts`) or raises ``ValueError`` naming the argument
    and what is allowed; :meth:`bad_values` lists the values it must reject, given a
    valid value of the argument (or ``None`` where the call leaves it at its
    default). A new kind of bad input (a size too large to allocate, an empty set, a
    negative index) is one more subclass, or one more entry of a ``bad_values``.
    """

    converts = False
    """Whether the checked (converted) value replaces the argument: integers pass as
    ``int`` (``operator.index``), as ``check_int`` returns them."""

    reads_values = False
    """Whether the check reads a tensor's values (a device synchronisation): never on a
    per-step hot path."""

    estimate: Estimate | None = None
    """The call's memory estimate that this argument's size enters (:class:`Sized`),
    checked once all the arguments are."""

    def check(self, name: str, value, arguments: dict):
        """The checked value, or ``ValueError`` naming ``name``; ``arguments`` are the
        call's other arguments (for a rule relating two of them)."""
        raise NotImplementedError

    def bad_values(self, valid) -> list[BadValue]:
        """The values this rule must reject, derived from the ``valid`` one."""
        return []

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Positive(Rule):
    """A finite real number (not a bool) > 0, or ≥ 0 with ``allow_zero``: a step size,
    a temperature, a scale (:func:`check_positive`). ``convert`` passes it on as a
    ``float``."""

    def __init__(self, *, allow_zero: bool = False, convert: bool = False):
        self.allow_zero, self.converts = allow_zero, convert

    def check(self, name, value, arguments):
        checked = check_positive(name, value, self.allow_zero)
        return checked if self.converts else value

    def bad_values(self, valid):
        bad = [
            BadValue("nan", math.nan),
            BadValue("inf", math.inf),
            BadValue("negative", -1.0),
            BadValue("negative tensor", torch.tensor(-1.0)),
            BadValue("string", UNKNOWN),
        ]
        if not self.allow_zero:
            bad += [BadValue("zero", 0.0), BadValue("zero tensor", torch.tensor(0.0))]
        return bad


class PositiveOrScalarTensor(Positive):
    """A finite real > 0 or a 0-dim floating tensor > 0 (a hyperparameter that may be
    vmapped over; :func:`check_positive_or_scalar_tensor`)."""

    def __init__(self):
        super().__init__()

    def check(self, name, value, arguments):
        return check_positive_or_scalar_tensor(name, value)

    def bad_values(self, valid):
        return [
            *(bad for bad in super().bad_values(valid) if "tensor" not in bad.label),
            BadValue("negative tensor", torch.tensor(-1.0)),
            BadValue("integer tensor", torch.tensor(1)),
            BadValue("vector", torch.ones(2)),
        ]


class Int(Rule):
    """An integer (not a bool) from ``minimum`` to ``maximum`` inclusive (≥ ``minimum``
    without ``maximum``): a count, a size, an index (:func:`check_int`); passed on as
    ``int``."""

    converts = True

    def __init__(self, minimum: int = 1, maximum: int | None = None):
        self.minimum, self.maximum = minimum, maximum

    def check(self, name, value, arguments):
        return check_int(name, value, self.minimum, self.maximum)

    def bad_values(self, valid):
        bad = [
            BadValue("float", 2.5),
            BadValue("bool", True),
            BadValue("below the minimum", self.minimum - 1),
        ]
        if self.minimum > 0:
            bad.append(BadValue("negative", -1))
        if self.maximum is not None:
            bad.append(BadValue("above the maximum", self.maximum + 1))
        return bad


class Steps(Int):
    """A number of steps of an iterative method (gradient steps, L-BFGS iterations, ODE
    steps) from ``minimum`` on: an :class:`Int` whose time, at least
    :data:`~ccl_helpers.checks.SECONDS_PER_STEP` a step, must stay under
    :func:`~ccl_helpers.checks.time_limit` (a huge count fails at once, instead of
    running behind a progress bar for ever)."""

    def check(self, name, value, arguments):
        steps = check_int(name, value, self.minimum, self.maximum)
        check_planned(
            "the steps",
            f"{name}={steps:,}",
            steps * SECONDS_PER_STEP,
            (name,),
            seconds=True,
        )
        return steps

    def bad_values(self, valid):
        return [*super().bad_values(valid), BadValue("huge size", HUGE)]


class Choice(Rule):
    """One of ``choices`` (:func:`check_choice`); the message lists them."""

    def __init__(self, choices):
        self.choices = tuple(choices)

    def check(self, name, value, arguments):
        return check_choice(name, value, self.choices)

    def bad_values(self, valid):
        return [BadValue("unknown choice", UNKNOWN)]


class Optional(Rule):
    """``None`` (the default's meaning, said in the docstring) or what ``rule``
    accepts."""

    def __init__(self, rule: Rule):
        self.rule = rule
        self.converts, self.reads_values = rule.converts, rule.reads_values
        self.estimate = rule.estimate

    def check(self, name, value, arguments):
        return None if value is None else self.rule.check(name, value, arguments)

    def bad_values(self, valid):
        return self.rule.bad_values(valid)


def _leading_entry(tensor: torch.Tensor, ndim: int) -> torch.Tensor:
    """The first entry of ``tensor``'s leading dimensions, with ``ndim`` dimensions
    left."""
    return tensor[(0,) * (tensor.ndim - ndim)]


class TensorOf(Rule):
    """A tensor with ``ndim`` dimensions (or ≥ ``min_ndim``), of a floating dtype with
    ``floating``, of an integer one with ``integer`` (:func:`check_tensor`: metadata
    only); with ``finite``, no NaN or inf entry (:func:`check_finite`: reads the values,
    never on a hot path). ``like`` relates it to another argument: its name (the same
    shape, :func:`check_same_shape`) or (name, dim) (the same size along ``dim``).
    ``same_dtype_as`` names the argument whose dtype it must share (no promotion).
    ``min_size`` is the fewest examples it may hold along ``sample_dim``, its sample
    axis (1: not an empty set)."""

    def __init__(
        self,
        *,
        ndim: int | None = None,
        min_ndim: int = 0,
        floating: bool = False,
        integer: bool = False,
        finite: bool = False,
        like: str | tuple[str, int] | None = None,
        same_dtype_as: str | None = None,
        min_size: int = 0,
        sample_dim: int = 0,
    ):
        self.ndim, self.min_ndim = ndim, min_ndim
        self.floating, self.integer = floating, integer
        self.reads_values = self.finite = finite
        self.like, self.same_dtype_as = like, same_dtype_as
        self.min_size, self.sample_dim = min_size, sample_dim

    def check(self, name, value, arguments):
        check_tensor(
            name,
            value,
            ndim=self.ndim,
            min_ndim=self.min_ndim,
            floating=self.floating,
            integer=self.integer,
        )
        if self.same_dtype_as is not None and isinstance(
            arguments.get(self.same_dtype_as), torch.Tensor
        ):
            check_same_dtype(
                name, value, self.same_dtype_as, arguments[self.same_dtype_as]
            )
        if self.min_size:
            check_min_size(name, value, self.min_size, self.sample_dim)
        if isinstance(self.like, str) and self.like in arguments:
            check_same_shape(name, value, self.like, arguments[self.like])
        elif self.like is not None and self.like[0] in arguments:
            reference_name, dim = self.like
            reference = arguments[reference_name]
            if value.shape[dim] != reference.shape[dim]:
                raise ValueError(
                    f"{name} must have the size of {reference_name} along dimension "
                    f"{dim}, {reference.shape[dim]} (shape {tuple(reference.shape)}), "
                    f"got shape {tuple(value.shape)}"
                )
        if self.finite:
            check_finite(name, value)
        return value

    def bad_values(self, valid):
        if not isinstance(valid, torch.Tensor):
            return [BadValue("not a tensor", UNKNOWN)]
        bad = [BadValue("not a tensor", valid.tolist())]
        if self.floating:
            bad.append(BadValue("integer tensor", valid.round().long()))
        if self.integer:
            bad.append(BadValue("floating tensor", valid.double()))
        if self.ndim is not None:
            bad.append(BadValue("one more dimension", valid.unsqueeze(0)))
        elif self.min_ndim > 0 and valid.numel():
            bad.append(
                BadValue("too few dimensions", _leading_entry(valid, self.min_ndim - 1))
            )
        if self.same_dtype_as is not None and valid.is_floating_point():
            other = torch.float32 if valid.dtype == torch.float64 else torch.float64
            bad.append(BadValue("other dtype", valid.to(other), (self.same_dtype_as,)))
        if self.min_size and valid.ndim:
            bad.append(
                BadValue(
                    "empty set" if self.min_size == 1 else "too few examples",
                    valid.narrow(self.sample_dim, 0, self.min_size - 1),
                )
            )
        if self.finite and self.floating and valid.numel():
            nan = valid.clone()
            nan.view(-1)[0] = math.nan
            bad.append(BadValue("nan entry", nan))
        if self.like is not None and valid.ndim:
            reference, dim = (
                (self.like, -1) if isinstance(self.like, str) else self.like
            )
            if valid.shape[dim]:
                bad.append(
                    BadValue(
                        f"shape mismatch with {reference}",
                        valid.narrow(dim, 0, valid.shape[dim] - 1),
                        (reference,),
                    )
                )
        return bad


class Probabilities(Rule):
    """A floating vector ρ of ≥ ``min_size`` finite entries ≥ 0 (> 0 with
    ``positive``) summing to 1 (:func:`check_probabilities`; reads the values)."""

    reads_values = True

    def __init__(self, *, positive: bool = False, min_size: int = 2):
        self.positive, self.min_size = positive, min_size

    def check(self, name, value, arguments):
        return check_probabilities(
            name, value, positive=self.positive, min_size=self.min_size
        )

    def bad_values(self, valid):
        if not isinstance(valid, torch.Tensor):
            return [BadValue("not a tensor", UNKNOWN)]
        nan, negative = valid.clone(), valid.clone()
        nan[0], negative[0] = math.nan, -valid[0]
        return [
            BadValue("integer tensor", valid.round().long()),
            BadValue("matrix", valid.unsqueeze(0)),
            BadValue("too few entries", valid[: self.min_size - 1]),
            BadValue("nan entry", nan),
            BadValue("negative entry", negative),
            BadValue("sum ≠ 1", 2 * valid),
        ]


class FloatingDtype(Rule):
    """A floating-point ``torch.dtype`` (:func:`check_floating_dtype`)."""

    def check(self, name, value, arguments):
        return check_floating_dtype(name, value)

    def bad_values(self, valid):
        return [BadValue("integer dtype", torch.int64)]


class Device(Rule):
    """A ``torch.device`` or a device string (:func:`check_device`) naming a device
    this machine has (:func:`~ccl_helpers.checks.check_available`: else the
    message lists the devices available); passed on as a ``torch.device``."""

    converts = True

    def check(self, name, value, arguments):
        return check_available(name, check_device(name, value), value)

    def bad_values(self, valid):
        return [
            BadValue("unknown device", UNKNOWN),
            BadValue("number", 1.5),
            BadValue("a device this machine lacks", lacking_device()),
        ]


class Function(Rule):
    """Something callable: a function, a module, a model (:func:`check_callable`)."""

    def check(self, name, value, arguments):
        return check_callable(name, value)

    def bad_values(self, valid):
        return [BadValue("not callable", UNKNOWN)]


class Frame(Rule):
    """A pandas DataFrame with at least one row and the ``columns``
    (:func:`check_frame`); a history, a table of runs or of results."""

    def __init__(self, columns=()):
        self.columns = tuple(columns)

    def check(self, name, value, arguments):
        return check_frame(name, value, self.columns)

    def bad_values(self, valid):
        if not hasattr(valid, "iloc"):
            return [BadValue("not a DataFrame", UNKNOWN)]
        bad = [
            BadValue("no rows", valid.iloc[:0]),
            BadValue("not a DataFrame", valid.to_dict("list")),
        ]
        if self.columns:
            bad.append(BadValue("no columns", valid.iloc[:, :0]))
        return bad


class Instance(Rule):
    """An instance of ``cls`` (:func:`check_instance`)."""

    def __init__(self, cls: type):
        self.cls = cls

    def check(self, name, value, arguments):
        return check_instance(name, value, self.cls)

    def bad_values(self, valid):
        bad = [BadValue(f"not a {self.cls.__name__}", UNKNOWN)]
        if isinstance(valid, tuple):  # a NamedTuple record: its plain tuple
            bad.append(BadValue("plain tuple", tuple(valid)))
        return bad


class Sizes(Rule):
    """A size, an integer ≥ ``minimum``, or a sequence of sizes (layer widths,
    channels), each checked (:func:`check_int`); passed on as given."""

    def __init__(self, minimum: int = 1):
        self.minimum = minimum

    def check(self, name, value, arguments):
        for size in value if isinstance(value, (list, tuple)) else [value]:
            check_int(name, size, self.minimum)
        return value

    def bad_values(self, valid):
        bad = [
            BadValue("float", 2.5),
            BadValue("bool", True),
            BadValue("below the minimum", self.minimum - 1),
            BadValue("string", UNKNOWN),
        ]
        if isinstance(valid, (list, tuple)) and valid:
            bad.append(BadValue("float entry", type(valid)([0.5, *valid[1:]])))
        return bad


HUGE = 2**50
"""The "huge size" every :class:`Sized` argument must reject: 10¹⁵, a size no call can
allocate."""

HUGE_ROWS = 2**20
"""The rows of a "huge size" tensor (a view of its first row, nothing allocated): for
the O(n²) computations, 10¹² pairs."""


def huge(valid):
    """A huge size derived from the ``valid`` one: :data:`HUGE` for an integer, a
    sequence whose first size is :data:`HUGE`, a tensor of :data:`HUGE_ROWS` rows (its
    first row, repeated by a view: nothing is allocated)."""
    if isinstance(valid, torch.Tensor):
        return valid[:1].expand(HUGE_ROWS, *valid.shape[1:])
    if isinstance(valid, (list, tuple)) and valid:
        return type(valid)([HUGE, *valid[1:]])
    return HUGE


class Sized(Rule):
    """What ``rule`` accepts, a size that decides the memory (or time) of the call: the
    call's :class:`~ccl_helpers.checks.Estimate` (bytes) or
    :class:`~ccl_helpers.checks.Duration` (seconds) ``estimate``, declared once and
    shared by the arguments it reads, is checked against its limit after every
    argument's own rule (before them if it is ``early``), before the body runs
    (:func:`~ccl_helpers.checks.checked`). Its bad values are ``rule``'s and one "huge
    size" (``huge``, or ``make_huge(valid)``), whose message must name the estimate's
    arguments."""

    def __init__(self, rule: Rule, estimate: Estimate, make_huge=huge):
        self.rule, self.estimate, self.make_huge = rule, estimate, make_huge
        self.converts, self.reads_values = rule.converts, rule.reads_values

    def check(self, name, value, arguments):
        return self.rule.check(name, value, arguments)

    def bad_values(self, valid):
        return [
            *(bad for bad in self.rule.bad_values(valid) if bad.label != "huge size"),
            BadValue("huge size", self.make_huge(valid), self.estimate.names),
        ]


class Labels(Rule):
    """An integer vector of classes ≥ 0 (:func:`check_labels`) of at least ``min_size``
    entries (reads the values: for samplers and evaluations)."""

    reads_values = True

    def __init__(self, *, min_size: int = 0):
        self.min_size = min_size

    def check(self, name, value, arguments):
        check_labels(name, value)
        if value.numel() < self.min_size:
            raise ValueError(
                f"{name} must hold at least {self.min_size} example(s), got "
                f"{value.numel()}"
            )
        return value

    def bad_values(self, valid):
        if not isinstance(valid, torch.Tensor):
            return [BadValue("not a tensor", UNKNOWN)]
        negative = valid.clone()
        negative[0] = -1
        bad = [
            BadValue("not a tensor", valid.tolist()),
            BadValue("floating tensor", valid.double()),
            BadValue("matrix", valid.unsqueeze(0)),
            BadValue("negative entry", negative),
        ]
        if self.min_size:
            label = "empty set" if self.min_size == 1 else "too few entries"
            bad.append(BadValue(label, valid[: self.min_size - 1]))
        return bad


class OpenUnit(Rule):
    """A real number (not a bool) strictly between 0 and 1: a confidence level, the
    share of a split."""

    def check(self, name, value, arguments):
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not 0 < value < 1
        ):
            raise ValueError(f"{name} must be in (0, 1), got {value!r}")
        return value

    def bad_values(self, valid):
        return [
            BadValue("zero", 0.0),
            BadValue("one", 1.0),
            BadValue("nan", math.nan),
            BadValue("negative", -0.5),
            BadValue("bool", True),
            BadValue("string", UNKNOWN),
        ]
