"""SimCLR on one or several processes, from ``torchrun`` or ``python -m``.

Run it as ``torchrun --nproc_per_node=G -m ccl_helpers.launch [options]``, or as
``python -m ccl_helpers.launch``.

It trains an MLP encoder on scikit-learn's 8×8 digits (shipped with the library, so
it runs anywhere without a download; 32-dimensional output) with NT-Xent, the loss of
Chapter 5's SimCLR arm, and Adam on two views of each digit drawn with the base
augmentation (:data:`ccl_helpers.data.BASE`). Every rank draws the same global batch of
``--batch-size`` digits from a generator seeded with ``--seed`` and trains on its shard
(:func:`ccl_helpers.distributed.local_shard`); :func:`ccl_helpers.distributed.ddp_train`
contrasts every anchor with the whole global batch, so the run is that of one process on
the global batch for any number of processes dividing it (up to rounding). Rank 0 then
evaluates the encoder on a held-out 30 % of the digits (linear probe on all 10 classes,
5-NN), prints one summary line and writes ``--out`` (JSON).

Sizes follow ``--scale`` (default ``CCL_SCALE``, :data:`SIZES`); ``--steps`` and
``--batch-size`` override them. One torch thread per process unless ``CCL_THREADS`` says
otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
from torch import Tensor, nn

from . import data, distributed, metrics, models, runtime
from . import supervised_approx as sa
from ._checks import check_int, check_positive

SIZES = {
    "smoke": {"steps": 8, "batch_size": 32, "hidden": (64,), "probe_iter": 20},
    "standard": {"steps": 150, "batch_size": 64, "hidden": (256,), "probe_iter": 100},
    "paper": {"steps": 2000, "batch_size": 256, "hidden": (512,), "probe_iter": 500},
}
"""Per scale: training steps, global batch, hidden widths, linear-probe iterations."""
EMBEDDING_DIM = 32
# Chapter 5's SimCLR: generalized NT-Xent with alpha = 2 = 1 / t, lambda = 1
TEMPERATURE = 0.5
LR = 1e-3
TEST_FRACTION, SPLIT_SEED = 0.3, 0
KNN_K = 5

__all__ = ["SIZES", "main"]

HELP = """Train an MLP encoder with SimCLR's NT-Xent loss on scikit-learn's 8x8 digits
(no download needed), on one process or on several with torchrun, then report the
linear-probe and 5-NN accuracies on held-out digits.

one process:      python -m ccl_helpers.launch [options]
G processes:      torchrun --nproc_per_node=G -m ccl_helpers.launch [options]
"""
"""The command's description in plain words (``--help``)."""


def _sizes_text() -> str:
    """The sizes of each scale, as the end of ``--help``."""
    rows = [
        f"  {name:<9} {s['steps']:>5} steps, batch {s['batch_size']:>3}, "
        f"hidden width {s['hidden'][0]}"
        for name, s in SIZES.items()
    ]
    return "sizes per scale:\n" + "\n".join(rows)


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options, with ``steps`` and ``batch_size`` filled in from
    ``--scale``."""
    parser = argparse.ArgumentParser(
        prog="python -m ccl_helpers.launch",
        description=HELP,
        epilog=_sizes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scale",
        choices=runtime.SCALES,
        default=None,
        help="experiment size (default: the CCL_SCALE variable, else standard)",
    )
    parser.add_argument(
        "--steps", type=int, help="training steps (default: the scale's, below)"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        help="global batch, split over the processes (default: the scale's, below)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=TEMPERATURE,
        help=f"NT-Xent temperature (default: {TEMPERATURE})",
    )
    parser.add_argument(
        "--lr", type=float, default=LR, help=f"Adam's learning rate (default: {LR})"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the initialisation and of the batches (default: 0)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="JSON file for the results (default: none, only the summary line)",
    )
    options = parser.parse_args(argv)
    options.scale = options.scale or runtime.scale()
    sizes = SIZES[options.scale]
    options.steps = sizes["steps"] if options.steps is None else options.steps
    options.batch_size = (
        sizes["batch_size"] if options.batch_size is None else options.batch_size
    )
    return options


def _check_options(options: argparse.Namespace, world_size: int) -> None:
    """Raise ``ValueError`` naming the option unless every option is in range for
    ``world_size`` processes."""
    check_int("--steps", options.steps)
    if options.batch_size >= 2 and world_size > options.batch_size:
        raise ValueError(
            f"world_size, the number of processes, must be ≤ --batch-size (the global "
            f"batch, {options.batch_size}): one example per process at least, got "
            f"{world_size}"
        )
    if options.batch_size < 2 or options.batch_size % world_size:
        raise ValueError(
            "--batch-size (the global batch) must be ≥ 2 and a multiple "
            "of world_size, the number of "
            f"processes ({world_size}), got {options.batch_size}"
        )
    for name in ("temperature", "lr"):
        check_positive(f"--{name}", getattr(options, name))
    check_int("--seed", options.seed, minimum=0)
    _check_out(getattr(options, "out", None))


def _check_out(out: Path | None) -> None:
    """Raise ``ValueError`` naming ``--out`` unless it is a file path in an existing
    folder (checked before the run, not after it)."""
    if out is None:
        return
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"--out must be a file path, got the folder {str(out)!r}")
    if not out.parent.is_dir():
        raise ValueError(
            f"--out must be a file path in an existing folder, got {str(out)!r} "
            f"(no folder {str(out.parent)!r})"
        )


def _evaluate(
    encoder: nn.Module,
    x_train: Tensor,
    y_train: Tensor,
    x_test: Tensor,
    y_test: Tensor,
    probe_iter: int,
) -> dict[str, float]:
    """Held-out accuracy of the encoder's features: linear probe (10-way) and k-NN,
    fitted on ``x_train``."""
    with torch.no_grad():
        train_features, test_features = encoder(x_train), encoder(x_test)  # (n, d)
    probe = metrics.linear_probe(
        train_features,
        y_train,
        test_features,
        y_test,
        task_size=10,
        max_iter=probe_iter,
    )
    knn = metrics.knn_accuracy(train_features, y_train, test_features, y_test, k=KNN_K)
    return {
        "linear_probe_accuracy": probe["accuracy"].item(),
        "knn_accuracy": knn.item(),
    }


def _summary(results: dict) -> str:
    """The one-line report of a run, from its results (see :func:`_run`)."""
    n_processes, losses = results["world_size"], results["losses"]
    where = (
        f"{results['backend']}, {results['device']}"
        if results["backend"]
        else results["device"]
    )
    return (
        f"{n_processes} process{'es' if n_processes > 1 else ''} "
        f"({where}), scale {results['scale']}: "
        f"{results['steps']} steps, global batch "
        f"{results['batch_size']}, NT-Xent {losses[0]:.4f} -> "
        f"{losses[-1]:.4f} in {results['train_seconds']:.2f} s; "
        "held-out digits: linear probe "
        f"{results['linear_probe_accuracy']:.1%}, {KNN_K}-NN "
        f"{results['knn_accuracy']:.1%}"
    )


def _run(options: argparse.Namespace, device: torch.device) -> dict | None:
    """Train on this rank's shards; on rank 0 evaluate, print the summary line and
    return the results (options, world size, backend, per-step global losses,
    accuracies); None on the other ranks."""
    sizes = SIZES[options.scale]
    images, labels = data.load_digits(device)
    x_train, y_train, x_test, y_test = data.train_test_split(
        images, labels, TEST_FRACTION, SPLIT_SEED
    )
    sample_global = sa.two_view_batches(
        x_train,
        1,
        options.batch_size,
        data.BASE,
        torch.Generator(device=device).manual_seed(options.seed),
    )

    def rank_views(step: int) -> tuple[Tensor, Tensor]:
        view1, view2 = sample_global(
            step
        )  # (1, B, 1, 8, 8) each, the same on every rank
        return distributed.local_shard(view1[0]), distributed.local_shard(view2[0])

    encoder = models.MLP(64, hidden=sizes["hidden"], out_features=EMBEDDING_DIM)
    start = time.perf_counter()
    encoder, history = distributed.ddp_train(
        encoder,
        rank_views,
        options.steps,
        temperature=options.temperature,
        lr=options.lr,
        device=device,
        desc="NT-Xent, global batch",
    )
    train_seconds = time.perf_counter() - start
    if distributed.rank() != 0:
        return None
    n_processes = distributed.world_size()
    backend = (
        torch.distributed.get_backend()
        if torch.distributed.is_available() and torch.distributed.is_initialized()
        else None
    )
    results = {
        "scale": options.scale,
        "world_size": n_processes,
        "backend": backend,
        "device": device.type,
        "steps": options.steps,
        "batch_size": options.batch_size,
        "temperature": options.temperature,
        "lr": options.lr,
        "seed": options.seed,
        "hidden": list(sizes["hidden"]),
        "embedding_dim": EMBEDDING_DIM,
        "n_train": len(y_train),
        "n_test": len(y_test),
        "train_seconds": train_seconds,
        "losses": history["value"].tolist(),  # the global loss of each step
        **_evaluate(encoder, x_train, y_train, x_test, y_test, sizes["probe_iter"]),
    }
    print(_summary(results), flush=True)
    return results


def main(argv: list[str] | None = None) -> dict | None:
    """The entry point: parse, join the process group (if under ``torchrun``), train,
    evaluate, write."""
    options = _parse_args(argv)
    device = distributed.init_from_env()
    try:
        _check_options(options, distributed.world_size())
        runtime.setup(
            options.seed, threads=None if "CCL_THREADS" in os.environ else 1
        )  # setup reads CCL_THREADS
        results = _run(options, device)
    finally:
        distributed.cleanup()
    if results is not None and options.out is not None:
        options.out.write_text(json.dumps(results, indent=2) + "\n")
    return results


def _command(argv: list[str] | None = None) -> int:
    """``python -m ccl_helpers.launch``: :func:`main`; exit status 1 with the message
    of a bad option or environment variable (the ``ValueError`` raised before the
    run), 0 otherwise."""
    try:
        main(argv)
    except ValueError as error:
        print(f"python -m ccl_helpers.launch: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_command())
