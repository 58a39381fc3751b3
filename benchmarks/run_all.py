"""Run every benchmark, print one table (benchmark, measured, goal, met/missed) with the
machine named, and write it to benchmarks/results.md and into benchmarks/README.md
(between the bench-table markers).

Usage: python benchmarks/run_all.py [--full] [--threads N] [--device D]

Each figure is a ratio of two measurements taken side by side in one run (median of
repetitions).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("CI", "1")  # no progress bars

from ccl_helpers import pin_cpu_kernels  # noqa: E402

pin_cpu_kernels()  # the AVX2 kernels of the book's runs, before any kernel runs

import bench_chunked  # noqa: E402
import bench_losses  # noqa: E402
import bench_vmap_seeds  # noqa: E402


def machine(device: str) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo")
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    gpu = (
        f", {torch.cuda.get_device_name()}"
        if torch.device(device).type == "cuda"
        else ""
    )
    return (
        f"{cpu}, {os.cpu_count()} cores{gpu}; {platform.system()} "
        f"{platform.release()}; "
        f"Python {platform.python_version()}, torch "
        f"{torch.__version__}, {torch.get_num_threads()} thread(s)"
    )


CHUNKED_NEGATIVES = (16_384, 65_536, 262_144)
"""Queue sizes of the chunked-InfoNCE benchmark: the chunked peak should stay flat while
the unchunked one grows."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full",
        action="store_true",
        help="the losses' full sweep (batch up to 8192, dim up to 2048)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: the machine is shared)",
    )
    parser.add_argument(
        "--device", default="cpu", help="device for the benchmarks (cpu or cuda)"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = []  # (benchmark, measured, goal, met)

    print("== exact expectation (Chapter 3): vectorised vs Python loop", flush=True)
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "bench_exact_expectation.py"),
            "--threads",
            str(args.threads),
            "--device",
            args.device,
        ],
        capture_output=True,
        text=True,
    )
    print(done.stdout, done.stderr, sep="")
    found = re.search(
        r"smallest speed-up on cases with ≥ (\d+) sets: (\d+)x", done.stdout
    )
    if found:
        ratio = float(found.group(2))
        rows.append(
            (
                "Exact expectation over negative sets, vectorised vs loop "
                f"(smallest over cases ≥ {found.group(1)} sets)",
                f"{ratio:.0f}×",
                "≥ 50×",
                ratio >= 50,
            )
        )

    print("== seeds at once (vmap) vs one after another", flush=True)
    for r in bench_vmap_seeds.run(steps=30, repeats=3, device=args.device):
        print(r, flush=True)
        shares, ceiling = "", ""
        if not math.isnan(r["ceiling"]):  # not measured on CUDA
            shares = (
                "; matrix products and convolutions "
                f"{r['compute_share_stacked']:.0%} / "
                f"{r['compute_share_sequential']:.0%} of the time"
            )
            ceiling = f" (ceiling {r['ceiling']:.1f}×)"
        rows.append(
            (
                f"Models at once (vmap) vs one by one: {r['model']}, "
                f"{r['steps']} steps "
                f"({r['stacked_s']:.2f} s vs {r['sequential_s']:.2f} s{shares})",
                f"{r['ratio']:.1f}×{ceiling}",
                f"≥ {r['goal']:.0f}×",
                r["ratio"] >= r["goal"],
            )
        )

    print("== losses vs pytorch-metric-learning NTXentLoss", flush=True)
    for r in bench_losses.run(full=args.full, repeats=3, device=args.device):
        print(r, flush=True)
        name = (
            f"{r['loss']} fwd+bwd vs pml NTXentLoss, B={r['batch']}, "
            f"d={r['dim']}, N={r['negatives']} "
            f"(ours {r['ours_s'] * 1e3:.0f} ms"
        )
        if r["pml_fits"]:
            rows.append(
                (
                    name
                    + (
                        f", pml {r['pml_s'] * 1e3:.0f} ms; |Δvalue| "
                        f"{r['abs_difference']:.0e})"
                    ),
                    f"{r['ratio']:.1f}× faster",
                    "≥ 1× (same value to 1e-6)",
                    r["ratio"] >= 1 and r["equal"],
                )
            )
        else:
            rows.append(
                (
                    name + "; pml not run: its pair matrix would exceed "
                    f"{bench_losses.PML_MAX_BYTES / 2**30:.0f} GiB)",
                    "pml does not fit",
                    "≥ 1×",
                    None,
                )
            )

    print(
        "== InfoNCE with a MoCo queue (N = 16,384 … 262,144 "
        "negatives): chunked vs unchunked",
        flush=True,
    )
    chunked = [
        bench_chunked.run(negatives=n, threads=args.threads, device=args.device)
        for n in CHUNKED_NEGATIVES
    ]
    for r in chunked:
        print(r, flush=True)
        rows.append(
            (
                f"InfoNCE N={r['negatives']}, B={r['batch']}, d={r['dim']}, "
                f"chunk {r['chunk']}: peak memory "
                f"unchunked/chunked ({r['unchunked']['peak_bytes'] / 2**20:.0f} MiB vs "
                f"{r['chunked']['peak_bytes'] / 2**20:.0f} MiB), time "
                "chunked/unchunked "
                f"({r['chunked']['time_s'] * 1e3:.0f} ms vs "
                f"{r['unchunked']['time_s'] * 1e3:.0f} ms; relative "
                f"|Δvalue| {r['relative_difference']:.0e})",
                f"{r['memory_ratio']:.1f}× less memory, "
                f"{1 / r['time_ratio']:.1f}× faster",
                "less memory, same value (1e-5)",
                r["memory_ratio"] > 1 and r["relative_difference"] <= 1e-5,
            )
        )
    first, last = chunked[0], chunked[-1]
    growth = {
        side: last[side]["peak_bytes"] / max(first[side]["peak_bytes"], 1)
        for side in ("chunked", "unchunked")
    }
    rows.append(
        (
            "InfoNCE peak memory as N grows "
            f"{last['negatives'] // first['negatives']}× "
            f"({first['negatives']} → "
            f"{last['negatives']}): chunked "
            f"{first['chunked']['peak_bytes'] / 2**20:.0f} → "
            f"{last['chunked']['peak_bytes'] / 2**20:.0f} MiB, unchunked "
            f"{first['unchunked']['peak_bytes'] / 2**20:.0f}"
            f" → {last['unchunked']['peak_bytes'] / 2**20:.0f} MiB",
            f"chunked ×{growth['chunked']:.1f}, unchunked ×{growth['unchunked']:.1f}",
            "chunked bounded (× < 2)",
            growth["chunked"] < 2,
        )
    )

    status = {True: "met", False: "**missed**", None: "—"}
    lines = [
        f"Machine: {machine(args.device)}",
        "",
        "| benchmark | measured | goal | status |",
        "|---|---|---|---|",
    ]
    lines += [f"| {b} | {m} | {g} | {status[ok]} |" for b, m, g, ok in rows]
    table = "\n".join(lines)
    print("\n" + table)
    (HERE / "results.md").write_text(
        "# Benchmark results (`make bench`)\n\n" + table + "\n"
    )
    write_readme_table(HERE / "README.md", table)
    return 0


README_START, README_END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"


def write_readme_table(readme: Path, table: str) -> None:
    """Replace the text between the bench-table markers of ``readme`` with ``table``."""
    text = readme.read_text()
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"{readme} must contain {README_START} … {README_END}")
    readme.write_text(
        text[: start + len(README_START)] + "\n" + table + "\n" + text[end:]
    )


if __name__ == "__main__":
    sys.exit(main())
