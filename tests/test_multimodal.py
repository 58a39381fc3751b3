"""Unit tests of ccl_helpers.multimodal (Ren & Li 2023, rebuilt model): each against an
independent computation."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import torch
from bad_calls import bad_call

from ccl_helpers import multimodal as mm
from ccl_helpers import train
from ccl_helpers.multimodal import _data_model, _losses, _ode, _scores, _symbolic
from ccl_helpers.verdicts import Claim


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.fixture(scope="module")
def small():
    g = gen(1)
    sigmas = torch.stack([mm.geometric_sigmas(3.0, 3), mm.geometric_sigmas(1.0, 3)])
    model = mm.make_data_model(sigmas, 0.5, 8, g)
    W_A, W_B = mm.init_weights(2, 16, 8, g)
    return model, W_A, W_B, g


# ---------------------------------------------------------------- data model


def test_geometric_sigmas():
    s = mm.geometric_sigmas(4.0, 5)
    assert torch.allclose(
        s, torch.tensor([4.0, 4**0.75, 2.0, 4**0.25, 1.0], dtype=torch.float64)
    )
    assert torch.equal(mm.geometric_sigmas(1.0, 3), torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="kappa_m"):
        mm.geometric_sigmas(0.5, 3)
    with pytest.raises(ValueError, match="latent_dim"):
        mm.geometric_sigmas(2.0, 0)


def test_haar_is_orthogonal_and_unbiased():
    Q = _data_model._haar_orthogonal(400, 3, gen(0))
    eye = torch.eye(3, dtype=torch.float64)
    assert torch.allclose(Q.mT @ Q, eye.expand(400, 3, 3), atol=1e-12)
    # Haar: E Q = 0 and E Q_ij² = 1/d
    assert Q.mean(0).abs().max() < 0.12
    assert (Q.pow(2).mean(0) - 1 / 3).abs().max() < 0.06


def test_data_model_conditions(small):
    model, *_ = small
    D = torch.diag_embed(model.sigmas**2)
    for M, H in ((model.M_A, model.H_A), (model.M_B, model.H_B)):
        assert torch.allclose(M.mT @ M, D, atol=1e-12)
        assert torch.allclose(
            H.mT @ H,
            0.25 * torch.eye(5, dtype=torch.float64).expand(2, 5, 5),
            atol=1e-12,
        )
        assert (M.mT @ H).abs().max() < 1e-12
    assert (
        model.noise_dim == 5
        and model.latent_dim == 3
        and model.input_dim == 8
        and model.n_runs == 2
    )


def test_data_model_validation():
    with pytest.raises(ValueError, match="sigmas"):
        mm.make_data_model([1.0, -1.0], 0.3, 4, gen())
    with pytest.raises(ValueError, match="noise_std"):
        mm.make_data_model([1.0, 1.0], 0.0, 4, gen())
    with pytest.raises(ValueError, match="input_dim"):
        mm.make_data_model([1.0, 1.0], 0.3, 4, gen(), noise_dim=3)


def test_pairs_and_covariance_by_monte_carlo(small):
    model, *_ = small
    pairs = mm.sample_pairs(model, 40_000, gen(2))
    assert set(pairs.z.unique().tolist()) == {-1.0, 1.0}
    assert torch.allclose(pairs.x_A, pairs.z @ model.M_A.mT + pairs.xi_A @ model.H_A.mT)
    empirical = pairs.x_A.mT @ pairs.x_A / 40_000
    cov_A, _ = model.covariances()
    assert (empirical - cov_A).abs().max() < 0.08
    # positive pairs share z: the cross-covariance is M_A M_Bᵀ
    cross = pairs.x_A.mT @ pairs.x_B / 40_000
    assert (cross - model.M_A @ model.M_B.mT).abs().max() < 0.08


def test_determinism_under_a_seed():
    a = mm.make_data_model([2.0, 1.0], 0.3, 6, gen(5))
    b = mm.make_data_model([2.0, 1.0], 0.3, 6, gen(5))
    assert torch.equal(a.M_A, b.M_A) and torch.equal(a.H_B, b.H_B)
    h1, h2 = (
        mm.train(
            a,
            *mm.init_weights(1, 8, 6, gen(3)),
            [(1.0, 5)],
            generator=gen(4),
            record_steps=[0, 5],
            n_align=50,
            batch_size=8,
        )[2]
        for _ in range(2)
    )
    assert h1.equals(h2)


# ---------------------------------------------------------------- learners


def test_population_norm_and_reparametrisation(small):
    model, W_A, W_B, _ = small
    cov_A, _ = model.covariances()
    pairs = mm.sample_pairs(model, 50_000, gen(3))
    raw = pairs.x_A @ W_A.mT
    assert torch.allclose(
        raw.pow(2).sum(-1).mean(-1).sqrt(),
        _data_model._population_norm(W_A, cov_A),
        rtol=0.02,
    )
    parts = mm.reparametrise(W_A, W_B, model)
    total = parts.S_A.pow(2).sum((-2, -1)) + parts.Xi_A.pow(2).sum((-2, -1))
    assert torch.allclose(total, torch.ones(2, dtype=torch.float64))
    f_A = _data_model._features(W_A, pairs.x_A[:, :10], covariance=cov_A)
    assert torch.allclose(
        f_A, pairs.z[:, :10] @ parts.S_A.mT + pairs.xi_A[:, :10] @ parts.Xi_A.mT
    )
    f_batch = _data_model._features(W_A, pairs.x_A[:, :10], normalisation="batch")
    assert torch.allclose(
        f_batch.pow(2).sum(-1).mean(-1), torch.ones(2, dtype=torch.float64)
    )


def test_init_scaling():
    W_A, _ = mm.init_weights(1, 4096, 3, gen(0))
    # N(0, 1/m): columns have squared norm ≈ 1
    assert torch.allclose(
        W_A.pow(2).sum(-2), torch.ones(1, 3, dtype=torch.float64), atol=0.08
    )


# ---------------------------------------------------------------- losses and gradients


def naive_contrastive(f_A, f_B, beta, tau, form):
    """Loop over i and j: the per-pair formulas written out."""
    R, n, _ = f_A.shape
    out = torch.zeros(R, dtype=f_A.dtype)
    for run in range(R):
        s = beta * f_A[run] @ f_B[run].T
        for i in range(n):
            for t in (s, s.T):
                neg = [math.exp(t[i, j]) for j in range(n) if j != i]
                if form == "primary":
                    pos = math.exp(t[i, i])
                    out[run] += -math.log(pos / (pos + tau / (n - 1) * sum(neg)))
                else:
                    out[run] += -t[i, i] + tau * math.log(sum(neg) / (n - 1))
        out[run] /= n
    return out


@pytest.mark.parametrize("form", mm.FORMS)
def test_contrastive_loss_against_loops(small, form):
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 6, gen(4))
    cov_A, cov_B = model.covariances()
    f_A, f_B = (
        _data_model._features(W_A, pairs.x_A, covariance=cov_A),
        _data_model._features(W_B, pairs.x_B, covariance=cov_B),
    )
    value = mm.contrastive_loss(f_A, f_B, beta=2.0, tau=0.7, form=form)
    assert torch.allclose(value, naive_contrastive(f_A, f_B, 2.0, 0.7, form))
    # the Gram-matrix path of batch_loss equals the loss of the embeddings
    assert torch.allclose(
        mm.batch_loss(W_A, W_B, model, pairs, beta=2.0, tau=0.7, form=form), value
    )
    for normalisation in mm.NORMALISATIONS:
        fa = _data_model._features(
            W_A, pairs.x_A, covariance=cov_A, normalisation=normalisation
        )
        fb = _data_model._features(
            W_B, pairs.x_B, covariance=cov_B, normalisation=normalisation
        )
        nc = mm.batch_loss(
            W_A, W_B, model, pairs, loss="non_contrastive", normalisation=normalisation
        )
        assert torch.allclose(nc, mm.non_contrastive_loss(fa, fb))


def test_loss_validation(small):
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 4, gen())
    with pytest.raises(ValueError, match="beta"):
        mm.batch_loss(W_A, W_B, model, pairs, beta=0.0)
    with pytest.raises(ValueError, match="tau"):
        mm.batch_loss(W_A, W_B, model, pairs, tau=-1.0)
    with pytest.raises(ValueError, match="form"):
        mm.batch_loss(W_A, W_B, model, pairs, form="other")
    with pytest.raises(ValueError, match="loss"):
        mm.batch_loss(W_A, W_B, model, pairs, loss="triplet")
    with pytest.raises(ValueError, match="n ≥ 2"):
        mm.contrastive_loss(torch.ones(1, 1, 3), torch.ones(1, 1, 3), beta=1.0, tau=1.0)


@pytest.mark.parametrize("loss", mm.LOSSES)
def test_autograd_matches_closed_form(small, loss):
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 12, gen(6))
    _, auto = _losses._loss_and_gradients(
        W_A, W_B, model, pairs, loss=loss, beta=1.7, tau=3.0
    )
    closed = _losses._closed_form_gradients(
        W_A, W_B, model, pairs, loss=loss, beta=1.7, tau=3.0
    )
    for a, c in zip(auto, closed):
        assert torch.allclose(a, c, atol=1e-12, rtol=1e-9)


@pytest.mark.parametrize("loss", mm.LOSSES)
@pytest.mark.parametrize("beta, tau", [(0.05, 4.0), (1.7, 3.0), (3.0, 0.5)])
def test_gram_gradients_match_autograd(small, loss, beta, tau):
    """The closed form that train uses: the same loss and gradients as autograd of
    batch_loss (population normalisation, primary form)."""
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 12, gen(6))
    options = dict(loss=loss, beta=beta, tau=tau)
    losses, grads = _losses._loss_and_gradients(
        W_A, W_B, model, pairs, form="primary", normalisation="population", **options
    )
    fast_losses, fast_grads = _losses._gram_loss_and_gradients(
        W_A, W_B, model.covariances(), pairs, **options
    )
    assert torch.allclose(fast_losses, losses, atol=1e-13, rtol=1e-12)
    for a, c in zip(grads, fast_grads):
        assert torch.allclose(c, a, atol=1e-13, rtol=1e-10)


def test_float32_similarity_block_rounds_only(small):
    """similarity_dtype=float32: the n×n block in float32, the rest in float64; the
    loss and gradients within float32 rounding of the float64 ones, and not equal to
    them (the option takes effect)."""
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 12, gen(6))
    options = dict(loss="contrastive", beta=1.7, tau=3.0)
    exact_losses, exact = _losses._gram_loss_and_gradients(
        W_A, W_B, model.covariances(), pairs, **options
    )
    losses, grads = _losses._gram_loss_and_gradients(
        W_A, W_B, model.covariances(), pairs, similarity_dtype=torch.float32, **options
    )
    assert losses.dtype == torch.float64
    assert torch.allclose(losses, exact_losses, rtol=1e-6, atol=0)
    for a, c in zip(grads, exact):
        assert a.dtype == torch.float64
        assert float((a - c).norm() / c.norm()) < 1e-5
        assert not torch.equal(a, c)


def test_train_with_float32_similarity_tracks_float64(small):
    model, W_A, W_B, _ = small
    runs = {
        dtype: mm.train(
            model,
            W_A,
            W_B,
            [(0.5, 20), (3.0, 20)],
            lr=0.1,
            batch_size=8,
            tau=2.0,
            generator=gen(8),
            similarity_dtype=dtype,
        )
        for dtype in (None, torch.float32)
    }
    for exact, rounded in zip(runs[None][:2], runs[torch.float32][:2]):
        assert rounded.dtype == torch.float64
        assert float((rounded - exact).norm() / exact.norm()) < 1e-5
    for options in ({"loss": "non_contrastive"}, {"form": "alternative"}):
        with pytest.raises(ValueError, match="similarity_dtype applies"):
            mm.train(
                model,
                W_A,
                W_B,
                [(1.0, 2)],
                generator=gen(),
                similarity_dtype=torch.float32,
                **options,
            )


def test_alignment_of_chosen_runs_only(small):
    model, W_A, W_B, _ = small
    parts = mm.reparametrise(W_A, W_B, model)
    chosen = _scores._scores(parts, 300, gen(3), rows=torch.tensor([1]))
    alone = mm.alignment_score(
        *(t[1:] for t in parts[:4]), 300, gen(3)
    )  # the same draws: run 1 alone
    assert math.isnan(chosen["align"][0]) and chosen["align"][1] == alone[0]
    full = _scores._scores(parts, 300, gen(3))
    for key in set(full) - {"align"}:
        assert torch.equal(chosen[key], full[key])
    _, _, history = mm.train(
        model,
        W_A,
        W_B,
        [(1.0, 4)],
        batch_size=6,
        generator=gen(4),
        record_steps=[0, 4],
        n_align=50,
        align_runs=[0],
    )
    align = train.wide(history).set_index(["step", "seed"])["align"]
    assert align.xs(0, level="seed").notna().all()
    assert align.xs(1, level="seed").isna().all()
    for bad in ([], [2], [0.5], "0", [-1]):
        with pytest.raises(ValueError, match="align_runs"):
            mm.train(model, W_A, W_B, [(1.0, 1)], generator=gen(), align_runs=bad)


def test_gradient_is_orthogonal_to_weights(small):
    """Population normalisation makes the loss scale-invariant in W: ⟨∇L, W⟩ = 0
    (Euler's identity)."""
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 12, gen(7))
    _, (g_A, g_B) = _losses._loss_and_gradients(
        W_A, W_B, model, pairs, beta=2.0, tau=4.0
    )
    assert (g_A * W_A).sum((-2, -1)).abs().max() < 1e-12
    assert (g_B * W_B).sum((-2, -1)).abs().max() < 1e-12


# ---------------------------------------------------------------- scores


def test_scores_on_known_matrices():
    r, m = 4, 10
    Q = torch.linalg.qr(torch.randn(1, m, m, generator=gen(0), dtype=torch.float64)).Q
    S = Q[..., :r] * torch.tensor([1.0, 0.1, 0.1, 0.1], dtype=torch.float64)
    S = S / S.norm(dim=(-2, -1), keepdim=True)
    Xi = torch.zeros(1, m, 2, dtype=torch.float64)
    assert torch.allclose(
        _scores._condition_number(S), torch.tensor([10.0], dtype=torch.float64)
    )
    # eigenvalues of SSᵀ ∝ (1, .01, .01, .01): stable rank (1 + 3e-4), trace variant
    # 1.03
    assert torch.allclose(
        _scores._balance(S, Xi, "fro"), torch.tensor([1 + 3e-4], dtype=torch.float64)
    )
    assert torch.allclose(
        _scores._balance(S, Xi, "tr"), torch.tensor([1.03], dtype=torch.float64)
    )
    balanced = Q[..., :r] / 2
    assert torch.allclose(
        _scores._balance(balanced, Xi, "fro"), torch.tensor([4.0], dtype=torch.float64)
    )
    assert torch.allclose(
        _scores._balance(balanced, Xi, "tr"), torch.tensor([4.0], dtype=torch.float64)
    )
    assert torch.allclose(
        _scores._alignment_cosines(S, S), torch.ones(1, r, dtype=torch.float64)
    )
    Xi2 = Q[..., r : r + 2] * 0.5
    assert torch.allclose(
        _scores._noise_ratio(S, Xi2), torch.tensor([0.5], dtype=torch.float64)
    )


def exact_alignment(S_A, Xi_A, S_B, Xi_B):
    """Exact Align by enumerating z, z⁻, ξ_A, ξ_B, ξ_B⁻ (tiny sizes)."""
    r, dxi = S_A.shape[-1], Xi_A.shape[-1]
    wins, count = 0.0, 0

    def cube(k):
        return [
            torch.tensor(v, dtype=torch.float64)
            for v in itertools.product((-1.0, 1.0), repeat=k)
        ]

    for z, zn, a, b, bn in itertools.product(
        cube(r), cube(r), cube(dxi), cube(dxi), cube(dxi)
    ):
        fa = S_A @ z + Xi_A @ a
        wins += float(
            (fa - S_B @ z - Xi_B @ b).norm() < (fa - S_B @ zn - Xi_B @ bn).norm()
        )
        count += 1
    return wins / count


def test_alignment_monte_carlo_against_enumeration():
    g = gen(11)
    S_A = torch.randn(1, 6, 2, generator=g, dtype=torch.float64)
    S_B = S_A + 0.3 * torch.randn(1, 6, 2, generator=g, dtype=torch.float64)
    Xi_A = 0.3 * torch.randn(1, 6, 1, generator=g, dtype=torch.float64)
    Xi_B = 0.3 * torch.randn(1, 6, 1, generator=g, dtype=torch.float64)
    exact = exact_alignment(S_A[0], Xi_A[0], S_B[0], Xi_B[0])
    mc = mm.alignment_score(S_A, Xi_A, S_B, Xi_B, 40_000, gen(12)).item()
    assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1e-9


def test_alignment_cap_and_collapse():
    r = 3
    eye = torch.eye(8, dtype=torch.float64)[None]
    S = eye[..., :r] / math.sqrt(r)
    Xi = 1e-3 * torch.randn(
        1, 8, 12, generator=gen(3), dtype=torch.float64
    )  # d_ξ = 12: ξ_B = ξ_B⁻ is rare
    Xi_B = 1e-3 * torch.randn(1, 8, 12, generator=gen(4), dtype=torch.float64)
    value = mm.alignment_score(S, Xi, S, Xi_B, 40_000, gen(1)).item()
    assert (
        abs(value - mm.alignment_cap(r)) < 0.01
    )  # collisions are coin flips in the noise
    # orthogonal noise columns of equal norms make the collision distances tie exactly:
    # strict counts 0
    ortho = mm.alignment_score(
        S, eye[..., r : r + 2] * 1e-3, S, eye[..., r + 2 : r + 4] * 1e-3, 40_000, gen(1)
    ).item()
    assert abs(ortho - (1 - 2.0**-r)) < 0.01
    excluded = mm.alignment_score(
        S, Xi, S, Xi_B, 4_000, gen(1), exclude_collisions=True
    ).item()
    assert excluded == 1.0
    collapsed = torch.zeros(1, 8, r, dtype=torch.float64)
    zeros = torch.zeros(1, 8, 2, dtype=torch.float64)
    assert (
        mm.alignment_score(collapsed, zeros, collapsed, zeros, 100, gen()).item() == 0.0
    )
    assert (
        mm.alignment_score(
            collapsed, zeros, collapsed, zeros, 100, gen(), ties="half"
        ).item()
        == 0.5
    )
    assert mm.alignment_cap(5) == 1 - 1 / 64
    with pytest.raises(ValueError, match="n_samples"):
        mm.alignment_score(S, Xi, S, Xi, 0, gen())


@pytest.mark.parametrize("width", [3, 40])  # without and with the QR reduction
def test_alignment_score_of_a_diverged_run_is_nan(width):
    """A NaN or an infinity in a run's matrices gives that run NaN, not 0 (every
    comparison with NaN is False); the other runs keep their score."""
    S = torch.randn(3, width, 2, generator=gen(0), dtype=torch.float64)
    Xi = torch.zeros(3, width, 1, dtype=torch.float64)
    clean = mm.alignment_score(S, Xi, S, Xi, 50, gen(1))
    bad = S.clone()
    bad[0, 0, 0], bad[2, 1, 1] = math.nan, math.inf
    found = mm.alignment_score(bad, Xi, S, Xi, 50, gen(1))
    assert found[[0, 2]].isnan().all() and found[1] == clean[1]


# ---------------------------------------------------------------- training


def test_train_schedule_and_rescaling(small):
    """One step of train equals W − (η/β)∇L̂ on the same batch."""
    model, W_A, W_B, _ = small
    new_A, new_B, history = mm.train(
        model,
        W_A,
        W_B,
        [(0.5, 1)],
        lr=0.1,
        batch_size=6,
        tau=2.0,
        generator=gen(8),
        record_steps=[0, 1],
    )
    pairs = mm.sample_pairs(model, 6, gen(8))
    g_A, g_B = _losses._closed_form_gradients(W_A, W_B, model, pairs, beta=0.5, tau=2.0)
    assert torch.allclose(new_A, W_A - 0.2 * g_A) and torch.allclose(
        new_B, W_B - 0.2 * g_B
    )
    assert set(history["quantity"]) == set(mm.SCORES) - {"align"}
    table = train.wide(history)
    assert list(table["step"]) == [0, 0, 1, 1] and list(table["beta"]) == [0.5] * 4
    assert mm.two_stage(0.05, 3, 3.0, 4) == [(0.05, 3), (3.0, 4)]
    assert mm.two_stage(0.05, 0, 3.0, 4) == [(0.05, 0), (3.0, 4)]
    with pytest.raises(ValueError, match="steps_1 must be an integer ≥ 0"):
        mm.two_stage(0.05, -1, 3.0, 4)
    with pytest.raises(ValueError, match="steps_2 must be an integer ≥ 0"):
        mm.two_stage(0.05, 3, 3.0, 4.0)
    with pytest.raises(ValueError, match="schedule"):
        mm.train(model, W_A, W_B, [(0.0, 3)], generator=gen())
    with pytest.raises(ValueError, match="record_steps"):
        mm.train(model, W_A, W_B, [(1.0, 3)], generator=gen(), record_steps=[4])
    with pytest.raises(ValueError, match="lr"):
        mm.train(model, W_A, W_B, [(1.0, 3)], generator=gen(), lr=-1.0)
    grid = mm.record_grid(100, 20)
    assert grid[0] == 0 and grid[-1] == 100 and grid == sorted(set(grid))


def test_histories_have_the_long_format_with_seed(small):
    """train, population_descent and ode_scores: the book's one long history (step,
    [beta], seed, quantity, value), seed the run's index, one row per recorded (step,
    seed, quantity); train.wide gives one column per score."""
    model, W_A, W_B, _ = small
    _, _, trained = mm.train(
        model,
        W_A,
        W_B,
        [(0.5, 4)],
        batch_size=6,
        generator=gen(8),
        record_steps=[0, 2, 4],
    )
    descent = mm.population_descent(W_A, W_B, model, 4, record_steps=[0, 4])
    state = mm.integrate_ode(
        model.sigmas, 0.5, 5, [(0.1, 2), (2.0, 2)], record_steps=[0, 2, 4]
    )
    ode = mm.ode_scores(state, 5, n_align=20, generator=gen(2), align_every=2)
    for history, keys, steps in (
        (trained, ["step", "beta", "seed"], [0, 2, 4]),
        (descent, ["step", "seed"], [0, 4]),
        (ode, ["step", "beta", "seed"], [0, 2, 4]),
    ):
        assert list(history.columns) == [*keys, "quantity", "value"]
        assert history["value"].dtype == np.float64
        assert not history.duplicated(keys[:1] + ["seed", "quantity"]).any()
        assert sorted(set(history["seed"])) == [0, 1]
        assert sorted(set(history["step"])) == steps
        table = train.wide(history)
        assert list(table.columns[: len(keys)]) == keys
        assert set(table.columns[len(keys) :]) <= set(mm.SCORES)
        assert len(table) == len(steps) * 2
    # the β of each step; the alignment at every 2nd recorded step and the last
    assert train.wide(ode).groupby("step")["beta"].first().tolist() == [0.1, 2.0, 2.0]
    align = ode[ode["quantity"] == "align"]
    assert sorted(set(align["step"])) == [0, 4] and align["value"].notna().all()


# ---------------------------------------------------------------- ODE


def test_ode_initial_state_and_conservation():
    sig = mm.geometric_sigmas(3.0, 3)
    state = mm.integrate_ode(
        sig,
        0.4,
        6,
        mm.two_stage(0.1, 200, 2.0, 200),
        tau=2.0,
        lr=0.2,
        record_steps=[0, 100, 200, 400],
    )
    n2 = float((sig**2).sum() + 6 * 0.16)
    assert np.allclose(state.a[0, 0], (sig**2).numpy() / n2) and np.isclose(
        state.norm2[0, 0], n2
    )
    assert np.allclose(state.rho[0, 0], 0.0)
    assert np.allclose(
        state.a.sum(-1) + state.noise, 1.0, atol=1e-7
    )  # ‖S‖² + ‖Ξ‖² = 1 is conserved
    assert list(state.beta) == [0.1, 0.1, 2.0, 2.0]
    with pytest.raises(ValueError, match="tau"):
        mm.integrate_ode(sig, 0.4, 6, [(1.0, 10)], tau=2.0, form="alternative")
    with pytest.raises(ValueError, match="noise_std"):
        mm.integrate_ode(sig, -0.4, 6, [(1.0, 10)])


def test_ode_non_contrastive_rho_closed_form():
    """Non-contrastive: dρ_p/dt = γσ_p²(1 − ρ_p²) ⇒ artanh ρ_p(t) = σ_p² ∫γ, the same ∫γ
    for every p."""
    sig = torch.tensor([2.0, 1.0], dtype=torch.float64)
    state = mm.integrate_ode(
        sig,
        0.5,
        3,
        [(1.0, 300)],
        loss="non_contrastive",
        lr=0.05,
        record_steps=[0, 50, 150],
    )
    clock = np.arctanh(state.rho[0, 1:]) / (sig.numpy() ** 2)
    assert np.allclose(clock[:, 0], clock[:, 1], rtol=1e-6)


def test_ode_matches_finite_width_short_run():
    """The ODE tracks SGD at large width: 300 steps, m = 512."""
    g = gen(21)
    sig = mm.geometric_sigmas(2.0, 3)
    model = mm.make_data_model(sig, 0.5, 10, g)
    W = mm.init_weights(1, 512, 10, g)
    _, _, hist = mm.train(
        model,
        *W,
        [(0.1, 300)],
        tau=2.0,
        lr=0.2,
        batch_size=128,
        generator=g,
        record_steps=[300],
    )
    state = mm.integrate_ode(
        sig, 0.5, 7, [(0.1, 300)], tau=2.0, lr=0.2, record_steps=[300]
    )
    ode = train.wide(mm.ode_scores(state, 7))
    hist = train.wide(hist)
    assert abs(hist["kappa"].iloc[0] / ode["kappa"].iloc[0] - 1) < 0.1
    assert abs(hist["noise_ratio"].iloc[0] / ode["noise_ratio"].iloc[0] - 1) < 0.1


def test_ode_matrices_and_alignment():
    a = np.array([[0.5, 0.3]])
    rho = np.array([[1.0, 1.0]])
    parts = _ode._ode_matrices(a, rho, np.array([0.2]), 4)
    assert torch.allclose(parts.S_A.pow(2).sum(-2), torch.tensor(a))
    assert torch.allclose(parts.S_A, parts.S_B)
    assert torch.allclose(
        parts.S_A.pow(2).sum((-2, -1)) + parts.Xi_A.pow(2).sum((-2, -1)),
        torch.ones(1, dtype=torch.float64),
    )
    value = mm.alignment_score(*parts[:4], 20_000, gen(2), ties="half").item()
    assert (
        abs(value - mm.alignment_cap(2)) < 0.01
    )  # ties at collisions exactly (counted 1/2), all else won


def test_alignment_margin_against_numpy_and_its_guarantee():
    """μ by numpy's SVD; where μ > 0, every non-colliding triple is won (Lemma 4.4)."""
    g = gen(31)
    r, dxi, m = 3, 4, 12
    S_A = torch.randn(4, m, r, generator=g, dtype=torch.float64) / 3
    S_B = S_A + 0.01 * torch.randn(4, m, r, generator=g, dtype=torch.float64)
    Xi_A, Xi_B = (
        0.005 * torch.randn(4, m, dxi, generator=g, dtype=torch.float64)
        for _ in range(2)
    )
    S_B[3] = S_A[3] + 0.5 * torch.randn(m, r, generator=g, dtype=torch.float64)
    ones = torch.ones(4, dtype=torch.float64)
    parts = mm.Reparametrised(S_A, Xi_A, S_B, Xi_B, ones, ones)
    margin = mm.alignment_margin(parts)
    for i in range(4):
        A, B = S_A[i].numpy(), S_B[i].numpy()
        expected = (
            np.linalg.svd(B, compute_uv=False)[-1]
            - math.sqrt(r) * np.linalg.norm(A - B, 2)
            - math.sqrt(dxi) * (np.linalg.norm(Xi_A[i], 2) + np.linalg.norm(Xi_B[i], 2))
        )
        assert margin[i].item() == pytest.approx(expected, rel=1e-12)
    assert (margin[:3] > 0).all() and margin[3] < 0
    align = mm.alignment_score(
        S_A, Xi_A, S_B, Xi_B, 20_000, gen(32), exclude_collisions=True
    )
    assert (align[:3] == 1).all()
    assert "align_margin" in _scores._scores(parts)


def test_balance_lower_bound_holds_and_is_tight():
    g = gen(33)
    r, m, dxi = 4, 12, 6
    scales = torch.rand(200, 1, r, generator=g, dtype=torch.float64) * 3 + 0.05
    Q = torch.linalg.qr(torch.randn(200, m, m, generator=g, dtype=torch.float64)).Q
    S = Q[..., :r] * scales
    Xi = (
        0.1
        * torch.rand(200, 1, 1, generator=g, dtype=torch.float64)
        * torch.randn(200, m, dxi, generator=g, dtype=torch.float64)
    )
    kappa, noise = _scores._condition_number(S), _scores._noise_ratio(S, Xi)
    for variant in ("fro", "tr"):
        bound = mm.balance_lower_bound(kappa, noise, r, variant)
        assert (_scores._balance(S, Xi, variant) >= bound * (1 - 1e-12)).all()
        # κ = 1 without noise: Balance = bound = r
        tight = mm.balance_lower_bound(torch.ones(1), torch.zeros(1), r, variant)
        assert tight.item() == pytest.approx(r)
    with pytest.raises(ValueError, match="kappa and noise"):
        mm.balance_lower_bound(kappa, noise[:3], r)
    for bad in (0.5, math.inf, -math.inf):
        with pytest.raises(ValueError, match="kappa must hold condition numbers κ ≥ 1"):
            mm.balance_lower_bound(torch.tensor([bad]), torch.zeros(1), r)
    # NaN (a value not recorded) propagates
    assert mm.balance_lower_bound(torch.tensor([math.nan]), torch.zeros(1), r).isnan()


def population_nc_loss(W_A, W_B, model):
    """E‖f_A − f_B‖² = ‖S_A − S_B‖_F² + ‖Ξ_A‖_F² + ‖Ξ_B‖_F² (E zzᵀ = E ξξᵀ = I)."""
    p = mm.reparametrise(W_A, W_B, model)
    return sum(v.pow(2).sum((-2, -1)) for v in (p.S_A - p.S_B, p.Xi_A, p.Xi_B))


def test_population_nc_loss_by_monte_carlo(small):
    model, W_A, W_B, _ = small
    pairs = mm.sample_pairs(model, 100_000, gen(34))
    f_A = _data_model._features(W_A, pairs.x_A, covariance=model.covariances()[0])
    f_B = _data_model._features(W_B, pairs.x_B, covariance=model.covariances()[1])
    per_pair = (f_A - f_B).pow(2).sum(-1)
    mean, se = per_pair.mean(-1), per_pair.std(-1) / math.sqrt(per_pair.shape[-1])
    exact = population_nc_loss(W_A, W_B, model)
    assert ((mean - exact).abs() < 4 * se).all()


def test_population_descent_matches_descent_on_the_weights(small):
    """The Gram-form recursion equals plain autograd descent on W, step by step."""
    model, W_A, W_B, _ = small
    steps, lr = 30, 0.2
    gram_form = train.wide(
        mm.population_descent(
            W_A, W_B, model, steps, lr=lr, record_steps=range(0, steps + 1, 10)
        )
    )
    A, B, rows = W_A.clone(), W_B.clone(), []
    for step in range(steps + 1):
        if step % 10 == 0:
            values = _scores._scores(mm.reparametrise(A, B, model))
            rows.append({k: v.numpy() for k, v in values.items()})
        A, B = A.requires_grad_(True), B.requires_grad_(True)
        grad_A, grad_B = torch.autograd.grad(
            population_nc_loss(A, B, model).sum(), (A, B)
        )
        A, B = (A - lr * grad_A).detach(), (B - lr * grad_B).detach()
    for i, row in enumerate(rows):
        got = gram_form[gram_form["step"] == 10 * i]
        for name, expected in row.items():
            np.testing.assert_allclose(got[name].to_numpy(), expected, rtol=1e-9)
    assert set(gram_form.columns) == {"step", "seed", *mm.SCORES} - {"align"}
    compressed = train.wide(
        mm.population_descent(
            *mm.compress_width(W_A, W_B), model, steps, lr=lr, record_steps=[steps]
        )
    )
    np.testing.assert_allclose(
        compressed.drop(columns="seed").to_numpy(),
        gram_form[gram_form["step"] == steps].drop(columns="seed").to_numpy(),
        rtol=1e-9,
    )
    with pytest.raises(ValueError, match="record_steps"):
        mm.population_descent(W_A, W_B, model, 5, record_steps=[6])


def test_stage_one_gap_vanishes_linearly_in_beta():
    """Lemma B.9 in the ODE: halving β halves the gap to the rescaled
    non-contrastive run."""
    sig = mm.geometric_sigmas(3.0, 3)
    gaps = [mm.stage_one_gap(sig, 0.3, 7, b, 300, tau=4.0) for b in (0.04, 0.02)]
    for key in ("kappa", "rho"):
        assert 0 < gaps[1][key] < gaps[0][key]
        assert gaps[1][key] / gaps[0][key] == pytest.approx(0.5, abs=0.08)


def test_stage_one_gap_finite_width_is_linear_in_beta(small):
    """Lemma B.9 at finite width: on shared batches, halving β halves the gap in κ."""
    model, W_A, W_B, _ = small
    gaps = mm.stage_one_gap_finite_width(
        model, W_A, W_B, [0.04, 0.02], 300, tau=4.0, batch_size=128, seed=3
    ).pivot(index="seed", columns="beta", values="gap")
    assert list(gaps.index) == [0, 1] and (gaps > 0).all().all()
    # run 0 has κ_M = 3 (run 1, κ_M = 1, has no condition number to build)
    assert gaps.loc[0, 0.04] / gaps.loc[0, 0.02] == pytest.approx(2.0, rel=0.15)
    with pytest.raises(ValueError, match="betas"):
        mm.stage_one_gap_finite_width(model, W_A, W_B, [], 10)


def test_alignment_drive_is_the_rate_of_the_log_ratio_and_is_capped():
    """Non-contrastive ODE: d ln(a_1/a_2)/dt = γ[σ_1²D_1 − σ_2²D_2] with D the
    alignment drive (central differences of the solution), and D_p ≤ 1 − a_p."""
    sig = torch.tensor([[3.0, 1.0, 1.0], [2.0, 1.5, 1.0]], dtype=torch.float64)
    lr, steps = 0.05, np.arange(0, 401)
    state = mm.integrate_ode(
        sig, 0.4, 4, [(1.0, 400)], loss="non_contrastive", lr=lr, record_steps=steps
    )
    drive, sig2 = state.alignment_drive, sig.numpy()[:, None, :] ** 2
    gamma = 4 * lr / state.norm2
    rate = gamma * (sig2[..., 0] * drive[..., 0] - sig2[..., 1] * drive[..., 1])
    log_ratio = np.log(state.a[..., 0] / state.a[..., 1])
    numeric = (log_ratio[:, 2:] - log_ratio[:, :-2]) / 2
    # after the first steps, where the rate changes within a step
    np.testing.assert_allclose(numeric[:, 20:], rate[:, 21:-1], rtol=2e-3, atol=1e-7)
    assert (drive <= 1 - state.a + 1e-12).all()


# ---------------------------------------------------------------- sympy


def test_symbolic_norm_identity():
    assert mm.symbolic_norm_identity(2, 3, 2, 1) == 0
    for sizes in ((2**50, 3), (2, 2**50)):
        with pytest.raises(ValueError, match="width=.*input_dim=.*sympy monomials"):
            mm.symbolic_norm_identity(*sizes, 2, 1)


def test_symbolic_negative_expectations():
    for r in (1, 2):
        assert all(
            sp.simplify(v) == 0 for v in mm.symbolic_negative_expectations(r).values()
        )
    # r = 3 (768 terms, the book's largest call) is allowed; r = 5 is refused at once
    assert _symbolic._MAX_NEGATIVE_TERMS >= 768
    with pytest.raises(ValueError, match="latent_dim=5 give 30,720 sympy terms"):
        mm.symbolic_negative_expectations(5)
    with pytest.raises(ValueError, match="latent_dim=1125899906842624.*or more"):
        mm.symbolic_negative_expectations(2**50)


# ---------------------------------------------------------------- the chapter's claims


def test_claims_are_valid_and_unique():
    keys = [claim.key for claim in mm.CLAIMS.values()]
    assert list(mm.CLAIMS) == keys and len(set(keys)) == len(keys)
    for claim in mm.CLAIMS.values():
        assert isinstance(claim, Claim)  # Claim checks its fields when it is built
        assert claim.source.startswith("Ren & Li (2023)")
        assert claim.margin is None or claim.margin_reason


def test_claim_sections_are_labels_of_the_chapter():
    chapter = (
        Path(__file__).resolve().parents[1] / "book" / "04_multimodal_dynamics.ipynb"
    )
    text = chapter.read_text()
    for claim in mm.CLAIMS.values():
        assert claim.section is None or f"({claim.section})=" in text, claim.key


def test_claim_nulls_and_margins_match_the_model():
    assert mm.CLAIMS["both_align"].null == pytest.approx(mm.alignment_cap(5))
    assert mm.CLAIMS["contrastive_balanced"].null == 5
    # stage2_condition's margin: at κ(S_A) = 1.1 Lemma 4.5 still certifies 3/4 of r
    margin = mm.CLAIMS["stage2_condition"].margin
    bound = mm.balance_lower_bound(
        torch.tensor([1 + margin], dtype=torch.float64),
        torch.zeros(1, dtype=torch.float64),
        5,
    )
    assert bound.item() / 5 == pytest.approx(0.75, abs=0.01)
    # width_tracking's margin: a 256-fold width shrinks the gap by less than a quarter
    assert 256 ** -mm.CLAIMS["width_tracking"].margin > 0.75
    # peak_grows_with_kappa_m's margin: a fivefold κ_M raises the peak by < 1/5
    assert 5 ** mm.CLAIMS["peak_grows_with_kappa_m"].margin < 1.2


@pytest.mark.parametrize(
    "sigmas",
    ["bogus", [], [1.0, -1.0], [1.0, math.nan], torch.tensor([2, 1]), [[[1.0]]]],
)
def test_bad_sigmas_are_named(sigmas):
    with pytest.raises(ValueError, match="sigmas"):
        mm.make_data_model(sigmas, 0.3, 4, gen())
    with pytest.raises(ValueError, match="sigmas"):
        mm.integrate_ode(sigmas, 0.3, 2, [(1.0, 2)])


@pytest.mark.parametrize("schedule", [[], [(0.0, 2)], [(1.0, -1)], "bogus"])
def test_bad_schedules_are_named(schedule):
    with pytest.raises(ValueError, match="schedule"):
        mm.integrate_ode([2.0, 1.0], 0.3, 2, schedule)


# ---------------------------------------------------------------- bad calls

_G = torch.Generator().manual_seed(0)
_SIGMAS = torch.tensor([2.0, 1.0], dtype=torch.float64)
_MODEL = mm.make_data_model(_SIGMAS, 0.5, 4, _G, noise_dim=1)
_W_A, _W_B = mm.init_weights(1, 3, 4, _G)
_PAIRS = mm.sample_pairs(_MODEL, 4, _G)
_PARTS = mm.reparametrise(_W_A, _W_B, _MODEL)
_F_A, _F_B = _PAIRS.x_A, _PAIRS.x_B  # (1, 4, 4) float64 features
_NAN_W = _W_A.clone()
_NAN_W[0, 0, 0] = math.nan
_STATE = mm.integrate_ode(_SIGMAS, 0.5, 1, [(1.0, 2)])
_S, _XI = _PARTS.S_A, _PARTS.Xi_A  # (1, 3, 2), (1, 3, 1)


def _fit(**kwargs):
    """A valid call of train, one step, but for ``kwargs``."""
    arguments = dict(generator=torch.Generator().manual_seed(0), batch_size=4)
    return dict(arguments, **kwargs)


BAD_CALLS = [
    # the data model and the learners
    bad_call(mm.geometric_sigmas, "kappa_m must be ≥ 1", 0.5, 3),
    bad_call(mm.geometric_sigmas, "kappa_m", "4", 3),
    bad_call(mm.geometric_sigmas, "latent_dim", 2.0, 0),
    bad_call(mm.geometric_sigmas, "latent_dim", 2.0, 2.5),
    bad_call(mm.make_data_model, "sigmas", [1.0, -1.0], 0.3, 4, _G),
    bad_call(mm.make_data_model, "sigmas", torch.tensor([2, 1]), 0.3, 4, _G),
    bad_call(mm.make_data_model, "noise_std", [1.0, 1.0], 0.0, 4, _G),
    bad_call(mm.make_data_model, "input_dim", [1.0, 1.0], 0.3, 4, _G, noise_dim=3),
    bad_call(mm.make_data_model, "input_dim", [1.0, 1.0], 0.3, 4.0, _G),
    bad_call(mm.make_data_model, "generator", [1.0, 1.0], 0.3, 4, 0),
    bad_call(mm.make_data_model, "noise_dim", [1.0], 0.3, 4, _G, noise_dim=0),
    bad_call(mm.make_data_model, "dtype", [1.0], 0.3, 4, _G, dtype=torch.int64),
    bad_call(mm.sample_pairs, "model", tuple(_MODEL), 4, _G),
    bad_call(mm.sample_pairs, "n", _MODEL, 0, _G),
    bad_call(mm.sample_pairs, "generator", _MODEL, 4, None),
    bad_call(mm.init_weights, "n_runs", 0, 3, 4, _G),
    bad_call(mm.init_weights, "width", 1, 2.5, 4, _G),
    bad_call(mm.init_weights, "input_dim", 1, 3, -1, _G),
    bad_call(mm.init_weights, "generator", 1, 3, 4, 0),
    bad_call(mm.init_weights, "dtype", 1, 3, 4, _G, dtype=torch.int64),
    bad_call(mm.reparametrise, "W_A", _W_A[0], _W_B[0], _MODEL),
    bad_call(mm.reparametrise, "W_B", _W_A, _W_B[..., :3], _MODEL),
    bad_call(
        mm.reparametrise,
        "W_A and W_B must have the input dimension d = 4",
        _W_A[..., :3],
        _W_B[..., :3],
        _MODEL,
    ),
    bad_call(mm.reparametrise, "model", _W_A, _W_B, None),
    # the losses: shapes and dtypes
    bad_call(mm.contrastive_loss, "beta", _F_A, _F_B, beta=0.0, tau=1.0),
    bad_call(mm.contrastive_loss, "tau", _F_A, _F_B, beta=1.0, tau=-1.0),
    bad_call(mm.contrastive_loss, "form", _F_A, _F_B, beta=1.0, tau=1.0, form="x"),
    bad_call(
        mm.contrastive_loss,
        "f_B must have the dtype of f_A",
        _F_A,
        _F_B.float(),
        beta=1.0,
        tau=1.0,
    ),
    bad_call(
        mm.contrastive_loss,
        "f_B must have the shape of f_A",
        _F_A,
        _F_B[:, :3],
        beta=1.0,
        tau=1.0,
    ),
    bad_call(
        mm.contrastive_loss,
        "f_A must hold n ≥ 2",
        _F_A[:, :1],
        _F_B[:, :1],
        beta=1.0,
        tau=1.0,
    ),
    bad_call(mm.contrastive_loss, "f_A", _F_A.long(), _F_B.long(), beta=1.0, tau=1.0),
    bad_call(mm.non_contrastive_loss, "f_B", _F_A, _F_B[..., :3]),
    bad_call(mm.non_contrastive_loss, "f_A", _F_A[0, 0], _F_B[0, 0]),
    bad_call(mm.batch_loss, "loss", _W_A, _W_B, _MODEL, _PAIRS, loss="triplet"),
    bad_call(mm.batch_loss, "beta", _W_A, _W_B, _MODEL, _PAIRS, beta=0.0),
    bad_call(
        mm.batch_loss,
        "normalisation",
        _W_A,
        _W_B,
        _MODEL,
        _PAIRS,
        normalisation="layer",
    ),
    bad_call(mm.batch_loss, "pairs", _W_A, _W_B, _MODEL, tuple(_PAIRS)),
    bad_call(
        mm.batch_loss,
        "pairs must hold n ≥ 2",
        _W_A,
        _W_B,
        _MODEL,
        mm.Pairs(*(t[:, :1] for t in _PAIRS)),
    ),
    bad_call(
        mm.batch_loss,
        "W_B must have the dtype of W_A",
        _W_A,
        _W_B.float(),
        _MODEL,
        _PAIRS,
    ),
    # the scores and the lemmas
    bad_call(mm.alignment_score, "n_samples", *_PARTS[:4], 0, _G),
    bad_call(mm.alignment_score, "ties", *_PARTS[:4], 10, _G, ties="random"),
    bad_call(mm.alignment_score, "generator", *_PARTS[:4], 10, 0),
    bad_call(
        mm.alignment_score,
        "Xi_A must have the leading dimensions",
        _S,
        _XI[:, :2],
        _S,
        _XI,
        10,
        _G,
    ),
    bad_call(
        mm.alignment_score,
        "S_B must have the shape of S_A",
        _S,
        _XI,
        _S[..., :1],
        _XI,
        10,
        _G,
    ),
    bad_call(
        mm.alignment_score,
        "Xi_B must have the shape of Xi_A",
        _S,
        _XI,
        _S,
        torch.cat([_XI, _XI], -1),
        10,
        _G,
    ),
    bad_call(mm.alignment_score, "S_A", _S.long(), _XI, _S, _XI, 10, _G),
    bad_call(mm.alignment_cap, "latent_dim", 0),
    bad_call(mm.alignment_margin, "parts", tuple(_PARTS)),
    bad_call(
        mm.balance_lower_bound,
        "kappa must hold condition numbers",
        torch.tensor([0.5]),
        torch.zeros(1),
        2,
    ),
    bad_call(
        mm.balance_lower_bound, "kappa and noise", torch.ones(2), torch.zeros(3), 2
    ),
    bad_call(
        mm.balance_lower_bound, "variant", torch.ones(1), torch.zeros(1), 2, "nuclear"
    ),
    bad_call(mm.balance_lower_bound, "latent_dim", torch.ones(1), torch.zeros(1), 0),
    # training
    bad_call(mm.two_stage, "beta_1", 0.0, 3, 3.0, 4),
    bad_call(mm.two_stage, "steps_1 must be an integer ≥ 0", 0.05, -1, 3.0, 4),
    bad_call(mm.two_stage, "beta_2", 0.05, 3, math.nan, 4),
    bad_call(mm.two_stage, "steps_2 must be an integer ≥ 0", 0.05, 3, 3.0, 4.0),
    bad_call(mm.train, "schedule", _MODEL, _W_A, _W_B, [(0.0, 3)], **_fit()),
    bad_call(mm.train, "lr", _MODEL, _W_A, _W_B, [(1.0, 1)], **_fit(lr=-1.0)),
    bad_call(
        mm.train, "batch_size", _MODEL, _W_A, _W_B, [(1.0, 1)], **_fit(batch_size=1)
    ),
    bad_call(
        mm.train,
        "record_steps",
        _MODEL,
        _W_A,
        _W_B,
        [(1.0, 1)],
        **_fit(record_steps=[2]),
    ),
    bad_call(
        mm.train, "align_runs", _MODEL, _W_A, _W_B, [(1.0, 1)], **_fit(align_runs=[1])
    ),
    bad_call(
        mm.train,
        "similarity_dtype applies",
        _MODEL,
        _W_A,
        _W_B,
        [(1.0, 1)],
        **_fit(loss="non_contrastive", similarity_dtype=torch.float32),
    ),
    bad_call(
        mm.train,
        "similarity_dtype",
        _MODEL,
        _W_A,
        _W_B,
        [(1.0, 1)],
        **_fit(similarity_dtype=torch.int32),
    ),
    bad_call(
        mm.train, "W_A must be finite", _MODEL, _NAN_W, _W_B, [(1.0, 1)], **_fit()
    ),
    bad_call(mm.train, "model", tuple(_MODEL), _W_A, _W_B, [(1.0, 1)], **_fit()),
    bad_call(
        mm.train, "progress", _MODEL, _W_A, _W_B, [(1.0, 1)], **_fit(progress="bar")
    ),
    bad_call(
        mm.train, "generator", _MODEL, _W_A, _W_B, [(1.0, 1)], **_fit(generator=0)
    ),
    bad_call(mm.compress_width, "W_B", _W_A, _W_B[:, :2]),
    bad_call(mm.compress_width, "W_A must be finite", _NAN_W, _W_B),
    bad_call(mm.population_descent, "steps", _W_A, _W_B, _MODEL, -1),
    bad_call(mm.population_descent, "lr", _W_A, _W_B, _MODEL, 2, lr=0.0),
    bad_call(
        mm.population_descent, "record_steps", _W_A, _W_B, _MODEL, 5, record_steps=[6]
    ),
    bad_call(mm.population_descent, "model", _W_A, _W_B, _SIGMAS, 2),
    bad_call(mm.record_grid, "n_points", 10, 1),
    bad_call(mm.record_grid, "total", -1, 3),
    # the ODE
    bad_call(mm.integrate_ode, "sigmas", [1.0, -1.0], 0.3, 2, [(1.0, 2)]),
    bad_call(mm.integrate_ode, "noise_std", _SIGMAS, -0.4, 2, [(1.0, 2)]),
    bad_call(mm.integrate_ode, "noise_dim", _SIGMAS, 0.4, 0, [(1.0, 2)]),
    bad_call(mm.integrate_ode, "schedule", _SIGMAS, 0.4, 2, []),
    bad_call(
        mm.integrate_ode,
        "tau must be ≤ 1 for form='alternative'",
        _SIGMAS,
        0.4,
        2,
        [(1.0, 2)],
        tau=2.0,
        form="alternative",
    ),
    bad_call(mm.integrate_ode, "loss", _SIGMAS, 0.4, 2, [(1.0, 2)], loss="x"),
    bad_call(
        mm.integrate_ode, "record_steps", _SIGMAS, 0.4, 2, [(1.0, 2)], record_steps=[]
    ),
    bad_call(
        mm.integrate_ode, "record_steps", _SIGMAS, 0.4, 2, [(1.0, 2)], record_steps=[3]
    ),
    bad_call(mm.integrate_ode, "rtol", _SIGMAS, 0.4, 2, [(1.0, 2)], rtol=0.0),
    bad_call(mm.ode_scores, "state", tuple(_STATE), 1),
    bad_call(mm.ode_scores, "noise_dim", _STATE, 0),
    bad_call(mm.ode_scores, "generator must be given", _STATE, 1, n_align=5),
    bad_call(
        mm.ode_scores, "align_every", _STATE, 1, n_align=5, generator=_G, align_every=0
    ),
    bad_call(mm.stage_one_gap, "beta", _SIGMAS, 0.5, 1, 0.0, 2),
    bad_call(mm.stage_one_gap, "steps", _SIGMAS, 0.5, 1, 0.1, 0),
    bad_call(mm.stage_one_gap, "sigmas", "bogus", 0.5, 1, 0.1, 2),
    bad_call(
        mm.stage_one_gap_finite_width,
        "betas must not be empty",
        _MODEL,
        _W_A,
        _W_B,
        [],
        2,
    ),
    bad_call(mm.stage_one_gap_finite_width, "betas", _MODEL, _W_A, _W_B, [0.0], 2),
    bad_call(
        mm.stage_one_gap_finite_width,
        "batch_size",
        _MODEL,
        _W_A,
        _W_B,
        [0.1],
        2,
        batch_size=1,
    ),
    bad_call(
        mm.stage_one_gap_finite_width, "seed", _MODEL, _W_A, _W_B, [0.1], 2, seed=-1
    ),
    bad_call(
        mm.stage_one_gap_finite_width,
        "record_steps",
        _MODEL,
        _W_A,
        _W_B,
        [0.1],
        2,
        record_steps=[3],
    ),
    # the sympy identities: their counts are guarded
    bad_call(mm.symbolic_norm_identity, "width", 0),
    bad_call(
        mm.symbolic_norm_identity, "width=2, input_dim=100.*sympy monomials", 2, 100
    ),
    bad_call(
        mm.symbolic_norm_identity, "latent_dim=1125899906842624.*or more", 2, 3, 2**50
    ),
    bad_call(mm.symbolic_negative_expectations, "latent_dim", 0),
    bad_call(mm.symbolic_negative_expectations, "latent_dim=5 give 30,720", 5),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
