"""The baselines of ``ccl_helpers.runtime`` and the top-level names."""

from __future__ import annotations

BASELINES = {
    "runtime.precision": lambda: (dict(), ()),
    "runtime.autocast": lambda: (dict(device="cpu"), ()),
    "device": lambda: (dict(), ()),
    "scale": lambda: (dict(), ()),
    "steps": lambda: (dict(smoke=1, standard=2, paper=3), ()),
    "progress": lambda: (dict(iterable=range(3)), ()),
}
