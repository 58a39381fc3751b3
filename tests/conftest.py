"""Shared set-up of the unit tests: a non-interactive matplotlib backend, selected
before ``ccl_helpers`` (which imports ``matplotlib.pyplot``) is imported by any test
module; and the small helpers several test modules use (``from conftest import
randn``)."""

import math
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402

# The unit tests use tiny tensors, for which intra-op threads only add synchronisation
# (on a busy 2-core machine a 2-thread bmm of a few hundred numbers can take
# milliseconds): one thread.
torch.set_num_threads(1)


def randn(*shape, seed=0, dtype=torch.float64):
    """Standard normal draws of the given shape from a generator seeded ``seed``."""
    return torch.randn(
        *shape, generator=torch.Generator().manual_seed(seed), dtype=dtype
    )


def labels_with_counts(counts, seed=0):
    """Labels with counts[c] examples of class c, in a random order (seeded)."""
    labels = torch.cat([torch.full((n,), c) for c, n in enumerate(counts)])
    return labels[
        torch.randperm(labels.numel(), generator=torch.Generator().manual_seed(seed))
    ]


def uniform(n_classes, dtype=torch.float64):
    """The uniform class probabilities ρ = (1/N_C, …)."""
    return torch.full((n_classes,), 1.0 / n_classes, dtype=dtype)


def naive_unsupervised_loss(features, labels, rho):
    """Σ_{x, x⁺, x⁻} ρ(c)/n_c · 1/n_c · ρ(c⁻)/n_{c⁻} · log(1 + exp(f(x)ᵀf(x⁻) −
    f(x)ᵀf(x⁺))), x⁺ ranging over the class c of x (x⁺ = x included)."""
    feats, labels, rho = features.tolist(), labels.tolist(), rho.tolist()
    counts = {c: labels.count(c) for c in set(labels)}

    def dot(u, v):
        return sum(a * b for a, b in zip(u, v))

    total = 0.0
    for x, c in zip(feats, labels):
        for x_pos, c_pos in zip(feats, labels):
            if c_pos != c:
                continue
            for x_neg, c_neg in zip(feats, labels):
                weight = rho[c] / counts[c] / counts[c] * rho[c_neg] / counts[c_neg]
                total += weight * math.log1p(math.exp(dot(x, x_neg) - dot(x, x_pos)))
    return total


def nominal_bytes(tensors) -> int:
    """The bytes of tensors as their shapes say (an expanded view counted in full): what
    a size estimate is compared with."""
    return sum(t.numel() * t.element_size() for t in tensors)
