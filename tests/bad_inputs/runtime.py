"""Valid calls of the public callables of ``ccl_helpers.runtime`` (and its top-level
names), from which the bad-input test builds its cases: name → (keyword arguments of a
valid call, pairs (argument, argument it must agree with, the dimension shortened in a
mismatch))."""

from __future__ import annotations

BASELINES = {
    "runtime.precision": lambda: (dict(), ()),
    "runtime.autocast": lambda: (dict(device="cpu"), ()),
    "device": lambda: (dict(), ()),
    "scale": lambda: (dict(), ()),
    "steps": lambda: (dict(smoke=1, standard=2, paper=3), ()),
    "progress": lambda: (dict(iterable=range(3)), ()),
}
