"""Probe (not part of ``make bench``): would compiling the stacked step reach the
seed-stacking goal?

Usage: python benchmarks/bench_compile.py [--cases 0 3] [--steps T] [--threads N]
    [--device D] [--mode M]

For each case of ``bench_vmap_seeds`` (the chapters' standard models), times one
Adam/SGD step of the stacked models with the ``vmap``-ed loss as the book runs it
(eager) and with the same function passed through ``torch.compile``, and the time that
compiling took (the first compiled step). The one-by-one reference is
``bench_vmap_seeds``'s sequential side, per step. Prints, per case: compile time, the
per-step times and the speed-up of each stacked variant over one by one, and the number
of steps after which compiling pays off against the eager stacked step. Compiling starts
from an empty cache (a fresh ``TORCHINDUCTOR_CACHE_DIR``), as on a first run of a
notebook. ``--mode reduce-overhead`` also replays the compiled graphs as CUDA graphs
(on a GPU), the lever for steps that are bound by kernel launches.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(
    prefix="ccl-inductor-"
)  # cold compile, before torch
import bench_vmap_seeds  # noqa: E402
import torch  # noqa: E402

from ccl_helpers import train  # noqa: E402


def _stacked_step_times(case, batches, device, mode: str) -> tuple[float, float, float]:
    """(compile seconds, eager seconds per step, compiled seconds per step) of the
    stacked models."""
    model = train.StackedModel(case.make_module, case.n_models, seed=0, device=device)
    eager = bench_vmap_seeds.stacked_loss(model, case.loss_fn)
    compiled = torch.compile(eager, mode=mode)
    optimizer = train.OPTIMIZERS[case.optimizer](
        list(model.params.values()), lr=case.lr
    )

    def step(loss, batch):
        optimizer.zero_grad(set_to_none=True)
        loss(model.params, model.buffers, batch).sum().backward()
        optimizer.step()

    start = time.perf_counter()
    step(compiled, batches[0])
    compile_s = time.perf_counter() - start
    per_step = []
    for loss in (eager, compiled):
        step(loss, batches[1])  # warm-up
        bench_vmap_seeds._sync(device)
        start = time.perf_counter()
        for batch in batches[2:]:
            step(loss, batch)
        bench_vmap_seeds._sync(device)
        per_step.append((time.perf_counter() - start) / (len(batches) - 2))
    return compile_s, per_step[0], per_step[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases",
        type=int,
        nargs="*",
        help="indices into bench_vmap_seeds.cases (default: all)",
    )
    parser.add_argument("--steps", type=int, default=40, help="steps timed per variant")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--mode",
        default="default",
        choices=["default", "reduce-overhead", "max-autotune-no-cudagraphs"],
        help="torch.compile mode",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cases = bench_vmap_seeds.cases(device)
    chosen = range(len(cases)) if not args.cases else args.cases
    print(
        f"{'case':<84} {'compile':>8} {'one by one':>11} {'eager':>9} "
        f"{'compiled':>9} {'ratio e/c':>10} {'pays after':>11}"
    )
    for index in chosen:
        case = cases[index]
        batches = [case.sample(step) for step in range(1, args.steps + 3)]
        bench_vmap_seeds._sequential(case, batches[:2], device)  # warm-up
        sequential_s, _ = bench_vmap_seeds._sequential(case, batches, device)
        one_by_one = sequential_s / len(batches)
        compile_s, eager, compiled = _stacked_step_times(
            case, batches, device, args.mode
        )
        saving = eager - compiled
        pays = f"{compile_s / saving:,.0f} steps" if saving > 0 else "never"
        print(
            f"{case.name:<84} {compile_s:>7.1f}s "
            f"{one_by_one * 1e3:>9.2f}ms {eager * 1e3:>7.2f}ms "
            f"{compiled * 1e3:>7.2f}ms "
            f"{one_by_one / eager:>4.1f}/{one_by_one / compiled:<4.1f}x "
            f"{pays:>11}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
