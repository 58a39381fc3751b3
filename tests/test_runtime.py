"""Tests of ccl_helpers.runtime: scales, device choice, seeding and determinism, CI
detection, progress bars."""

from __future__ import annotations

import contextlib
import os
import random

import numpy as np
import pytest
import torch
from bad_calls import bad_call, lacking_device

from ccl_helpers import runtime

COUNTS = dict(smoke=1, standard=2, paper=3)

BAD_CALLS = [
    bad_call(runtime.scale, "CCL_SCALE", environment={"CCL_SCALE": "huge"}),
    bad_call(runtime.scale, "CCL_SCALE", environment={"CCL_SCALE": " "}),
    bad_call(runtime.by_scale, "CCL_SCALE", **COUNTS, environment={"CCL_SCALE": "x"}),
    bad_call(runtime.steps, "standard", smoke=1, standard=0, paper=3),
    bad_call(runtime.steps, "paper", smoke=1, standard=2, paper=2.5),
    bad_call(runtime.steps, "smoke", smoke=True, standard=2, paper=3),
    bad_call(runtime.steps, "CCL_SCALE", **COUNTS, environment={"CCL_SCALE": "big"}),
    bad_call(
        runtime.steps,
        "CCL_PAPER_STEPS",
        **COUNTS,
        environment={"CCL_SCALE": "paper", "CCL_PAPER_STEPS": "many"},
    ),
    bad_call(
        runtime.evals,
        "CCL_PAPER_STEPS",
        **COUNTS,
        environment={"CCL_SCALE": "standard", "CCL_PAPER_STEPS": "0"},
    ),
    bad_call(runtime.device, "CCL_DEVICE", environment={"CCL_DEVICE": "gpu"}),
    bad_call(runtime.device, "CCL_DEVICE", environment={"CCL_DEVICE": "cuda:99"}),
    bad_call(
        runtime.device, "CCL_DEVICE", environment={"CCL_DEVICE": lacking_device()}
    ),
    bad_call(runtime.precision, "CCL_PRECISION", environment={"CCL_PRECISION": "fp16"}),
    bad_call(runtime.autocast, "device", "gpu"),
    bad_call(runtime.autocast, "device", lacking_device()),
    bad_call(runtime.autocast, "device", 0),
    bad_call(
        runtime.autocast, "CCL_PRECISION", "cpu", environment={"CCL_PRECISION": "fp8"}
    ),
    bad_call(
        runtime.pin_cpu_kernels,
        "CCL_CPU_KERNELS",
        environment={"CCL_CPU_KERNELS": "avx512"},
    ),
    bad_call(runtime.setup, "seed", -1, quiet=True),
    bad_call(runtime.setup, "seed", 1.5, quiet=True),
    bad_call(runtime.setup, "threads", 0, threads=0, quiet=True),
    bad_call(runtime.setup, "quiet", quiet="yes"),
    bad_call(
        runtime.setup, "CCL_THREADS", quiet=True, environment={"CCL_THREADS": "all"}
    ),
    bad_call(
        runtime.setup, "CCL_DEVICE", quiet=True, environment={"CCL_DEVICE": "gpu"}
    ),
    bad_call(runtime.setup, "CCL_SCALE", quiet=True, environment={"CCL_SCALE": "huge"}),
    bad_call(runtime.progress, "iterable", 100),
    bad_call(runtime.glue, "name", 0.5, "p_cc"),  # the arguments swapped
    bad_call(runtime.glue, "display", "p_cc", 0.5, display="yes"),
]
"""The bad calls of ``runtime``'s public callables but two that take no value to
refuse: ``under_ci`` (any value of ``CI`` but '', 0, false, no is true: CI services set
it to various words) and ``plain_number`` (any value, returned as it is unless a NumPy
scalar or a one-element tensor)."""


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()


@pytest.fixture
def restore_torch_state(monkeypatch):
    """``setup`` changes process-wide state: put it back after the test."""
    deterministic = torch.are_deterministic_algorithms_enabled()
    threads = torch.get_num_threads()
    benchmark = torch.backends.cudnn.benchmark
    monkeypatch.delenv(
        "CUBLAS_WORKSPACE_CONFIG", raising=False
    )  # restored (or removed) on teardown
    monkeypatch.delenv("CCL_THREADS", raising=False)
    monkeypatch.delenv("CCL_DEVICE", raising=False)
    yield
    torch.use_deterministic_algorithms(deterministic)
    torch.set_num_threads(threads)
    torch.backends.cudnn.benchmark = benchmark


# ---------------------------------------------------------------- scale


def test_scale_defaults_to_standard(monkeypatch):
    monkeypatch.delenv("CCL_SCALE", raising=False)
    assert runtime.scale() == "standard"


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("smoke", "smoke"),
        ("standard", "standard"),
        ("paper", "paper"),
        (" Smoke ", "smoke"),
        ("PAPER", "paper"),
    ],
)
def test_scale_reads_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("CCL_SCALE", raw)
    assert runtime.scale() == expected


@pytest.mark.parametrize("raw", ["tiny", "full", "standard2", "1"])
def test_unknown_scale_raises(monkeypatch, raw):
    monkeypatch.setenv("CCL_SCALE", raw)
    with pytest.raises(ValueError, match="CCL_SCALE"):
        runtime.scale()


@pytest.mark.parametrize("raw, expected", [("smoke", 1), ("standard", 2), ("paper", 3)])
def test_by_scale_picks_the_value_of_the_current_scale(monkeypatch, raw, expected):
    monkeypatch.setenv("CCL_SCALE", raw)
    assert runtime.by_scale(smoke=1, standard=2, paper=3) == expected


def test_by_scale_raises_on_unknown_scale(monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "huge")
    with pytest.raises(ValueError):
        runtime.by_scale(smoke=1, standard=2, paper=3)


@pytest.mark.parametrize(
    "raw, cap, expected",
    [
        ("smoke", "", 10),
        ("standard", "", 200),
        ("paper", "", 3000),
        ("paper", "2", 2),
        ("paper", " 5000 ", 3000),  # a cap above the count leaves it
        ("standard", "2", 200),  # the cap is for the paper scale only
        ("smoke", "2", 10),
    ],
)
def test_steps_caps_the_paper_scale_only(monkeypatch, raw, cap, expected):
    monkeypatch.setenv("CCL_SCALE", raw)
    monkeypatch.setenv("CCL_PAPER_STEPS", cap)
    assert runtime.steps(smoke=10, standard=200, paper=3000) == expected


@pytest.mark.parametrize("cap", ["0", "-3", "two", "1.5"])
def test_steps_rejects_a_bad_cap(monkeypatch, cap):
    monkeypatch.setenv("CCL_SCALE", "paper")
    monkeypatch.setenv("CCL_PAPER_STEPS", cap)
    with pytest.raises(ValueError, match="CCL_PAPER_STEPS"):
        runtime.steps(smoke=1, standard=2, paper=3)


@pytest.mark.parametrize(
    "raw, cap, expected",
    [
        ("smoke", "", 5),
        ("standard", "", 50),
        ("paper", "", 500),
        ("paper", "2", 5),  # the dry run: the smoke size
        ("standard", "2", 50),
    ],
)
def test_evals_take_the_smoke_size_in_the_dry_run_only(monkeypatch, raw, cap, expected):
    monkeypatch.setenv("CCL_SCALE", raw)
    monkeypatch.setenv("CCL_PAPER_STEPS", cap)
    assert runtime.evals(smoke=5, standard=50, paper=500) == expected
    monkeypatch.setenv("CCL_PAPER_STEPS", "0")
    if raw == "paper":
        with pytest.raises(ValueError, match="CCL_PAPER_STEPS"):
            runtime.evals(smoke=5, standard=50, paper=500)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_steps_rejects_a_bad_count(monkeypatch, bad):
    monkeypatch.setenv("CCL_SCALE", "smoke")
    with pytest.raises(ValueError, match="standard"):
        runtime.steps(smoke=1, standard=bad, paper=3)


# ---------------------------------------------------------------- device


def test_device_honours_ccl_device(monkeypatch):
    monkeypatch.setenv("CCL_DEVICE", "cpu")
    assert runtime.device() == torch.device("cpu")
    monkeypatch.setenv("CCL_DEVICE", "meta")
    assert runtime.device() == torch.device("meta")


@pytest.mark.parametrize("forced", ["cuda", "cuda:0", "mps", "tpu", "gpu please"])
def test_device_rejects_a_ccl_device_this_machine_lacks(
    restore_torch_state, monkeypatch, forced
):
    """Without CUDA and MPS, CCL_DEVICE=cuda (or mps, or no device at all) is a
    ValueError naming the variable and what is available, from device() and from
    setup() before it seeds anything."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.setenv("CCL_DEVICE", forced)
    message = (
        r"CCL_DEVICE must name a device available on this machine \(cpu\), "
        rf"got '{forced}'"
    )
    with pytest.raises(ValueError, match=message):
        runtime.device()
    state = torch.get_rng_state()
    with pytest.raises(ValueError, match=message):
        runtime.setup(seed=5, quiet=True)
    assert torch.equal(torch.get_rng_state(), state)  # nothing seeded


def test_device_names_cuda_and_mps_when_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.setenv("CCL_DEVICE", "cuda:1")
    assert runtime.device() == torch.device("cuda", 1)
    monkeypatch.setenv("CCL_DEVICE", "mps")
    assert runtime.device() == torch.device("mps")
    monkeypatch.setenv("CCL_DEVICE", "cuda:2")
    with pytest.raises(ValueError, match=r"\(cpu, cuda \(indices 0\.\.1\), mps\)"):
        runtime.device()


def test_a_device_argument_this_machine_lacks_is_named(monkeypatch):
    """The Device rule of every device argument: autocast("cuda") on a machine without
    CUDA raises, naming the argument and the devices available (bf16 is not dropped
    silently)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    message = r"device must name a device available on this machine \(cpu\), got"
    for lacking in ("cuda", "cuda:0", torch.device("mps")):
        with pytest.raises(ValueError, match=message):
            runtime.autocast(lacking)
    assert isinstance(runtime.autocast("meta"), contextlib.nullcontext)


def test_device_default_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv("CCL_DEVICE", raising=False)
    if torch.cuda.is_available():
        expected = "cuda"
    elif (
        getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available()
    ):
        expected = "mps"
    else:
        expected = "cpu"
    assert runtime.device().type == expected


def test_device_falls_back_to_cpu_without_accelerators(monkeypatch):
    monkeypatch.delenv("CCL_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert runtime.device() == torch.device("cpu")


def test_device_picks_cuda_when_available(monkeypatch):
    monkeypatch.delenv("CCL_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert runtime.device() == torch.device("cuda")


# ---------------------------------------------------------------- under_ci and progress


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("1", True),
        ("true", True),
        ("True", True),
        ("yes", True),
        (" on ", True),
        ("", False),
        ("0", False),
        ("false", False),
        ("FALSE", False),
        ("no", False),
        (None, False),
    ],
)
def test_under_ci(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", raw)
    assert runtime.under_ci() is expected


def test_progress_is_disabled_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "1")
    bar = runtime.progress(range(5))
    assert bar.disable
    assert list(bar) == [0, 1, 2, 3, 4]


def test_progress_is_enabled_outside_ci(monkeypatch):
    monkeypatch.setenv("CI", "0")
    bar = runtime.progress(range(3))
    try:
        assert not bar.disable
        assert list(bar) == [0, 1, 2]
    finally:
        bar.close()


def test_progress_explicit_disable_wins(monkeypatch):
    monkeypatch.setenv("CI", "0")
    assert runtime.progress(range(2), disable=True).disable


# ---------------------------------------------------------------- setup


def test_setup_makes_random_draws_reproducible(restore_torch_state):
    runtime.setup(7, threads=1)
    first = (torch.rand(5), np.random.rand(3), random.random())
    runtime.setup(7, threads=1)
    second = (torch.rand(5), np.random.rand(3), random.random())
    torch.testing.assert_close(first[0], second[0], rtol=0, atol=0)
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    runtime.setup(8, threads=1)
    assert not torch.equal(torch.rand(5), first[0])


def test_setup_seeds_like_manual_seed(restore_torch_state):
    runtime.setup(3, threads=1)
    drawn = torch.rand(4)
    torch.manual_seed(3)
    torch.testing.assert_close(drawn, torch.rand(4), rtol=0, atol=0)


def test_setup_turns_on_determinism_and_sets_threads(restore_torch_state):
    torch.use_deterministic_algorithms(False)
    returned = runtime.setup(0, threads=1)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == 1
    assert not torch.backends.cudnn.benchmark
    assert returned == runtime.device()


def test_setup_says_what_it_set(restore_torch_state, monkeypatch, capsys):
    monkeypatch.setenv("CCL_SCALE", "smoke")
    monkeypatch.delenv("CCL_THREADS", raising=False)
    runtime.setup(3)
    said = capsys.readouterr().out
    assert "scale smoke" in said and "seed 3" in said
    assert f"device {runtime.device().type}" in said
    assert "torch on 1 CPU thread " in said and "CCL_THREADS" in said
    runtime.setup(3, threads=2, quiet=True)
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="quiet"):
        runtime.setup(3, quiet="yes")


def test_setup_reads_ccl_threads(restore_torch_state, monkeypatch):
    monkeypatch.setenv("CCL_THREADS", "2")
    runtime.setup(0)
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize(
    "scale, expected", [("smoke", 1), ("standard", 1), ("paper", os.cpu_count() or 1)]
)
def test_setup_default_threads_by_scale(
    restore_torch_state, monkeypatch, scale, expected
):
    monkeypatch.delenv("CCL_THREADS", raising=False)
    monkeypatch.setenv("CCL_SCALE", scale)
    runtime.setup(0)
    assert torch.get_num_threads() == expected


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_setup_rejects_bad_seed(restore_torch_state, seed):
    with pytest.raises(ValueError, match="seed"):
        runtime.setup(seed)


@pytest.mark.parametrize("threads", [0, -2, "2", 1.5])
def test_setup_rejects_bad_threads(restore_torch_state, threads):
    with pytest.raises(ValueError, match="threads"):
        runtime.setup(0, threads=threads)


@pytest.mark.parametrize("value", ["two", "0", "-2", "1.5", ""])
def test_setup_rejects_bad_ccl_threads(restore_torch_state, monkeypatch, value):
    monkeypatch.setenv("CCL_THREADS", value)
    with pytest.raises(ValueError, match="CCL_THREADS must be an integer ≥ 1"):
        runtime.setup(0)


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.float64(0.25), 0.25),
        (np.int64(3), 3),
        (np.bool_(True), True),
        (torch.tensor(1.5), 1.5),
        (torch.tensor([2]), 2),
        (0.75, 0.75),
        ("text", "text"),
    ],
)
def test_plain_number_unwraps_numpy_and_tensor_scalars(value, expected):
    result = runtime.plain_number(value)
    assert result == expected and type(result) is type(expected)
    assert repr(result) == repr(
        expected
    )  # what MyST-NB evaluates to format {glue:text}`name:.3f`


def test_plain_number_keeps_arrays():
    array = np.arange(3.0)
    assert runtime.plain_number(array) is array


def _has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo") as info:
            return " avx2" in info.read()
    except OSError:
        return False


def _run_python(script: str, **env) -> str:
    """The last line ``script`` prints in a fresh interpreter, then all it printed,
    with the kernel variables of this process unset and ``env`` set."""
    import subprocess
    import sys

    from ccl_helpers.runtime import _CPU_KERNELS

    unset = {*_CPU_KERNELS, "CCL_CPU_KERNELS"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return "\n".join([done.stdout.strip().splitlines()[-1], done.stdout, done.stderr])


def test_importing_the_package_changes_nothing_in_the_process():
    """No variable set, no matplotlib, seaborn or sympy loaded, no CPU kernel chosen
    (ATen's capability is still read from the variable after the import); plotting
    and the sympy derivations load on first use."""
    script = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import ccl_helpers, torch\n"
        "heavy = ('matplotlib', 'seaborn', 'sympy')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "same = dict(os.environ) == before\n"
        "os.environ['ATEN_CPU_CAPABILITY'] = 'default'\n"
        "capability = torch.backends.cpu.get_cpu_capability()\n"
        "ccl_helpers.plotting, ccl_helpers.multimodal.symbolic_norm_identity\n"
        "later = [m for m in heavy if m in sys.modules]\n"
        "print(same, loaded, capability, later)\n"
    )
    last = _run_python(script).splitlines()[0]
    assert last == "True [] DEFAULT ['matplotlib', 'seaborn', 'sympy']"


@pytest.mark.skipif(
    not _has_avx2(), reason="the CPU kernels are pinned on x86 with AVX2"
)
@pytest.mark.parametrize(
    "pin", ["ccl_helpers.setup(quiet=True)", "ccl_helpers.pin_cpu_kernels()"]
)
def test_setup_holds_the_cpu_kernels_to_avx2(pin):
    """setup (or pin_cpu_kernels alone), before torch runs a kernel, selects torch's
    and oneDNN's AVX2 kernels (on an AVX-512 machine too), so stored outputs are the
    same on every x86 machine; a variable the user set is kept; CCL_CPU_KERNELS=native
    leaves the machine's own kernels, those of torch without ccl_helpers."""
    conv = (
        "torch.nn.functional.conv2d(torch.randn(2, 1, 8, 8), torch.randn(4, 1, 3, 3))\n"
        "print(torch.backends.cpu.get_cpu_capability())\n"
    )
    script = f"import torch, ccl_helpers\n{pin}\n{conv}"
    pinned = _run_python(script, ONEDNN_VERBOSE="1")
    assert pinned.splitlines()[0] == "AVX2"
    assert ",jit:avx2," in pinned
    kept = _run_python(script, ATEN_CPU_CAPABILITY="default")
    assert kept.splitlines()[0] == "DEFAULT"
    native = _run_python(script, CCL_CPU_KERNELS="native").splitlines()[0]
    assert native == _run_python(f"import torch\n{conv}").splitlines()[0]
