"""Run-time set-up: CPU kernels, device, seeds, scale, precision, progress bars.

The experiment scale (``CCL_SCALE``) sizes every run (:func:`scale`, :func:`steps`,
:func:`evals`); :func:`setup` seeds every generator, makes torch deterministic and
sets its CPU threads (``CCL_THREADS``); :func:`device` (``CCL_DEVICE``) and
:func:`precision` (``CCL_PRECISION``) choose where and how minibatches train.

**One set of CPU kernels on every x86 machine**, so that stored outputs reproduce
exactly. torch picks its CPU kernels by the instruction set it finds: its own vectorised
kernels (``ATEN_CPU_CAPABILITY``), oneDNN's convolutions (``ONEDNN_MAX_CPU_ISA``) and
MKL's matrix products (``MKL_CBWR``). AVX-512 kernels add in another order than AVX2
ones, so the last bits of a result differ from one machine to the next, and a few
hundred training steps turn that into a different third digit.
:func:`pin_cpu_kernels` (called by :func:`setup`, which every chapter calls
first) holds all three to AVX2, which every x86 machine the book is checked on has, for
about 5 % more time per conv-net step. Importing ``ccl_helpers`` sets nothing.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterable

import numpy as np
import torch

from ._checks import check_available, check_device, check_int, mps_available

__all__ = [
    "SCALES",
    "autocast",
    "by_scale",
    "device",
    "evals",
    "glue",
    "pin_cpu_kernels",
    "plain_number",
    "precision",
    "progress",
    "scale",
    "setup",
    "steps",
    "under_ci",
]

SCALES = ("smoke", "standard", "paper")
"""The experiment sizes selected by the ``CCL_SCALE`` environment variable."""

_PRECISIONS = ("fp32", "bf16")
"""The training precisions selected by the ``CCL_PRECISION`` environment variable."""


_CPU_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
}
"""The environment variables :func:`pin_cpu_kernels` sets, unless already set."""


def _native_kernels() -> bool:
    """Whether ``CCL_CPU_KERNELS`` asks for the machine's own kernels (``native``, any
    case); False when it is unset or blank. Any other value raises ValueError naming
    the variable."""
    value = os.environ.get("CCL_CPU_KERNELS", "").strip().lower()
    if value not in ("", "native"):
        raise ValueError(
            f"CCL_CPU_KERNELS must be 'native' (the machine's own kernels) or unset "
            f"(AVX2), got {os.environ['CCL_CPU_KERNELS']!r}"
        )
    return value == "native"


def pin_cpu_kernels() -> None:
    """Hold torch's CPU kernels to AVX2 (``ATEN_CPU_CAPABILITY=avx2``,
    ``ONEDNN_MAX_CPU_ISA=AVX2``, ``MKL_CBWR=AVX2``), so that results are the
    same to the last bit on every x86 machine. Call it before torch runs its first CPU
    kernel: torch reads the variables once, at that kernel. A variable already set is
    left as it is, and CPUs other than x86 ignore them. ``CCL_CPU_KERNELS=native``
    leaves all three unset, so torch uses the machine's own kernels (e.g. AVX-512): the
    check that the book's verdicts do not depend on the last bits of a machine runs the
    chapters that way; any other value but blank raises ValueError."""
    if not _native_kernels():
        for name, value in _CPU_KERNELS.items():
            os.environ.setdefault(name, value)


def scale() -> str:
    """The experiment scale, read from ``CCL_SCALE`` (default ``"standard"``).

    ``smoke``: seconds per notebook, every code path; ``standard``: the stored outputs,
    on a CPU; ``paper``: the sources' own sizes (one GPU). The measured times are on the
    book's running-times page (``make profile``).
    """
    value = os.environ.get("CCL_SCALE", "standard").strip().lower()
    if value not in SCALES:
        raise ValueError(f"CCL_SCALE must be one of {SCALES}, got {value!r}")
    return value


def by_scale(*, smoke, standard, paper):
    """The value given for the current :func:`scale`, e.g. ``by_scale(smoke=50,
    standard=2000, paper=20000)``."""
    return {"smoke": smoke, "standard": standard, "paper": paper}[scale()]


def _paper_cap() -> int | None:
    """``CCL_PAPER_STEPS`` as an int ≥ 1 at the paper scale; None elsewhere or unset
    (blank). A value that is no integer ≥ 1 raises ValueError at every scale."""
    cap = os.environ.get("CCL_PAPER_STEPS", "").strip()
    if not cap:
        return None
    value = _positive_integer("CCL_PAPER_STEPS", cap)
    return value if scale() == "paper" else None


def _positive_integer(variable: str, text: str) -> int:
    """The integer ≥ 1 that the environment variable ``variable`` holds as ``text``;
    else ValueError naming the variable."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{variable} must be an integer ≥ 1, got {text!r}")
    return value


def steps(*, smoke: int, standard: int, paper: int) -> int:
    """A step or iteration count for the current :func:`scale`, as :func:`by_scale`; at
    ``paper`` at most ``CCL_PAPER_STEPS`` when that is set.

    The cap is the paper dry run's switch: every training call at the paper scale's
    data sizes, widths and seeds, for a few steps, on any machine (``make test``)."""
    smoke = check_int("smoke", smoke)
    standard = check_int("standard", standard)
    paper = check_int("paper", paper)
    counts = {"smoke": smoke, "standard": standard, "paper": paper}
    cap = _paper_cap()
    return counts[scale()] if cap is None else min(paper, cap)


def evals(*, smoke, standard, paper):
    """The size of an evaluation that no training call sees (Monte Carlo draws, the
    anchors and views of a bound, a probe's images), as :func:`by_scale`; in the paper
    dry run (``CCL_PAPER_STEPS`` set) the ``smoke`` value, so that the dry run trains at
    the paper's shapes within minutes."""
    return (
        smoke
        if _paper_cap() is not None
        else by_scale(smoke=smoke, standard=standard, paper=paper)
    )


def device() -> torch.device:
    """The fastest available device: CUDA, then Apple MPS, then the CPU.

    ``CCL_DEVICE`` (e.g. ``cpu``) overrides the choice (unset or blank: the fastest);
    ValueError, naming the variable and the devices available, when it names one this
    machine lacks.
    """
    forced = os.environ.get("CCL_DEVICE", "")
    if forced.strip():
        return _forced_device(forced)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def _forced_device(forced: str) -> torch.device:
    """The device ``CCL_DEVICE`` names; ValueError unless it is available here (the
    CPU, CUDA or MPS when present, with an index below the CUDA device count; ``meta``,
    the device without data, is accepted too, as by every device argument)."""
    try:
        chosen = torch.device(forced.strip())
    except RuntimeError:
        chosen = None
    return check_available("CCL_DEVICE", chosen, forced)


def precision() -> str:
    """The precision of minibatch training, ``"fp32"`` or ``"bf16"``, read from
    ``CCL_PRECISION`` (unset or blank: the default).

    Default: ``"bf16"`` at the ``paper`` scale on a CUDA :func:`device` that supports
    bfloat16, else ``"fp32"`` (so the ``smoke`` and ``standard`` runs, the stored
    outputs among them, and every CPU run stay in float32).
    """
    value = os.environ.get("CCL_PRECISION", "").strip().lower()
    if not value:
        on_bf16_gpu = device().type == "cuda" and torch.cuda.is_bf16_supported()
        return "bf16" if scale() == "paper" and on_bf16_gpu else "fp32"
    if value not in _PRECISIONS:
        raise ValueError(f"CCL_PRECISION must be one of {_PRECISIONS}, got {value!r}")
    return value


def autocast(device: torch.device | str) -> contextlib.AbstractContextManager:
    """``torch.autocast`` to bfloat16 on ``device``'s type when :func:`precision` is
    ``"bf16"``, else a no-op (``contextlib.nullcontext``: the float32 path runs exactly
    the code it runs without this).

    Safe where it is used: around the forward pass and loss of
    :func:`~ccl_helpers.train.train`'s minibatch steps, the losses reducing in at least
    float32 (``at_least_float32``), the parameters, their gradients and the optimiser
    state staying float32. Not used for evaluation, exact expectations, bounds, the
    convergence checks of full-batch :func:`~ccl_helpers.train.gradient_descent` or
    sympy: those stay in float32/float64, where the theory's inequalities are asserted.
    """
    device = check_device("device", device)
    if precision() == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def under_ci() -> bool:
    """True when the environment variable ``CI`` is set to a true value (as CI services
    do)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def setup(
    seed: int = 0, threads: int | None = None, *, quiet: bool = False
) -> torch.device:
    """Hold torch's CPU kernels to AVX2 (:func:`pin_cpu_kernels`), seed every
    generator, make torch deterministic, set torch's CPU threads and fix the display;
    print one line saying so (unless ``quiet``); return :func:`device`.

    Args:
        seed: seed for ``random``, NumPy and torch (all devices); must be ≥ 0.
        threads: CPU threads for torch. Default: ``CCL_THREADS`` if set, else 1 at the
            ``smoke`` and ``standard`` scales and all cores at ``paper``. One thread
            makes the stored (``standard``) outputs independent of the machine's core
            count, and the book's small tensors gain little
            from more: on a busy machine several threads per process slow them down many
            times.
        quiet: no printed line.
    """
    seed = check_int("seed", seed, 0)
    if threads is not None:
        threads = check_int("threads", threads)
    if not isinstance(quiet, bool):
        raise ValueError(f"quiet must be True or False, got {quiet!r}")
    pin_cpu_kernels()  # before the process runs any kernel
    chosen = device()  # a CCL_DEVICE this machine lacks fails before any set-up
    if threads is None:
        default = (os.cpu_count() or 1) if scale() == "paper" else 1
        threads = os.environ.get("CCL_THREADS")
        threads = (
            default if threads is None else _positive_integer("CCL_THREADS", threads)
        )
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.set_num_threads(threads)
    torch.set_printoptions(precision=4, sci_mode=False)
    np.set_printoptions(precision=4, suppress=True)
    import pandas as pd

    pd.set_option("display.precision", 4)
    from .plotting import use_style

    use_style()
    if not quiet:
        print(
            f"ccl_helpers.setup: scale {scale()}, device {chosen.type}, seed {seed}, "
            f"torch on {threads} CPU thread{'s' if threads > 1 else ''} "
            "(setup(threads=k) or CCL_THREADS=k sets it)"
        )
    return chosen


def progress(iterable: Iterable, **kwargs) -> Iterable:
    """Wrap ``iterable`` in a ``tqdm.auto`` progress bar, silent under CI (see
    :func:`under_ci`)."""
    if not (hasattr(iterable, "__iter__") or hasattr(iterable, "__getitem__")):
        raise ValueError(
            f"iterable must be iterable (e.g. range(n), not n), got {iterable!r}"
        )
    from tqdm.auto import tqdm

    kwargs.setdefault("disable", under_ci())
    kwargs.setdefault("leave", False)
    return tqdm(iterable, **kwargs)


def glue(name: str, value, display: bool = False) -> None:
    """Store ``value`` under ``name`` for the book's ``{glue}`` roles (MyST-NB); a no-op
    without MyST-NB (e.g. on Colab).

    NumPy scalars and one-element tensors are stored as plain Python numbers: MyST-NB
    formats a glued value by evaluating its ``repr``, and ``np.float64(0.5)`` (NumPy ≥
    2) or ``tensor(0.5)`` would not take a format such as ``:.3f``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not isinstance(display, bool):
        raise ValueError(f"display must be True or False, got {display!r}")
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, plain_number(value), display=display)


def plain_number(value):
    """``value`` as a Python ``int``/``float``/``bool`` if it is a NumPy scalar or a
    one-element tensor, else unchanged."""
    if isinstance(value, np.generic) or (
        isinstance(value, torch.Tensor) and value.numel() == 1
    ):
        return value.item()
    return value
