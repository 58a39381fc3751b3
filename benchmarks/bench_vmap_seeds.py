"""Benchmark: several seeds trained at once (parameters stacked, forward passes vectorised with
``torch.func.vmap``: ``ccl_helpers.train.StackedModel`` + ``train.train``) against the same seeds trained
one after another (one ``nn.Module`` and one Adam optimiser per seed, a plain loop), side by side in one run.

Usage: python benchmarks/bench_vmap_seeds.py [--seeds S] [--steps T] [--repeats R] [--threads N]

Both sides train the book's Chapter 1 models with its contrastive loss (``curl.block_contrastive_loss``)
on the same pre-sampled batches, with the same initialisations, for the same number of Adam steps;
the batches are drawn before the clock starts. Prints, for each model, the median wall-clock time of
each side over the repetitions, their ratio and the largest difference of the final parameters of the
two sides (each seed follows its own trajectory, so it is rounding only), and exits with status 1 if the
ratio is below the goal (≥ 3× on a CPU, ≥ 5× on a GPU; issue 7).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from ccl_helpers import curl, data, models, runtime, train

GOAL_CPU, GOAL_GPU = 3.0, 5.0


def _cases(device):
    """(name, make_module, latent-class model, batch size) for the book's standard models (Chapter 1)."""
    class_probs = torch.tensor([0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05])
    synthetic = data.GaussianClasses.random(n_classes=8, dim=32, class_probs=class_probs, separation=3.0,
                                            noise_std=1.0, seed=0, device=device)
    images, labels = data.load_digits(device)
    digits = data.EmpiricalClasses(images, labels)
    return [
        ("MLP(32,(),16) synthetic, batch 256", lambda: models.MLP(32, hidden=(), out_features=16), synthetic, 256),
        ("MLP(64,(256,256),32) digits, batch 128", lambda: models.MLP(64, hidden=(256, 256), out_features=32),
         digits, 128),
    ]


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _stacked(make_module, n_seeds, batches, device):
    model = train.StackedModel(make_module, n_seeds, seed=0, device=device)
    _sync(device)
    start = time.perf_counter()
    train.train(model, curl.block_contrastive_loss, lambda step: batches[step - 1], len(batches), lr=1e-3,
                desc="stacked")
    _sync(device)
    return time.perf_counter() - start, model


def _sequential(make_module, n_seeds, batches, device):
    modules, elapsed = [], 0.0
    for i in range(n_seeds):
        torch.manual_seed(i)
        module = make_module().to(device)
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
        _sync(device)
        start = time.perf_counter()
        for batch in batches:
            optimizer.zero_grad(set_to_none=True)
            curl.block_contrastive_loss(module, tuple(t[i] for t in batch)).backward()
            optimizer.step()
        _sync(device)
        elapsed += time.perf_counter() - start
        modules.append(module)
    return elapsed, modules


def run(seeds: int = 5, steps: int = 30, repeats: int = 5, device=None) -> list[dict]:
    """One row per model: median times of both sides, their ratio, the goal and the parameter difference."""
    device = torch.device(device) if device is not None else runtime.device()
    goal = GOAL_GPU if device.type == "cuda" else GOAL_CPU
    rows = []
    for name, make_module, latent, batch_size in _cases(device):
        generator = torch.Generator(device=device).manual_seed(0)
        sample = curl.contrastive_batches(latent, seeds, batch_size, generator)
        batches = [sample(step) for step in range(1, steps + 1)]
        _stacked(make_module, seeds, batches[:2], device)        # warm-up (vmap tracing, allocator)
        _sequential(make_module, seeds, batches[:2], device)
        stacked_times, sequential_times = [], []
        for _ in range(repeats):                                # interleaved, so both see the same load
            stacked_time, model = _stacked(make_module, seeds, batches, device)
            sequential_time, modules = _sequential(make_module, seeds, batches, device)
            stacked_times.append(stacked_time)
            sequential_times.append(sequential_time)
        difference = max((model.params[k][i] - p).abs().max().item()
                         for i, module in enumerate(modules) for k, p in module.named_parameters())
        stacked_s, sequential_s = statistics.median(stacked_times), statistics.median(sequential_times)
        rows.append({"model": name, "seeds": seeds, "steps": steps, "stacked_s": stacked_s,
                     "sequential_s": sequential_s, "ratio": sequential_s / stacked_s, "goal": goal,
                     "max_param_difference": difference, "device": str(device)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds S (the book's standard scale: 5)")
    parser.add_argument("--steps", type=int, default=30, help="Adam steps per seed")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of each side (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: the CI machine is shared; "
                        "2 threads on 2 busy cores oversubscribe them and every time becomes noise)")
    parser.add_argument("--device", default=None, help="device (default: ccl_helpers.device())")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = run(args.seeds, args.steps, args.repeats, args.device)
    print(f"{'model':<42} {'stacked':>9} {'one by one':>11} {'ratio':>6} {'max |Δθ|':>9}")
    for r in rows:
        print(f"{r['model']:<42} {r['stacked_s'] * 1e3:>7.0f}ms {r['sequential_s'] * 1e3:>9.0f}ms "
              f"{r['ratio']:>5.1f}x {r['max_param_difference']:>9.1e}")
    worst = min(r["ratio"] for r in rows)
    print(f"smallest speed-up: {worst:.1f}x (goal ≥ {rows[0]['goal']:.0f}x, {args.seeds} seeds, {rows[0]['device']})")
    return 0 if worst >= rows[0]["goal"] else 1


if __name__ == "__main__":
    sys.exit(main())
