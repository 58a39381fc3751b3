"""Benchmark: InfoNCE with a very large number of negatives (a MoCo queue of 65,536
keys), computed in chunks (``info_nce_loss(..., chunk_size=c)``) against the unchunked
loss, side by side in one run: peak memory and time of forward + backward (gradients
with respect to anchors and positives; the queue needs none).

Usage: python benchmarks/bench_chunked.py
    [--negatives N] [--batch B] [--dim d] [--chunk c] [--repeats R]

Peak memory: on CUDA ``torch.cuda.max_memory_allocated`` above the inputs; on the CPU
each variant runs in a fresh child process and its peak resident set size (VmHWM) above
the one measured right after the inputs are built (and the code warmed up on a tiny
case). Time: median of the repetitions. The values of both variants are compared
(float32, relative 1e-5).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import torch

from ccl_helpers.losses import info_nce_loss


def _peak_rss() -> int:
    """This process's peak resident set size in bytes: VmHWM, which (unlike ru_maxrss)
    is not inherited from the parent across fork + exec."""
    try:
        with open("/proc/self/status") as status:
            return next(
                int(line.split()[1]) * 1024
                for line in status
                if line.startswith("VmHWM:")
            )
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _measure(
    negatives: int, batch: int, dim: int, chunk: int | None, repeats: int, device: str
) -> dict:
    """Run in the current process: peak memory above the inputs (bytes), median time
    (s), loss value."""
    device = torch.device(device)
    generator = torch.Generator().manual_seed(0)

    def unit_rows(
        rows,
    ):  # built in place, so that the RSS high-water mark is the inputs themselves
        t = torch.empty(rows, dim).normal_(generator=generator)
        return t.div_(t.norm(dim=-1, keepdim=True)).to(device)

    anchor, positive, queue = unit_rows(batch), unit_rows(batch), unit_rows(negatives)
    small = [t[:2].clone().requires_grad_() for t in (anchor, positive)]
    info_nce_loss(
        *small, queue[:64].expand(2, 64, dim), 0.07, chunk_size=chunk and 16
    ).backward()  # warm-up
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = _peak_rss()
    times, value = [], None
    for _ in range(repeats):
        a, p = anchor.clone().requires_grad_(), positive.clone().requires_grad_()
        start = time.perf_counter()
        loss = info_nce_loss(
            a, p, queue.expand(batch, negatives, dim), 0.07, chunk_size=chunk
        )
        loss.backward()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        value = loss.item()
        del a, p, loss
    peak = (torch.cuda.max_memory_allocated() if cuda else _peak_rss()) - base
    return {"peak_bytes": peak, "time_s": statistics.median(times), "value": value}


def _child(args, chunk):
    command = [
        sys.executable,
        __file__,
        "--child",
        "--negatives",
        str(args.negatives),
        "--batch",
        str(args.batch),
        "--dim",
        str(args.dim),
        "--repeats",
        str(args.repeats),
        "--threads",
        str(args.threads),
        "--device",
        args.device,
        "--chunk",
        str(chunk or 0),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(
    negatives=65_536, batch=256, dim=128, chunk=4096, repeats=3, threads=1, device="cpu"
) -> dict:
    args = argparse.Namespace(
        negatives=negatives,
        batch=batch,
        dim=dim,
        chunk=chunk,
        repeats=repeats,
        threads=threads,
        device=device,
    )
    if (
        torch.device(device).type == "cuda"
    ):  # one process: the allocator's peak counter is exact
        torch.set_num_threads(threads)
        unchunked = _measure(negatives, batch, dim, None, repeats, device)
        chunked = _measure(negatives, batch, dim, chunk, repeats, device)
    else:
        unchunked, chunked = _child(args, None), _child(args, chunk)
    return {
        "negatives": negatives,
        "batch": batch,
        "dim": dim,
        "chunk": chunk,
        "device": device,
        "unchunked": unchunked,
        "chunked": chunked,
        "memory_ratio": unchunked["peak_bytes"] / max(chunked["peak_bytes"], 1),
        "time_ratio": chunked["time_s"] / unchunked["time_s"],
        "relative_difference": abs(chunked["value"] - unchunked["value"])
        / abs(unchunked["value"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--negatives",
        type=int,
        default=65_536,
        help="N, the number of negatives (queue size)",
    )
    parser.add_argument(
        "--batch", type=int, default=256, help="anchors per batch (256, as in MoCo)"
    )
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--chunk", type=int, default=4096, help="chunk_size")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.child:
        print(
            json.dumps(
                _measure(
                    args.negatives,
                    args.batch,
                    args.dim,
                    args.chunk or None,
                    args.repeats,
                    args.device,
                )
            )
        )
        return 0
    r = run(
        args.negatives,
        args.batch,
        args.dim,
        args.chunk,
        args.repeats,
        args.threads,
        args.device,
    )
    for name in ("unchunked", "chunked"):
        print(
            f"{name:<10} peak {r[name]['peak_bytes'] / 2**20:>8.1f} MiB  "
            f"time {r[name]['time_s'] * 1e3:>8.1f} ms  "
            f"loss {r[name]['value']:.6f}"
        )
    print(
        f"N={r['negatives']} B={r['batch']} d={r['dim']} "
        f"chunk={r['chunk']}: memory unchunked/chunked "
        f"{r['memory_ratio']:.1f}x, time chunked/unchunked {r['time_ratio']:.2f}x, "
        f"relative difference {r['relative_difference']:.1e}"
    )
    return 0 if r["relative_difference"] <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
