"""Tests of ccl_helpers.symbolic: the sympy identities are exactly zero, the torch
Hessians match autograd, the closed-form spectral norm matches eigvalsh, the supremum
search reproduces the exact supremum and hand-solved cases, and the bounds are ordered
sup ≤ tight ≤ 2 + 8C²."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import sympy as sp
import torch
from bad_calls import bad_call
from conftest import randn

from ccl_helpers import symbolic

# torch.func's forward-over-reverse hessian goes through a torch.jit.script that torch ≥
# 2.10 deprecates.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

RADII = (0.5, 1.0, 2.0, 4.0, 8.0)


def autograd_hessian(z):
    """∇²ℓ by torch.func.hessian of ℓ on the flattened (3d,) vector, vmapped over the
    batch."""
    d = z.shape[-1]

    def loss(flat):
        return symbolic.triplet_loss(flat.reshape(3, d))

    return torch.vmap(torch.func.hessian(loss))(z.reshape(-1, 3 * d)).reshape(
        *z.shape[:-2], 3 * d, 3 * d
    )


def closed_form_norm(z):
    """‖∇²ℓ(z)‖₂ in closed form for z (..., 3, d) → (...,): φ(u, G) with u = z₁ᵀw,
    G = 2‖z₁‖² + ‖w‖², w = z₃ − z₂."""
    z1, z2, z3 = z.unbind(-2)
    w = z3 - z2
    return symbolic._hessian_norm_formula(
        (z1 * w).sum(-1), 2 * (z1 * z1).sum(-1) + (w * w).sum(-1)
    )


def phi(u, big_g):
    """φ(u, G) = ½[aG + √(a²G² + 8s² + 16asu)] in plain floats."""
    s = 1 / (1 + math.exp(-u))
    a = s * (1 - s)
    return 0.5 * (a * big_g + math.sqrt((a * big_g) ** 2 + 8 * s * s + 16 * a * s * u))


# ---------------------------------------------------------------- sympy: Lemma 3


@pytest.mark.parametrize("dim", [1, 2])
def test_lemma3_gradient_and_hessian_equal_the_source_expression(dim):
    assert symbolic.lemma3_gradient_difference(dim) == sp.zeros(3 * dim, 1)
    assert symbolic.lemma3_hessian_difference(dim, "source") == sp.zeros(
        3 * dim, 3 * dim
    )
    assert symbolic.lemma3_hessian_difference(dim, "block") == sp.zeros(
        3 * dim, 3 * dim
    )


def test_a_wrong_source_expression_is_detected():
    # Dropping the rank-one term (∂cos₁₂ ∂cos₁₃)∂v must leave a non-zero difference.
    grad12, grad13, hess12, hess13, v = symbolic._source_pieces(1)
    wrong = (v[0] - 1) * hess12 + v[1] * hess13
    assert not symbolic._zero_if_identity(
        symbolic._triplet_hessian_symbolic(1) - wrong
    ).is_zero_matrix


def test_u_hessian_spectrum_and_charpoly():
    sqrt2 = sp.sqrt(2)
    assert symbolic.u_hessian_eigenvalues() == {sqrt2: 1, -sqrt2: 1, sp.Integer(0): 1}
    assert symbolic.triplet_hessian_charpoly_difference() == 0


# ---------------------------------------------------------------- torch: Lemma 3


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_triplet_hessian_matches_autograd(dim):
    z = (
        randn(7, 3, dim, seed=dim)
        * torch.tensor([0.3, 1.0, 3.0] * 2 + [1.0], dtype=torch.float64)[:, None, None]
    )
    assert torch.allclose(
        symbolic._triplet_hessian(z), autograd_hessian(z), rtol=1e-10, atol=1e-12
    )


def test_triplet_hessian_keeps_batch_shape_and_dtype():
    z = randn(2, 4, 3, 5, dtype=torch.float32)
    hessian = symbolic._triplet_hessian(z)
    assert hessian.shape == (2, 4, 15, 15) and hessian.dtype == torch.float32
    assert closed_form_norm(z).shape == (2, 4)


def test_closed_form_norm_matches_eigenvalues():
    z = torch.cat([randn(200, 3, 3, seed=1) * scale for scale in (0.1, 1.0, 3.0)])
    w = z[..., 2, :] - z[..., 1, :]
    # Degenerate cases: α = z₁ + w/√2 = 0 and β = z₁ − w/√2 = 0, u = 0, z = 0.
    degenerate = torch.stack(
        [
            torch.stack([-w[0] / math.sqrt(2), z[0, 1], z[0, 1] + w[0]]),
            torch.stack([w[1] / math.sqrt(2), z[1, 1], z[1, 1] + w[1]]),
            torch.zeros(3, 3, dtype=torch.float64),
        ]
    )
    z = torch.cat([z, degenerate])
    expected = torch.linalg.matrix_norm(autograd_hessian(z), ord=2)
    assert torch.allclose(closed_form_norm(z), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("radius", RADII)
def test_hand_solved_configuration(radius):
    # z₁ ⊥ z₂, z₃ = −z₂, all of norm C: u = 0, s = 1/2, a = 1/4, G = 6C² → ½[1.5C² +
    # √(2.25C⁴ + 2)].
    C = radius
    z = torch.tensor([[[C, 0.0], [0.0, C], [0.0, -C]]], dtype=torch.float64)
    by_hand = 0.5 * (1.5 * C**2 + math.sqrt(2.25 * C**4 + 2))
    assert torch.linalg.matrix_norm(autograd_hessian(z), ord=2).item() == pytest.approx(
        by_hand, rel=1e-12
    )
    assert closed_form_norm(z).item() == pytest.approx(by_hand, rel=1e-12)
    exact = symbolic._smoothness_sup_exact(C)
    assert by_hand <= exact + 1e-12
    if C >= 2:
        # the maximiser u* ≈ 8/(9C⁴) tends to 0: sup − φ(0) ≈ 8/(27C⁶),
        #   sup = 1.5C² + 1/(3C²) + O(C⁻⁶)
        assert exact - by_hand < 0.5 / C**6
        assert exact == pytest.approx(1.5 * C**2 + 1 / (3 * C**2), abs=2 / C**6)


def test_small_radius_supremum_is_at_the_aligned_corner():
    # For C = 1/2 the maximum of φ(u, 6C²) over [0, 2C²] is at u = 2C² (z₁ ∥ z₃ = −z₂),
    # which d = 1 already reaches: sup = φ(2C², 6C²) in closed form, found by the search
    # in d = 1 and d = 2.
    C = 0.5
    by_hand = phi(2 * C * C, 6 * C * C)
    assert symbolic._smoothness_sup_exact(C) == pytest.approx(by_hand, rel=1e-12)
    for dim in (1, 2):
        value, z = symbolic._smoothness_sup_search(C, dim=dim, n_starts=32, n_steps=100)
        assert value == pytest.approx(by_hand, rel=1e-6)
        assert bool((z.norm(dim=-1) <= C * (1 + 1e-12)).all())


def test_exact_supremum_matches_a_fine_scan_of_the_formula():
    C = 1.0
    grid = torch.linspace(0, 2 * C * C, 200_001, dtype=torch.float64)
    scanned = (
        symbolic._hessian_norm_formula(
            grid, torch.tensor(6 * C * C, dtype=torch.float64)
        )
        .max()
        .item()
    )
    negative = (
        symbolic._hessian_norm_formula(
            -grid, torch.tensor(6 * C * C, dtype=torch.float64)
        )
        .max()
        .item()
    )
    assert symbolic._smoothness_sup_exact(C) == pytest.approx(scanned, rel=1e-9)
    assert negative <= scanned


@pytest.mark.parametrize("radius", [1.0, 2.0, 8.0])
def test_search_reproduces_the_exact_supremum(radius):
    value, z = symbolic._smoothness_sup_search(radius, n_starts=64, n_steps=100)
    exact = symbolic._smoothness_sup_exact(radius)
    assert value <= exact * (1 + 1e-9)
    assert value == pytest.approx(exact, rel=1e-6)
    assert bool((z.norm(dim=-1) <= radius * (1 + 1e-12)).all())
    # The maximiser: ‖z₁‖ = C, z₃ = −z₂ of norm C (so ‖z₃ − z₂‖ = 2C).
    assert torch.allclose(
        z.norm(dim=-1), torch.full((3,), radius, dtype=torch.float64), rtol=1e-4
    )
    assert torch.allclose(z[2], -z[1], atol=1e-3 * radius)


def test_d1_is_smaller_than_d2_for_large_radius():
    # In d = 1, u = z₁(z₃ − z₂) cannot vanish with G = 6C²: the supremum needs d ≥ 2.
    value_1d, _ = symbolic._smoothness_sup_search(2.0, dim=1, n_starts=32, n_steps=100)
    assert value_1d < symbolic._smoothness_sup_exact(2.0) - 0.5


def test_search_is_deterministic_under_a_seed():
    first = symbolic._smoothness_sup_search(2.0, n_starts=16, n_steps=30, seed=3)
    second = symbolic._smoothness_sup_search(2.0, n_starts=16, n_steps=30, seed=3)
    assert first[0] == second[0] and torch.equal(first[1], second[1])


# ---------------------------------------------------------------- the bounds


@pytest.mark.parametrize("radius", RADII)
def test_bounds_are_ordered(radius):
    C = radius
    value, _ = symbolic._smoothness_sup_search(C, n_starts=16, n_steps=60)
    exact = symbolic._smoothness_sup_exact(C)
    tight = symbolic._smoothness_bound_tight(C)
    source = symbolic._smoothness_bound_source(C)
    assert value <= exact * (1 + 1e-9) <= tight * (1 + 1e-9)
    assert tight == min(
        symbolic._smoothness_bound_weyl(C), symbolic._smoothness_bound_secular(C)
    )
    assert tight <= 1.5 * C * C + math.sqrt(2) < source == 2 + 8 * C * C
    assert source / exact > (
        4.5 if C >= 1 else 3
    )  # the source's constant is several times too large
    assert tight / exact < 1.2


def test_bounds_hold_on_a_fine_grid_of_radii_and_are_tight_at_both_ends():
    radii = [10 ** (k / 20) for k in range(-40, 41)]
    for C in radii:
        exact = symbolic._smoothness_sup_exact(C, points=401)
        assert exact <= symbolic._smoothness_bound_tight(C) * (1 + 1e-12)
        assert exact <= symbolic._smoothness_bound_weyl(C) * (1 + 1e-12)
        assert exact <= symbolic._smoothness_bound_secular(C) * (1 + 1e-12)
    assert symbolic._smoothness_bound_tight(1e-3) == pytest.approx(
        1 / math.sqrt(2), rel=1e-5
    )
    assert symbolic._smoothness_sup_exact(1e-3) == pytest.approx(
        1 / math.sqrt(2), rel=1e-5
    )
    assert symbolic._smoothness_bound_tight(100.0) / symbolic._smoothness_sup_exact(
        100.0
    ) == pytest.approx(1, abs=1e-7)


def test_lambert_constant():
    w = symbolic._LAMBERT_W_INV_E
    assert w * math.exp(w) == pytest.approx(math.exp(-1), rel=1e-14)
    u = torch.linspace(0, 10, 100_001, dtype=torch.float64)
    assert (u / (1 + u.exp())).max().item() == pytest.approx(w, rel=1e-8)


def test_smoothness_table():
    table = symbolic.smoothness_table([0.5, 2.0], n_starts=8, n_steps=30)
    assert isinstance(table, pd.DataFrame) and list(table["C"]) == [0.5, 2.0]
    assert (table["sup_search"] <= table["sup_exact"] * (1 + 1e-9)).all()
    assert (table["sup_exact"] <= table["bound_tight"]).all() and (
        table["bound_tight"] < table["bound_source"]
    ).all()


# ---------------------------------------------------------------- Wen: log(1 + Σ exp)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_lse_hessian_symbolic(k):
    assert symbolic.lse_hessian_difference(k) == sp.zeros(k, k)
    assert symbolic.lse_gershgorin_identity(k) == [0] * k


def test_lse_k1_gap_is_a_square():
    t = sp.Symbol("t", positive=True)
    assert sp.simplify(symbolic.lse_k1_gap() - (t - 1) ** 2 / (4 * (t + 1) ** 2)) == 0


def test_lse_hessian_matches_autograd():
    u = randn(6, 5, seed=2) * 3
    expected = torch.vmap(
        torch.func.hessian(lambda x: torch.logsumexp(torch.cat([x.new_zeros(1), x]), 0))
    )(u)
    assert torch.allclose(symbolic.lse_hessian(u), expected, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("k", [1, 2, 3, 10, 50])
def test_lse_lambda_max_is_below_one_half(k):
    u = torch.cat([randn(200, k, seed=k) * scale for scale in (0.1, 1.0, 5.0, 30.0)])
    u = torch.cat(
        [u, u - math.log(k)]
    )  # shifted so that 1 + Σ e^u is not dominated by Σ e^u
    lam = symbolic.lse_hessian_lambda_max(u)
    gershgorin = symbolic.lse_hessian_gershgorin_bound(u)
    assert bool((lam <= gershgorin + 1e-12).all()) and bool((gershgorin < 0.5).all())
    supremum = 0.25 if k == 1 else 0.5  # sup_u λ_max (lse_hessian_lambda_max)
    assert bool((lam <= supremum + 1e-12).all())
    trace = torch.diagonal(symbolic.lse_hessian(u), dim1=-2, dim2=-1).sum(-1)
    assert bool((trace < 1).all())  # the source's bound: λ_max ≤ trace ≤ 1


def test_lse_lambda_max_supremum_is_approached():
    assert symbolic.lse_hessian_lambda_max(
        torch.zeros(1, 1, dtype=torch.float64)
    ).item() == pytest.approx(0.25)
    for k in (2, 5):
        t = torch.tensor([2.0, 6.0, 12.0], dtype=torch.float64)
        u = torch.full((3, k), -60.0, dtype=torch.float64)
        u[:, 0] = u[:, 1] = t
        lam = symbolic.lse_hessian_lambda_max(u)
        assert torch.allclose(lam, t.exp() / (1 + 2 * t.exp()), rtol=1e-10)
        assert 0.5 - lam[-1].item() < 1e-5


# ---------------------------------------------------------------- Lee (2025), Lemma A.1


def test_smooth_max_bounds():
    x = randn(50, 7, seed=5) * 4
    for alpha in (0.1, 1.0, 10.0):
        low, value, high = symbolic.smooth_max_bounds(x, alpha)
        assert bool((low <= value + 1e-12).all()) and bool(
            (value <= high + 1e-12).all()
        )
    low, value, _ = symbolic.smooth_max_bounds(x, 1e4)
    assert torch.allclose(low, value, atol=1e-3)
    assert torch.allclose(
        symbolic.smooth_max(torch.full((3,), 1e4), 1.0), torch.tensor(1e4 + math.log(3))
    )


# ---------------------------------------------------------------- bad calls


def test_the_symbolic_sizes_are_integers_and_guarded_by_their_count_of_terms():
    """d and k: integers ≥ 1, not bools or floats; (3d)³ or k³ sympy terms at most
    10⁶ (d ≤ 33, k ≤ 100), a size that nothing allocates up front."""
    assert symbolic._MAX_SYMBOLIC_TERMS == 10**6
    assert symbolic._check_symbolic_size("dim", 33, 3) == 33
    assert symbolic._check_symbolic_size("k", 100, 1) == 100
    with pytest.raises(ValueError, match="dim=34 give 1,061,208 symbolic terms"):
        symbolic._check_symbolic_size("dim", 34, 3)
    with pytest.raises(ValueError, match="k=101 give"):
        symbolic._check_symbolic_size("k", 101, 1)


_Z = randn(4, 3, 2)
_U = randn(4, 3)

BAD_CALLS = [
    bad_call(symbolic.lemma3_gradient_difference, "dim must be an integer ≥ 1", 0),
    bad_call(symbolic.lemma3_gradient_difference, "dim must be an integer", True),
    bad_call(symbolic.lemma3_gradient_difference, "dim must be an integer", 2.0),
    bad_call(symbolic.lemma3_gradient_difference, "dim=10000 give", 10**4),
    bad_call(symbolic.lemma3_hessian_difference, "form", 1, "paper"),
    bad_call(symbolic.lemma3_hessian_difference, "dim=100 give", 100),
    bad_call(symbolic.triplet_loss, "z must", _Z[..., :2, :]),
    bad_call(symbolic.triplet_loss, "z must", _Z[..., :0]),
    bad_call(symbolic.triplet_loss, "z must", torch.zeros(3)),
    bad_call(symbolic.triplet_loss, "z must .*floating", torch.zeros(3, 2, dtype=int)),
    bad_call(symbolic.triplet_loss, "z must", [[0.0], [0.0], [0.0]]),
    bad_call(symbolic.smoothness_table, "radii", 2.0),
    bad_call(symbolic.smoothness_table, "radii", []),
    bad_call(symbolic.smoothness_table, r"radii\[1\]", [1.0, 0.0]),
    bad_call(symbolic.smoothness_table, r"radii\[0\]", [math.nan]),
    bad_call(symbolic.smoothness_table, r"radii\[0\]", ["1"]),
    bad_call(symbolic.smoothness_table, "dim", [1.0], dim=0),
    bad_call(symbolic.smoothness_table, "n_starts", [1.0], n_starts=0),
    bad_call(
        symbolic.smoothness_table, "n_steps must be an integer ≥ 0", [1.0], n_steps=-1
    ),
    bad_call(symbolic.smoothness_table, "seed", [1.0], seed=-1),
    bad_call(symbolic.smoothness_table, "device", [1.0], device="bogus"),
    bad_call(symbolic.lse_hessian_symbolic, "k must be an integer ≥ 1", 0),
    bad_call(symbolic.lse_hessian_symbolic, "k=100000 give", 10**5),
    bad_call(symbolic.lse_hessian_difference, "k must be an integer", 1.5),
    bad_call(symbolic.lse_gershgorin_identity, "k must be an integer", True),
    bad_call(symbolic.lse_hessian, "u must", torch.zeros(())),
    bad_call(symbolic.lse_hessian, "u must", torch.zeros(3, 0)),
    bad_call(symbolic.lse_hessian, "u must .*floating", torch.zeros(3, dtype=int)),
    bad_call(symbolic.lse_hessian_lambda_max, "u must be finite", _U.log()),
    bad_call(symbolic.lse_hessian_lambda_max, "u must", _U.tolist()),
    bad_call(symbolic.lse_hessian_gershgorin_bound, "u must", torch.zeros(())),
    bad_call(symbolic.smooth_max, "alpha", _U, 0.0),
    bad_call(symbolic.smooth_max, "x must", torch.zeros((), dtype=torch.float64)),
    bad_call(symbolic.smooth_max_bounds, "alpha", _U, -1.0),
    bad_call(symbolic.smooth_max_bounds, "x must", _U[..., :0]),
]
"""Every public callable but the three of no argument: ``u_hessian_eigenvalues``,
``triplet_hessian_charpoly_difference`` and ``lse_k1_gap``."""


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
