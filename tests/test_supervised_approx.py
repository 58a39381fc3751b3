"""Tests of Chapter 5's helpers (ccl_helpers.supervised_approx), its losses (balanced
contrastive, generalized NT-Xent, bound-derived) and metrics.knn_accuracy: naive
references, identities, extreme logits, argument validation, determinism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from bad_calls import bad_call

from ccl_helpers import data, metrics, models, train
from ccl_helpers import supervised_approx as sa
from ccl_helpers.losses import nt_xent_loss
from ccl_helpers.losses.balanced import (
    balanced_contrastive_loss,
    generalized_nt_xent_loss,
)
from ccl_helpers.losses.bound_derived import bound_derived_loss
from ccl_helpers.supervised_approx import _bounds, _evaluation
from ccl_helpers.train import StackedModel

ARM = dict(
    pool="train",
    strategy=data.BASE,
    loss="balanced",
    similarity="cosine",
    alpha=1.0,
    lam=1.0,
)
"""An arm of a runs table (:func:`sa.design_runs`)."""


def draw(*shape, seed=0, scale=1.0):
    return scale * torch.randn(
        *shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    )


def naive_sim(a, b, similarity):
    if similarity == "cosine":
        return sum(x * y for x, y in zip(a, b)) / math.sqrt(
            sum(x * x for x in a) * sum(y * y for y in b)
        )
    if similarity == "dot":
        return sum(x * y for x, y in zip(a, b))
    return -math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def naive_lse(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def naive_balanced(z1, z2, alpha, lam, similarity, include_positive):
    z = z1.tolist() + z2.tolist()
    m = len(z1)
    out = []
    for i in range(2 * m):
        pos = (i + m) % (2 * m)
        others = [j for j in range(2 * m) if j != i and (include_positive or j != pos)]
        lse = naive_lse([alpha * naive_sim(z[i], z[j], similarity) for j in others])
        out.append(-naive_sim(z[i], z[pos], similarity) + lam * lse / alpha)
    return torch.tensor(out, dtype=torch.float64)


# ---------------------------------------------------------------- bad calls

_Z1, _Z2 = draw(4, 3), draw(4, 3, seed=1)
_VIEWS = draw(2, 4, 3, seed=2)
_LABELS = torch.arange(4) % 2
_IMAGES = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(0))
_POOL = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(1))
_IMAGE_LABELS = torch.arange(6) % 2
_NAN_IMAGES = _IMAGES.clone()
_NAN_IMAGES[0, 0, 0, 0] = math.nan
_CODE = torch.tensor(0)


def _flat(x):
    return x.flatten(1)[:, :3]


def _flat_module():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3))


_ARM_P = {**ARM, "pool": "p", "strategy": "none"}
_RUNS = sa.design_runs({"a": _ARM_P}, 2).drop(columns="arm")
_RESULTS = sa.design_runs({"a": _ARM_P, "b": {**_ARM_P, "strategy": "base"}}, 3)
_RESULTS = _RESULTS.assign(acc=[0.9, 0.8, 0.85, 0.5, 0.6, 0.55])
_STACKED = StackedModel(_flat_module, 2)
_BATCH = (_IMAGES[:4], _POOL[:4], torch.tensor(1.0), torch.tensor(1.0), _CODE, _CODE)
_BOUNDS = (_flat, _IMAGES, _IMAGE_LABELS, _POOL, _IMAGE_LABELS, "none")
_EVALUATOR = ([0], [1.0], _IMAGES, _IMAGE_LABELS, _POOL, _IMAGE_LABELS, "none", 0)
_CONTRAST = {"c": [({"strategy": "none"}, 1.0), ({"strategy": "base"}, -1.0)]}

BAD_CALLS = [
    # Theorem 4.4 on representations
    bad_call(sa.attracting_terms, "views must hold K ≥ 2", _Z1, _VIEWS[:1]),
    bad_call(sa.attracting_terms, "anchors", _Z1.long(), _VIEWS),
    bad_call(sa.attracting_terms, "views must have shape", _Z1, _VIEWS[..., :2]),
    # Theorem 4.6 on representations
    bad_call(sa.repelling_terms, "alpha", _Z1, _LABELS, _VIEWS, _LABELS, alpha=0.0),
    bad_call(sa.repelling_terms, "anchor_labels", _Z1, _LABELS[:3], _VIEWS, _LABELS),
    bad_call(
        sa.repelling_terms, "anchor_labels", _Z1, _LABELS.float(), _VIEWS, _LABELS
    ),
    bad_call(
        sa.repelling_terms,
        "view_labels must hold at least two classes",
        _Z1,
        torch.tensor([0, 1, 2, 0]),
        _VIEWS,
        _LABELS,
    ),
    bad_call(sa.eq10_counterexample, "dtype", torch.int64),
    # both bounds on an encoder
    bad_call(sa.bound_terms, "strategy", *_BOUNDS[:5], "blur", torch.Generator(), 1.0),
    bad_call(
        sa.bound_terms,
        "n_transforms_attract",
        *_BOUNDS,
        torch.Generator(),
        1.0,
        n_transforms_attract=1,
    ),
    bad_call(
        sa.bound_terms,
        "pool_labels must hold at least two classes",
        *_BOUNDS[:4],
        torch.zeros(6, dtype=torch.long),
        "none",
        torch.Generator(),
        1.0,
    ),
    bad_call(
        sa.bound_terms, "images", _flat, _NAN_IMAGES, *_BOUNDS[2:], torch.Generator(), 1
    ),
    bad_call(sa.bound_terms, "generator", *_BOUNDS, 0, 1.0),
    bad_call(sa.bound_terms, "chain", *_BOUNDS, torch.Generator(), 1.0, chain="yes"),
    bad_call(sa.bound_terms, "alphas", *_BOUNDS, torch.Generator(), [1.0, 2.0]),
    bad_call(sa.bound_evaluator, "alphas", [0], [1.0, 2.0], *_EVALUATOR[2:]),
    bad_call(sa.bound_evaluator, "alphas", [0], [0.0], *_EVALUATOR[2:]),
    bad_call(sa.bound_evaluator, "norm_members", *_EVALUATOR, norm_members=[]),
    bad_call(sa.bound_evaluator, "seed", *_EVALUATOR[:7], -1),
    bad_call(
        sa.bound_evaluator,
        "pool_images",
        *_EVALUATOR[:4],
        _POOL[:, 0, 0],
        *_EVALUATOR[5:],
    ),
    # the bias and the downstream evaluations
    bad_call(sa.bias_by_member, "model", _flat, _RUNS, _IMAGES[:4], _LABELS, 0),
    bad_call(
        sa.bias_by_member,
        "labels must hold every class",
        _STACKED,
        _RUNS,
        _IMAGES[:4],
        _LABELS * 2,
        0,
    ),
    bad_call(
        sa.bias_by_member,
        "runs",
        _STACKED,
        _RUNS.drop(columns="strategy"),
        _IMAGES[:4],
        _LABELS,
        0,
    ),
    bad_call(
        sa.bias_by_member,
        "images must hold at least 1 example",
        _STACKED,
        _RUNS,
        _IMAGES[:0],
        _LABELS[:0],
        0,
    ),
    bad_call(
        sa.downstream, "fit_labels", _flat, _IMAGES, _LABELS, _POOL, _IMAGE_LABELS
    ),
    bad_call(
        sa.downstream,
        "per_class",
        _flat,
        _IMAGES,
        _IMAGE_LABELS,
        _POOL,
        _IMAGE_LABELS,
        per_class=1,
    ),
    bad_call(
        sa.downstream,
        r"k\[0\]",
        _flat,
        _IMAGES,
        _IMAGE_LABELS,
        _POOL,
        _IMAGE_LABELS,
        k=(0,),
    ),
    bad_call(
        sa.downstream,
        "max_iter",
        _flat,
        _IMAGES,
        _IMAGE_LABELS,
        _POOL,
        _IMAGE_LABELS,
        max_iter=0,
    ),
    # training
    bad_call(
        sa.two_view_batches, "batch_size", _IMAGES, 2, 7, "none", torch.Generator()
    ),
    bad_call(sa.two_view_batches, "strategy", _IMAGES, 2, 4, "blur", torch.Generator()),
    bad_call(
        sa.two_view_batches,
        "n_streams must divide",
        _IMAGES,
        3,
        4,
        "none",
        torch.Generator(),
        n_streams=2,
    ),
    bad_call(sa.two_view_batches, "generator", _IMAGES, 2, 4, "none", 0),
    bad_call(sa.member_loss, "alpha", _Z1, _Z2, 0.0, 1.0, _CODE, _CODE),
    bad_call(sa.member_loss, "lam", _Z1, _Z2, 1.0, torch.tensor(-1.0), _CODE, _CODE),
    bad_call(sa.member_loss, "loss_code", _Z1, _Z2, 1.0, 1.0, torch.tensor(5), _CODE),
    bad_call(
        sa.member_loss, "similarity_code", _Z1, _Z2, 1.0, 1.0, _CODE, torch.tensor(0.0)
    ),
    bad_call(sa.member_loss, "z2", _Z1, _Z2[:3], 1.0, 1.0, _CODE, _CODE),
    bad_call(sa.run_loss, "batch", _flat, _BATCH[:5]),
    bad_call(sa.run_loss, r"batch\[4\]", _flat, (*_BATCH[:4], _CODE.float(), _CODE)),
    bad_call(sa.run_loss, "forward", None, _BATCH),
    bad_call(sa.run_batches, "batch_size", {"p": _IMAGES}, _RUNS, 1),
    bad_call(sa.run_batches, "batch_size", {"p": _IMAGES}, _RUNS, 7),
    bad_call(sa.run_batches, "runs", {"p": _IMAGES}, _RUNS.drop(columns="lam"), 2),
    bad_call(sa.run_batches, r"runs\['pool'\]", {"q": _IMAGES}, _RUNS, 2),
    bad_call(sa.run_batches, "pools", {}, _RUNS, 2),
    bad_call(
        sa.train_runs, "n_steps", _RUNS, {"p": _IMAGES}, _flat_module, 0, batch_size=2
    ),
    bad_call(
        sa.train_runs, "make_module", _RUNS, {"p": _IMAGES}, None, 1, batch_size=2
    ),
    bad_call(
        sa.train_runs,
        "batch_size",
        _RUNS,
        {"p": _IMAGES},
        _flat_module,
        1,
        batch_size=7,
    ),
    # the design and its statistics
    bad_call(sa.design_runs, "n_seeds", {"a": _ARM_P}, 0),
    bad_call(sa.design_runs, "n_seeds=10000000", {"a": _ARM_P}, 10**7),
    bad_call(
        sa.design_runs, r"arms\['a'\]\['loss'\]", {"a": {**_ARM_P, "loss": "x"}}, 2
    ),
    bad_call(sa.design_runs, "arms", {}, 2),
    bad_call(sa.design_runs, "cells", {"a": _ARM_P}, 2, "base"),
    bad_call(sa.arm_values, "metric", _RESULTS, "accuracy", {"strategy": "none"}),
    bad_call(sa.arm_values, "arms", _RESULTS, "acc", []),
    bad_call(
        sa.arm_values,
        "arms .* must select one member per seed",
        _RESULTS,
        "acc",
        {"pool": "p"},
    ),
    bad_call(
        sa.arm_values, "results", _RESULTS.to_numpy(), "acc", {"strategy": "none"}
    ),
    bad_call(sa.contrast_values, "contrasts", _RESULTS, {}, ["acc"]),
    bad_call(sa.contrast_values, "metrics", _RESULTS, _CONTRAST, "acc"),
    bad_call(
        sa.contrast_values,
        r"contrasts\['c'\]\[0\]\[1\]",
        _RESULTS,
        {"c": [({"strategy": "none"}, math.nan)]},
        ["acc"],
    ),
    bad_call(sa.estimates_table, "values", np.ones((2, 3))),
    bad_call(
        sa.seed_rank_correlations,
        "x and y must be arrays",
        np.ones((2, 3)),
        np.ones((2, 3)),
    ),
    bad_call(
        sa.seed_rank_correlations,
        "x and y must not be constant",
        np.ones((3, 2)),
        np.arange(6.0).reshape(3, 2),
    ),
    bad_call(sa.curve_shape, "curves", np.ones((1, 3))),
    bad_call(sa.curve_shape, "first", np.ones((2, 3)), first=2),
    bad_call(sa.pooled_seed_sd, "metric", _RESULTS, "accuracy"),
    bad_call(sa.pooled_seed_sd, "results", _RESULTS.drop(columns="loss"), "acc"),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()


# ---------------------------------------------------------------- losses


@pytest.mark.parametrize("similarity", ["cosine", "dot", "neg_euclidean"])
@pytest.mark.parametrize("alpha,lam", [(1.0, 1.0), (4.0, 2.0), (0.5, 8.0)])
@pytest.mark.parametrize("include_positive", [False, True])
def test_balanced_and_generalized_match_naive_loops(
    similarity, alpha, lam, include_positive
):
    z1, z2 = draw(5, 3, seed=1), draw(5, 3, seed=2)
    loss = generalized_nt_xent_loss if include_positive else balanced_contrastive_loss
    got = loss(z1, z2, alpha, lam, similarity=similarity, reduction="none")
    torch.testing.assert_close(
        got, naive_balanced(z1, z2, alpha, lam, similarity, include_positive)
    )


@pytest.mark.parametrize("alpha", [0.5, 2.0, 10.0])
def test_generalized_nt_xent_at_lambda_one_is_nt_xent(alpha):
    z1, z2 = draw(2, 6, 4, seed=3), draw(2, 6, 4, seed=4)
    for reduction in ("none", "mean"):
        torch.testing.assert_close(
            alpha * generalized_nt_xent_loss(z1, z2, alpha, 1.0, reduction=reduction),
            nt_xent_loss(z1, z2, 1 / alpha, reduction=reduction),
        )


def test_balanced_loss_is_below_generalized_and_converges_to_hard_negative():
    z1, z2 = draw(6, 4, seed=5), draw(6, 4, seed=6)
    assert (
        balanced_contrastive_loss(z1, z2, 2.0, 1.0, reduction="none")
        <= generalized_nt_xent_loss(z1, z2, 2.0, 1.0, reduction="none")
    ).all()
    # eq. (18): the repelling term tends to the largest negative similarity as alpha
    # grows
    sims = (
        F.normalize(torch.cat([z1, z2]), dim=-1)
        @ F.normalize(torch.cat([z1, z2]), dim=-1).T
    )
    m = 6
    positive = torch.cat([sims.diagonal(m), sims.diagonal(-m)])
    mask = torch.eye(2 * m, dtype=torch.bool) | torch.eye(2 * m, dtype=torch.bool).roll(
        m, -1
    )
    hard = sims.masked_fill(mask, -torch.inf).amax(-1)
    big = balanced_contrastive_loss(z1, z2, 1e4, 1.0, reduction="none")
    torch.testing.assert_close(big, hard - positive, atol=1e-3, rtol=0)


@pytest.mark.parametrize("similarity", ["dot", "neg_euclidean"])
def test_losses_finite_with_logits_up_to_1e4(similarity):
    z1, z2 = (
        draw(8, 4, seed=7, scale=60.0),
        draw(8, 4, seed=8, scale=60.0),
    )  # |dot| up to ~1e4
    for loss in (balanced_contrastive_loss, generalized_nt_xent_loss):
        value = loss(
            z1.float(), z2.float(), 8.0, 2.0, similarity=similarity, reduction="none"
        )
        assert torch.isfinite(value).all()
        torch.testing.assert_close(
            value.double(),
            naive_balanced(
                z1.float().double(),
                z2.float().double(),
                8.0,
                2.0,
                similarity,
                loss is generalized_nt_xent_loss,
            ),
            rtol=1e-4,
            atol=1e-2,
        )
        z = z1.float().requires_grad_()
        loss(z, z2.float(), 8.0, 2.0, similarity=similarity).backward()
        assert torch.isfinite(z.grad).all()


def test_neg_euclidean_gradient_finite_for_identical_views():
    z = draw(4, 3, seed=9).requires_grad_()
    balanced_contrastive_loss(
        z, z.detach().clone(), similarity="neg_euclidean"
    ).backward()
    assert torch.isfinite(z.grad).all()


def naive_bound_loss(anchors, views, alpha, lam, nu, include_positive):
    out = []
    m = len(anchors)
    for i, a in enumerate(anchors.tolist()):
        terms = []
        for row in views.tolist():
            others = [j for j in range(m) if include_positive or j != i]
            lse = naive_lse([alpha * naive_sim(a, row[j], "cosine") for j in others])
            terms.append(
                -math.log(
                    math.exp(alpha * naive_sim(a, row[i], "cosine"))
                    / math.exp(lse * lam / nu)
                )
                / alpha
            )
        out.append(sum(terms) / len(terms))
    return torch.tensor(out, dtype=torch.float64)


@pytest.mark.parametrize("include_positive", [False, True])
def test_bound_derived_loss_matches_eq13(include_positive):
    anchors, views = draw(5, 3, seed=10), draw(3, 5, 3, seed=11)
    got = bound_derived_loss(
        anchors,
        views,
        2.0,
        1.5,
        0.7,
        include_positive=include_positive,
        reduction="none",
    )
    torch.testing.assert_close(
        got, naive_bound_loss(anchors, views, 2.0, 1.5, 0.7, include_positive)
    )


def test_bound_derived_loss_is_eq14_over_alpha():
    anchors, views = draw(6, 4, seed=12), draw(1, 6, 4, seed=13)
    alpha = 3.0
    sims = F.normalize(anchors, dim=-1) @ F.normalize(views[0], dim=-1).T
    eq14 = -(alpha * sims.diagonal()) + torch.logsumexp(
        (alpha * sims).masked_fill(torch.eye(6, dtype=torch.bool), -torch.inf), -1
    )
    torch.testing.assert_close(
        bound_derived_loss(anchors, views, alpha, 0.5, 0.5, reduction="none"),
        eq14 / alpha,
    )


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: balanced_contrastive_loss(draw(4, 3), draw(4, 3), alpha=0.0), "alpha"),
        (lambda: balanced_contrastive_loss(draw(4, 3), draw(4, 3), lam=-1.0), "lam"),
        (
            lambda: generalized_nt_xent_loss(draw(4, 3), draw(4, 3), similarity="l1"),
            "similarity",
        ),
        (lambda: generalized_nt_xent_loss(draw(4, 3), draw(3, 3)), "z2"),
        (lambda: balanced_contrastive_loss(draw(1, 3), draw(1, 3)), "z1"),
        (lambda: bound_derived_loss(draw(4, 3), draw(2, 4, 3), nu=math.inf), "nu"),
        (lambda: bound_derived_loss(draw(4, 3), draw(2, 5, 3)), "views"),
        (
            lambda: balanced_contrastive_loss(draw(4, 3), draw(4, 3), reduction="max"),
            "reduction",
        ),
    ],
)
def test_loss_arguments_raise_value_error(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_losses_vmap_over_alpha_and_lambda():
    z1, z2 = draw(3, 5, 4, seed=14), draw(3, 5, 4, seed=15)
    alphas, lams = (
        torch.tensor([1.0, 2.0, 8.0], dtype=torch.float64),
        torch.tensor([1.0, 4.0, 2.0], dtype=torch.float64),
    )
    got = torch.func.vmap(balanced_contrastive_loss)(z1, z2, alphas, lams)
    want = torch.stack(
        [
            balanced_contrastive_loss(z1[i], z2[i], float(alphas[i]), float(lams[i]))
            for i in range(3)
        ]
    )
    torch.testing.assert_close(got, want)


# ---------------------------------------------------------------- Theorem 4.4


def test_encode_in_chunks_equals_one_call(monkeypatch):
    """_encode_views splits K·N images into chunks of _ENCODE_CHUNK: the same normalised
    representations as one call, in the same (K, N) layout."""
    weight = torch.randn(16, 3, generator=torch.Generator().manual_seed(0))

    def encoder(x):  # an encoder with a leading stack dimension, as a StackedModel
        z = x.flatten(1) @ weight
        return torch.stack([z, 2 * z.flip(-1)])

    images = torch.rand(4, 5, 1, 4, 4, generator=torch.Generator().manual_seed(1))
    whole = _bounds._encode_views(encoder, images)
    monkeypatch.setattr(_bounds, "_ENCODE_CHUNK", 3)  # 20 images: 7 calls
    calls = []
    chunked = _bounds._encode_views(
        lambda x: calls.append(len(x)) or encoder(x), images
    )
    assert calls == [3] * 6 + [2]
    assert chunked.shape == whole.shape == (2, 4, 5, 3)
    torch.testing.assert_close(chunked, whole, rtol=1e-6, atol=1e-7)
    direct = encoder(images.flatten(0, 1)).reshape(2, 4, 5, 3)
    torch.testing.assert_close(chunked, F.normalize(direct, dim=-1))


def test_attracting_terms_against_direct_formula_and_jensen():
    anchors, views = draw(7, 5, seed=20), draw(6, 7, 5, seed=21)
    terms = sa.attracting_terms(anchors, views)
    a, v = F.normalize(anchors, dim=-1), F.normalize(views, dim=-1)
    for i in range(7):
        mean = v[:, i].mean(0)
        assert math.isclose(
            terms.lhs[i].item(),
            -(a[i] @ mean).item() / mean.norm().item(),
            rel_tol=1e-12,
        )
        assert math.isclose(
            terms.rhs[i].item(),
            -sum((a[i] @ v[k, i]).item() for k in range(6)) / 6,
            rel_tol=1e-12,
        )
    ok = terms.hemisphere >= 0
    assert (terms.gap[ok] >= -1e-12).all() and (terms.mean_norm <= 1 + 1e-12).all()
    torch.testing.assert_close(terms.gap, terms.hemisphere * (1 / terms.mean_norm - 1))


def test_attracting_equality_under_view_invariance():
    anchors = draw(5, 4, seed=22)
    views = anchors.expand(3, 5, 4) * 2.0  # every view maps to the same unit vector
    terms = sa.attracting_terms(anchors, views)
    torch.testing.assert_close(terms.gap, torch.zeros(5, dtype=torch.float64))
    torch.testing.assert_close(terms.mean_norm, torch.ones(5, dtype=torch.float64))


def test_attracting_jackknife_against_loop():
    anchors, views = draw(3, 4, seed=23), draw(5, 3, 4, seed=24)
    full = sa.attracting_terms(anchors, views)
    loo = torch.stack(
        [
            sa.attracting_terms(anchors, torch.cat([views[:k], views[k + 1 :]])).gap
            for k in range(5)
        ]
    )
    want = ((4 / 5) * ((loo - loo.mean(0)) ** 2).sum(0)).sqrt()
    torch.testing.assert_close(full.gap_stderr, want)


# ---------------------------------------------------------------- Theorem 4.6


def naive_repelling(anchor, label, views, view_labels, alpha):
    a = F.normalize(anchor, dim=-1)
    v = F.normalize(views, dim=-1)
    classes = sorted(set(view_labels.tolist()))
    means = {
        c: v[:, view_labels == c].reshape(-1, v.shape[-1]).mean(0) for c in classes
    }
    others = [c for c in classes if c != label]
    lhs = max((a @ means[c]).item() / means[c].norm().item() for c in others)
    nu = min(means[c].norm().item() for c in others)
    inner = [
        math.log(
            sum(math.exp(alpha * (a @ row[j]).item()) for j in range(len(row)))
            / len(row)
        )
        / alpha
        for row in v
    ]
    counts = [int((view_labels == c).sum()) for c in classes]
    smooth = sum(inner) / len(inner) + math.log(len(view_labels) / min(counts)) / alpha
    return lhs, nu, smooth


@pytest.mark.parametrize("alpha", [1.0, 8.0])
def test_repelling_terms_against_loops_and_bound(alpha):
    anchors, views = draw(6, 3, seed=30), draw(4, 12, 3, seed=31)
    labels, view_labels = torch.tensor([0, 1, 2, 0, 1, 2]), torch.arange(12) % 3
    terms = sa.repelling_terms(anchors, labels, views, view_labels, alpha)
    for i in range(6):
        lhs, nu, smooth = naive_repelling(
            anchors[i], int(labels[i]), views, view_labels, alpha
        )
        assert math.isclose(terms.lhs[i].item(), lhs, rel_tol=1e-10)
        assert math.isclose(terms.nu[i].item(), nu, rel_tol=1e-10)
        assert math.isclose(
            terms.smooth[i].item(), smooth, rel_tol=1e-10, abs_tol=1e-12
        )
    assert (terms.lhs <= terms.rhs_corrected + 1e-12).all()


def test_repelling_counterexample_needs_the_corrected_form():
    """Anchor (1, 0) with every representation in the left half-plane: B < 0 and B/ν <
    lhs."""
    anchors, anchor_labels, views, view_labels, alpha = sa.eq10_counterexample()
    assert torch.allclose(views.norm(dim=-1), torch.ones(1, 6, dtype=torch.float64))
    assert (views[0] @ anchors[0] < 0).all()  # the left half-plane
    terms = sa.repelling_terms(anchors, anchor_labels, views, view_labels, alpha)
    assert (
        terms.smooth.item() < 0
        and terms.rhs.item() < terms.lhs.item() <= terms.rhs_corrected.item()
    )


def test_encoder_level_functions_are_deterministic_and_use_leading_dims():
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 5))
    images, labels = torch.rand(12, 1, 8, 8), torch.arange(12) % 3

    def stacked(x):  # two "seeds"
        return torch.stack([encoder(x), -encoder(x)])

    def terms(seed):
        return sa.bound_terms(
            stacked,
            images,
            labels,
            images,
            labels,
            data.BASE,
            torch.Generator().manual_seed(seed),
            2.0,
            n_transforms_attract=4,
            n_transforms_repel=3,
        )

    with torch.no_grad():
        a1, r = terms(5)
        a2, _ = terms(5)
        b = _bounds._eq51_bias(
            stacked, images, labels, data.BASE, torch.Generator().manual_seed(7)
        )
        surrogate, prototypes = _bounds._plugin_prototypes(
            stacked, images, labels, "none", torch.Generator(), 8
        )
        p = _bounds._plugin_bias(surrogate, prototypes, labels)
    torch.testing.assert_close(a1.gap, a2.gap)
    assert a1.gap.shape == (2, 12) and r.gap.shape == (2, 12) and b.shape == (2,)
    # identity augmentation: the plug-in bias is the mean distance of f(x) to its class
    # mean
    z = F.normalize(encoder(images), dim=-1).detach()
    means = torch.stack([z[labels == c].mean(0) for c in range(3)])
    assert math.isclose(
        p[0].item(), (means[labels] - z).norm(dim=-1).mean().item(), rel_tol=1e-5
    )


def test_prototype_bias_zero_for_a_constant_encoder():
    def encoder(x):
        return torch.ones(x.shape[0], 3)

    labels = torch.arange(10) % 2
    assert (
        _bounds._eq51_bias(
            encoder, torch.rand(10, 1, 8, 8), labels, data.BASE, torch.Generator()
        ).item()
        == 0
    )


# ---------------------------------------------------------------- training helpers and
# k-NN


def test_tiled_model_shares_initialisations_and_batches_tile():
    model = StackedModel.tiled(lambda: torch.nn.Linear(64, 3), n_seeds=2, n_configs=3)
    x = torch.rand(5, 64)
    out = model(x)
    assert out.shape == (6, 5, 3)
    torch.testing.assert_close(out[0], out[2])
    assert not torch.equal(out[0], out[1])
    sample = sa.two_view_batches(
        torch.rand(20, 1, 8, 8),
        6,
        4,
        data.BASE,
        torch.Generator().manual_seed(0),
        n_streams=2,
    )
    v1, v2 = sample(1)
    assert (
        v1.shape == (6, 4, 1, 8, 8)
        and torch.equal(v1[0], v1[2])
        and not torch.equal(v1[0], v2[0])
    )


def test_knn_accuracy_against_loop():
    gen = torch.Generator().manual_seed(0)
    train, test = torch.randn(40, 3, generator=gen), torch.randn(15, 3, generator=gen)
    y_train, y_test = (
        torch.randint(0, 3, (40,), generator=gen),
        torch.randint(0, 3, (15,), generator=gen),
    )
    got = metrics.knn_accuracy(train, y_train, test, y_test, k=5, block=4)
    cos = F.normalize(test, dim=-1) @ F.normalize(train, dim=-1).T
    correct = 0
    for i in range(15):
        order = cos[i].argsort(descending=True)[:5].tolist()
        score = [0.0] * 3
        for rank, j in enumerate(order):
            score[int(y_train[j])] += 1 + 1e-3 * (5 - rank) / 5
        correct += int(max(range(3), key=lambda c: score[c]) == int(y_test[i]))
    assert math.isclose(got.item(), correct / 15, rel_tol=1e-6)
    assert metrics.knn_accuracy(
        train.expand(2, 40, 3), y_train, test.expand(2, 15, 3), y_test
    ).shape == (2,)
    with pytest.raises(ValueError, match="k must"):
        metrics.knn_accuracy(train, y_train, test, y_test, k=0)


def test_bound_terms_selects_each_models_alpha_and_summarises():
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 4))

    def stacked(x):
        return torch.stack([encoder(x), 2 * encoder(x) + 1])

    images, labels = torch.rand(10, 1, 8, 8), torch.arange(10) % 2

    def terms(alphas, seed=0, **options):
        with torch.no_grad():
            return sa.bound_terms(
                stacked,
                images,
                labels,
                images,
                labels,
                data.BASE,
                torch.Generator().manual_seed(seed),
                alphas,
                n_transforms_attract=3,
                n_transforms_repel=2,
                **options,
            )

    attract, repel = terms(torch.tensor([1.0, 8.0]))
    again = terms(8.0)[1]
    torch.testing.assert_close(repel.lhs[1], again.lhs[1])
    torch.testing.assert_close(repel.smooth[1], again.smooth[1])
    assert not torch.allclose(repel.smooth[0], again.smooth[0])
    summary = _evaluation._summarise_bounds(attract, repel)
    assert set(summary) >= {"attract_gap", "repel_gap"} and all(
        v.shape == (2,) for v in summary.values()
    )
    # with the chain: the same terms, and each model's chain at its own alpha
    *pair, chain = terms(torch.tensor([1.0, 8.0]), chain=True)
    torch.testing.assert_close(pair[1].gap, repel.gap)
    # the chain is taken on the same draws, each model at its own alpha
    torch.testing.assert_close(chain.lhs, repel.lhs)
    torch.testing.assert_close(chain.smooth, repel.smooth)
    torch.testing.assert_close(chain.nu, repel.nu)
    torch.testing.assert_close(sum(chain.slacks().values()), repel.gap)
    with_chain = _evaluation._summarise_bounds(attract, repel, chain)
    slack_sum = sum(v for k, v in with_chain.items() if k.startswith("repel_slack_"))
    torch.testing.assert_close(slack_sum, with_chain["repel_gap"])
    with pytest.raises(ValueError, match="chain"):
        terms(1.0, chain="yes")
    with pytest.raises(ValueError, match="alphas"):
        terms(torch.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("similarity", ["cosine", "dot", "neg_euclidean"])
def test_member_loss_equals_each_named_loss(similarity):
    g = torch.Generator().manual_seed(5)
    z1, z2 = (torch.randn(6, 4, generator=g, dtype=torch.float64) for _ in range(2))
    code = torch.tensor(("cosine", "dot", "neg_euclidean").index(similarity))
    kwargs = {"similarity": similarity}
    expected = [
        generalized_nt_xent_loss(z1, z2, 2.0, 3.0, **kwargs),
        balanced_contrastive_loss(z1, z2, 2.0, 3.0, **kwargs),
        (
            bound_derived_loss(z1, z2[None], 2.0, 3.0, **kwargs)
            + bound_derived_loss(z2, z1[None], 2.0, 3.0, **kwargs)
        )
        / 2,
    ]
    for loss_code, value in enumerate(expected):
        got = sa.member_loss(z1, z2, 2.0, 3.0, torch.tensor(loss_code), code)
        assert torch.allclose(got, value, rtol=1e-12), (loss_code, similarity)


def test_member_loss_under_vmap_matches_a_loop_with_finite_gradients():
    """Members mixing kinds and similarities; dot products at scale 1e2 in one member
    leave every gradient finite."""
    g = torch.Generator().manual_seed(6)
    z1 = torch.randn(4, 5, 3, generator=g, dtype=torch.float64)
    z2 = torch.randn(4, 5, 3, generator=g, dtype=torch.float64)
    z1[1] *= 100
    z1.requires_grad_(True)
    alpha = torch.tensor([1.0, 8.0, 2.0, 4.0], dtype=torch.float64)
    lam = torch.tensor([1.0, 2.0, 0.5, 1.0], dtype=torch.float64)
    kinds, sims = torch.tensor([0, 1, 2, 1]), torch.tensor([0, 1, 2, 0])
    vmapped = torch.func.vmap(sa.member_loss)(z1, z2, alpha, lam, kinds, sims)
    looped = torch.stack(
        [
            sa.member_loss(z1[i], z2[i], alpha[i], lam[i], kinds[i], sims[i])
            for i in range(4)
        ]
    )
    assert torch.allclose(vmapped, looped, rtol=1e-12)
    (grad,) = torch.autograd.grad(vmapped.sum(), z1)
    assert torch.isfinite(grad).all()
    per_member = torch.func.vmap(torch.func.grad(sa.member_loss))(
        z1.detach(), z2, alpha, lam, kinds, sims
    )
    torch.testing.assert_close(per_member, grad, rtol=1e-12, atol=1e-12)


def runs_frame(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=sa.RUN_COLUMNS)


def test_run_batches_pairs_members_by_pool_seed_and_strategy():
    g = torch.Generator().manual_seed(7)
    pools = {
        "a": torch.rand(30, 1, 8, 8, generator=g),
        "b": torch.rand(20, 1, 8, 8, generator=g),
    }
    runs = runs_frame(
        [
            ("a", 0, "none", "generalized", "cosine", 2.0, 1.0),
            ("a", 0, "none", "balanced", "dot", 4.0, 2.0),
            ("a", 1, "none", "generalized", "cosine", 2.0, 1.0),
            ("b", 0, "base", "cross_view", "neg_euclidean", 1.0, 8.0),
            ("a", 0, "base", "generalized", "cosine", 2.0, 1.0),
        ]
    )
    sample = sa.run_batches(pools, runs, 4, seed=3)
    v1, v2, alpha, lam, kinds, sims = sample(5)
    assert v1.shape == v2.shape == (5, 4, 1, 8, 8)
    assert torch.equal(v1[0], v1[1]) and torch.equal(v1[0], v2[0])  # shared; "none"
    assert not torch.equal(v1[0], v1[2])  # another seed, other images
    assert not torch.equal(v1[3], v2[3])  # "base" views differ
    # the images are distinct members of the pool
    flat = pools["a"].flatten(1)
    found = [int((flat == row).all(1).nonzero()) for row in v1[0].flatten(1)]
    assert len(set(found)) == 4
    assert alpha.tolist() == [2.0, 4.0, 2.0, 1.0, 2.0] and lam[3] == 8.0
    assert kinds.tolist() == [0, 1, 0, 2, 0] and sims.tolist() == [0, 1, 0, 2, 0]
    again = sample(5)
    assert all(torch.equal(a, b) for a, b in zip((v1, v2), again[:2]))  # pure in step
    assert not torch.equal(sample(6)[0][0], v1[0])


def test_run_loss_is_member_loss_of_the_encoded_views():
    pools = {"a": torch.rand(30, 1, 8, 8, generator=torch.Generator().manual_seed(1))}
    runs = runs_frame(
        [
            ("a", 0, "base", "generalized", "cosine", 2.0, 1.0),
            ("a", 1, "base", "cross_view", "neg_euclidean", 4.0, 2.0),
        ]
    )
    batch = sa.run_batches(pools, runs, 6, seed=2)(1)
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 5))
    for member in range(2):
        view1, view2, *rest = (part[member] for part in batch)
        got = sa.run_loss(encoder, (view1, view2, *rest))
        assert got == sa.member_loss(encoder(view1), encoder(view2), *rest)
    with pytest.raises(ValueError, match=r"batch\[4\] must be an integer"):
        sa.run_loss(encoder, (view1, view2, *rest[:2], rest[2].float(), rest[3]))
    with pytest.raises(ValueError, match=r"loss_code must be one of the codes"):
        sa.run_loss(encoder, (view1, view2, *rest[:2], torch.tensor(3), rest[3]))


@pytest.mark.parametrize(
    "codes, match",
    [
        ((5, 0), r"loss_code must be one of the codes 0 \(generalized\).*got 5"),
        ((-1, 0), "loss_code .* got -1"),
        ((0, 3), r"similarity_code must be one of the codes 0 \(cosine\).*got 3"),
    ],
)
def test_member_loss_rejects_unknown_codes(codes, match):
    z = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=match):
        sa.member_loss(z, z, 1.0, 1.0, *map(torch.tensor, codes))


@pytest.mark.parametrize(
    "column, value",
    [
        ("loss", "bogus"),
        ("strategy", "bogus"),
        ("similarity", "bogus"),
        ("alpha", -1.0),
        ("lam", math.inf),
    ],
)
def test_design_runs_rejects_unknown_kinds_and_non_positive_scales(column, value):
    arm = ARM
    with pytest.raises(ValueError, match=rf"arms\['a'\]\['{column}'\]"):
        sa.design_runs({"a": {**arm, column: value}}, 2)
    with pytest.raises(ValueError, match=rf"cells\['{column}'\]"):
        sa.design_runs({"a": arm}, 2, [{**arm, column: value}])


@pytest.mark.parametrize(
    "change, match",
    [
        ({"pool": "c"}, "pool"),
        ({"loss": "info_nce"}, "loss"),
        ({"similarity": "l1"}, "similarity"),
        ({"strategy": "flip"}, "strategy"),
        ({"alpha": 0.0}, "alpha"),
    ],
)
def test_run_batches_rejects_bad_runs(change, match):
    row = dict(zip(sa.RUN_COLUMNS, ("a", 0, "none", "generalized", "cosine", 2.0, 1.0)))
    pools = {"a": torch.rand(10, 1, 8, 8)}
    with pytest.raises(ValueError, match=match):
        sa.run_batches(pools, runs_frame([{**row, **change}]), 4)
    with pytest.raises(ValueError, match="batch_size"):
        sa.run_batches(pools, runs_frame([row]), 11)
    with pytest.raises(ValueError, match="columns"):
        sa.run_batches(pools, runs_frame([row]).drop(columns="lam"), 4)
    with pytest.raises(ValueError, match="one shape"):
        sa.run_batches({**pools, "b": torch.rand(10, 1, 6, 6)}, runs_frame([row]), 4)


def test_train_runs_trains_each_member_as_if_alone():
    pools = {"a": torch.rand(12, 1, 8, 8, generator=torch.Generator().manual_seed(8))}
    runs = runs_frame(
        [
            ("a", 0, "none", "generalized", "cosine", 2.0, 1.0),
            ("a", 1, "none", "balanced", "dot", 4.0, 2.0),
            ("a", 0, "none", "cross_view", "cosine", 1.0, 0.5),
        ]
    )

    def make():
        return models.ConvNet(1, 8, channels=(3,), padding=2, out_features=4)

    together, history = sa.train_runs(runs, pools, make, 2, batch_size=4, desc=None)
    assert list(history.columns) == [
        "step",
        "seed",
        "quantity",
        "value",
        *(c for c in sa.RUN_COLUMNS if c != "seed"),
    ]
    assert set(history["quantity"]) == {"train_loss"}
    table = train.wide(history)  # one row per (step, seed, configuration)
    assert table["seed"].tolist() == [0, 1, 0]  # the members' order, at step 2
    assert table["loss"].tolist() == ["generalized", "balanced", "cross_view"]
    assert together.seeds == [0, 1, 0]
    for i in range(3):
        alone, _ = sa.train_runs(
            runs.iloc[[i]], pools, make, 2, batch_size=4, desc=None
        )
        for name, value in alone.params.items():
            torch.testing.assert_close(
                together.params[name][i], value[0], atol=1e-6, rtol=0
            )


def test_downstream_against_the_metrics_and_with_a_diverged_member():
    from ccl_helpers.train import StackedModel

    g = torch.Generator().manual_seed(9)
    fit_x, test_x = torch.rand(60, 6, generator=g), torch.rand(30, 6, generator=g)
    fit_y = torch.arange(60) % 3
    test_y = torch.arange(30) % 3
    model = StackedModel(lambda: torch.nn.Linear(6, 4), 3, seed=0)
    with torch.no_grad():
        model.params["weight"][1, 0, 0] = float("nan")
    table = sa.downstream(model, fit_x, fit_y, test_x, test_y, k=(1, 5), chunk_size=7)
    assert table["finite"].tolist() == [True, False, True]
    assert table.loc[1, ["linear_probe", "knn_1", "knn_5"]].isna().all()
    features = model(fit_x).detach()[[0, 2]], model(test_x).detach()[[0, 2]]
    fit_s, test_s = metrics.standardise(*features)
    probe = metrics.linear_probe(
        fit_s, fit_y, test_s, test_y, task_size=3, max_iter=100
    )
    assert table.loc[[0, 2], "linear_probe"].tolist() == pytest.approx(
        probe["accuracy"].tolist()
    )
    knn = metrics.knn_accuracy(features[0], fit_y, features[1], test_y, k=5)
    assert table.loc[[0, 2], "knn_5"].tolist() == pytest.approx(knn.tolist())
    # per class: on a balanced test set their mean is the probe's accuracy
    by_class = sa.downstream(
        model, fit_x, fit_y, test_x, test_y, k=(1,), chunk_size=7, per_class=True
    )
    columns = [f"linear_probe_class_{c}" for c in range(3)]
    assert by_class.loc[1, columns].isna().all()
    assert by_class.loc[[0, 2], columns].mean(axis=1).tolist() == pytest.approx(
        probe["accuracy"].tolist()
    )
    # each against the predictions of the fitted rows, class by class
    rows = metrics.fit_linear_classifiers(
        fit_s, fit_y, metrics.all_tasks(3, 3), max_iter=100
    )[..., 0, :, :]
    predicted = (test_s @ rows.transpose(-1, -2)).argmax(-1)
    for c in range(3):
        chosen = test_y == c
        direct = (predicted[:, chosen] == c).double().mean(-1)
        assert by_class.loc[[0, 2], columns[c]].tolist() == pytest.approx(
            direct.tolist()
        )
    with pytest.raises(ValueError, match="per_class"):
        sa.downstream(model, fit_x, fit_y, test_x, test_y, per_class=1)


def naive_chain(a, y, v, yv, alpha):
    """Each step of the proof of Theorem 4.6 by loops, for one anchor (d,), views
    (K, M, d), labels."""
    a = a / a.norm()
    v = v / v.norm(dim=-1, keepdim=True)
    K, M = v.shape[:2]
    classes = sorted(set(yv.tolist()))
    g = [[float(a @ v[k, j]) for j in range(M)] for k in range(K)]

    def in_class(c):
        return [j for j in range(M) if yv[j] == c]

    mean_tc = {
        c: [sum(g[k][j] for j in in_class(c)) / len(in_class(c)) for k in range(K)]
        for c in classes
    }
    mean_c = {c: sum(mean_tc[c]) / K for c in classes}
    others = [c for c in classes if c != y]
    lse = lambda xs: math.log(sum(math.exp(alpha * x) for x in xs)) / alpha  # noqa: E731
    jensen_t = sum(lse([mean_tc[c][k] for c in classes]) for k in range(K)) / K
    jensen_x = (
        sum(
            math.log(
                sum(
                    sum(math.exp(alpha * g[k][j]) for j in in_class(c))
                    / len(in_class(c))
                    for c in classes
                )
            )
            / alpha
            for k in range(K)
        )
        / K
    )
    p_min = min(len(in_class(c)) for c in classes) / M
    smooth = (
        sum(
            math.log(sum(math.exp(alpha * x) for x in g[k]) / M) / alpha
            for k in range(K)
        )
        / K
    )
    return {
        "m_max": max(mean_c[c] for c in others),
        "lse_others": lse([mean_c[c] for c in others]),
        "lse_all": lse([mean_c[c] for c in classes]),
        "jensen_t": jensen_t,
        "jensen_x": jensen_x,
        "smooth": smooth + math.log(1 / p_min) / alpha,
    }


def test_repelling_chain_against_loops_and_monotone():
    g = torch.Generator().manual_seed(12)
    anchors = torch.randn(4, 3, generator=g, dtype=torch.float64)
    views = torch.randn(3, 7, 3, generator=g, dtype=torch.float64)
    anchor_labels = torch.tensor([0, 1, 2, 0])
    view_labels = torch.tensor([0, 0, 0, 1, 1, 2, 2])  # imbalanced: p_min = 2/7
    chain = _bounds._repelling_chain(
        anchors, anchor_labels, views, view_labels, alpha=3.0
    )
    for i in range(4):
        expected = naive_chain(
            anchors[i], int(anchor_labels[i]), views, view_labels, 3.0
        )
        for name, value in expected.items():
            assert getattr(chain, name)[i].item() == pytest.approx(value, rel=1e-10), (
                name
            )
    terms = sa.repelling_terms(anchors, anchor_labels, views, view_labels, 3.0)
    torch.testing.assert_close(chain.smooth, terms.smooth)
    torch.testing.assert_close(chain.lhs, terms.lhs)
    # theorem check on random representations: every step of the proof holds
    for seed in range(20):
        g = torch.Generator().manual_seed(100 + seed)
        a = torch.randn(2, 30, 5, generator=g, dtype=torch.float64)
        v = torch.randn(2, 4, 40, 5, generator=g, dtype=torch.float64) + 0.5
        labels_a = torch.randint(0, 4, (30,), generator=g)
        labels_v = torch.arange(40) % 4
        c = _bounds._repelling_chain(
            a, labels_a, v, labels_v, alpha=float(1 + seed % 8)
        )
        steps = [c.m_max, c.lse_others, c.lse_all, c.jensen_t, c.jensen_x, c.smooth]
        for low, high in zip(steps, steps[1:]):
            assert (low <= high + 1e-12).all()
        assert (c.lhs <= c.m_bound + 1e-12).all()


def test_repelling_chain_slacks_sum_to_the_gap_of_eq10():
    g = torch.Generator().manual_seed(13)
    anchors = torch.randn(2, 25, 4, generator=g, dtype=torch.float64)
    views = torch.randn(2, 3, 40, 4, generator=g, dtype=torch.float64) + 0.3
    anchor_labels = torch.randint(0, 4, (25,), generator=g)
    for view_labels in (torch.arange(40) % 4, torch.arange(40) % 5 % 4):
        chain = _bounds._repelling_chain(
            anchors, anchor_labels, views, view_labels, 2.0
        )
        terms = sa.repelling_terms(anchors, anchor_labels, views, view_labels, 2.0)
        slacks = chain.slacks()
        assert list(slacks) == [
            "normalisation",
            "smooth_max",
            "own_class",
            "jensen_t",
            "jensen_x",
            "imbalance",
            "one_over_nu",
        ]
        torch.testing.assert_close(sum(slacks.values()), terms.gap)
        # independent of the chain: B/ν − B, and M − lhs by the class means
        torch.testing.assert_close(
            slacks["one_over_nu"], terms.smooth * (1 / terms.nu - 1)
        )
        for step in ("smooth_max", "own_class", "jensen_t", "jensen_x"):
            assert (slacks[step] >= -1e-12).all(), step
        # Lemma A.1: the smooth maximum over the 3 other classes within log(3)/α
        assert (slacks["smooth_max"] <= math.log(3) / 2.0 + 1e-12).all()
    # balanced classes (the first labels): eq. (47) is an identity
    balanced = _bounds._repelling_chain(
        anchors, anchor_labels, views, torch.arange(40) % 4, 2.0
    )
    assert balanced.slacks()["imbalance"].abs().max() < 1e-12
    # the second labels are imbalanced (class 0 holds 16 of 40): a positive slack
    assert (chain.slacks()["imbalance"] > 0).all()


def test_design_runs_adds_map_cells_not_run_by_an_arm():
    base = {
        "pool": "a",
        "strategy": "none",
        "loss": "generalized",
        "similarity": "cosine",
        "alpha": 2.0,
        "lam": 1.0,
    }
    arms = {"ref": base, "bal": {**base, "loss": "balanced"}}
    cells = [{**base, "lam": lam} for lam in (1.0, 4.0)]
    runs = sa.design_runs(arms, 3, cells)
    assert list(runs.columns) == ["arm", *sa.RUN_COLUMNS]
    assert runs["arm"].tolist() == ["ref"] * 3 + ["bal"] * 3 + ["map"]
    assert runs["seed"].tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert runs.iloc[-1]["lam"] == 4.0  # (2, 1) is the arm "ref"
    three = sa.design_runs(arms, 3, cells, map_seeds=3)
    assert three["arm"].tolist() == ["ref"] * 3 + ["bal"] * 3 + ["map"] * 3
    assert three["seed"].tolist()[-3:] == [0, 1, 2]
    assert (three["lam"].iloc[-3:] == 4.0).all()
    with pytest.raises(ValueError, match="map_seeds"):
        sa.design_runs(arms, 3, cells, map_seeds=0)
    with pytest.raises(ValueError, match="exactly the columns"):
        sa.design_runs({"bad": {"pool": "a"}}, 2)
    with pytest.raises(ValueError, match="n_seeds"):
        sa.design_runs(arms, 0)
    with pytest.raises(
        ValueError, match="n_seeds=1125899906842624 .* map_seeds=1 give"
    ):
        sa.design_runs(arms, 2**50, cells)
    with pytest.raises(
        ValueError, match="n_seeds=3 .* map_seeds=1125899906842624 give"
    ):
        sa.design_runs(arms, 3, cells, map_seeds=2**50)
    # the guard by count: 10⁷ seeds of one arm would hang in the Python loop
    with pytest.raises(ValueError, match="10,000,000 runs, more than the 1,000,000"):
        sa.design_runs({"ref": base}, 10**7)


def _claim_results():
    import pandas as pd

    base = {
        "pool": "a",
        "strategy": "none",
        "loss": "generalized",
        "similarity": "cosine",
        "alpha": 2.0,
        "lam": 1.0,
    }
    arms = {
        "A": base,
        "B": {**base, "lam": 2.0},
        "C": {**base, "alpha": 4.0},
        "D": {**base, "alpha": 4.0, "lam": 2.0},
    }
    runs = sa.design_runs(arms, 4)
    g = torch.Generator().manual_seed(3)
    values = torch.randn(len(runs), generator=g, dtype=torch.float64).numpy()
    return arms, runs.assign(accuracy=values + 80.0), pd


def contrast(results, metric, terms):
    """The per-seed contrast of one list of terms, by :func:`sa.contrast_values`."""
    return sa.contrast_values(results, {"c": terms}, [metric]).to_numpy()[0]


def test_a_contrast_is_the_per_seed_contrast():
    arms, results, _ = _claim_results()
    a, b, c, d = (sa.arm_values(results, "accuracy", arms[k]) for k in "ABCD")
    pair = contrast(results, "accuracy", [(arms["A"], 1), (arms["B"], -1)])
    assert pair.shape == (4,) and np.allclose(pair, a - b, rtol=0, atol=1e-12)
    interaction = contrast(
        results,
        "accuracy",
        [(arms["A"], 1), (arms["D"], 1), (arms["B"], -1), (arms["C"], -1)],
    )
    assert np.allclose(interaction, a + d - b - c, rtol=0, atol=1e-12)
    versus_mean = contrast(
        results, "accuracy", [(arms["A"], 1.0)] + [(arms[k], -1 / 3) for k in "BCD"]
    )
    assert np.allclose(versus_mean, a - (b + c + d) / 3, rtol=0, atol=1e-12)


def test_contrasts_and_arm_values_reject_bad_arms():
    arms, results, _ = _claim_results()
    with pytest.raises(ValueError, match="one member per seed"):
        sa.arm_values(results, "accuracy", {"pool": "a"})
    with pytest.raises(ValueError, match="name columns"):
        sa.arm_values(results, "accuracy", {"colour": "red"})
    with pytest.raises(ValueError, match="metric must name a column"):
        sa.arm_values(results, "nothing", arms["A"])
    with pytest.raises(ValueError, match=r"contrasts\['c'\] must be a non-empty"):
        contrast(results, "accuracy", [])
    with pytest.raises(ValueError, match="coefficient"):
        contrast(results, "accuracy", [arms["A"]])
    with pytest.raises(ValueError, match="finite real"):
        contrast(results, "accuracy", [(arms["A"], math.nan)])
    fewer = results[~((results["arm"] == "B") & (results["seed"] == 3))]
    with pytest.raises(ValueError, match="same seeds"):
        contrast(fewer, "accuracy", [(arms["A"], 1), (arms["B"], -1)])


def test_arm_values_of_a_list_of_arms_stacks_them():
    arms, results, _ = _claim_results()
    matrix = sa.arm_values(results, "accuracy", [arms[k] for k in "ABC"])
    assert matrix.shape == (3, 4)
    for row, k in zip(matrix, "ABC"):
        assert (row == sa.arm_values(results, "accuracy", arms[k])).all()
    fewer = results[~((results["arm"] == "B") & (results["seed"] == 3))]
    with pytest.raises(ValueError, match="same seeds"):
        sa.arm_values(fewer, "accuracy", [arms["A"], arms["B"]])
    with pytest.raises(ValueError, match="non-empty list"):
        sa.arm_values(results, "accuracy", [])


def test_contrast_values_and_estimates_table():
    from ccl_helpers.verdicts import estimate

    arms, results, _ = _claim_results()
    results = results.assign(other=2 * results["accuracy"])
    contrasts = {
        "A − B": [(arms["A"], 1.0), (arms["B"], -1.0)],
        "C": [(arms["C"], 1.0)],
    }
    values = sa.contrast_values(results, contrasts, ["accuracy", "other"])
    assert values.index.tolist() == [
        ("A − B", "accuracy"),
        ("A − B", "other"),
        ("C", "accuracy"),
        ("C", "other"),
    ]
    assert values.columns.tolist() == [0, 1, 2, 3]
    for (name, metric), row in values.iterrows():
        coefficients = np.array([c for _, c in contrasts[name]])
        matrix = sa.arm_values(results, metric, [arm for arm, _ in contrasts[name]])
        assert np.array_equal(row.to_numpy(), coefficients @ matrix)
    table = sa.estimates_table(values)
    assert table.columns.tolist() == ["estimate", "se", "low", "high", "n"]
    for key, row in table.iterrows():
        found = estimate(values.loc[key].to_numpy())
        assert row["estimate"] == found.estimate and row["high"] == found.high
        assert row["n"] == 4
    with pytest.raises(ValueError, match="contrasts"):
        sa.contrast_values(results, {}, ["accuracy"])
    with pytest.raises(ValueError, match="metrics"):
        sa.contrast_values(results, contrasts, "accuracy")
    with pytest.raises(ValueError, match="values"):
        sa.estimates_table(values.to_numpy())


def test_seed_rank_correlations_against_scipy_per_seed():
    from scipy import stats

    g = torch.Generator().manual_seed(5)
    x, noise = torch.randn(2, 6, 4, generator=g, dtype=torch.float64).numpy()
    y = -x + 0.5 * noise
    found = sa.seed_rank_correlations(x, y)
    assert found.shape == (4,)
    for s in range(4):
        expected = stats.spearmanr(x[:, s], y[:, s]).statistic
        assert math.isclose(found[s], expected, rel_tol=1e-12)
    assert np.allclose(sa.seed_rank_correlations(x, 2 * x + 1), 1.0)
    with pytest.raises(ValueError, match="groups ≥ 3"):
        sa.seed_rank_correlations(x[:2], y[:2])
    with pytest.raises(ValueError, match="constant"):
        sa.seed_rank_correlations(np.ones((6, 4)), y)
    with pytest.raises(ValueError, match="finite"):
        sa.seed_rank_correlations(np.full((6, 4), np.nan), y)


def test_curve_shape_locates_the_peak_on_the_other_seeds():
    # three seeds: rise to checkpoint 1, fall, flatten; seed 2's own maximum is at 2
    curves = np.array(
        [
            [0.0, 1.0, 0.6, 0.5, 0.5],
            [0.0, 2.0, 1.0, 0.8, 0.7],
            [0.0, 0.9, 1.0, 0.4, 0.4],
        ]
    )
    shape = sa.curve_shape(curves)
    assert shape.peak.tolist() == [1, 1, 1]  # seed 2 too: its own noise does not count
    assert np.allclose(shape.scale, [1.0, 2.0, 1.0])
    assert np.allclose(shape.drop, [-0.5, -0.65, -0.5])
    assert np.allclose(shape.late_change, [0.0, -0.05, 0.0])
    assert np.allclose(shape.overall, [0.5, 0.35, 0.4])  # from checkpoint 0
    rising = sa.curve_shape(np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.4]]))
    assert (rising.peak == 2).all() and (rising.drop == 0).all()
    # the whole curve from checkpoint 1, the last stretch from checkpoint 2
    later = sa.curve_shape(curves, first=1, settle_from=2)
    assert np.allclose(later.overall, [-0.5, -0.65, -0.5])
    assert np.allclose(later.late_change, [-0.1, -0.15, -0.6])
    assert np.allclose(later.drop, shape.drop)
    with pytest.raises(ValueError, match="seeds ≥ 2"):
        sa.curve_shape(curves[:1])
    with pytest.raises(ValueError, match="largest value > 0"):
        sa.curve_shape(-np.ones((3, 4)))
    for bad in (4, -1, 5, -6, 1.0, True):
        with pytest.raises(ValueError, match="first must index a checkpoint"):
            sa.curve_shape(curves, first=bad)
    with pytest.raises(ValueError, match="settle_from must index a checkpoint"):
        sa.curve_shape(curves, settle_from=-1)


def test_claims_are_valid_with_unique_keys_and_labelled_sections():
    from ccl_helpers.verdicts import Claim

    assert len(sa.CLAIMS) >= 20
    assert all(isinstance(claim, Claim) for claim in sa.CLAIMS.values())
    assert all(key == claim.key for key, claim in sa.CLAIMS.items())
    keys = [claim.key for claim in sa.CLAIMS.values()]
    assert len(set(keys)) == len(keys)
    notebook = Path(__file__).resolve().parents[1] / "book"
    text = (notebook / "05_supervised_approximation.ipynb").read_text()
    for claim in sa.CLAIMS.values():
        assert claim.section and f"({claim.section})=" in text, claim.key
        if claim.source_effect is not None and claim.margin is not None:
            assert claim.margin <= abs(claim.source_effect - claim.null)
        if claim.expected == "equal":
            assert claim.margin is not None and claim.margin_reason


def test_pooled_seed_sd_against_numpy():
    import numpy as np

    arms, results, pd = _claim_results()
    cell = {**arms["A"], "alpha": 8.0, "seed": 0, "arm": "map", "accuracy": 50.0}
    results = pd.concat([results, pd.DataFrame([cell])], ignore_index=True)
    sd, df = sa.pooled_seed_sd(results, "accuracy")
    groups = [sa.arm_values(results, "accuracy", arms[k]) for k in "ABCD"]
    expected = np.mean([g.var(ddof=1) for g in groups])  # equal sizes
    assert df == 12 and math.isclose(sd**2, expected, rel_tol=1e-12)
    with pytest.raises(ValueError, match="two seeds"):
        sa.pooled_seed_sd(results[results["seed"] == 0], "accuracy")


def test_eq51_shares_the_transformation_but_draws_cutout_and_noise_per_view():
    # one image per class: x' = x, so the bias of eq. (51) is 0 when t_i is shared
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 5))
    images = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(2))
    labels = torch.arange(6)
    found = {}
    for strategy in ("base", "-blur", "+rotation", "+cutout", "+noise"):
        with torch.no_grad():
            found[strategy] = _bounds._eq51_bias(
                encoder, images, labels, strategy, torch.Generator().manual_seed(3)
            ).item()
    assert found["base"] == found["-blur"] == found["+rotation"] == 0
    assert found["+cutout"] > 0.01 and found["+noise"] > 0.01
    # the per-view part: two views of one image differ only by the square / the noise
    pair = images.expand(2, *images.shape)
    views = _bounds._paired_views(pair, "+noise", torch.Generator().manual_seed(4))
    shared = data.augment(
        pair, data.BASE, torch.Generator().manual_seed(4), param_shape=(1, 6)
    )
    inside = (shared > 0.1) & (shared < 0.9)  # mostly unclamped by the noise
    residual = (views - shared)[inside]
    assert 0.15 < residual.std().item() < 0.25  # the noise's standard deviation 0.2
    assert not torch.allclose(views[0], views[1])
    cut = _bounds._paired_views(pair, "+cutout", torch.Generator().manual_seed(4))
    erased = (cut == 0) & (shared > 0)
    assert erased[0].any() and not torch.equal(erased[0], erased[1])


def test_bias_by_member_matches_the_estimators_per_strategy():
    import pandas as pd

    model = StackedModel.tiled(
        lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3)),
        n_seeds=2,
        n_configs=2,
    )
    runs = pd.DataFrame({"strategy": ["base", "base", "none", "none"]})
    images = torch.rand(12, 1, 8, 8, generator=torch.Generator().manual_seed(4))
    labels = torch.arange(12) % 3
    table = sa.bias_by_member(model, runs, images, labels, seed=5, n_transforms=3)
    assert list(table.columns) == ["bias_eq51", "bias_plugin", "prototype_spread"]
    for strategy, members in (("base", [0, 1]), ("none", [2, 3])):
        encoder = model.subset(members)
        with torch.no_grad():
            eq51 = _bounds._eq51_bias(
                encoder, images, labels, strategy, torch.Generator().manual_seed(5)
            )
            surrogate, prototypes = _bounds._plugin_prototypes(
                encoder, images, labels, strategy, torch.Generator().manual_seed(5), 3
            )
        expected = {
            "bias_eq51": eq51,
            "bias_plugin": _bounds._plugin_bias(surrogate, prototypes, labels),
            "prototype_spread": _bounds._spread(prototypes),
        }
        for column, value in expected.items():
            torch.testing.assert_close(
                torch.tensor(table.loc[members, column].to_numpy()), value
            )


def test_prototype_spread_against_a_loop_over_class_pairs():
    import itertools

    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3))
    images = torch.rand(9, 1, 8, 8, generator=torch.Generator().manual_seed(6))
    labels = torch.arange(9) % 3
    with torch.no_grad():
        _, prototypes = _bounds._plugin_prototypes(
            encoder, images, labels, "none", torch.Generator(), 2
        )
        spread = _bounds._spread(prototypes)
        z = F.normalize(encoder(images), dim=-1)  # "none": every view is the image
    means = torch.stack([z[labels == c].mean(0) for c in range(3)])
    pairs = [
        (means[a] - means[b]).norm() for a, b in itertools.permutations(range(3), 2)
    ]
    torch.testing.assert_close(spread, torch.stack(pairs).mean())


def test_bound_evaluator_fills_the_chosen_members_and_every_norm():
    model = StackedModel.tiled(
        lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 4)),
        n_seeds=2,
        n_configs=2,
    )
    g = torch.Generator().manual_seed(6)
    images, labels = torch.rand(8, 1, 8, 8, generator=g), torch.arange(8) % 2

    def evaluator(**options):
        return sa.bound_evaluator(
            [1, 3],
            [2.0, 8.0],
            images,
            labels,
            images,
            labels,
            data.BASE,
            seed=7,
            n_transforms_attract=3,
            n_transforms_repel=2,
            **options,
        )

    evaluate = evaluator()
    found = evaluate(model)
    again = evaluate(model)
    with torch.no_grad():
        direct = _evaluation._summarise_bounds(
            *sa.bound_terms(
                model.subset([1, 3]),
                images,
                labels,
                images,
                labels,
                data.BASE,
                torch.Generator().manual_seed(7),
                torch.tensor([2.0, 8.0]),
                n_transforms_attract=3,
                n_transforms_repel=2,
                chain=True,
            )
        )
        norms = model(images).norm(dim=-1).mean(-1)
    torch.testing.assert_close(found["norm_mean"], norms)
    assert set(found) == {"norm_mean", *direct}
    assert any(name.startswith("repel_slack_") for name in direct)
    for name, values in direct.items():
        assert found[name].shape == (4,)
        assert torch.isnan(found[name][[0, 2]]).all()
        torch.testing.assert_close(found[name][[1, 3]], values.to(found[name].dtype))
        torch.testing.assert_close(found[name], again[name], equal_nan=True)
    # norms of the chosen members only
    some = evaluator(norm_members=[0, 3])(model)
    assert torch.isnan(some["norm_mean"][[1, 2]]).all()
    torch.testing.assert_close(some["norm_mean"][[0, 3]], norms[[0, 3]])
    torch.testing.assert_close(some["repel_gap"], found["repel_gap"], equal_nan=True)
    with pytest.raises(ValueError, match="norm_members"):
        sa.bound_evaluator(
            [1], [2.0], images, labels, images, labels, "base", 0, norm_members=[]
        )
    with pytest.raises(ValueError, match="one length"):
        sa.bound_evaluator([1], [2.0, 4.0], images, labels, images, labels, "base", 0)
    with pytest.raises(ValueError, match="alphas"):
        sa.bound_evaluator([1], [0.0], images, labels, images, labels, "base", 0)
