"""Benchmark: Wen's L_S (eq. 3.2) with its exact expectation over all C(n−1, k) negative
sets, vectorised (index tensor + log-sum-exp, ``ccl_helpers.wen.contrastive_loss``)
against the direct Python loop over anchors and sets
(``ccl_helpers.wen.contrastive_loss_loop``), side by side in one run.

Usage: python benchmarks/bench_exact_expectation.py
    [--repeats R] [--loop-repeats R] [--threads N] [--device D]

Prints, for each (n, k), the number of (anchor, set) pairs, the median wall-clock time
of each implementation, their ratio and the absolute difference of the two values, and
exits with status 1 if the vectorised version is less than 50 times faster on any case
with at least 1,000 (anchor, set) pairs (below that, the loop is too short for the ratio
to mean much: its fixed cost per call dominates the vectorised version).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import torch

from ccl_helpers import wen

CASES = [(8, 2), (12, 3), (16, 3), (20, 2), (24, 2)]
"""(n, k) pairs both implementations can run in seconds (at most a few thousand sets per
anchor)."""

TARGET = 50.0
MIN_SETS = 1000


def time_exact_expectation(
    q: torch.Tensor,
    k: torch.Tensor,
    n_negatives: int,
    *,
    repeats: int = 5,
    loop_repeats: int = 3,
) -> dict[str, float]:
    """Median wall-clock seconds of ``wen.contrastive_loss`` (vectorised, index tensor
    built each call) and of ``wen.contrastive_loss_loop`` on the same q, k (n, d),
    measured side by side (no gradient).

    Returns ``vectorised_s``, ``loop_s``, ``ratio`` = loop_s / vectorised_s,
    ``abs_difference`` of the two values, ``n_sets`` = n·C(n−1, k)."""
    for name, value in (("repeats", repeats), ("loop_repeats", loop_repeats)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")

    def timed(function, times):
        values, seconds = [], []
        for _ in range(times):
            if q.is_cuda:
                torch.cuda.synchronize(q.device)
            start = time.perf_counter()
            value = function()
            if q.is_cuda:
                torch.cuda.synchronize(q.device)
            seconds.append(time.perf_counter() - start)
            values.append(value)
        return values[-1], statistics.median(seconds)

    with torch.no_grad():
        wen.contrastive_loss(q, k, n_negatives)  # warm-up, and the checks of q, k
        fast, fast_s = timed(lambda: wen.contrastive_loss(q, k, n_negatives), repeats)
        slow, slow_s = timed(
            lambda: wen.contrastive_loss_loop(q, k, n_negatives), loop_repeats
        )
    return {
        "vectorised_s": fast_s,
        "loop_s": slow_s,
        "ratio": slow_s / fast_s,
        "abs_difference": float((fast - slow).abs()),
        "n_sets": q.shape[0] * math.comb(q.shape[0] - 1, n_negatives),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=30,
        help="repetitions of the vectorised version (median)",
    )
    parser.add_argument(
        "--loop-repeats", type=int, default=3, help="repetitions of the loop (median)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--dim", type=int, default=10, help="output dimension d")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(0)
    print(
        f"{'n':>3} {'k':>2} {'sets':>7} {'vectorised':>11} "
        f"{'loop':>10} {'ratio':>7} {'|diff|':>9}"
    )
    worst = float("inf")
    for n, k in CASES:
        q = torch.randn(n, args.dim, generator=generator).to(args.device)
        keys = torch.randn(n, args.dim, generator=generator).to(args.device)
        result = time_exact_expectation(
            q, keys, k, repeats=args.repeats, loop_repeats=args.loop_repeats
        )
        if result["n_sets"] >= MIN_SETS:
            worst = min(worst, result["ratio"])
        print(
            f"{n:>3} {k:>2} {result['n_sets']:>7} "
            f"{result['vectorised_s'] * 1e3:>9.2f}ms "
            f"{result['loop_s'] * 1e3:>8.1f}ms {result['ratio']:>6.0f}x "
            f"{result['abs_difference']:>9.1e}"
        )
    print(
        f"smallest speed-up on cases with ≥ {MIN_SETS} sets: "
        f"{worst:.0f}x (target ≥ {TARGET:.0f}x)"
    )
    return 0 if worst >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
