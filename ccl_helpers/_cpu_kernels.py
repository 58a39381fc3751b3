"""One set of CPU kernels on every x86 machine: stored outputs reproduce exactly.

torch picks its CPU kernels by the instruction set it finds: its own vectorised
kernels (``ATEN_CPU_CAPABILITY``), oneDNN's convolutions (``ONEDNN_MAX_CPU_ISA``) and
MKL's matrix products (``MKL_CBWR``). AVX-512 kernels add in another order than AVX2
ones, so the last bits of a result differ from one machine to the next, and a few
hundred training steps turn that into a different third digit. Importing
:mod:`ccl_helpers` holds all three to AVX2, which every x86 machine the book is
checked on has, for about 5 % more time per conv-net step. It must happen before
torch runs its first kernel; a variable already set is left as it is, and other CPUs
ignore them. ``CCL_CPU_KERNELS=native`` leaves all three unset, so torch uses the
machine's own kernels (e.g. AVX-512): the check that the book's verdicts do not depend
on the last bits of a machine runs the chapters that way; any other value but blank is
an error.
"""

import os

CPU_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
}
"""The environment variables set, unless already set, on importing ccl_helpers."""


def native_kernels() -> bool:
    """Whether ``CCL_CPU_KERNELS`` asks for the machine's own kernels (``native``, any
    case); False when it is unset or blank. Any other value raises ValueError naming
    the variable (on importing :mod:`ccl_helpers`)."""
    value = os.environ.get("CCL_CPU_KERNELS", "").strip().lower()
    if value not in ("", "native"):
        raise ValueError(
            f"CCL_CPU_KERNELS must be 'native' (the machine's own kernels) or unset "
            f"(AVX2), got {os.environ['CCL_CPU_KERNELS']!r}"
        )
    return value == "native"


if not native_kernels():
    for _name, _value in CPU_KERNELS.items():
        os.environ.setdefault(_name, _value)
