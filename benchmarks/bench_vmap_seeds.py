"""Benchmark: several seeds trained at once (parameters stacked, forward passes
vectorised with ``torch.func.vmap``: ``ccl_helpers.train.StackedModel`` +
``train.train``) against the same seeds trained one after another (one ``nn.Module`` and
one optimiser per seed, a plain loop), side by side in one run.

Usage: python benchmarks/bench_vmap_seeds.py
    [--steps T] [--repeats R] [--threads N] [--device D]

One case per model the chapters train at the ``standard`` scale, with the chapter's
loss, batch size, optimiser and number of stacked models (seeds, or seeds ×
configurations in Chapter 5). Both sides take the same pre-sampled batches (drawn before
the clock starts), the same initialisations and the same number of steps. Prints, per
case, the median wall-clock time of each side over the repetitions, their ratio, the
largest final parameter difference between the sides (each model follows its own
trajectory, so it is rounding only, amplified by Adam's normalisation), and the share of
each side's time spent in matrix products and convolutions (``torch.profiler``).
Stacking performs the same products and convolutions (the same FLOPs, batched), so at
best it removes the rest of the time: the speed-up is at most the Amdahl ceiling 1 /
(compute share of the one-by-one side), reported per case, unless the batched kernels
themselves are faster or slower than the single ones (the stacked side's compute share
shows it). A case whose ceiling is below the goal is
compute-bound and cannot meet it by stacking; one whose ceiling is above the goal but
whose ratio is not spends the difference in the stacked step's fixed costs (``vmap`` and
``functional_call``). Exits with status 1 if any ratio is below the goal (≥ 3× on a CPU,
≥ 5× on a GPU).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._pytree import tree_map

from ccl_helpers import curl, data, models, multineg, runtime, train, wen
from ccl_helpers import supervised_approx as sa

GOAL_CPU, GOAL_GPU = 3.0, 5.0
COMPUTE_OPS = (
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::addbmm",
    "aten::mkldnn_convolution",
    "aten::convolution_backward",
)
"""The kernels of the models' arithmetic: matrix products and convolutions (forward and
backward)."""


@dataclass
class Case:
    """One chapter's training: ``n_models`` copies of ``make_module`` trained on
    ``batches[t]`` (a pytree of tensors with leading dimension n_models) by
    ``optimizer`` (``"adam"`` or ``"sgd"``)."""

    name: str
    make_module: Callable[[], torch.nn.Module]
    loss_fn: Callable[[Callable, Any], torch.Tensor]
    n_models: int
    sample: Callable[[int], Any]
    optimizer: str = "adam"
    lr: float = 1e-3


def cases(device) -> list[Case]:
    """The chapters' standard-scale models (see each notebook's parameter cell), on
    FashionMNIST (2,000 training images) and, for Chapter 3, scikit-learn's digits."""
    generator = torch.Generator(device=device).manual_seed(0)
    images, labels = data.fashion_mnist("train", device=device)
    subset = data.balanced_subset(labels, generator, 200)
    fashion = data.EmpiricalClasses(images[subset], labels[subset])
    digits, _ = data.load_digits(device)
    points = data.unit_sphere(digits[:16])
    triplets = multineg.all_triplets(16, device)
    simclr = {
        "pool": "fashion",
        "strategy": data.BASE,
        "loss": "generalized",
        "similarity": "cosine",
        "alpha": 2.0,
        "lam": 1.0,
    }
    n_ch5 = 16 * 5 + 26  # Chapter 5: 16 arms × 5 seeds + 26 cells of the (α, λ) maps
    ch5_batches = sa.run_batches(
        {"fashion": images[subset]},
        sa.design_runs({"SimCLR": simclr}, n_ch5).drop(columns="arm"),
        64,
        seed=1,
    )
    return [
        Case(
            "Ch. 1 ConvNet, FashionMNIST, batch 64, 3 seeds",
            models.ConvNet,
            curl.block_contrastive_loss,
            3,
            curl.contrastive_batches(fashion, 3, 64, generator),
        ),
        Case(
            "Ch. 2 ConvNet, FashionMNIST, batch 48, N = 35 from a pool of 96, 3 seeds",
            models.ConvNet,
            multineg.contrastive_loss,
            3,
            multineg.contrastive_batches(fashion, 3, 48, 35, generator, pool_size=96),
        ),
        Case(
            "Ch. 3 DeepReLU(64,100,1,10), 16 digits full batch (240 "
            "triplets), GD, 3 seeds",
            lambda: models.DeepReLU(64, 100, 1, 10),
            multineg.triplet_loss,
            3,
            lambda step: (
                points.expand(3, *points.shape),
                triplets.expand(3, *triplets.shape),
            ),
            optimizer="sgd",
            lr=wen.step_size(100, 10, 0.25),
        ),
        Case(
            f"Ch. 5 ConvNet, FashionMNIST, 2 views, batch 64, {n_ch5} models "
            "(16 arms × 5 seeds + 26 map cells)",
            models.ConvNet,
            sa.run_loss,
            n_ch5,
            ch5_batches,
        ),
    ]


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def stacked_loss(
    model: train.StackedModel, loss_fn: Callable[[Callable, Any], torch.Tensor]
) -> Callable[[dict, dict, Any], torch.Tensor]:
    """The stacked models' losses as one function of the stacked state, through the
    public API: (params, buffers, batch) ↦ (S,), seed s's loss ``loss_fn(forward_s,
    batch_s)``, forward_s the per-seed :meth:`StackedModel.functional`, vmapped over the
    leading seed axis of all three (the function ``train.train`` differentiates)."""
    call = model.functional()

    def seed_loss(params: dict, buffers: dict, batch: Any) -> torch.Tensor:
        return loss_fn(lambda x: call(params, buffers, x), batch)

    return torch.func.vmap(seed_loss)


def _stacked(case: Case, batches, device):
    model = train.StackedModel(case.make_module, case.n_models, seed=0, device=device)
    _sync(device)
    start = time.perf_counter()
    train.train(
        model,
        case.loss_fn,
        lambda step: batches[step - 1],
        len(batches),
        lr=case.lr,
        optimizer=case.optimizer,
        desc="stacked",
    )
    _sync(device)
    return time.perf_counter() - start, model


def _sequential(case: Case, batches, device):
    modules, elapsed = [], 0.0
    for i in range(case.n_models):
        torch.manual_seed(i)
        module = case.make_module().to(device)
        optimizer = train.OPTIMIZERS[case.optimizer](module.parameters(), lr=case.lr)
        own = [tree_map(lambda t, i=i: t[i], batch) for batch in batches]
        _sync(device)
        start = time.perf_counter()
        for batch in own:
            optimizer.zero_grad(set_to_none=True)
            case.loss_fn(module, batch).backward()
            optimizer.step()
        _sync(device)
        elapsed += time.perf_counter() - start
        modules.append(module)
    return elapsed, modules


def _compute_share(side, case: Case, batches, device) -> float:
    """The fraction of one run's self CPU time spent in the kernels of
    :data:`COMPUTE_OPS` (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        side(case, batches, device)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    return sum(e.self_cpu_time_total for e in events if e.key in COMPUTE_OPS) / total


def run(steps: int = 30, repeats: int = 5, device=None) -> list[dict]:
    """One row per case: median times of both sides, their ratio, the goal, the
    parameter difference, the matrix-product share of each side's time and the Amdahl
    ceiling of the ratio (NaN on CUDA, where the CPU profile does not time kernels)."""
    device = torch.device(device) if device is not None else runtime.device()
    goal = GOAL_GPU if device.type == "cuda" else GOAL_CPU
    rows = []
    for case in cases(device):
        batches = [case.sample(step) for step in range(1, steps + 1)]
        _stacked(case, batches[:2], device)  # warm-up (vmap tracing, allocator)
        _sequential(case, batches[:2], device)
        stacked_times, sequential_times = [], []
        for _ in range(repeats):  # interleaved, so both see the same load
            stacked_time, model = _stacked(case, batches, device)
            sequential_time, modules = _sequential(case, batches, device)
            stacked_times.append(stacked_time)
            sequential_times.append(sequential_time)
        difference = max(
            (model.params[k][i] - p).abs().max().item()
            for i, module in enumerate(modules)
            for k, p in module.named_parameters()
        )
        stacked_s, sequential_s = (
            statistics.median(stacked_times),
            statistics.median(sequential_times),
        )
        profiled = batches[: min(steps, 10)]
        # on CUDA the CPU profile times kernel launches, not kernels: not measured
        shares = (
            (math.nan, math.nan)
            if device.type == "cuda"
            else tuple(
                _compute_share(side, case, profiled, device)
                for side in (_stacked, _sequential)
            )
        )
        rows.append(
            {
                "model": case.name,
                "models": case.n_models,
                "steps": steps,
                "stacked_s": stacked_s,
                "sequential_s": sequential_s,
                "ratio": sequential_s / stacked_s,
                "goal": goal,
                "max_param_difference": difference,
                "device": str(device),
                "compute_share_stacked": shares[0],
                "compute_share_sequential": shares[1],
                "ceiling": 1 / shares[1],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=int, default=30, help="training steps per model"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="repetitions of each side (median)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (1: the CI machine is shared; "
        "2 threads on 2 busy cores oversubscribe them and every time becomes noise)",
    )
    parser.add_argument(
        "--device", default=None, help="device (default: ccl_helpers.device())"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = run(args.steps, args.repeats, args.device)
    print(
        f"{'case':<84} {'stacked':>8} {'one by one':>10} {'ratio':>6} "
        f"{'max |Δθ|':>9} {'compute share':>13} {'ceiling':>8}"
    )
    for r in rows:
        print(
            f"{r['model']:<84} {r['stacked_s'] * 1e3:>6.0f}ms "
            f"{r['sequential_s'] * 1e3:>8.0f}ms "
            f"{r['ratio']:>5.1f}x {r['max_param_difference']:>9.1e} "
            f"{r['compute_share_stacked']:>5.0%} / "
            f"{r['compute_share_sequential']:.0%} {r['ceiling']:>7.1f}x"
        )
    worst = min(r["ratio"] for r in rows)
    print(
        f"smallest speed-up: {worst:.1f}x (goal ≥ "
        f"{rows[0]['goal']:.0f}x, {rows[0]['device']})"
    )
    return 0 if worst >= rows[0]["goal"] else 1


if __name__ == "__main__":
    sys.exit(main())
