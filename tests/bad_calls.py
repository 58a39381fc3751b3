"""The bad-call tables beside each test module: ``BAD_CALLS``, a list of
:func:`bad_call`, one or more for each public callable the module's tests own, each
run by that module's ``test_bad_calls_are_refused_by_name``; ``tests/test_api.py``
checks that every public callable has one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import pytest
import torch


class BadCall(NamedTuple):
    """A call that must raise ``ValueError`` with a message matching ``match`` (a
    regular expression: the argument's name, the hint), made with the environment
    variables ``environment`` set."""

    function: Callable
    match: str
    args: tuple
    kwargs: dict[str, Any]
    environment: Mapping[str, str]

    def __str__(self) -> str:
        return f"{self.function.__qualname__}: {self.match}"

    def check(self) -> None:
        """Make the call; fail unless it raises the ``ValueError`` it must."""
        with pytest.MonkeyPatch.context() as patch:
            for name, value in self.environment.items():
                patch.setenv(name, value)
            with pytest.raises(ValueError, match=self.match):
                self.function(*self.args, **self.kwargs)


def bad_call(
    function: Callable, match: str, /, *args, environment=None, **kwargs
) -> BadCall:
    """``function(*args, **kwargs)`` (with the variables ``environment`` set), which
    must raise ``ValueError`` matching ``match``."""
    return BadCall(function, match, args, kwargs, dict(environment or {}))


def lacking_device() -> str:
    """A device this machine lacks: ``cuda`` without CUDA, else the index past the last
    GPU."""
    if not torch.cuda.is_available():
        return "cuda"
    return f"cuda:{torch.cuda.device_count()}"
