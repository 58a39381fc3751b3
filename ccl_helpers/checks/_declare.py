"""The ``checked`` decorator: a public function's rules, declared once beside its
signature, checked at each call and read back by the tests."""

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
    wrapper keeps the function's name, docstring and signature (``functools.wraps``),
    and its rules are :func:`declarations` of it. A misspelt argument name is a
    ``TypeError`` when the module is imported.

    Example::

        @checked(temperature=Positive(), reduction=Choice(REDUCTIONS))
        def nt_xent_loss(z1, z2, temperature=0.5, reduction="mean"): ...
    """

    def declare(function):
        parameters = inspect.signature(function).parameters
        unknown = sorted(set(rules) - set(parameters))
        if unknown:
            raise TypeError(f"{function.__qualname__} has no argument {unknown}")
        signature = inspect.signature(function)
        converting = any(rule.converts for rule in rules.values())

        @functools.wraps(function)
        def check_then_call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            arguments = bound.arguments
            for name, rule in rules.items():
                if name in arguments:
                    checked_value = rule.check(name, arguments[name], arguments)
                    if rule.converts:
                        arguments[name] = checked_value
            if converting:
                return function(*bound.args, **bound.kwargs)
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
