"""The baselines of ``ccl_helpers.plotting``."""

from __future__ import annotations

BASELINES = {
    "plotting.color": lambda: (dict(name="non_contrastive"), ()),
    "plotting.markers": lambda: (dict(values=["a", "b"]), ()),
    "plotting.sweep_styles": lambda: (dict(values=[0.1, 0.2], linestyle="--"), ()),
    "plotting.quantity": lambda: (dict(name="L_un"), ()),
    "plotting.style": lambda: (dict(name="L_un", line=True), ()),
    "plotting.figsize": lambda: (dict(n_panels=2, n_rows=1), ()),
    "plotting.rendered_points": lambda: (dict(size_pt=9.0, width_in=7.6), ()),
}
