"""Benchmark: the package's NT-Xent (``nt_xent_loss``) and InfoNCE (``info_nce_loss``),
forward + backward, against pytorch-metric-learning's ``NTXentLoss`` on the same inputs,
side by side in one run.

Usage: python benchmarks/bench_losses.py [--full] [--repeats R] [--threads N]

Same quantity on both sides:
- NT-Xent: pml's ``NTXentLoss(temperature)`` on ``embeddings = cat(z1, z2)`` (2B rows)
  with ``labels = cat(arange(B), arange(B))``: each row's positive is its other view,
  its negatives the 2B − 2 rows of other labels, the positive is in the denominator,
  cosine similarity, mean over the 2B positive pairs — exactly ``nt_xent_loss(z1, z2,
  temperature)``.
- InfoNCE (MoCo-style: anchors q, their keys k, a queue of K shared negatives, unit
  vectors): pml's ``NTXentLoss`` on ``embeddings = q`` with ``ref_emb = cat(k, queue)``
  and ``indices_tuple`` = the pairs (i, i) as positives and (i, B + j) as negatives —
  exactly ``info_nce_loss(q, k, queue.expand(B, K, d), temperature)`` (the package's
  InfoNCE takes unnormalised inner products; the inputs are unit vectors).
The values are compared in float64 on the same inputs (must agree to 1e-6); the times
are float32 forward + backward (gradients with respect to the embeddings), median of the
repetitions, interleaved. pml's NTXentLoss needs memory cubic in the batch size (see
PML_MAX_BYTES): where it would not fit, only the package's side is timed and the case is
reported as not compared; where pytorch-metric-learning is not installed (it is
the ``bench`` extra), no case is compared and one line says so. Exits with status 1 if a
value differs; the time goal (the package at most as slow as pml, ratio ≥ 1) is
reported per case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from ccl_helpers.losses import info_nce_loss, nt_xent_loss

DEFAULT_BATCHES, DEFAULT_DIMS = (256, 1024, 2048), (128, 512)
FULL_BATCHES, FULL_DIMS = (256, 1024, 2048, 4096, 8192), (128, 512, 2048)
QUEUE = 256
"""Number K of shared negatives in the InfoNCE cases (given to the package's InfoNCE as
the (B, K, d) view ``queue.expand(B, K, d)``: its batched matmul does not copy it)."""
TEMPERATURE, TOLERANCE = 0.1, 1e-6
PML_MAX_BYTES = 2**31
"""pml's NTXentLoss compares every positive pair's anchor with every negative pair's
anchor: a (P, M) matrix for P positive and M negative pairs (NT-Xent: 2B × 2B(2B − 2),
cubic in B; 69 GB at B = 1024 in float64). Cases where it would exceed this many bytes
are not run on pml's side."""


def _pml_bytes(name, batch, element_size=8):
    pairs = (
        (2 * batch, 2 * batch * (2 * batch - 2))
        if name == "nt_xent"
        else (batch, batch * QUEUE)
    )
    return pairs[0] * pairs[1] * element_size


def _pml():
    """pml's NTXentLoss, or None where the optional comparator is not installed."""
    try:
        from pytorch_metric_learning.losses import NTXentLoss
    except ImportError:
        return None
    return NTXentLoss(temperature=TEMPERATURE)


def _nt_xent_pair(pml_loss, z1, z2):
    batch = z1.shape[0]
    labels = torch.arange(batch, device=z1.device).repeat(2)
    return (
        lambda a, b: nt_xent_loss(a, b, TEMPERATURE),
        lambda a, b: pml_loss(torch.cat([a, b]), labels),
    )


def _info_nce_pair(pml_loss, q, k, queue):
    batch, size = q.shape[0], queue.shape[0]
    rows = torch.arange(batch, device=q.device)
    indices = (
        rows,
        rows,
        rows.repeat_interleave(size),
        batch + torch.arange(size, device=q.device).repeat(batch),
    )
    labels = torch.arange(batch, device=q.device)
    ref_labels = torch.cat([labels, batch + torch.arange(size, device=q.device)])
    return (
        lambda a, b: info_nce_loss(a, b, queue.expand(batch, size, -1), TEMPERATURE),
        lambda a, b: pml_loss(
            a,
            labels,
            indices_tuple=indices,
            ref_emb=torch.cat([b, queue]),
            ref_labels=ref_labels,
        ),
    )


def _time(function, a, b, device):
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    function(a, b).backward()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def run(full: bool = False, repeats: int = 5, device="cpu") -> list[dict]:
    device = torch.device(device)
    pml_loss = _pml()
    batches, dims = (
        (FULL_BATCHES, FULL_DIMS) if full else (DEFAULT_BATCHES, DEFAULT_DIMS)
    )
    rows = []
    for batch in batches:
        for dim in dims:
            generator = torch.Generator().manual_seed(batch + dim)
            z1, z2 = (
                torch.randn(batch, dim, generator=generator, dtype=torch.float64).to(
                    device
                )
                for _ in range(2)
            )
            queue = F.normalize(
                torch.randn(QUEUE, dim, generator=generator, dtype=torch.float64),
                dim=-1,
            ).to(device)
            cases = [
                ("nt_xent", z1, z2, lambda p, x, y, extra: _nt_xent_pair(p, x, y)),
                (
                    "info_nce",
                    F.normalize(z1, dim=-1),
                    F.normalize(z2, dim=-1),
                    _info_nce_pair,
                ),
            ]
            for name, a, b, make in cases:
                fits = pml_loss is not None and _pml_bytes(name, batch) <= PML_MAX_BYTES
                ours, theirs = make(pml_loss, a, b, queue)
                difference = (
                    abs(ours(a, b).item() - theirs(a, b).item())
                    if fits
                    else float("nan")
                )  # float64
                a32, b32 = a.float(), b.float()
                ours32, theirs32 = make(pml_loss, a32, b32, queue.float())
                sides = [ours32, theirs32] if fits else [ours32]
                for side in sides:  # warm-up
                    _time(side, a32, b32, device)
                times = [[] for _ in sides]
                for _ in range(repeats):  # interleaved
                    for side, record in zip(sides, times):
                        record.append(_time(side, a32, b32, device))
                ours_s = statistics.median(times[0])
                theirs_s = statistics.median(times[1]) if fits else float("nan")
                rows.append(
                    {
                        "loss": name,
                        "batch": batch,
                        "dim": dim,
                        "negatives": QUEUE if name == "info_nce" else 2 * batch - 2,
                        "ours_s": ours_s,
                        "pml_s": theirs_s,
                        "ratio": theirs_s / ours_s,
                        "pml_fits": fits,
                        "abs_difference": difference,
                        "equal": difference <= TOLERANCE if fits else None,
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full",
        action="store_true",
        help=(
            f"the full sweep: batch {FULL_BATCHES}, dim {FULL_DIMS} "
            f"(default: {DEFAULT_BATCHES}, {DEFAULT_DIMS})"
        ),
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="repetitions of each side (median)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if _pml() is None:
        print("pytorch-metric-learning is not installed: only the package's side runs")
    rows = run(args.full, args.repeats, args.device)
    print(
        f"{'loss':<9} {'B':>5} {'d':>5} {'N':>6} {'ours':>9} "
        f"{'pml':>9} {'pml/ours':>8} {'|diff| f64':>10}"
    )
    for r in rows:
        print(
            f"{r['loss']:<9} {r['batch']:>5} {r['dim']:>5} "
            f"{r['negatives']:>6} {r['ours_s'] * 1e3:>7.1f}ms "
            f"{r['pml_s'] * 1e3:>7.1f}ms {r['ratio']:>7.2f}x "
            f"{r['abs_difference']:>10.1e}"
        )
    compared = [r for r in rows if r["pml_fits"]]
    slow = [r for r in compared if r["ratio"] < 1]
    print(
        f"cases where the package is slower than pml: {len(slow)} of "
        f"{len(compared)} compared "
        f"({len(rows) - len(compared)} not run on pml's side: its pair "
        "matrix would exceed "
        f"{PML_MAX_BYTES / 2**30:.0f} GiB); values equal to "
        f"{TOLERANCE:g}: {all(r['equal'] for r in compared)}"
    )
    return 0 if all(r["equal"] for r in compared) else 1


if __name__ == "__main__":
    sys.exit(main())
