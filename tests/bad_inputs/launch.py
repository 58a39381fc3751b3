"""Valid calls of the public callables of ``ccl_helpers.launch``, from which
the bad-input test builds its cases: name → (keyword arguments of a valid call, pairs
(argument, argument it must agree with, the dimension shortened in a mismatch))."""

from __future__ import annotations

from .common import PUBLIC

BASELINES = {
    "launch.check_options": lambda: (
        dict(options=PUBLIC["launch.parse_args"](["--scale", "smoke"]), world_size=2),
        (),
    ),
}
