"""ccl_helpers: the helper package of *Contrastive learning theory, reproduced*.

The shared core: ``runtime``, ``losses``, ``data``, ``models``, ``train``, ``metrics``,
``coupon`` (the coupon collector of the negatives' classes), ``symbolic`` (sympy
derivations of Hessians and smoothness constants), ``plotting``, ``results`` (results
stored as data), ``verdicts`` (the one method from per-seed measurements to a verdict,
the chapters' records, the scorecard) and ``distributed`` (NT-Xent against the global
batch under ``torchrun``; its command-line entry, Chapter 5's encoder on several
processes, is ``python -m ccl_helpers.launch``). One module per source, each using the
core only: ``curl`` (Arora et al. 2019), ``multineg`` (Merad et al. 2020), ``wen`` (Wen
2020), ``multimodal`` (Ren & Li 2023), ``supervised_approx`` (Lee 2025). Above them,
:func:`report` (module ``encoder_report``) sets the sources' bounds on a user's own
encoder against what they bound.

Each public function checks its arguments once, at its entry (``ValueError`` naming
the argument); the functions it calls trust it.

Importing the package changes nothing in the process: :func:`setup` (or
:func:`pin_cpu_kernels` alone) holds torch's CPU kernels to AVX2, and ``plotting``
and ``symbolic`` (matplotlib, seaborn, sympy) are imported when first used.
"""

import importlib

from . import (
    coupon,
    curl,
    data,
    distributed,
    encoder_report,
    losses,
    metrics,
    models,
    multimodal,
    multineg,
    results,
    supervised_approx,
    train,
    verdicts,
    wen,
)
from .encoder_report import report
from .runtime import (
    by_scale,
    device,
    evals,
    glue,
    pin_cpu_kernels,
    progress,
    scale,
    setup,
    steps,
    under_ci,
)

__version__ = "0.1.0"

__all__ = [
    "by_scale",
    "evals",
    "coupon",
    "curl",
    "data",
    "device",
    "distributed",
    "encoder_report",
    "glue",
    "losses",
    "metrics",
    "models",
    "multimodal",
    "multineg",
    "pin_cpu_kernels",
    "plotting",
    "progress",
    "report",
    "results",
    "scale",
    "setup",
    "steps",
    "supervised_approx",
    "symbolic",
    "train",
    "under_ci",
    "verdicts",
    "wen",
    "__version__",
]


_ON_FIRST_USE = ("plotting", "symbolic")
"""The modules imported on first use: they pull in matplotlib, seaborn and sympy."""


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
