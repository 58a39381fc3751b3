"""The baselines of ``ccl_helpers.launch``."""

from __future__ import annotations

from .common import PUBLIC

BASELINES = {
    "launch.check_options": lambda: (
        dict(options=PUBLIC["launch.parse_args"](["--scale", "smoke"]), world_size=2),
        (),
    ),
}
