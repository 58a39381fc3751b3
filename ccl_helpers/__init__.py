"""ccl_helpers: the helper package of *Contrastive learning theory, reproduced*.

The shared core (``runtime``, ``losses``, ``data``, ``models``, ``train``, ``metrics``,
``plotting``), one module per source (``curl`` for Arora et al. 2019, ``multineg`` for Merad et al.
2020, ``wen`` for Wen 2020, ``multimodal`` for Ren & Li 2023, ``supervised_approx`` for Lee 2025),
``symbolic`` (sympy derivations of Hessians and smoothness constants), and ``distributed``
(NT-Xent against the global batch under ``torchrun``; its command-line entry, Chapter 5's encoder
on several processes, is ``python -m ccl_helpers.launch``).
"""

from . import (
    curl,
    data,
    distributed,
    losses,
    metrics,
    models,
    multimodal,
    multineg,
    plotting,
    supervised_approx,
    symbolic,
    train,
    wen,
)
from .runtime import by_scale, device, glue, progress, scale, setup, under_ci

__version__ = "0.1.0"

__all__ = [
    "by_scale",
    "curl",
    "data",
    "device",
    "distributed",
    "glue",
    "losses",
    "metrics",
    "models",
    "multimodal",
    "multineg",
    "plotting",
    "progress",
    "scale",
    "setup",
    "supervised_approx",
    "symbolic",
    "train",
    "under_ci",
    "wen",
    "__version__",
]
