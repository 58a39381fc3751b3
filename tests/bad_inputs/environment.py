"""The environment variables the package reads: each with its bad values and the
public callables that read it, for the environment part of the API-wide bad-input
test (``test_environment_variables_fail_clearly``).

Each case sets one variable (and ``also``, the others it needs, e.g. ``CCL_SCALE=paper``
for the step cap) after unsetting every variable of :data:`VARIABLES`, then calls each
of its callables. A case without ``accepted`` must raise a ``ValueError`` whose message
names the variable and shows what is allowed (:data:`ALLOWED`); a case with
``accepted`` is a value legitimately taken (the text says why), and the call must
return.
"""

from __future__ import annotations

from typing import NamedTuple

import ccl_helpers
from ccl_helpers import (
    checks,
    coupon,
    data,
    distributed,
    models,
    results,
    runtime,
)
from ccl_helpers.checks._devices import lacking_device, mps_available

BASELINES = {}
"""No callable baselines here (this module holds the environment's table)."""

CALLS = {
    "scale": (ccl_helpers.scale, {}),
    "by_scale": (ccl_helpers.by_scale, dict(smoke=1, standard=2, paper=3)),
    "steps": (ccl_helpers.steps, dict(smoke=1, standard=2, paper=3)),
    "evals": (ccl_helpers.evals, dict(smoke=1, standard=2, paper=3)),
    "device": (ccl_helpers.device, {}),
    "setup": (ccl_helpers.setup, dict(quiet=True)),
    "under_ci": (ccl_helpers.under_ci, {}),
    "runtime.precision": (runtime.precision, {}),
    "runtime.autocast": (runtime.autocast, dict(device="cpu")),
    "results.results_dir": (results.results_dir, {}),
    "results.records_dir": (results.records_dir, {}),
    "results.provenance": (results.provenance, {}),
    "data.search_path": (data.search_path, dict(dataset="fashion-mnist")),
    "data.find_split": (data.find_split, dict(dataset="fashion-mnist", split="test")),
    "data.download": (data.download, dict(dataset="mnist")),
    "data.fetch": (data.fetch, dict(dataset="mnist")),
    "distributed.init_from_env": (distributed.init_from_env, dict(timeout_s=1.0)),
    "pin_cpu_kernels": (runtime._native_kernels, {}),
    "checks.memory_limit": (checks.memory_limit, {}),
    "checks.time_limit": (checks.time_limit, {}),
    "models.MLP": (models.MLP, dict(in_features=4, hidden=(4,), out_features=2)),
    "coupon.collection_time_moments_exact": (
        coupon.collection_time_moments_exact,
        dict(n_classes=3),
    ),
}
"""name → (callable, keyword arguments of a valid call): the callables that read the
variables. ``setup`` appears only in cases that must raise (a call that returns sets
the session's seeds and threads); "pin_cpu_kernels" stands for the check it runs
(``runtime._native_kernels``), which sets no variable."""

ALLOWED = {
    "CCL_SCALE": "('smoke', 'standard', 'paper')",
    "CCL_PAPER_STEPS": "integer ≥ 1",
    "CCL_DEVICE": "available on this machine (cpu",
    "CCL_PRECISION": "('fp32', 'bf16')",
    "CCL_THREADS": "integer ≥ 1",
    "CCL_DATA_DIR": "existing folder",
    "CCL_DATA_MIRROR": "http://, https:// or file:// URL",
    "CCL_RESULTS_DIR": "folder",
    "CCL_RECORDS_DIR": "folder",
    "CCL_CPU_KERNELS": "'native'",
    "CCL_MEMORY_LIMIT": "a number of bytes > 0",
    "CCL_TIME_LIMIT": "a number of seconds > 0",
    "WORLD_SIZE": "integer ≥ 1",
    "LOCAL_RANK": "integer ≥ 0",
}
"""What the error message of a rejected value must show, by variable."""

VARIABLES = (
    *ALLOWED,
    "CCL_DEBIAN_DATA_DIR",
    "CCL_COMMIT",
    "CCL_PAPER_COMMAND",
    "CI",
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
)
"""Every variable the package (or torch under ``distributed.init_from_env``) reads:
unset before each case."""


class Case(NamedTuple):
    """``variable`` set to ``value`` (``label`` says what is wrong with it, ``also``
    the other variables set), read by ``callables`` (names of :data:`CALLS`);
    ``accepted``, if not empty, why the value is legitimately taken."""

    variable: str
    label: str
    value: str
    callables: tuple[str, ...]
    accepted: str = ""
    also: dict = {}


SCALE_READERS = (
    "scale",
    "by_scale",
    "steps",
    "evals",
    "runtime.precision",
    "runtime.autocast",
    "setup",
    "results.records_dir",
    "results.provenance",
)
CAP_READERS = ("steps", "evals")
DEVICE_READERS = ("device", "setup", "runtime.precision", "runtime.autocast")
DEVICE_READERS += ("results.provenance", "distributed.init_from_env")
PRECISION_READERS = ("runtime.precision", "runtime.autocast")
DATA_READERS = ("data.search_path", "data.find_split")
LIMIT_READERS = {
    "CCL_MEMORY_LIMIT": ("checks.memory_limit", "models.MLP"),
    "CCL_TIME_LIMIT": ("checks.time_limit", "coupon.collection_time_moments_exact"),
}
PAPER = {"CCL_SCALE": "paper"}


def cases(tmp_path) -> list[Case]:
    """The table; ``tmp_path`` an empty folder to build the missing folder and the
    file that is no folder from."""
    missing = str(tmp_path / "missing")
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    a_file = str(a_file)
    table = [
        *(
            Case("CCL_SCALE", label, value, SCALE_READERS)
            for label, value in (("unknown word", "huge"), ("blank", " "))
        ),
        Case(
            "CCL_SCALE",
            "upper case and spaces",
            " Smoke ",
            SCALE_READERS[:-3],
            accepted="case and surrounding spaces are ignored: the smoke scale",
        ),
        *(
            Case("CCL_PAPER_STEPS", label, value, CAP_READERS, also=also)
            for label, value in (
                ("unknown word", "many"),
                ("zero", "0"),
                ("negative", "-1"),
                ("not an integer", "2.5"),
            )
            for also in (PAPER, {})
        ),
        Case(
            "CCL_PAPER_STEPS",
            "blank",
            " ",
            CAP_READERS,
            accepted="blank is unset: no cap",
            also=PAPER,
        ),
        *(
            Case("CCL_DEVICE", label, value, DEVICE_READERS)
            for label, value in (
                ("unknown word", "gpu"),
                ("a device this machine lacks", lacking_device()),
                ("an index past the last GPU", "cuda:99"),
            )
        ),
        *(
            Case("CCL_PRECISION", label, value, PRECISION_READERS)
            for label, value in (("unknown word", "fp8"), ("fp16", "fp16"))
        ),
        *(
            Case("CCL_THREADS", label, value, ("setup",))
            for label, value in (
                ("unknown word", "all"),
                ("blank", ""),
                ("zero", "0"),
                ("negative", "-2"),
                ("not an integer", "1.5"),
            )
        ),
        Case("CCL_DATA_DIR", "missing folder", missing, DATA_READERS),
        Case("CCL_DATA_DIR", "a file, not a folder", a_file, DATA_READERS),
        *(
            Case(variable, "blank", value, readers, accepted=f"blank is unset: {why}")
            for variable, value, readers, why in (
                (
                    "CCL_DEVICE",
                    " ",
                    DEVICE_READERS[:1] + DEVICE_READERS[2:],
                    "the fastest available device",
                ),
                ("CCL_PRECISION", " ", PRECISION_READERS, "the default precision"),
                ("CCL_DATA_DIR", "", DATA_READERS, "the other places are searched"),
            )
        ),
        Case(
            "CCL_DEBIAN_DATA_DIR",
            "missing folder",
            missing,
            DATA_READERS[:1],
            accepted="names where Debian's package would be, which need not be "
            "installed (as the default folder need not exist); the tests point it at "
            "an empty folder to hide the package",
        ),
        *(
            Case("CCL_DATA_MIRROR", label, value, ("data.download", "data.fetch"))
            for label, value in (("unknown word", "mirror"), ("a bare path", missing))
        ),
        *(
            Case(variable, "a file, not a folder", a_file, readers, also=also)
            for variable, readers, also in (
                ("CCL_RESULTS_DIR", ("results.results_dir",), {}),
                ("CCL_RESULTS_DIR", ("results.records_dir",), PAPER),
                ("CCL_RECORDS_DIR", ("results.records_dir",), {}),
            )
        ),
        *(
            Case(
                variable,
                "missing folder",
                missing,
                readers,
                accepted="the folder written to: created by the first record",
                also=also,
            )
            for variable, readers, also in (
                ("CCL_RESULTS_DIR", ("results.results_dir",), {}),
                ("CCL_RECORDS_DIR", ("results.records_dir",), {}),
            )
        ),
        *(
            Case(
                variable,
                "any text",
                "bogus",
                ("results.provenance",),
                accepted="a free label recorded as given (a commit, a command)",
            )
            for variable in ("CCL_COMMIT", "CCL_PAPER_COMMAND")
        ),
        Case(
            "CI",
            "any text",
            "bogus",
            ("under_ci",),
            accepted="CI services set it to various words: any but '', 0, false, no "
            "means true",
        ),
        *(
            Case("CCL_CPU_KERNELS", label, value, ("pin_cpu_kernels",))
            for label, value in (("unknown word", "avx512"), ("another word", "off"))
        ),
        Case(
            "CCL_CPU_KERNELS",
            "blank",
            " ",
            ("pin_cpu_kernels",),
            accepted="blank is unset: the AVX2 kernels",
        ),
        *(
            Case(variable, label, value, LIMIT_READERS[variable])
            for variable, other_unit in (
                ("CCL_MEMORY_LIMIT", "12h"),
                ("CCL_TIME_LIMIT", "1GB"),
            )
            for label, value in (
                ("unknown word", "lots"),
                ("zero", "0"),
                ("negative", "-1"),
                ("the other limit's unit", other_unit),
            )
        ),
        *(
            Case(variable, label, value, LIMIT_READERS[variable], accepted=why)
            for variable in LIMIT_READERS
            for label, value, why in (
                ("blank", " ", "blank is unset: the default limit"),
                ("no limit", "inf", "inf lifts the limit"),
            )
        ),
        *(
            Case("WORLD_SIZE", label, value, ("distributed.init_from_env",))
            for label, value in (("unknown word", "two"), ("zero", "0"))
        ),
        *(
            Case(
                "LOCAL_RANK",
                label,
                value,
                ("distributed.init_from_env",),
                also={"WORLD_SIZE": "2"},
            )
            for label, value in (("unknown word", "first"), ("negative", "-1"))
        ),
    ]
    if not mps_available():
        table.append(
            Case("CCL_DEVICE", "mps on a machine without it", "mps", ("device",))
        )
    return table
