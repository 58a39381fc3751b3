"""Benchmark: how often each chapter's training step makes the host wait for the device.

Usage: python benchmarks/bench_host_syncs.py [--device D]

Every read of a tensor's value by Python (``bool``, ``float``, ``int``, ``item``,
``tolist``, ``numpy``, ``cpu``, a comparison in an ``if``) and every operation whose
output size depends on the values (``nonzero``, boolean-mask indexing, ``unique``,
``masked_select``) blocks the host until the device has computed the value: on a
GPU each is a synchronisation that empties the launch queue. :class:`HostReads` counts
them with a ``TorchFunctionMode``, on any device. On the CPU every tensor is on the
device, so the count is an upper bound of a GPU's: a read of a tensor that stays on the
host there is no synchronisation. A training call of T₁ and of T₂ steps, the same
otherwise, gives the reads per step (the start and the end cancel).

One case per chapter's training call, at small sizes (the count per step does not depend
on them): Chapters 1, 2 and 5's minibatch Adam (``train.train``), Chapter 3's full-batch
Algorithm 1 (``wen.algorithm1``) and Chapter 4's Algorithm 3.1 (``multimodal.train``).
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Callable
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vmap_seeds  # noqa: E402

from ccl_helpers import data, multimodal, runtime, train, wen  # noqa: E402

READS = frozenset(
    {
        "__bool__",
        "__float__",
        "__int__",
        "__index__",
        "item",
        "tolist",
        "numpy",
        "cpu",
        "nonzero",
        "argwhere",
        "masked_select",
        "unique",
        "unique_consecutive",
    }
)
"""Tensor methods and functions that read values on the host (or size their output by
them)."""


class HostReads(TorchFunctionMode):
    """Counts the host reads of the tensors of the code it wraps, by name: ``counts``
    (a Counter); a boolean-mask index counts as ``__getitem__[mask]``. Reads by
    ``torch.optim`` are left out: they are of its step counters, which it keeps on the
    host (``capturable=False``), so they are no synchronisation on a GPU either."""

    def __init__(self):
        super().__init__()
        self.counts: collections.Counter[str] = collections.Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in READS:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if not caller.startswith("torch.optim"):
                self.counts[name] += 1
        elif name in ("__getitem__", "__setitem__") and _has_mask(args[1:2]):
            self.counts[f"{name}[mask]"] += 1
        return func(*args, **(kwargs or {}))


def _has_mask(index) -> bool:
    """Whether an index holds a boolean tensor (its size is read on the host)."""
    if isinstance(index, torch.Tensor):
        return index.dtype == torch.bool
    if isinstance(index, (tuple, list)):
        return any(_has_mask(i) for i in index)
    return False


def per_step(run: Callable[[int], object], short: int, long: int) -> dict:
    """Host reads per step of ``run(n_steps)``: (reads at ``long`` − at ``short``) /
    (``long`` − ``short``), in all and by name."""
    counts = []
    for n_steps in (short, long):
        with HostReads() as reads:
            run(n_steps)
        counts.append(reads.counts)
    extra = counts[1].copy()
    extra.subtract(counts[0])
    steps = long - short
    by_name = {k: v / steps for k, v in sorted(extra.items()) if v}
    return {"per_step": sum(extra.values()) / steps, "by_name": by_name}


def cases(device) -> dict[str, Callable[[int], object]]:
    """name ↦ run(n_steps): each chapter's training call at small sizes."""
    vmap_cases = {c.name[:5]: c for c in bench_vmap_seeds.cases(device)}
    runs = {}
    for key, label in (("Ch. 1", "1"), ("Ch. 2", "2"), ("Ch. 5", "5")):
        case = vmap_cases[key]

        def minibatch(n_steps, case=case):
            model = train.StackedModel(case.make_module, 2, seed=0, device=device)
            sample = _first_two(case)
            train.train(model, case.loss_fn, sample, n_steps, lr=case.lr, desc=None)

        runs[f"Chapter {label}: train.train (minibatch Adam)"] = minibatch
    digits, _ = data.load_digits(device)
    x = data.unit_sphere(digits[:8])

    def algorithm1(n_steps):
        model = train.StackedModel(
            lambda: wen.TwoEncoders(64, 32, 2, 10), 2, seed=0, device=device
        )
        wen.algorithm1(
            model, x, 2, n_steps, eta=0.1, gamma=0.1, checkpoints=(), desc=None
        )

    runs["Chapter 3: wen.algorithm1 (full-batch gradient descent)"] = algorithm1
    generator = torch.Generator(device=device).manual_seed(0)
    sigmas = multimodal.geometric_sigmas(4.0, 5)[None].expand(2, 5)
    model = multimodal.make_data_model(sigmas, 0.3, 16, generator)
    W_A, W_B = multimodal.compress_width(*multimodal.init_weights(2, 32, 16, generator))

    def algorithm31(n_steps):
        multimodal.train(
            model,
            W_A,
            W_B,
            multimodal.two_stage(0.05, n_steps // 2, 3.0, n_steps - n_steps // 2),
            batch_size=32,
            generator=generator,
        )

    runs["Chapter 4: multimodal.train (Algorithm 3.1)"] = algorithm31
    return runs


def _first_two(case):
    """The case's sampler, restricted to the first two models."""
    return lambda step: tree_map(lambda t: t[:2], case.sample(step))


def run(device=None, short: int = 4, long: int = 12) -> list[dict]:
    """One row per case: host reads per step, in all and by name."""
    device = torch.device(device) if device is not None else runtime.device()
    return [
        {"case": name, **per_step(call, short, long)}
        for name, call in cases(device).items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    for row in run(args.device):
        detail = ", ".join(f"{k} {v:g}" for k, v in row["by_name"].items()) or "none"
        print(f"{row['case']:<60} {row['per_step']:>5g} per step ({detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
