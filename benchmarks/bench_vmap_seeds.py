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
each side's time spent in matrix products (``torch.profiler``). Stacking performs the
same matrix products (the same FLOPs, batched), so it can only remove the rest of the
time: the speed-up is at most the Amdahl ceiling 1 / (matrix-product share of the
one-by-one side), reported per case. A case whose ceiling is below the goal is
compute-bound and cannot meet it by stacking; one whose ceiling is above the goal but
whose ratio is not spends the difference in the stacked step's fixed costs (``vmap`` and
``functional_call``). Exits with status 1 if any ratio is below the goal (≥ 3× on a CPU,
≥ 5× on a GPU).
"""

from __future__ import annotations

import argparse
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
from ccl_helpers.losses import generalized_nt_xent_loss

GOAL_CPU, GOAL_GPU = 3.0, 5.0
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm")


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


def _two_views(loss):
    def loss_fn(forward, batch):
        view1, view2, alpha = batch
        return loss(forward(view1), forward(view2), alpha, 1.0)

    return loss_fn


def cases(device) -> list[Case]:
    """The chapters' standard-scale models (see each notebook's parameter cell)."""
    generator = torch.Generator(device=device).manual_seed(0)
    images, labels = data.load_digits(device)
    digits = data.EmpiricalClasses(images, labels)
    class_probs = torch.tensor([0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05])
    synthetic = data.GaussianClasses.random(
        n_classes=8,
        dim=32,
        class_probs=class_probs,
        separation=3.0,
        noise_std=1.0,
        seed=0,
        device=device,
    )
    points = data.unit_sphere(images[:16])
    triplets = wen.all_triplets(16, device)
    n_ch5 = 2 * 32  # Chapter 5's grid: 2 seeds × 32 (loss, α, λ) configurations
    two_views = sa.two_view_batches(images, n_ch5, 64, data.BASE, generator)
    alphas = (
        torch.tensor([1.0, 2.0, 4.0, 8.0], device=device).repeat_interleave(2).repeat(8)
    )
    return [
        Case(
            "Ch. 1 MLP(32,(),16) synthetic, batch 256, 5 seeds",
            lambda: models.MLP(32, hidden=(), out_features=16),
            curl.block_contrastive_loss,
            5,
            curl.contrastive_batches(synthetic, 5, 256, generator),
        ),
        Case(
            "Ch. 1 MLP(64,(256,256),32) digits, batch 128, 5 seeds",
            lambda: models.MLP(64, hidden=(256, 256), out_features=32),
            curl.block_contrastive_loss,
            5,
            curl.contrastive_batches(digits, 5, 128, generator),
        ),
        Case(
            "Ch. 2 MLP(64,(128,),32) digits, batch 32, N = 15, 5 seeds",
            lambda: models.MLP(64, hidden=(128,), out_features=32),
            multineg.contrastive_loss,
            5,
            multineg.contrastive_batches(digits, 5, 32, 15, generator),
        ),
        Case(
            "Ch. 3 DeepReLU(64,100,1,10), 16 points full batch (240 "
            "triplets), GD, 3 seeds",
            lambda: models.DeepReLU(64, 100, 1, 10),
            wen.triplet_loss,
            3,
            lambda step: (
                points.expand(3, *points.shape),
                triplets.expand(3, *triplets.shape),
            ),
            optimizer="sgd",
            lr=wen.step_size(100, 10, 0.25),
        ),
        Case(
            "Ch. 5 MLP(64,(256,),32) digits, 2 views, batch 64, 64 models "
            "(2 seeds × 32 configs)",
            lambda: models.MLP(64, hidden=(256,), out_features=32),
            _two_views(generalized_nt_xent_loss),
            n_ch5,
            lambda step: (*two_views(step), alphas),
        ),
    ]


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


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


def _matmul_share(side, case: Case, batches, device) -> float:
    """The fraction of one run's self CPU time spent in matrix-product kernels
    (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        side(case, batches, device)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    return sum(e.self_cpu_time_total for e in events if e.key in MATMUL_OPS) / total


def run(steps: int = 30, repeats: int = 5, device=None) -> list[dict]:
    """One row per case: median times of both sides, their ratio, the goal, the
    parameter difference, the matrix-product share of each side's time and the Amdahl
    ceiling of the ratio."""
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
        share_sequential = _matmul_share(_sequential, case, profiled, device)
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
                "matmul_share_stacked": _matmul_share(_stacked, case, profiled, device),
                "matmul_share_sequential": share_sequential,
                "ceiling": 1 / share_sequential,
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
        f"{'max |Δθ|':>9} {'matmul share':>13} {'ceiling':>8}"
    )
    for r in rows:
        print(
            f"{r['model']:<84} {r['stacked_s'] * 1e3:>6.0f}ms "
            f"{r['sequential_s'] * 1e3:>8.0f}ms "
            f"{r['ratio']:>5.1f}x {r['max_param_difference']:>9.1e} "
            f"{r['matmul_share_stacked']:>5.0%} / "
            f"{r['matmul_share_sequential']:.0%} {r['ceiling']:>7.1f}x"
        )
    worst = min(r["ratio"] for r in rows)
    print(
        f"smallest speed-up: {worst:.1f}x (goal ≥ "
        f"{rows[0]['goal']:.0f}x, {rows[0]['device']})"
    )
    return 0 if worst >= rows[0]["goal"] else 1


if __name__ == "__main__":
    sys.exit(main())
