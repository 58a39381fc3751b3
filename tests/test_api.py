"""The public API: each module's ``__all__`` lists what a notebook or a user calls, and
every public callable has a bad call in the table (``BAD_CALLS``) of a test module."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import ccl_helpers

TESTS = Path(__file__).resolve().parent

MODULES = sorted(
    info.name
    for info in pkgutil.iter_modules(ccl_helpers.__path__)
    if not info.name.startswith("_")
)
"""The package's public modules."""


NOTHING_TO_REFUSE = {
    "runtime.plain_number": "returns any value it cannot make a plain number as it is",
}
"""The public callables with arguments that no call can get wrong, with the reason
(a callable of no argument has nothing to refuse either)."""


def takes_arguments(obj) -> bool:
    """Whether ``obj`` (a function or a class) has a parameter."""
    return bool(inspect.signature(obj).parameters)


def is_called(obj) -> bool:
    """Whether a user calls ``obj``: a function, or a class other than a result record
    (a NamedTuple, built by the package's functions) or an exception (raised by them);
    not a type alias."""
    if inspect.isclass(obj):
        record = issubclass(obj, tuple) and hasattr(obj, "_fields")
        return not record and not issubclass(obj, BaseException)
    return inspect.isfunction(obj) or inspect.ismethod(obj)


def public_callables() -> dict[str, object]:
    """{"module.name": the object} for each callable a user calls (:func:`is_called`)
    named by a public module's ``__all__``."""
    found = {}
    for module_name in MODULES:
        module = importlib.import_module(f"ccl_helpers.{module_name}")
        for name in module.__all__:
            obj = getattr(module, name)
            if is_called(obj):
                found[f"{module_name}.{name}"] = obj
    return found


def tabled_callables() -> set[int]:
    """The ids of the callables the test modules' ``BAD_CALLS`` tables call."""
    tabled = set()
    for path in sorted(TESTS.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        tabled |= {id(call.function) for call in getattr(module, "BAD_CALLS", [])}
    return tabled


@pytest.mark.parametrize("module_name", MODULES)
def test_every_name_in_all_exists(module_name):
    module = importlib.import_module(f"ccl_helpers.{module_name}")
    assert hasattr(module, "__all__"), f"ccl_helpers.{module_name} has no __all__"
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, missing


def test_every_public_callable_has_a_bad_call():
    tabled = tabled_callables()
    public = public_callables()
    untested = [
        name
        for name, obj in public.items()
        if id(obj) not in tabled
        and name not in NOTHING_TO_REFUSE
        and takes_arguments(obj)
    ]
    assert not untested, untested
    assert set(NOTHING_TO_REFUSE) <= set(public)
