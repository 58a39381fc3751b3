"""Tests of ccl_helpers.wen (Chapter 3, Wen 2020): the negative sets against itertools,
the exact expectation L_S against the direct loop, the closed forms of Facts 1 and 2
against autograd and against direct loops over the negative sets, the printed forms of
Fact 1, the two encoders' initialisation, Algorithm 1 against a hand-written single-seed
loop, the analysis helpers, the shared encoder's triplet objective, determinism and
argument validation (the bad-call table)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from bad_calls import bad_call
from conftest import randn

from ccl_helpers import multineg, train, wen
from ccl_helpers.train import StackedModel
from ccl_helpers.verdicts import EXPECTED, Claim
from ccl_helpers.wen._claims import _CLAIM_LIST
from ccl_helpers.wen._loss_vectors import _shared_vectors, _tilde, _weights
from ccl_helpers.wen._negative_sets import (
    _log_one_plus_sum_exp,
    _negative_sets,
    _pairwise_logits,
)


def outputs(n=6, d=3, seed=0, batch=()):
    return randn(*batch, n, d, seed=seed), randn(*batch, n, d, seed=seed + 100)


CASES = [(2, 1), (5, 1), (5, 2), (6, 3), (6, 5), (7, 4)]


# ---------------------------------------------------------------- negative sets


@pytest.mark.parametrize("n, k", CASES)
def test_negative_sets_are_the_combinations_of_the_others(n, k):
    sets = _negative_sets(n, k)
    assert sets.shape == (n, math.comb(n - 1, k), k) and sets.dtype == torch.long
    for i in range(n):
        expected = list(itertools.combinations([j for j in range(n) if j != i], k))
        assert [tuple(row) for row in sets[i].tolist()] == expected


# ---------------------------------------------------------------- L_S


def test_pairwise_logits_match_definition():
    q, k = outputs(5, 4)
    u = _pairwise_logits(q, k)
    for i in range(5):
        for j in range(5):
            assert math.isclose(
                float(u[i, j]), float(q[i] @ (k[j] - k[i])), abs_tol=1e-12
            )


@pytest.mark.parametrize("n, k", CASES)
def test_exact_loss_matches_direct_loop(n, k):
    q, kk = outputs(n, 3, seed=n + k)
    torch.testing.assert_close(
        wen.contrastive_loss(q, kk, k),
        wen.contrastive_loss_loop(q, kk, k),
        rtol=1e-12,
        atol=1e-12,
    )


def test_exact_loss_per_anchor_and_batch_axes():
    q, k = outputs(6, 3, batch=(2, 3))
    per_anchor = wen.contrastive_loss(q, k, 2, reduction="none")
    assert per_anchor.shape == (2, 3, 6)
    torch.testing.assert_close(per_anchor.mean(-1), wen.contrastive_loss(q, k, 2))
    for a, b in itertools.product(range(2), range(3)):
        torch.testing.assert_close(
            wen.contrastive_loss(q, k, 2)[a, b],
            wen.contrastive_loss_loop(q[a, b], k[a, b], 2),
        )


def test_exact_loss_is_stable_for_large_logits():
    q, k = outputs(5, 3)
    value = wen.contrastive_loss(300 * q, 300 * k, 2)
    assert torch.isfinite(value) and value > 0
    torch.testing.assert_close(
        value, wen.contrastive_loss_loop(300 * q, 300 * k, 2), rtol=1e-10, atol=1e-8
    )


def test_log_one_plus_sum_exp_is_accurate_at_both_ends():
    u = torch.tensor(
        [[-80.0, -90.0], [0.5, -1.0], [300.0, 299.0], [-1e4, 2.0]], dtype=torch.float64
    )
    expected = [
        math.log1p(math.exp(-80) + math.exp(-90)),
        math.log(1 + math.exp(0.5) + math.exp(-1.0)),
        300 + math.log1p(math.exp(-1.0) + math.exp(-300)),
        math.log1p(math.exp(2.0)),
    ]
    value = _log_one_plus_sum_exp(u)
    for got, want in zip(value.tolist(), expected):
        assert math.isclose(got, want, rel_tol=1e-13)
    single = _log_one_plus_sum_exp(u.float())
    assert float(single[0]) > 0 and math.isclose(
        float(single[0]), expected[0], rel_tol=1e-5
    )
    u_ = u.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_log_one_plus_sum_exp(u_).sum(), u_)
    reference = torch.softmax(torch.cat([torch.zeros(4, 1, dtype=u.dtype), u], 1), 1)[
        :, 1:
    ]
    torch.testing.assert_close(grad, reference, rtol=1e-12, atol=1e-300)


def test_collapsed_outputs_are_stationary_with_loss_log_k_plus_one():
    c, c_prime = randn(4, seed=1), randn(4, seed=2)
    q, k = c.expand(7, 4).clone(), c_prime.expand(7, 4).clone()
    tilde, hat = wen.loss_vectors(q, k, 3)
    assert float(tilde.abs().max()) < 1e-15 and float(hat.abs().max()) < 1e-15
    assert math.isclose(
        float(wen.contrastive_loss(q, k, 3)), math.log(4), rel_tol=1e-12
    )


# ---------------------------------------------------------------- Facts 1 and 2


@pytest.mark.parametrize("n, k", CASES)
def test_loss_vectors_match_autograd_of_the_direct_loop(n, k):
    q, kk = outputs(n, 3, seed=7 * n + k)
    q_, k_ = q.clone().requires_grad_(True), kk.clone().requires_grad_(True)
    grad_q, grad_k = torch.autograd.grad(wen.contrastive_loss_loop(q_, k_, k), (q_, k_))
    tilde, hat = wen.loss_vectors(q, kk, k)
    torch.testing.assert_close(tilde, grad_q, rtol=1e-10, atol=1e-13)
    torch.testing.assert_close(hat, grad_k, rtol=1e-10, atol=1e-13)


def test_loss_vectors_match_autograd_with_batch_axes():
    q, k = outputs(6, 3, batch=(2,))
    for closed, reference in zip(
        wen.loss_vectors(q, k, 3), wen.loss_vectors(q, k, 3, method="autograd")
    ):
        torch.testing.assert_close(closed, reference, rtol=1e-10, atol=1e-13)


def direct_fact2(q, k, n_negatives):
    """loss^_i = (1/n) Σ_{j≠i} (loss^(x_j, x_i) − loss^(x_i, x_j)), loss^(x_i, x_j) by
    the loop of (C.1)."""
    n = q.shape[0]
    count = math.comb(n - 1, n_negatives)
    pair = {}
    for i in range(n):
        for negatives in itertools.combinations(
            [j for j in range(n) if j != i], n_negatives
        ):
            u = torch.stack([q[i] @ (k[j] - k[i]) for j in negatives])
            denominator = 1 + torch.exp(u).sum()
            for j, u_j in zip(negatives, u):
                pair[i, j] = (
                    pair.get((i, j), 0) + torch.exp(u_j) / denominator * q[i] / count
                )
    return (
        torch.stack(
            [sum(pair[j, i] - pair[i, j] for j in range(n) if j != i) for i in range(n)]
        )
        / n
    )


def direct_fact1(q, k, n_negatives, *, partial: bool, with_one_over_n: bool):
    """Fact 1 by the loop: E^{Neg(i)} Σ_j e^{u_ij}/(1 + Σ_{s∈N, s ≤ j or all s}
    e^{u_is}) (k_j − k_i)."""
    n = q.shape[0]
    count = math.comb(n - 1, n_negatives)
    rows = []
    for i in range(n):
        total = torch.zeros_like(q[i])
        for negatives in itertools.combinations(
            [j for j in range(n) if j != i], n_negatives
        ):
            u = torch.stack([q[i] @ (k[j] - k[i]) for j in negatives])
            for position, j in enumerate(negatives):
                denominator = 1 + torch.exp(u[: position + 1] if partial else u).sum()
                total = (
                    total + torch.exp(u[position]) / denominator * (k[j] - k[i]) / count
                )
        rows.append(total)
    return torch.stack(rows) / (n if with_one_over_n else 1)


@pytest.mark.parametrize("n, k", [(5, 2), (6, 3), (4, 3)])
def test_fact2_closed_form_matches_its_definition_by_loop(n, k):
    q, kk = outputs(n, 2, seed=n * k)
    torch.testing.assert_close(
        wen.loss_vectors(q, kk, k)[1], direct_fact2(q, kk, k), rtol=1e-10, atol=1e-13
    )


@pytest.mark.parametrize("n, k", [(5, 2), (6, 3)])
def test_fact1_forms_match_their_printed_formulas(n, k):
    q, kk = outputs(n, 3, seed=3 * n + k)
    forms = {
        "corrected": (False, True),
        "appendix": (False, False),
        "main_text": (True, False),
    }
    for form, (partial, with_n) in forms.items():
        torch.testing.assert_close(
            _tilde(q, kk, _negative_sets(n, k), form),
            direct_fact1(q, kk, k, partial=partial, with_one_over_n=with_n),
            rtol=1e-10,
            atol=1e-13,
        )


def test_fact1_comparison_finds_the_missing_factor_n():
    q, k = outputs(7, 3, seed=4)
    table = wen.fact1_comparison(q, k, 3).set_index("form")
    assert table.loc["corrected", "relative_error"] < 1e-12
    assert math.isclose(table.loc["appendix", "factor"], 7, rel_tol=1e-10)
    assert table.loc["appendix", "relative_error_after_factor"] < 1e-12
    assert (
        table.loc["main_text", "relative_error_after_factor"] > 1e-3
    )  # not a rescaling of ∂L_S/∂q
    # k = 1: the partial sum is the full sum, so the main text's form is the appendix's
    sets = _negative_sets(7, 1)
    torch.testing.assert_close(
        _tilde(q, k, sets, "main_text"), _tilde(q, k, sets, "appendix")
    )


def test_negative_weights_rows():
    q, k = outputs(6, 3)
    weights = _weights(q, k, _negative_sets(6, 2))
    assert float(weights.diagonal().abs().max()) == 0.0
    assert bool((weights >= 0).all()) and bool((weights.sum(-1) < 1).all())


# ---------------------------------------------------------------- the two encoders


def test_two_encoders_parameters_and_initialisation():
    torch.manual_seed(0)
    model = wen.TwoEncoders(in_features=20, width=400, n_layers=3, out_features=50)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes == {
        "query.A": (400, 20),
        "query.W1": (400, 400),
        "query.W2": (400, 400),
        "query.B": (50, 400),
        "key.A": (400, 20),
        "key.W1": (400, 400),
        "key.W2": (400, 400),
        "key.B": (50, 400),
    }
    for name, p in model.named_parameters():
        variance = 1 / 50 if name.endswith(".B") else 2 / 400
        assert abs(float(p.detach().var()) / variance - 1) < 0.1, name
        assert abs(float(p.detach().mean())) < 0.1 * variance**0.5, name
    assert not torch.equal(model.query.W1, model.key.W1)
    q, k = model(torch.randn(5, 20))
    assert q.shape == k.shape == (5, 50)


def test_step_size():
    assert wen.step_size(100, 10, 0.5) == 0.05
    with pytest.raises(ValueError, match="scale"):
        wen.step_size(100, 10, 0.0)
    with pytest.raises(ValueError, match="width"):
        wen.step_size(0, 10)


def sphere(n, b, seed=0):
    x = randn(n, b, seed=seed, dtype=torch.float32)
    return x / x.norm(dim=1, keepdim=True)


def test_algorithm1_matches_hand_written_gradient_descent():
    x = sphere(6, 5)
    eta, gamma, steps = 0.3, 0.1, 4
    model = StackedModel(lambda: wen.TwoEncoders(5, 8, 2, 3), n_seeds=2, seed=3)
    references = [model.seed_module(i) for i in range(2)]
    long = wen.algorithm1(model, x, 2, steps, eta=eta, gamma=gamma, checkpoints=[2])
    assert list(long.columns) == [
        "step",
        "seed",
        "quantity",
        "value",
        "width",
        "out_features",
        "eta",
        "gamma",
    ]
    history = train.wide(long)
    assert len(history) == (steps + 1) * 2 and list(history["seed"][:2]) == [3, 4]
    for i, module in enumerate(references):
        start = {name: p.detach().clone() for name, p in module.named_parameters()}
        for step in range(steps + 1):
            q, k = module(x)
            loss = wen.contrastive_loss(q, k, 2)
            names, params = zip(*module.named_parameters())
            grads = torch.autograd.grad(loss, [q, k, *params])
            row = history[(history["step"] == step) & (history["seed"] == 3 + i)].iloc[
                0
            ]
            assert math.isclose(row["loss"], float(loss.detach()), rel_tol=1e-5)
            tilde, hat = wen.loss_vectors(q.detach().double(), k.detach().double(), 2)
            assert math.isclose(
                row["tilde_sq"], float(tilde.square().sum()), rel_tol=1e-4
            )
            assert math.isclose(row["hat_sq"], float(hat.square().sum()), rel_tol=1e-4)
            assert math.isclose(
                row["loss_norm"],
                math.sqrt(row["tilde_sq"] + row["hat_sq"]),
                rel_tol=1e-6,
            )
            largest_norm = float(torch.cat([q, k]).detach().norm(dim=1).max())
            largest_logit = float(
                _pairwise_logits(q.detach(), k.detach()).fill_diagonal_(-1e9).max()
            )
            assert math.isclose(row["output_norm_max"], largest_norm, rel_tol=1e-5)
            assert math.isclose(
                row["logit_max"], largest_logit, rel_tol=1e-5, abs_tol=1e-6
            )
            if step in (0, 2, steps):
                grad_w = sum(
                    float(g.square().sum())
                    for n_, g in zip(names, grads[2:])
                    if n_.startswith("query")
                )
                move_t = math.sqrt(
                    sum(
                        float((p.detach() - start[n_]).square().sum())
                        for n_, p in zip(names, params)
                        if n_.startswith("key")
                    )
                )
                assert math.isclose(row["grad_W_sq"], grad_w, rel_tol=1e-4)
                assert math.isclose(
                    row["movement_theta"], move_t, rel_tol=1e-4, abs_tol=1e-7
                )
            else:
                assert math.isnan(row["grad_W_sq"]) and math.isnan(row["movement_W"])
            if step == steps:  # the largest per-layer spectral norm of the movement
                spectral_w = max(
                    float(torch.linalg.svdvals(p.detach() - start[n_]).max())
                    for n_, p in zip(names, params)
                    if n_.startswith("query")
                )
                assert math.isclose(row["spectral_W"], spectral_w, rel_tol=1e-4)
                assert row["spectral_W"] <= row["movement_W"] * (1 + 1e-6)
            else:
                assert math.isnan(row["spectral_theta"])
            with torch.no_grad():
                for name, p, g in zip(names, params, grads[2:] if step < steps else ()):
                    p.sub_((eta if name.startswith("query") else gamma) * g)
        for name, p in module.named_parameters():
            torch.testing.assert_close(
                model.params[name][i], p.detach(), rtol=1e-5, atol=1e-6
            )


def test_spectral_norm_of_a_low_rank_stack_equals_the_svd():
    from ccl_helpers.wen._algorithm1 import _spectral_norm

    factors = randn(3, 60, 7, seed=1, dtype=torch.float64)
    low_rank = factors @ randn(3, 7, 50, seed=2, dtype=torch.float64)  # rank 7
    expected = torch.linalg.svdvals(low_rank)[:, 0]
    assert torch.allclose(_spectral_norm(low_rank, 7), expected, rtol=1e-12)
    full = randn(3, 20, 20, seed=3, dtype=torch.float64)  # 2 (rank + 10) > 20: SVD
    assert torch.allclose(
        _spectral_norm(full, 20), torch.linalg.svdvals(full)[:, 0], rtol=1e-12
    )


def test_algorithm1_spectral_movement_of_a_wide_layer_equals_its_svd():
    # n T = 12 < m / 2 - 10: W_1's movement (48 x 48) goes through the range finder
    x = sphere(6, 5).double()
    model = StackedModel(
        lambda: wen.TwoEncoders(5, 48, 2, 3).double(), n_seeds=2, seed=0
    )
    start = {name: p.detach().clone() for name, p in model.params.items()}
    history = train.wide(wen.algorithm1(model, x, 2, 2, eta=0.5, gamma=0.5))
    final = history[history["step"] == 2].set_index("seed")
    expected = torch.stack(
        [
            torch.linalg.svdvals(p.detach() - start[name])[:, 0]
            for name, p in model.params.items()
            if name.startswith("query.")
        ]
    ).amax(0)
    assert np.allclose(final["spectral_W"], expected.numpy(), rtol=1e-10)


def test_run_widths_is_deterministic_and_labels_widths():
    x = sphere(5, 4, seed=1)
    kwargs = dict(
        n_layers=2,
        out_features=3,
        n_negatives=2,
        n_steps=3,
        n_seeds=2,
        step_scale=0.5,
        checkpoints=2,
    )
    first = train.wide(wen.run_widths(x, [4, 9], **kwargs))
    pd.testing.assert_frame_equal(
        first, train.wide(wen.run_widths(x, [4, 9], **kwargs))
    )
    assert sorted(first["width"].unique()) == [4, 9]
    assert np.allclose(first.loc[first["width"] == 9, "eta"], 0.5 * 3 / 9)
    assert (first.loc[first["step"] == 0, "movement_W"] == 0).all()


# ---------------------------------------------------------------- analysis helpers


def toy_history():
    return pd.DataFrame(
        {
            "width": [1] * 4 + [2] * 4,
            "seed": [0] * 8,
            "step": [0, 1, 2, 3] * 2,
            "loss": [4.0, 3.0, 2.5, 2.4, 1.0, 0.9, 0.85, 0.8],
            "loss_norm": [1.0, 0.5, 0.25, 0.2, 0.4, 0.3, 0.2, 0.1],
        }
    )


def test_running_average_and_descent_constant():
    history = toy_history().sample(frac=1, random_state=0)  # order must not matter
    average = wen.running_average(history)
    expected = {(1, 3): (1 + 0.5 + 0.25 + 0.2) / 4, (2, 1): 0.35, (1, 0): 1.0}
    for (width, step), value in expected.items():
        row = (history["width"] == width) & (history["step"] == step)
        assert math.isclose(float(average[row].iloc[0]), value)
    constant = wen.descent_constant(history)
    assert math.isclose(constant[1, 0], min(1 / 1, 0.5 / 0.25, 0.1 / 0.0625))
    assert math.isclose(constant[2, 0], min(0.1 / 0.16, 0.05 / 0.09, 0.05 / 0.04))


def test_lemma43_ratios():
    history = pd.DataFrame(
        {
            "grad_W_sq": [8.0],
            "tilde_sq": [2.0],
            "grad_theta_sq": [3.0],
            "hat_sq": [1.0],
            "width": [40],
            "out_features": [10],
        }
    )
    ratios = wen.lemma43_ratios(history)
    assert ratios.loc[0, "ratio_W"] == 1.0 and ratios.loc[0, "ratio_theta"] == 0.75


def power_law_history(widths=(10, 100), seeds=(0, 1), n_steps=999):
    """Runs whose value is T^-0.2 up to T = 100 and falls like T^-1 after."""
    T = np.arange(1, n_steps + 2, dtype=float)
    value = np.where(T <= 100, T**-0.2, 100**-0.2 * (T / 100) ** -1.0)
    return pd.DataFrame(
        [
            {"width": w, "seed": s, "step": t - 1, "loss_norm": (1 + s) * v}
            for w in widths
            for s in seeds
            for t, v in zip(T.astype(int), value)
        ]
    )


def test_late_slopes_fit_each_run_over_its_window():
    history = power_law_history().sample(
        frac=1, random_state=0
    )  # order must not matter
    last = wen.late_slopes(history, "loss_norm")  # T from 100 to 1000: slope -1
    assert list(last.index.names) == ["width", "seed"] and len(last) == 4
    np.testing.assert_allclose(last.to_numpy(), -1.0, atol=1e-9)
    earlier = wen.late_slopes(history, "loss_norm", decades=1.0, offset=1.0)  # 10-100
    np.testing.assert_allclose(earlier.to_numpy(), -0.2, atol=1e-9)
    by_seed = wen.late_slopes(
        history[history["width"] == 10], "loss_norm", decades=0.5, by=("seed",)
    )
    assert list(by_seed.index) == [0, 1]
    np.testing.assert_allclose(by_seed.to_numpy(), -1.0, atol=1e-9)


def test_late_slopes_bad_arguments():
    history = power_law_history(widths=(10,), seeds=(0,), n_steps=20)
    with pytest.raises(ValueError, match="decades"):
        wen.late_slopes(history, "loss_norm", decades=0.0)
    with pytest.raises(ValueError, match="offset"):
        wen.late_slopes(history, "loss_norm", offset=-1.0)
    with pytest.raises(ValueError, match="n_points"):
        wen.late_slopes(history, "loss_norm", n_points=2)
    with pytest.raises(ValueError, match="column"):
        wen.late_slopes(history, "running_average")
    with pytest.raises(ValueError, match="needs ≥ 3"):
        wen.late_slopes(history.iloc[::5], "loss_norm", decades=0.1)


def test_theorem42_orders():
    orders = wen.theorem42_orders(
        n=10, n_layers=1, n_negatives=1, delta=1.0, epsilon=1.0
    )
    assert orders == {
        "log10_m": 15.0,
        "log10_m_appendix": 12.0,
        "log10_T": 10.0,
        "log10_eta_m_over_d": -7.0,
    }
    with pytest.raises(ValueError, match="delta"):
        wen.theorem42_orders(n=10, n_layers=1, n_negatives=1, delta=0.0, epsilon=0.1)


def test_proof_descent_constant_and_movement_radius():
    # c = step_scale * delta / n; the source's form min(eta, gamma) m delta / (n^3 d) is
    # n^2 times smaller, for loss vectors n times larger
    n, delta, width, d = 16, 0.27, 1000, 10
    eta = wen.step_size(width, d, 0.25)
    c = wen.proof_descent_constant(0.25, delta, n)
    assert c == pytest.approx(eta * width * delta / (n**3 * d) * n**2, rel=1e-12)
    omega = wen.movement_radius(n, 2, delta, width)
    assert omega == pytest.approx(
        delta**1.5 / (n**3 * 2**6 * math.log(width) ** 1.5), rel=1e-12
    )
    assert wen.movement_radius(n, 2, delta, 10 * width) < omega
    for bad in (
        lambda: wen.proof_descent_constant(0.0, delta, n),
        lambda: wen.movement_radius(n, 2, -1.0, width),
        lambda: wen.movement_radius(n, 2, delta, 1),
    ):
        with pytest.raises(ValueError):
            bad()


def test_lemma44_radius_range_and_the_widths_where_the_radii_meet():
    low, high = wen.lemma44_radius_range(1000, 10, 2)
    assert low == pytest.approx(0.1, rel=1e-12)
    assert high == pytest.approx(1 / (2**4.5 * math.log(1000) ** 1.5), rel=1e-12)
    for d, prefactor in [(10, 2**-4.5), (10, 1e-7), (3, 0.05)]:
        m_star = wen.radius_meeting_width(d, prefactor)

        def holds(m, d=d, prefactor=prefactor):
            return math.sqrt(d / m) <= prefactor / math.log(m) ** 1.5

        # an independent check: the inequality fails just below m* and holds above,
        # on a grid of widths up to 10^6 times m*
        assert not holds(m_star * (1 - 1e-6)) and holds(m_star * (1 + 1e-6))
        assert all(holds(m_star * 10**e) for e in np.linspace(0.01, 6, 50))
    # Lemma 4.4's own interval opens at m*: empty below, non-empty above
    m_star = wen.radius_meeting_width(10, 2**-4.5)
    below, above = (
        wen.lemma44_radius_range(round(m), 10, 2) for m in (m_star / 2, 2 * m_star)
    )
    assert below[0] > below[1] and above[0] < above[1]
    # a large prefactor: the inequality holds at every width > 1
    assert wen.radius_meeting_width(1, 10.0) == 1.0
    for bad in (
        lambda: wen.lemma44_radius_range(1, 10, 2),
        lambda: wen.lemma44_radius_range(100, 0, 2),
        lambda: wen.radius_meeting_width(10, 0.0),
        lambda: wen.radius_meeting_width(0, 0.1),
    ):
        with pytest.raises(ValueError):
            bad()


# ---------------------------------------------------------------- the shared encoder


def test_triplet_objective_is_the_shared_encoder_loss_with_one_negative():
    f = randn(6, 3, seed=5)
    triplets = multineg.all_triplets(6)
    assert triplets.shape == (30, 3) and bool((triplets[:, 0] == triplets[:, 1]).all())
    assert bool((triplets[:, 0] != triplets[:, 2]).all())
    value = multineg.triplet_loss(lambda x: x, (f, triplets))
    torch.testing.assert_close(value, wen.contrastive_loss(f, f, 1))
    f_ = f.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(
        multineg.triplet_loss(lambda x: x, (f_, triplets)), f_
    )
    torch.testing.assert_close(
        _shared_vectors(f, _negative_sets(6, 1)), grad, rtol=1e-10, atol=1e-13
    )


@pytest.mark.parametrize("n", [2, 3, 7])
def test_the_triplets_negatives_are_the_negative_sets_of_one(n):
    """Chapter 2's triplets (multineg) list, for each anchor, Chapter 3's negative sets
    of size 1 in the same order."""
    triplets = multineg.all_triplets(n)
    assert torch.equal(triplets[:, 2].view(n, n - 1, 1), _negative_sets(n, 1))
    assert torch.equal(triplets[:, 0], torch.arange(n).repeat_interleave(n - 1))


def test_shared_evaluator_is_the_gradient_of_the_shared_loss():
    x = sphere(5, 4, seed=2).double()
    linear = randn(2, 4, 3, seed=3)  # two seeds of a linear shared encoder

    def model(inputs):
        return inputs @ linear

    found = wen.shared_evaluator(x, 2)(model)
    for s in range(2):
        f = (x @ linear[s]).requires_grad_(True)
        loss = wen.contrastive_loss(f, f, 2)
        (grad,) = torch.autograd.grad(loss, f)
        torch.testing.assert_close(found["L_S"][s], loss.detach())
        torch.testing.assert_close(found["loss_norm"][s], grad.norm())
        torch.testing.assert_close(found["output_norm_max"][s], f.norm(dim=1).max())


# ---------------------------------------------------------------- devices


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_results_stay_on_the_callers_device():
    q, k = (t.cuda() for t in outputs(6, 3))
    assert wen.contrastive_loss(q, k, 2).device == q.device
    assert all(v.device == q.device for v in wen.loss_vectors(q, k, 2))
    torch.testing.assert_close(
        wen.loss_vectors(q, k, 2)[1].cpu(), wen.loss_vectors(q.cpu(), k.cpu(), 2)[1]
    )


def test_algorithm1_stops_on_a_non_finite_loss():
    model = StackedModel(lambda: wen.TwoEncoders(4, 6, 2, 3), n_seeds=1)
    with pytest.raises(FloatingPointError):
        wen.algorithm1(model, sphere(5, 4), 2, 50, eta=1e6, gamma=1e6)


# ---------------------------------------------------------------- bad calls

Q, K = outputs(6, 3)
X = sphere(5, 4)
HISTORY = pd.DataFrame(
    {
        "width": [1] * 4,
        "seed": [0] * 4,
        "step": [0, 1, 2, 3],
        "loss": [4.0, 3.0, 2.5, 2.4],
        "loss_norm": [1.0, 0.5, 0.25, 0.2],
    }
)
TWO = StackedModel(lambda: wen.TwoEncoders(4, 6, 2, 3), n_seeds=1)
LINEAR = StackedModel(lambda: torch.nn.Linear(4, 3), 1)
WIDTHS = dict(n_layers=2, out_features=3, n_negatives=2, n_steps=2, n_seeds=1)
BIG_Q, BIG_K = outputs(60, 2)  # C(59, 8) ≈ 2·10⁹ negative sets of 8 per anchor
LOOP_Q, LOOP_K = outputs(30, 2)  # 30·C(29, 5) ≈ 3.6·10⁶ sets: too many to loop over

BAD_CALLS = [
    # the outputs q, k of the two encoders and k = n_negatives ≤ n − 1
    bad_call(wen.contrastive_loss, "n_negatives", Q, K, 0),
    bad_call(
        wen.contrastive_loss, r"n_negatives.*1\.\.n − 1 = 5 \(n from q\)", Q, K, 6
    ),
    bad_call(wen.contrastive_loss, "n_negatives", Q, K, 2.0),
    bad_call(wen.contrastive_loss, "k must have the shape of q", Q, K[:5], 2),
    bad_call(wen.contrastive_loss, "k must have the dtype of q", Q, K.float(), 2),
    bad_call(wen.contrastive_loss, "q must be a floating-point", Q.long(), K.long(), 2),
    bad_call(wen.contrastive_loss, "q must be .* at least 2 dimension", Q[0], K[0], 1),
    bad_call(wen.contrastive_loss, "q must hold n ≥ 2 points", Q[:1], K[:1], 1),
    bad_call(wen.contrastive_loss, "reduction", Q, K, 2, reduction="sum"),
    bad_call(wen.contrastive_loss, "n=60, n_negatives=8 give", BIG_Q, BIG_K, 8),
    bad_call(wen.contrastive_loss_loop, "q and k must have shape", Q[None], K[None], 2),
    bad_call(wen.contrastive_loss_loop, "n=30, n_negatives=5", LOOP_Q, LOOP_K, 5),
    bad_call(wen.negative_set_logits, "n_negatives", Q, K, 6),
    bad_call(wen.negative_set_logits, "k must have the shape of q", Q, K[:, :2], 2),
    bad_call(wen.loss_vectors, r"n_negatives.*\(n from q\)", Q, K, 6),
    bad_call(wen.loss_vectors, "method", Q, K, 2, method="printed"),
    bad_call(wen.fact1_comparison, "q and k must have shape", Q[None], K[None], 2),
    bad_call(wen.fact1_comparison, "n_negatives", Q, K, 0),
    bad_call(wen.shared_evaluator, r"n_negatives.*\(n from x\)", X, 5),
    bad_call(
        wen.shared_evaluator, "x must be finite", X.masked_fill(X > 0.5, math.nan), 1
    ),
    # the encoders and Algorithm 1
    bad_call(wen.TwoEncoders, "n_layers", 5, 8, 0, 3),
    bad_call(wen.TwoEncoders, "width", 5, 8.5, 2, 3),
    bad_call(wen.step_size, "scale", 100, 10, 0.0),
    bad_call(wen.step_size, "width", 0, 10),
    bad_call(
        wen.algorithm1,
        "model must be a StackedModel of TwoEncoders",
        LINEAR,
        X,
        2,
        3,
        eta=0.1,
        gamma=0.1,
    ),
    bad_call(
        wen.algorithm1,
        "model must be a StackedModel",
        TWO.template,
        X,
        2,
        3,
        eta=0.1,
        gamma=0.1,
    ),
    bad_call(wen.algorithm1, "eta", TWO, X, 2, 3, eta=0.0, gamma=0.1),
    bad_call(wen.algorithm1, "n_steps", TWO, X, 2, 0, eta=0.1, gamma=0.1),
    bad_call(
        wen.algorithm1, r"n_negatives.*\(n from x\)", TWO, X, 5, 3, eta=0.1, gamma=0.1
    ),
    bad_call(wen.algorithm1, "x must", TWO, X[0], 2, 3, eta=0.1, gamma=0.1),
    bad_call(
        wen.algorithm1, "checkpoints", TWO, X, 2, 3, eta=0.1, gamma=0.1, checkpoints=0
    ),
    bad_call(wen.run_widths, "widths", X, [], **WIDTHS),
    bad_call(wen.run_widths, "widths", X, [4, 2.5], **WIDTHS),
    bad_call(wen.run_widths, "step_scale", X, [4], **WIDTHS, step_scale=-1.0),
    # the analysis of the histories
    bad_call(wen.running_average, "history lacks", pd.DataFrame({"step": [0]})),
    bad_call(wen.running_average, "history must be a DataFrame", HISTORY.to_dict()),
    bad_call(wen.descent_constant, "loss_norm", HISTORY.drop(columns="loss_norm")),
    bad_call(wen.lemma43_ratios, "grad_W_sq", HISTORY),
    bad_call(wen.late_slopes, "decades", HISTORY, "loss_norm", decades=0.0),
    bad_call(wen.late_slopes, "offset", HISTORY, "loss_norm", offset=-1.0),
    bad_call(wen.late_slopes, "n_points", HISTORY, "loss_norm", n_points=2),
    bad_call(wen.late_slopes, "column", HISTORY, "running_average"),
    # the orders and radii, hidden constants 1
    bad_call(wen.theorem42_orders, r"n_negatives.*\(n from n\)", 3, 1, 3, 0.5, 0.1),
    bad_call(wen.theorem42_orders, "delta", 10, 1, 1, 0.0, 0.1),
    bad_call(wen.proof_descent_constant, "step_scale", 0.0, 0.5, 4),
    bad_call(wen.movement_radius, "delta", 4, 2, -1.0, 8),
    bad_call(wen.movement_radius, "width", 4, 2, 0.5, 1),
    bad_call(wen.lemma44_radius_range, "width", 1, 10, 2),
    bad_call(wen.lemma44_radius_range, "out_features", 100, 0, 2),
    bad_call(wen.radius_meeting_width, "prefactor", 10, 0.0),
    bad_call(wen.radius_meeting_width, "out_features", 0, 0.1),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()


# ---------------------------------------------------------------- the chapter's claims


def test_claims_are_valid_with_unique_keys_and_sections_in_the_chapter():
    notebook = json.loads(
        (
            Path(__file__).resolve().parents[1] / "book" / "03_wen_convergence.ipynb"
        ).read_text(encoding="utf-8")
    )
    text = "\n".join("".join(cell["source"]) for cell in notebook["cells"])
    assert len(wen.CLAIMS) == len(_CLAIM_LIST)  # no key given twice
    for key, claim in wen.CLAIMS.items():
        assert isinstance(claim, Claim) and claim.key == key
        assert claim.expected in EXPECTED
        assert claim.expected != "equal" or claim.margin is not None
        assert f"({claim.section})=" in text, f"no target ({claim.section})= for {key}"
        assert f'claims["{key}"]' in text, f"the chapter adds no row for {key}"
