"""ccl_helpers.report: the bounds on a plain nn.Module, against brute-force sums, the
chapters' own computations on the same encoder, and bad inputs."""

from __future__ import annotations

import itertools
import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch
from bad_calls import bad_call

import ccl_helpers as ccl
from ccl_helpers import coupon, curl, encoder_report, multineg, supervised_approx

N_CLASSES, PER_CLASS = 3, 4


def tiny_set(seed=0):
    """12 random 8×8 images, 3 classes of 4, and a plain module mapping them to R³."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.rand(N_CLASSES * PER_CLASS, 1, 8, 8, generator=generator)
    labels = torch.arange(N_CLASSES).repeat_interleave(PER_CLASS)
    torch.manual_seed(seed)
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3))
    return encoder, images, labels


def table(encoder, images, labels, **kwargs):
    options = dict(
        n_negatives=6,
        strategy="base",
        n_samples=4000,
        n_transforms_attract=4,
        n_transforms_repel=2,
        seed=0,
    )
    return ccl.report(encoder, images, labels, **options | kwargs)


def brute_force_loss(features, labels, n_negatives):
    """E −log(e^{f(x)ᵀf(x⁺)} / (e^{f(x)ᵀf(x⁺)} + Σ_i e^{f(x)ᵀf(x⁻_i)})) by enumerating
    every (x, x⁺, x⁻_1 … x⁻_N), each weighted by its probability: ρ(c) uniform over the
    classes here, D_c uniform over class c, D_neg uniform over all images."""
    n = labels.numel()
    total = 0.0
    for x, x_pos in itertools.product(range(n), range(n)):
        if labels[x] != labels[x_pos]:
            continue
        weight = (1 / N_CLASSES) / PER_CLASS**2
        positive = float(features[x] @ features[x_pos])
        for negatives in itertools.product(range(n), repeat=n_negatives):
            scores = [float(features[x] @ features[j]) for j in negatives]
            loss = math.log(math.exp(positive) + sum(map(math.exp, scores))) - positive
            total += weight * loss / n**n_negatives
    return total


def test_losses_match_brute_force_sums():
    encoder, images, labels = tiny_set()
    found = table(encoder, images, labels, n_negatives=2)
    with torch.no_grad():
        features = encoder(images).double()
    assert found.loc["L_un", "value"] == pytest.approx(
        brute_force_loss(features, labels, 1), rel=1e-10
    )
    assert found.loc["L_un", "se"] == 0
    exact_two = brute_force_loss(features, labels, 2)
    estimate, se = found.loc["L_un_N", ["value", "se"]]
    assert 0 < se < 0.05 and abs(estimate - exact_two) < 4 * se
    # L^µ_sup(f, C): −log softmax over the class means, averaged over the images
    means = torch.stack([features[labels == c].mean(0) for c in range(N_CLASSES)])
    log_softmax = torch.log_softmax(features @ means.T, -1)
    l_mu = -log_softmax[torch.arange(labels.numel()), labels].mean()
    assert found.loc["L_mu", "value"] == pytest.approx(float(l_mu), rel=1e-10)
    accuracy = ((features @ means.T).argmax(-1) == labels).double().mean()
    assert found.loc["accuracy_mu", "value"] == pytest.approx(float(accuracy))


def test_rows_match_the_chapters_computations_on_the_same_encoder():
    encoder, images, labels = tiny_set()
    found = table(encoder, images, labels, alpha=2.0)
    with torch.no_grad():
        features = encoder(images).double()
    rho = torch.full((N_CLASSES,), 1 / N_CLASSES, dtype=torch.float64)
    lemma = curl.lemma_quantities(features, labels, fit_linear=False)  # Chapter 1
    for row, side in (("L_mu_binary", "L_mu"), ("curl_bound", "bound")):
        assert found.loc[row, "value"] == pytest.approx(float(lemma[side]), rel=1e-12)
    assert found.loc["lemma1_bound", "value"] == pytest.approx(  # Chapter 2
        float(multineg.lemma1_bound(lemma["L_un"], rho)), rel=1e-12
    )
    assert found.loc["lemma2_bound", "value"] == pytest.approx(
        found.loc["L_un_N", "value"] / coupon.p_cc(6, rho), rel=1e-12
    )
    # Chapter 5, on the same draws: the generator seeded as report seeds it
    attract, repel = supervised_approx.bound_terms(
        encoder,
        images,
        labels,
        images,
        labels,
        "base",
        torch.Generator().manual_seed(0),
        2.0,
        n_transforms_attract=4,
        n_transforms_repel=2,
    )
    for row, value in (
        ("attracting_lhs", attract.lhs),
        ("attracting_bound", attract.rhs),
        ("repelling_lhs", repel.lhs),
        ("repelling_bound", repel.rhs),
        ("repelling_bound_corrected", repel.rhs_corrected),
    ):
        assert found.loc[row, "value"] == pytest.approx(float(value.mean()), rel=1e-6)
    assert found.loc["attracting_bound", "slack"] == pytest.approx(
        float(attract.gap.mean()), abs=1e-6
    )


def test_slacks_are_bound_minus_bounded_and_theorems_hold():
    encoder, images, labels = tiny_set(seed=1)
    found = table(encoder, images, labels)
    assert list(found.index) == list(encoder_report.REPORT_ROWS)
    assert list(found.columns) == list(encoder_report.COLUMNS)
    bounds = found[found["bounds"] != ""]
    assert set(bounds.index) == {
        name for name, row in encoder_report.REPORT_ROWS.items() if row.bounds
    }
    for name, row in bounds.iterrows():
        expected = row["value"] - found.loc[row["bounds"], "value"]
        assert row["slack"] == pytest.approx(expected, abs=1e-12), name
    # theorems on this distribution: exact ones to rounding, Lemma 2 within its noise
    for name in ("curl_bound", "lemma1_bound", "repelling_bound_corrected"):
        assert found.loc[name, "slack"] >= -1e-9, name
    assert found.loc["lemma2_bound", "slack"] > -4 * found.loc["lemma2_bound", "se"]
    quantities = found[found["bounds"] == ""]
    assert quantities["slack"].isna().all()


def test_lemma2_is_infinite_below_n_c_negatives():
    encoder, images, labels = tiny_set()
    found = table(encoder, images, labels, n_negatives=1)
    assert math.isinf(found.loc["lemma2_bound", "value"])  # p_cc(1) = 0 for N_C = 3


def test_same_seed_same_table_and_module_mode_restored():
    encoder, images, labels = tiny_set()
    encoder = torch.nn.Sequential(*encoder, torch.nn.Dropout(0.5))
    encoder.train()
    first = table(encoder, images, labels)
    assert encoder.training  # restored
    second = table(encoder, images, labels)
    assert first.equals(second)  # dropout off during the report: deterministic
    other = table(encoder, images, labels, seed=1)
    assert other.loc["L_un", "value"] == first.loc["L_un", "value"]
    assert (
        other.loc["attracting_bound", "value"] != first.loc["attracting_bound", "value"]
    )


def test_probe_halves_split_every_class():
    labels = torch.tensor([2, 0, 0, 1, 2, 1, 0, 2, 1, 0])
    fit, held_out = encoder_report._halves(labels)
    assert sorted(torch.cat([fit, held_out]).tolist()) == list(range(10))
    for part in (fit, held_out):
        assert set(labels[part].tolist()) == {0, 1, 2}


class WrongShape(torch.nn.Module):
    def __init__(self, reshape):
        super().__init__()
        self.reshape = reshape

    def forward(self, x):
        return self.reshape(x.flatten(1)[:, :3])


@pytest.mark.parametrize(
    "reshape, message",
    [
        (lambda z: z.unsqueeze(0), "embeddings \\(n, d\\)"),  # a seed axis
        (lambda z: z[:, :, None], "embeddings \\(n, d\\)"),
        (lambda z: z.sum(-1), "embeddings \\(n, d\\)"),
        (lambda z: z.round().long(), "floating embeddings"),
        (lambda z: z * math.nan, "NaN or infinite"),
        (lambda z: (z, z), "tuple .*lambda x: model\\(x\\)\\[0\\]"),
        (lambda z: {"embeddings": z}, "dict .*lambda x: model\\(x\\)\\[0\\]"),
    ],
)
def test_an_encoder_of_the_wrong_output_raises(reshape, message):
    _, images, labels = tiny_set()
    with pytest.raises(ValueError, match=message):
        table(WrongShape(reshape), images, labels)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda x: x * 255, r"\[0, 1\].*divide 0–255 pixels by 255"),
        (lambda x: x - 0.5, r"\[0, 1\], the augmentations' range, got \[−?-?0\.\d"),
        (lambda x: x.permute(0, 2, 3, 1), "channels-last: pass images.permute"),
    ],
)
def test_images_outside_the_augmentations_range_or_channels_last_raise(change, message):
    encoder, images, labels = tiny_set()
    with pytest.raises(ValueError, match=message):
        table(encoder, change(images), labels)


@pytest.mark.parametrize(
    "labels, message",
    [
        (torch.zeros(12, dtype=torch.long), "at least two classes"),
        (torch.tensor([0] * 11 + [1]), "at least two\\s+images"),
        (torch.tensor([0] * 6 + [2] * 6), "0..N_C − 1"),
    ],
)
def test_labels_without_two_classes_of_two_images_raise(labels, message):
    encoder, images, _ = tiny_set()
    with pytest.raises(ValueError, match=message):
        table(encoder, images, labels)


def test_draw_loss_bounds_draws_each_finite_bound_over_its_loss():
    encoder, images, labels = tiny_set()
    for n_negatives, drawn in ((6, 3), (1, 2)):  # N = 1 < N_C: Lemma 2 is +∞
        found = table(encoder, images, labels, n_negatives=n_negatives)
        fig, ax = plt.subplots()
        encoder_report.draw_loss_bounds(ax, found)
        gids = [bars.lines[0].get_gid() for bars in ax.containers]  # one per errorbar
        bounds = [gid for gid in gids if gid in encoder_report.LOSS_BOUNDS]
        assert len(bounds) == drawn and gids.count("L_mu") == 3
        heights = {
            b.lines[0].get_gid(): b.lines[0].get_ydata()[0] for b in ax.containers
        }
        assert heights["curl_bound"] == found.loc["curl_bound", "value"]
        plt.close(fig)
    with pytest.raises(ValueError, match="table"):
        encoder_report.draw_loss_bounds(ax, found.drop(index="lemma1_bound"))


def test_readable_writes_estimates_with_their_errors():
    encoder, images, labels = tiny_set()
    found = table(encoder, images, labels, n_negatives=1)
    text = encoder_report.readable(found)
    assert list(text.columns) == ["value", "bounds", "slack"]
    assert text.loc["L_un", "value"] == f"{found.loc['L_un', 'value']:.4g}"  # exact
    assert " ± " in text.loc["L_un_N", "value"] and text.loc["L_un", "slack"] == ""
    assert text.loc["lemma2_bound", "value"] == "∞"
    assert (text["bounds"] == found["bounds"]).all()


# ------------------------------------------------------------------ bad calls

_ENCODER, _IMAGES, _LABELS = tiny_set()
_FIGURE, _AX = plt.subplots()
plt.close(_FIGURE)  # drawn on, never shown
_ONE_ROW = pd.DataFrame({c: [0.0] for c in encoder_report.COLUMNS}, index=["L_un"])
_REPORT = dict(
    n_negatives=2, n_samples=10, n_transforms_attract=2, n_transforms_repel=1
)


def _report(match, *, encoder=_ENCODER, images=_IMAGES, labels=_LABELS, **changes):
    """A bad call of ``report`` on the tiny set, with ``changes`` to the valid one."""
    return bad_call(
        encoder_report.report, match, encoder, images, labels, **_REPORT | changes
    )


BAD_CALLS = [
    _report("encoder must be callable", encoder="a model"),
    _report("images", images=_IMAGES[:, 0]),
    _report("images", images=(_IMAGES * 255).long()),
    _report(r"images.*\[0, 1\].*divide 0–255 pixels by 255", images=_IMAGES * 255),
    _report("images.*channels-last", images=_IMAGES.permute(0, 2, 3, 1)),
    _report("images must have n = len\\(labels\\)", labels=_LABELS[:-1]),
    _report("labels must be torch.int64", labels=_LABELS.int()),
    _report("labels must hold at least two classes", labels=torch.zeros_like(_LABELS)),
    _report("n_negatives", n_negatives=0),
    _report("strategy", strategy="blur"),
    _report("alpha", alpha=0.0),
    _report("n_samples", n_samples=1),
    _report("n_transforms_attract", n_transforms_attract=1),
    _report("n_transforms_repel", n_transforms_repel=0),
    _report("seed", seed=-1),
    _report("encoder must map images .*embeddings", encoder=WrongShape(torch.sum)),
    bad_call(encoder_report.readable, "table", _ONE_ROW.drop(columns="slack")),
    bad_call(encoder_report.readable, "table", _ONE_ROW.to_dict()),
    bad_call(encoder_report.draw_loss_bounds, "table .*REPORT_ROWS", _AX, _ONE_ROW),
    bad_call(encoder_report.draw_loss_bounds, "table", _AX, _ONE_ROW.iloc[:0]),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
