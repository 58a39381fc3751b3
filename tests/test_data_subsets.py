"""Tests of ccl_helpers.data's subsets: exact class counts (against a loop over the
classes), balance, long-tailed profiles (imbalance ratio, total size), class
restriction and relabelling, determinism under a seed, bad arguments."""

from __future__ import annotations

import pytest
import torch

from ccl_helpers import data

LABELS = torch.arange(200) % 5  # 40 examples of each of 5 classes
UNEVEN = torch.cat([torch.full((n,), c) for c, n in enumerate([50, 30, 20, 9])])


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_subset_with_counts_matches_a_loop_over_classes():
    counts = torch.tensor([20, 0, 9, 5])
    index = data.subset_with_counts(UNEVEN, counts, gen(3))
    keys = torch.rand(UNEVEN.shape, generator=gen(3))
    want = []
    for c, n in enumerate(counts.tolist()):  # the n members with the smallest keys
        members = torch.nonzero(UNEVEN == c).flatten()
        want += members[keys[members].argsort()[:n]].tolist()
    assert index.tolist() == sorted(want)
    assert torch.bincount(UNEVEN[index], minlength=4).tolist() == counts.tolist()


def test_subsets_are_deterministic_under_a_seed():
    a = data.balanced_subset(LABELS, gen(1), 7)
    assert torch.equal(a, data.balanced_subset(LABELS, gen(1), 7))
    assert not torch.equal(a, data.balanced_subset(LABELS, gen(2), 7))
    b = data.long_tailed_subset(LABELS, 10.0, 60, gen(1))
    assert torch.equal(b, data.long_tailed_subset(LABELS, 10.0, 60, gen(1)))
    assert not torch.equal(b, data.long_tailed_subset(LABELS, 10.0, 60, gen(2)))


def test_balanced_subset_takes_the_smallest_class_size_by_default():
    index = data.balanced_subset(UNEVEN, gen())
    assert torch.bincount(UNEVEN[index]).tolist() == [9] * 4
    assert index.unique().numel() == index.numel() == 36
    assert torch.equal(index, index.sort().values)
    index = data.balanced_subset(LABELS, gen(), 7)
    assert torch.bincount(LABELS[index]).tolist() == [7] * 5


def test_long_tailed_counts_profile():
    assert data.long_tailed_counts(4, 20, 3).tolist() == [20, 11, 6, 3]
    assert data.long_tailed_counts(3, 8, 8).tolist() == [8, 8, 8]


@pytest.mark.parametrize("ratio, total", [(1.0, 50), (10.0, 60), (3.0, 77)])
def test_long_tailed_subset_ratio_and_total(ratio, total):
    index = data.long_tailed_subset(LABELS, ratio, total, gen())
    counts = torch.bincount(LABELS[index], minlength=5)
    assert int(counts.sum()) == total and index.unique().numel() == total
    assert bool((counts[:-1] >= counts[1:]).all())  # class 0 largest
    weights = ratio ** (-torch.arange(5.0) / 4)
    exact = total * weights / weights.sum()
    assert bool(((counts - exact).abs() < 1).all())  # rounding only
    assert counts[0] / counts[-1] == pytest.approx(ratio, rel=1 / float(counts[-1]))


def test_class_subset_restricts_and_relabels():
    index, labels = data.class_subset(UNEVEN, [3, 1])
    assert torch.equal(index, torch.nonzero((UNEVEN == 3) | (UNEVEN == 1)).flatten())
    assert torch.equal(labels, UNEVEN[index])
    index, labels = data.class_subset(UNEVEN, torch.tensor([3, 1]), relabel=True)
    assert torch.equal(labels, torch.where(UNEVEN[index] == 3, 0, 1))
    assert labels.dtype == UNEVEN.dtype


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: data.subset_with_counts(LABELS, torch.tensor([41]), gen()), "counts"),
        (lambda: data.subset_with_counts(LABELS, torch.tensor([-1]), gen()), "counts"),
        (lambda: data.subset_with_counts(LABELS.float(), [1], gen()), "labels"),
        (lambda: data.balanced_subset(UNEVEN, gen(), 10), "per_class"),
        (lambda: data.balanced_subset(LABELS[:0], gen()), "labels"),
        (lambda: data.long_tailed_counts(10, 5, 20), "largest"),
        (lambda: data.long_tailed_counts(10, 5, 20), "smallest=20 > largest=5"),
        (lambda: data.long_tailed_counts(10, 100, 2**50), "smallest=1125899906842624"),
        (lambda: data.long_tailed_counts(10, 0.5, 1), "largest"),
        (lambda: data.long_tailed_counts(1, 5, 2), "n_classes"),
        (lambda: data.long_tailed_subset(LABELS, 0.5, 50, gen()), "imbalance_ratio"),
        (lambda: data.long_tailed_subset(LABELS, True, 50, gen()), "imbalance_ratio"),
        (lambda: data.long_tailed_subset(LABELS, 2.0, 4, gen()), "total"),
        (lambda: data.long_tailed_subset(LABELS, 10.0, 150, gen()), "lower total"),
        (lambda: data.long_tailed_subset(LABELS * 0, 2.0, 10, gen()), "2 classes"),
        (lambda: data.class_subset(LABELS, [1, 1]), "classes"),
        (lambda: data.class_subset(LABELS, []), "classes"),
        (lambda: data.class_subset(LABELS, [0.5]), "classes"),
        (lambda: data.class_subset(LABELS, [0, 7]), r"classes.*\[7\] absent"),
        (
            lambda: data.subset_with_counts(LABELS, torch.tensor([1, 1]), gen()),
            "counts must give one count per class 0..4",
        ),
    ],
)
def test_bad_arguments_raise_value_error(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_long_tailed_counts_estimate(monkeypatch):
    from ccl_helpers.checks import estimated_bytes

    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    counts = data.long_tailed_counts(5, 100, 10)
    # the exponents, their quotient, the power, the product, the rounding, the counts
    assert estimated_bytes(data.long_tailed_counts, 5, 100, 10) == 6 * counts.nbytes
    with pytest.raises(ValueError, match="n_classes=10000000000"):
        data.long_tailed_counts(10**10, 100, 10)
