"""Tests of ccl_helpers.data's subsets: exact class counts (against a loop over the
classes), balance, long-tailed profiles (imbalance ratio, total size), class
restriction and relabelling, determinism under a seed, bad calls."""

from __future__ import annotations

import pytest
import torch
from bad_calls import bad_call

from ccl_helpers import data
from ccl_helpers.data._subsets import _subset_with_counts

LABELS = torch.arange(200) % 5  # 40 examples of each of 5 classes
UNEVEN = torch.cat([torch.full((n,), c) for c, n in enumerate([50, 30, 20, 9])])


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_subset_with_counts_matches_a_loop_over_classes():
    counts = torch.tensor([20, 0, 9, 5])
    index = _subset_with_counts(UNEVEN, counts, gen(3))
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


BAD_CALLS = [
    bad_call(data.balanced_subset, "per_class", UNEVEN, gen(), 10),
    bad_call(data.balanced_subset, "per_class", UNEVEN, gen(), 0),
    bad_call(data.balanced_subset, "labels", LABELS[:0], gen()),
    bad_call(data.balanced_subset, "labels", LABELS.float(), gen()),
    bad_call(data.balanced_subset, r"pass labels\.long\(\)", LABELS.int(), gen()),
    bad_call(data.long_tailed_subset, "imbalance_ratio", LABELS, 0.5, 50, gen()),
    bad_call(data.long_tailed_subset, "imbalance_ratio", LABELS, True, 50, gen()),
    bad_call(data.long_tailed_subset, "total", LABELS, 2.0, 4, gen()),
    bad_call(data.long_tailed_subset, "lower total", LABELS, 10.0, 150, gen()),
    bad_call(data.long_tailed_subset, "labels .*2 classes", LABELS * 0, 2.0, 10, gen()),
    bad_call(data.long_tailed_subset, "labels", LABELS - 1, 2.0, 10, gen()),
    bad_call(data.class_subset, "classes", LABELS, [1, 1]),
    bad_call(data.class_subset, "classes", LABELS, []),
    bad_call(data.class_subset, "classes", LABELS, [0.5]),
    bad_call(data.class_subset, r"classes.*\[7\] absent", LABELS, [0, 7]),
    bad_call(data.class_subset, "labels", LABELS.tolist(), [0]),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
