"""Tests of ccl_helpers.launch: the entry point under ``torchrun`` with 2 CPU processes
(gloo) against a plain one-process run with the same global batch (same per-step
losses), and its option checks.

Both runs are started once per module, side by side, each under a timeout (~10 s on 2
cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from bad_calls import bad_call

import ccl_helpers
from ccl_helpers import launch

REPO = Path(__file__).resolve().parents[1]
OPTIONS = ["--scale", "smoke", "--steps", "4", "--batch-size", "16", "--seed", "3"]
TIMEOUT_S = 120.0  # the runs need ~10 s; this only guards against a hang
RTOL = 1e-5


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Run the entry point with 2 processes (torchrun) and with 1 (plain python); return
    each run's exit code, output and JSON."""
    directory = tmp_path_factory.mktemp("launch")
    commands = {
        "two": [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            "-m",
            "ccl_helpers.launch",
            *OPTIONS,
            "--out",
            str(directory / "two.json"),
        ],
        "one": [
            sys.executable,
            "-m",
            "ccl_helpers.launch",
            *OPTIONS,
            "--out",
            str(directory / "one.json"),
        ],
    }
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "CCL_THREADS": "1",
        "CI": "1",
    }  # CI: no progress bars
    processes = {
        name: subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, command in commands.items()
    }
    results = {}
    for name, process in processes.items():
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        path = directory / f"{name}.json"
        results[name] = {
            "returncode": process.returncode,
            "stdout": stdout,
            "stderr": stderr,
            "json": json.loads(path.read_text()) if path.exists() else None,
        }
    return results


@pytest.mark.parametrize(
    "name, world_size, backend", [("two", 2, "gloo"), ("one", 1, None)]
)
def test_run_exits_0_and_writes_json(runs, name, world_size, backend):
    run = runs[name]
    assert run["returncode"] == 0, run["stderr"][-3000:]
    result = run["json"]
    assert (
        result["world_size"] == world_size
        and result["backend"] == backend
        and result["device"] == "cpu"
    )
    assert (result["scale"], result["steps"], result["batch_size"]) == ("smoke", 4, 16)
    assert len(result["losses"]) == 4 and all(
        0 < loss < 10 for loss in result["losses"]
    )
    assert (
        0.1 < result["linear_probe_accuracy"] <= 1 and 0.1 < result["knn_accuracy"] <= 1
    )
    summary = [line for line in run["stdout"].splitlines() if "NT-Xent" in line]
    assert len(summary) == 1 and summary[0].startswith(
        f"{world_size} process"
    )  # rank 0 only


def test_two_processes_equal_one_process(runs):
    # every rank trains on its shard of the same global batch, with negatives from the
    # whole batch
    torch.testing.assert_close(
        torch.tensor(runs["two"]["json"]["losses"], dtype=torch.float64),
        torch.tensor(runs["one"]["json"]["losses"], dtype=torch.float64),
        rtol=RTOL,
        atol=0,
    )


def test_import_adds_distributed_without_a_process_group():
    assert (
        "distributed" in ccl_helpers.__all__
        and ccl_helpers.distributed.__name__ == "ccl_helpers.distributed"
    )
    assert not torch.distributed.is_initialized()


def test_defaults_follow_the_scale(monkeypatch):
    monkeypatch.setenv("CCL_SCALE", "smoke")
    options = launch._parse_args([])
    assert (options.scale, options.steps, options.batch_size) == ("smoke", 8, 32)
    options = launch._parse_args(["--scale", "paper", "--steps", "5"])
    assert (options.scale, options.steps, options.batch_size) == ("paper", 5, 256)
    assert (options.temperature, options.lr, options.out) == (0.5, 1e-3, None)


@pytest.mark.parametrize(
    "argv, world_size, message",
    [
        (
            ["--batch-size", "7"],
            2,
            r"--batch-size .* multiple of world_size, the number of processes \(2\), "
            "got 7",
        ),
        (["--batch-size", "8"], 2**50, "world_size, .* got 1125899906842624"),
        (["--batch-size", "8"], 9, "world_size, .* ≤ --batch-size .* got 9"),
        (["--batch-size", "1"], 1, "--batch-size"),
        (["--steps", "0"], 1, "--steps"),
        (["--temperature", "0"], 1, "--temperature"),
        (["--temperature", "nan"], 1, "--temperature"),
        (["--lr", "-1"], 1, "--lr"),
        (["--lr", "inf"], 1, "--lr"),
        (["--seed", "-1"], 1, "--seed"),
    ],
)
def test_bad_options_raise(argv, world_size, message):
    with pytest.raises(ValueError, match=message):
        launch._check_options(
            launch._parse_args(["--scale", "smoke", *argv]), world_size
        )


@pytest.mark.parametrize("out", ["missing/results.json", "."])
def test_a_bad_out_fails_before_the_run(tmp_path, monkeypatch, capsys, out):
    """--out into a missing folder (or onto a folder) is a ValueError naming --out,
    raised before any training; the command exits 1 with it."""
    monkeypatch.setattr(launch, "_run", lambda *args: pytest.fail("the run started"))
    argv = ["--scale", "smoke", "--out", str(tmp_path / out)]
    with pytest.raises(ValueError, match="--out must be a file path"):
        launch.main(argv)
    assert launch._command(argv) == 1
    assert "--out must be a file path" in capsys.readouterr().err


def test_a_ccl_device_this_machine_lacks_fails_at_once(monkeypatch, capsys):
    monkeypatch.setattr(launch, "_run", lambda *args: pytest.fail("the run started"))
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.setenv("CCL_DEVICE", "cuda")
    assert launch._command(["--scale", "smoke"]) == 1
    err = capsys.readouterr().err
    assert "CCL_DEVICE must name a device available on this machine (cpu)" in err


def test_good_options_pass():
    launch._check_options(
        launch._parse_args(["--scale", "smoke", "--batch-size", "12"]), 4
    )


def test_unknown_scale_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        launch._parse_args(["--scale", "huge"])
    assert "invalid choice" in capsys.readouterr().err


def test_help_says_what_it_trains_in_plain_words_with_the_defaults(capsys):
    with pytest.raises(SystemExit):
        launch._parse_args(["--help"])
    text = capsys.readouterr().out
    assert "MLP encoder" in text and "8x8 digits" in text and "torchrun" in text
    for default in ("(default: 0.5)", "(default: 0.001)", "(default: 0)"):
        assert default in text
    assert "standard    150 steps, batch  64" in text
    assert "``" not in text and ":func:" not in text and ":data:" not in text


SMOKE = ["--scale", "smoke"]

BAD_CALLS = [
    bad_call(launch.main, "--steps", [*SMOKE, "--steps", "0"]),
    bad_call(launch.main, "--batch-size", [*SMOKE, "--batch-size", "1"]),
    bad_call(launch.main, "--lr", [*SMOKE, "--lr", "-1"]),
    bad_call(launch.main, "--temperature", [*SMOKE, "--temperature", "nan"]),
    bad_call(launch.main, "--seed", [*SMOKE, "--seed", "-1"]),
    bad_call(launch.main, "--out must be a file path", [*SMOKE, "--out", "."]),
    bad_call(launch.main, "CCL_DEVICE", SMOKE, environment={"CCL_DEVICE": "bogus"}),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
