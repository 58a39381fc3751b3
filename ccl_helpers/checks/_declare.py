"""The ``checked`` decorator: a public function's rules, declared by its signature.

The rules are declared once beside the signature, checked at each call and read back
by the tests."""

from __future__ import annotations

import functools
import inspect

from ._rules import Rule


def checked(**rules: Rule):
    """Declare the rule of each named argument of the decorated function (or class
    ``__init__``) and check them at every call, in the order given, before the body
    runs.

    Each :class:`Rule` checks the argument when the call gives it (a default is
    trusted); a rule that converts (:class:`Int`: ``int``) passes its result on. The
    arguments are matched to their names by position and keyword, without
    ``inspect.Signature.bind`` (which ``torch.compile`` cannot trace: a checked loss
    still compiles into one graph); a call the signature does not accept fails in the
    function, as without the rules. The wrapper keeps the function's name, docstring and
    signature (``functools.wraps``), and its rules are :func:`declarations` of it. A
    misspelt argument name is a ``TypeError`` when the module is imported.

    Sizes: once every rule has passed (before them for an ``early`` one), each
    distinct :class:`~.Estimate` of the :class:`~.Sized` rules is checked against its
    limit (memory, or time for a
    :class:`~.Duration`), with the call's arguments and the defaults it leaves, before
    the body allocates or runs anything.

    Example::

        @checked(temperature=Positive(), reduction=Choice(REDUCTIONS))
        def nt_xent_loss(z1, z2, temperature=0.5, reduction="mean"): ...
    """

    def declare(function):
        parameters = inspect.signature(function).parameters
        unknown = sorted(set(rules) - set(parameters))
        if unknown:
            raise TypeError(f"{function.__qualname__} has no argument {unknown}")
        positional = tuple(
            name
            for name, parameter in parameters.items()
            if parameter.kind
            in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
        )
        declared = tuple(rules.items())
        estimates = tuple(
            {
                id(rule.estimate): rule.estimate
                for rule in rules.values()
                if rule.estimate is not None
            }.values()
        )
        defaults = {
            name: parameter.default
            for name, parameter in parameters.items()
            if parameter.default is not parameter.empty
        }

        early = tuple(estimate for estimate in estimates if estimate.early)
        late = tuple(estimate for estimate in estimates if not estimate.early)

        @functools.wraps(function)
        def check_then_call(*args, **kwargs):
            arguments = dict(zip(positional, args))
            arguments.update(kwargs)
            for estimate in early:
                estimate.check({**defaults, **arguments})
            for name, rule in declared:
                if name in arguments:
                    value = rule.check(name, arguments[name], arguments)
                    if rule.converts:
                        arguments[name] = value
                        if name in kwargs:
                            kwargs[name] = value
                        else:
                            index = positional.index(name)
                            args = (*args[:index], value, *args[index + 1 :])
            for estimate in late:
                estimate.check({**defaults, **arguments})
            return function(*args, **kwargs)

        check_then_call.__checked__ = dict(rules)
        return check_then_call

    return declare


def declarations(obj) -> dict[str, Rule]:
    """{argument: rule} declared with :func:`checked` on a function or on a class's
    ``__init__``; empty where none is."""
    if inspect.isclass(obj):
        obj = obj.__init__
    return dict(getattr(obj, "__checked__", {}))


def estimated_bytes(obj, *args, **kwargs) -> int:
    """The bytes the declared estimates of ``obj`` (a function, or a class for its
    ``__init__``) give for a call with these arguments, summed over its distinct
    estimates, without calling it (0 where none is declared): what a call's
    :class:`~.Estimate` compares with the memory limit (a :class:`~.Duration` counts
    no bytes)."""
    function = obj.__init__ if inspect.isclass(obj) else obj
    if inspect.isclass(obj):
        args = (None, *args)
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    estimates = {
        id(rule.estimate): rule.estimate
        for rule in declarations(obj).values()
        if rule.estimate is not None and not rule.estimate.seconds
    }
    return sum(
        estimate.amount_of(bound.arguments) or 0 for estimate in estimates.values()
    )
