"""Symbolic derivations in sympy and their torch counterparts.

The derivations are Hessians, smoothness constants and log-sum-exp.

Chapter 2 (Merad et al., Lemma 3 = Lemma 5 of the appendix). The triplet loss on the
outputs z = (z₁, z₂, z₃) ∈ (R^d)³ (anchor, positive, negative), flattened block by block
into R^{3d}, is

    ℓ(z) = log(1 + exp(u)),   u = z₁ᵀ(z₃ − z₂) = cos₁₃ − cos₁₂
        (cos_ij = z_iᵀz_j, unnormalised).

With s = σ(u) (the logistic function), a = σ'(u) = s(1 − s), w = z₃ − z₂ and
g = ∇u = (w, −z₁, z₁) ∈ R^{3d},

    ∇ℓ  = s·g = (v₁ − 1)∂cos₁₂ + v₂∂cos₁₃,        v = softmax(cos₁₂, cos₁₃),
    ∇²ℓ = a·g gᵀ + s·(M ⊗ I_d)
        = (v₁ − 1)∂²cos₁₂ + v₂∂²cos₁₃ + (∂cos₁₂ ∂cos₁₃)∂v,
                                                   ∂v = (diag v − vvᵀ)(∂cos₁₂ ∂cos₁₃)ᵀ,

    ∇²u = M ⊗ I_d,  M = [[0, −1, 1], [−1, 0, 0], [1, 0, 0]],  eigenvalues √2, −√2, 0.

The source's expression is right (v₂ = σ(u), v₁ − 1 = −σ(u), diag v − vvᵀ = σ'(u)[[1,
−1], [−1, 1]]);
its norm estimates are loose: the ∂²cos terms (norm 1 each) combine into s·(M ⊗ I_d), of
norm √2·s, not 2; ‖∂cos_ij‖ = (‖z_i‖² + ‖z_j‖²)^{1/2} ≤ √2·max, not 2·max; and even its
own estimates give ½·(‖∂cos₁₂‖² + ‖∂cos₁₃‖²) ≤ 4C², not 8C², for the rank-two term. The
spectral norm has a closed form (the secular equation of a rank-one update):

    ‖∇²ℓ(z)‖ = φ(u, G) = ½[aG + √(a²G² + 8s² + 16·a·s·u)],   G = ‖g‖² = 2‖z₁‖² + ‖w‖²,

and on B₃ = {max_j ‖z_j‖ ≤ C} (d ≥ 2) its supremum is the one-dimensional maximum

    sup_{B₃} ‖∇²ℓ‖ = max_{0 ≤ u ≤ 2C²} φ(u, 6C²)  ≈ 1.5·C² + 1/(3C²)  for large C,

far below the source's L_smooth ≤ 2 + 8C². B(C) = min(B₁(C), B₂(C)), the
``bound_tight`` column of :func:`smoothness_table`, is a closed-form, proven bound in
between (B₁ from Weyl's inequality, B₂ from the closed form φ).

Chapter 3 (Wen, Lemma D.1). g(u) = log(1 + Σ_{j=1}^k exp(u_j)) has Hessian diag(p) − ppᵀ
with p_j = e^{u_j}/(1 + Σ_i e^{u_i}); its largest eigenvalue is < 1/2 for every k
(Gershgorin: row j gives p_j(2 − 2p_j − p₀) = 1/2 − (1 − 2p_j)²/2 − p₀p_j, p₀ = 1 − Σp_j
> 0), ≤ 1/4 for k = 1, and 1/2 is the supremum for k ≥ 2 — tighter than the source's
"1-Lipschitz smooth".

Lee (2025), Lemma A.1: max_i x_i ≤ (1/α) log Σ_i exp(α x_i) ≤ max_i x_i + log(n)/α.
"""

from __future__ import annotations

import math
from functools import cache

import sympy as sp
import torch
from torch import Tensor

from ._checks import (
    check_count,
    check_device,
    check_finite,
    check_int,
    check_positive,
    check_tensor,
)
from .losses import logistic_loss

__all__ = [
    "lemma3_gradient_difference",
    "lemma3_hessian_difference",
    "u_hessian_eigenvalues",
    "triplet_hessian_charpoly_difference",
    "triplet_loss",
    "smoothness_table",
    "lse_hessian_symbolic",
    "lse_hessian_difference",
    "lse_gershgorin_identity",
    "lse_k1_gap",
    "lse_hessian",
    "lse_hessian_lambda_max",
    "lse_hessian_gershgorin_bound",
    "smooth_max",
    "smooth_max_bounds",
]

_SQRT2 = math.sqrt(2.0)


def _lambert_w_of_inverse_e() -> float:
    """W(1/e) ≈ 0.27846: the v with v·e^v = 1/e, by Newton's method (it is max_u u/(1 +
    e^u))."""
    v = 0.3
    for _ in range(50):
        v -= (v * math.exp(v) - math.exp(-1.0)) / ((1.0 + v) * math.exp(v))
    return v


# : W(1/e) = max_{u ∈ R} u/(1 + e^u) = max_u u·(1 − σ(u)) ≈ 0.2784645, attained at u = 1
# + W(1/e).
_LAMBERT_W_INV_E = _lambert_w_of_inverse_e()

#: M with ∇²u = M ⊗ I_d for u = z₁ᵀ(z₃ − z₂).
_U_HESSIAN_BLOCKS = ((0.0, -1.0, 1.0), (-1.0, 0.0, 0.0), (1.0, 0.0, 0.0))


# ---------------------------------------------------------------- validation


def _check_radius(radius, name: str = "radius C") -> float:
    """The radius C as a float: a finite real > 0 (or a one-element tensor of one)."""
    if isinstance(radius, Tensor) and radius.numel() == 1:
        radius = radius.item()
    return check_positive(name, radius)


def _check_triplets(name: str, z) -> Tensor:
    """``z`` if it is a floating tensor of triplets (..., 3, d), d ≥ 1 (rows z₁, z₂,
    z₃); else ValueError naming ``name``."""
    check_tensor(name, z, min_ndim=2, floating=True)
    if z.shape[-2] != 3 or z.shape[-1] < 1:
        raise ValueError(
            f"{name} must be a tensor of shape (..., 3, d) with d ≥ 1 (rows z₁, "
            f"z₂, z₃), got {tuple(z.shape)}"
        )
    return z


def _check_logits(name: str, u) -> Tensor:
    """``u`` if it is a floating tensor of logits (..., k), k ≥ 1; else ValueError
    naming ``name``."""
    check_tensor(name, u, min_ndim=1, floating=True)
    if u.shape[-1] < 1:
        raise ValueError(
            f"{name} must have shape (..., k) with k ≥ 1, got {tuple(u.shape)}"
        )
    return u


_MAX_SYMBOLIC_TERMS = 10**6
"""The most terms a symbolic Hessian of this module may build: (3d)³ for the triplet
loss on 3d symbols ((3d)² second derivatives of an expression of 3d terms), k³ for
log(1 + Σ_{j=1}^k exp(u_j)). sympy builds, differentiates and cancels a term in tens of
microseconds, so a million terms is about a minute of work; a larger size, which nothing
allocates up front, would run for hours (the book uses d ≤ 2 and k ≤ 3)."""


def _check_symbolic_size(name: str, value, symbols_per_unit: int) -> int:
    """``value`` (an integer ≥ 1, the d or k of a symbolic Hessian over
    ``symbols_per_unit``·value symbols) as an int, if its (symbols)³ terms stay within
    :data:`_MAX_SYMBOLIC_TERMS`; else ValueError naming ``name``."""
    value = check_int(name, value)
    terms = (symbols_per_unit * value) ** 3
    check_count("symbolic terms", terms, _MAX_SYMBOLIC_TERMS, f"{name}={value}")
    return value


# ---------------------------------------------------------------- sympy helpers


def _exp_to_symbols(expr: sp.Expr) -> sp.Expr:
    """Replace every exp(Σ_t c_t·m_t) (m_t a monomial) by Π_t X_{m_t}^{c_t}, X positive
    symbols.

    Turns the expressions below into rational functions, which ``sympy.cancel`` decides
    exactly."""

    def to_powers(arg):
        result = sp.Integer(1)
        for term in sp.Add.make_args(sp.expand(arg)):
            coeff, monomial = term.as_coeff_Mul()
            if monomial == 1:
                result *= sp.exp(coeff)
                continue
            name = "E_" + str(monomial).replace("*", "_").replace(" ", "")
            result *= sp.Symbol(name, positive=True) ** coeff
        return result

    return expr.replace(sp.exp, to_powers)


def _zero_if_identity(matrix: sp.Matrix) -> sp.Matrix:
    """Entrywise: rewrite exponentials as symbols and cancel the rational function (0
    iff identity)."""
    return matrix.applyfunc(
        lambda entry: sp.cancel(sp.together(_exp_to_symbols(entry)))
    )


# ---------------------------------------------------------------- Lemma 3, symbolic


@cache
def _triplet_symbols(dim: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """Real column vectors z₁, z₂, z₃ ∈ R^d of sympy symbols ``z1_0 … z3_{d−1}``."""
    return tuple(sp.Matrix(sp.symbols(f"z{j}_0:{dim}", real=True)) for j in (1, 2, 3))


def _triplet_loss_symbolic(dim: int = 1) -> tuple[sp.Matrix, sp.Expr]:
    """(z, ℓ): z = (z₁; z₂; z₃) ∈ R^{3d} stacked, ℓ(z) = log(1 + exp(z₁ᵀ(z₃ − z₂)))."""
    z1, z2, z3 = _triplet_symbols(dim)
    u = (z1.T * (z3 - z2))[0]
    return sp.Matrix.vstack(z1, z2, z3), sp.log(1 + sp.exp(u))


def _triplet_gradient_symbolic(dim: int = 1) -> sp.Matrix:
    """∇ℓ(z) ∈ R^{3d}, by sympy differentiation of ℓ(z) = log(1 + exp(z₁ᵀ(z₃ − z₂)))."""
    z, loss = _triplet_loss_symbolic(dim)
    return sp.Matrix([sp.diff(loss, x) for x in z])


def _triplet_hessian_symbolic(dim: int = 1) -> sp.Matrix:
    """∇²ℓ(z) ∈ R^{3d×3d}, by sympy differentiation of ℓ(z) = log(1 + exp(z₁ᵀ(z₃ −
    z₂)))."""
    z, loss = _triplet_loss_symbolic(dim)
    return sp.hessian(loss, list(z))


def _source_pieces(dim: int):
    """The source's objects: A_i, cos_ij = z_iᵀz_j, ∂cos_ij = (A_iA_jᵀ + A_jA_iᵀ)z,
    ∂²cos_ij, v."""
    z1, z2, z3 = _triplet_symbols(dim)
    z = sp.Matrix.vstack(z1, z2, z3)
    eye, zero = sp.eye(dim), sp.zeros(dim)
    blocks = [
        sp.Matrix.vstack(eye, zero, zero),
        sp.Matrix.vstack(zero, eye, zero),
        sp.Matrix.vstack(zero, zero, eye),
    ]
    hess12 = blocks[0] * blocks[1].T + blocks[1] * blocks[0].T
    hess13 = blocks[0] * blocks[2].T + blocks[2] * blocks[0].T
    grad12, grad13 = hess12 * z, hess13 * z
    cos12, cos13 = (z1.T * z2)[0], (z1.T * z3)[0]
    v = sp.Matrix([sp.exp(cos12), sp.exp(cos13)]) / (sp.exp(cos12) + sp.exp(cos13))
    return grad12, grad13, hess12, hess13, v


def _triplet_gradient_source_form(dim: int = 1) -> sp.Matrix:
    """The source's gradient (v₁ − 1)∂cos₁₂ + v₂∂cos₁₃, v = softmax(cos₁₂, cos₁₃),
    ∂cos_ij = (A_iA_jᵀ + A_jA_iᵀ)z with A_i the 3d×d block selectors (z_i = A_iᵀz)."""
    grad12, grad13, _, _, v = _source_pieces(dim)
    return (v[0] - 1) * grad12 + v[1] * grad13


def _triplet_hessian_source_form(dim: int = 1) -> sp.Matrix:
    """The source's Hessian (v₁ − 1)∂²cos₁₂ + v₂∂²cos₁₃ + (∂cos₁₂ ∂cos₁₃)∂v, with
    ∂²cos_ij = A_iA_jᵀ + A_jA_iᵀ and ∂v = (diag(v) − vvᵀ)(∂cos₁₂ ∂cos₁₃)ᵀ ∈ R^{2×3d}."""
    grad12, grad13, hess12, hess13, v = _source_pieces(dim)
    jacobian = sp.Matrix.hstack(grad12, grad13)
    dv = (sp.diag(*v) - v * v.T) * jacobian.T
    return (v[0] - 1) * hess12 + v[1] * hess13 + jacobian * dv


def _triplet_hessian_block_form(dim: int = 1) -> sp.Matrix:
    """σ'(u)·g gᵀ + σ(u)·(M ⊗ I_d), u = z₁ᵀ(z₃ − z₂), g = ∇u = (z₃ − z₂, −z₁, z₁),
    σ(u) = 1/(1 + e^{−u}), σ' = σ(1 − σ), M = [[0, −1, 1], [−1, 0, 0], [1, 0, 0]]."""
    z1, z2, z3 = _triplet_symbols(dim)
    u = (z1.T * (z3 - z2))[0]
    s = 1 / (1 + sp.exp(-u))
    g = sp.Matrix.vstack(z3 - z2, -z1, z1)
    kron = sp.kronecker_product(
        sp.Matrix(_U_HESSIAN_BLOCKS).applyfunc(sp.nsimplify), sp.eye(dim)
    )
    return s * (1 - s) * g * g.T + s * kron


def lemma3_gradient_difference(dim: int = 1) -> sp.Matrix:
    """sympy's ∇ℓ minus the source's (v₁ − 1)∂cos₁₂ + v₂∂cos₁₃, simplified: the zero
    vector of R^{3d}, for ℓ(z) = log(1 + exp(z₁ᵀ(z₃ − z₂))), z₁, z₂, z₃ ∈ R^d, v =
    softmax(cos₁₂, cos₁₃), ∂cos_ij = (A_iA_jᵀ + A_jA_iᵀ)z with A_i the 3d×d block
    selectors (z_i = A_iᵀz)."""
    dim = _check_symbolic_size("dim", dim, 3)
    return _zero_if_identity(
        _triplet_gradient_symbolic(dim) - _triplet_gradient_source_form(dim)
    )


def lemma3_hessian_difference(dim: int = 1, form: str = "source") -> sp.Matrix:
    """sympy's ∇²ℓ minus the ``form`` ("source": (v₁ − 1)∂²cos₁₂ + v₂∂²cos₁₃ + (∂cos₁₂
    ∂cos₁₃)∂v; "block": σ'(u)g gᵀ + σ(u)(M ⊗ I_d)), simplified exactly: the 3d × 3d zero
    matrix.

    Here ∂²cos_ij = A_iA_jᵀ + A_jA_iᵀ, ∂v = (diag(v) − vvᵀ)(∂cos₁₂ ∂cos₁₃)ᵀ ∈ R^{2×3d},
    u = z₁ᵀ(z₃ − z₂), g = ∇u = (z₃ − z₂, −z₁, z₁), σ' = σ(1 − σ) and M = [[0, −1, 1],
    [−1, 0, 0], [1, 0, 0]]."""
    dim = _check_symbolic_size("dim", dim, 3)
    forms = {
        "source": _triplet_hessian_source_form,
        "block": _triplet_hessian_block_form,
    }
    if form not in forms:
        raise ValueError(f"form must be one of {sorted(forms)}, got {form!r}")
    return _zero_if_identity(_triplet_hessian_symbolic(dim) - forms[form](dim))


def u_hessian_eigenvalues() -> dict:
    """Eigenvalues {√2: 1, −√2: 1, 0: 1} of M (∇²u = M ⊗ I_d): ‖∇²u‖ = √2, whereas
    ‖∂²cos_ij‖ = 1 (eigenvalues ±1): the source's ∂²cos terms combine to s·(M ⊗ I), norm
    √2·s."""
    return sp.Matrix(_U_HESSIAN_BLOCKS).applyfunc(sp.nsimplify).eigenvals()


def triplet_hessian_charpoly_difference() -> sp.Expr:
    """For d = 1 and independent symbols a, s, x = z₁, w = z₃ − z₂: the characteristic
    polynomial of a·g gᵀ + s·M (g = (w, −x, x)) minus λ(λ² − aGλ − 2s² − 4asu), G = w² +
    2x², u = xw: zero.

    Its largest root is φ = ½[aG + √(a²G² + 8s² + 16asu)], the closed-form spectral
    norm."""
    a, s, x, w, lam = sp.symbols("a s x w lambda", real=True)
    g = sp.Matrix([w, -x, x])
    hessian = a * g * g.T + s * sp.Matrix(_U_HESSIAN_BLOCKS).applyfunc(sp.nsimplify)
    big_g, u = w**2 + 2 * x**2, x * w
    expected = lam * (lam**2 - a * big_g * lam - 2 * s**2 - 4 * a * s * u)
    return sp.expand((lam * sp.eye(3) - hessian).det() - expected)


# ---------------------------------------------------------------- Lemma 3, torch


def triplet_loss(z: Tensor) -> Tensor:
    """ℓ(z) = log(1 + exp(z₁ᵀ(z₃ − z₂))) for z of shape (..., 3, d) → (...,).

    It is :func:`ccl_helpers.losses.logistic_loss` of the rows (exact to rounding at
    every u, second derivatives included)."""
    _check_triplets("z", z)
    return logistic_loss(*z.unbind(-2), reduction="none")


def _triplet_hessian(z: Tensor) -> Tensor:
    """∇²ℓ(z) = σ'(u)·g gᵀ + σ(u)·(M ⊗ I_d) for z (..., 3, d) → (..., 3d, 3d), block
    order z₁, z₂, z₃.

    u = z₁ᵀ(z₃ − z₂), g = (z₃ − z₂, −z₁, z₁), M = [[0, −1, 1], [−1, 0, 0], [1, 0,
    0]]."""
    z1, z2, z3 = z.unbind(-2)
    w = z3 - z2
    u = (z1 * w).sum(-1)
    s, a = torch.sigmoid(u), torch.sigmoid(u) * torch.sigmoid(-u)
    g = torch.cat([w, -z1, z1], -1)
    blocks = torch.tensor(_U_HESSIAN_BLOCKS, dtype=z.dtype, device=z.device)
    kron = torch.kron(blocks, torch.eye(z.shape[-1], dtype=z.dtype, device=z.device))
    return (
        a[..., None, None] * g[..., :, None] * g[..., None, :]
        + s[..., None, None] * kron
    )


def _hessian_norm_formula(u: Tensor, grad_sq_norm: Tensor) -> Tensor:
    """φ(u, G) = ½[aG + √(a²G² + 8s² + 16·a·s·u)], s = σ(u), a = s(1 − s): the spectral
    norm ‖∇²ℓ(z)‖₂ of a·g gᵀ + s(M ⊗ I) with u = z₁ᵀw, w = z₃ − z₂, G = ‖g‖² = 2‖z₁‖² +
    ‖w‖² (broadcast; G ≥ 2√2|u| for real z).

    Proof: with p, q, r the unit eigenvectors of M (eigenvalues √2, −√2, 0), g = p⊗α +
    q⊗β with α = z₁ + w/√2, β = z₁ − w/√2, ‖α‖² − ‖β‖² = 2√2u, ‖α‖² + ‖β‖² = G; for λ >
    √2s, λ is an eigenvalue iff 1 = a[‖α‖²/(λ − √2s) + ‖β‖²/(λ + √2s)], whose root is φ;
    every other eigenvalue lies in [−√2s, √2s] ⊂ [−φ, φ]."""
    s, a = torch.sigmoid(u), torch.sigmoid(u) * torch.sigmoid(-u)
    radicand = (a * grad_sq_norm) ** 2 + 8 * s**2 + 16 * a * s * u
    return 0.5 * (a * grad_sq_norm + radicand.clamp_min(0).sqrt())


def _eig_norm(z: Tensor) -> Tensor:
    return torch.linalg.eigvalsh(_triplet_hessian(z)).abs().amax(-1)


def _uniform_ball_points(
    n_points: int, dim: int, radius: float, generator: torch.Generator
) -> Tensor:
    """n_points triplets (n_points, 3, dim), each z_j uniform in the ball of the given
    radius (float64, CPU)."""
    direction = torch.randn(n_points, 3, dim, generator=generator, dtype=torch.float64)
    length = torch.rand(n_points, 3, 1, generator=generator, dtype=torch.float64) ** (
        1.0 / dim
    )
    return (
        radius
        * length
        * direction
        / direction.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    )


def _smoothness_sup_exact(radius: float, points: int = 2001, rounds: int = 6) -> float:
    """sup_{z ∈ B₃} ‖∇²ℓ(z)‖ = max_{0 ≤ u ≤ 2C²} φ(u, 6C²) (d ≥ 2), by a grid refined
    ``rounds`` times.

    Why: φ(u, G) increases with G; on B₃, G = 2‖z₁‖² + ‖w‖² ≤ 2C² + (2C)² = 6C² and
    |u| = |z₁ᵀw| ≤ ‖z₁‖‖w‖ ≤ 2C²; every |u| ≤ 2C² is reached with G = 6C² when d ≥ 2
    (‖z₁‖ = C, z₃ = −z₂ = w/2, ‖w‖ = 2C, cos∠(z₁, w) = u/(2C²)); φ(−u, G) ≤ φ(u, G) for
    u ≥ 0. By rotation invariance (ℓ depends on z through z₁ and w only) d = 2 attains
    every value."""
    C = radius
    big_g = torch.tensor(6 * C * C, dtype=torch.float64)
    lo, hi = 0.0, 2 * C * C
    best = -math.inf
    for _ in range(rounds + 1):
        grid = torch.linspace(lo, hi, points, dtype=torch.float64)
        values = _hessian_norm_formula(grid, big_g)
        index = int(values.argmax())
        best = max(best, float(values[index]))
        step = (hi - lo) / (points - 1)
        lo, hi = (
            max(0.0, float(grid[index]) - step),
            min(2 * C * C, float(grid[index]) + step),
        )
    return best


def _smoothness_sup_search(
    radius: float,
    dim: int = 2,
    n_starts: int = 128,
    n_steps: int = 200,
    seed: int = 0,
    device: torch.device | str | None = None,
    lr: float = 0.1,
) -> tuple[float, Tensor]:
    """Numerical sup_{z ∈ B₃} ‖∇²ℓ(z)‖₂ by projected gradient ascent from ``n_starts``
    uniform random starts in B₃ = {max_j ‖z_j‖ ≤ C}, all optimised at once, with
    continuation in C.

    The objective is the largest |eigenvalue| (torch.linalg.eigvalsh) of the explicit
    Hessian :func:`_triplet_hessian` — not the closed form — so it checks
    :func:`_smoothness_sup_exact` independently. Each stage runs ``n_steps`` Adam steps
    (cosine-decayed from ``lr``·min(C_j, 1/C_j), so that u = z₁ᵀ(z₃ − z₂) moves by O(lr)
    per step) on the ascent direction projected onto the tangent cone of the active
    constraints (the outward radial part dropped where ‖z_j‖ = C_j), then projects every
    z_j back onto the ball of radius C_j. The stages use C_j = C/2^{J−j}, j = 0 … J,
    with C_0 ≤ 1; between stages the better half of the points is scaled by 2 and the
    other half replaced by fresh uniform starts. Why: for large C the Hessian's norm is
    flat (σ'(u) ≈ e^{−|u|}, below rounding for |u| ≳ 35) except in a band
    |u| = O(1) that random starts rarely hit (probability ~ 1/C²); continuation follows
    the maximiser into it, and the fresh starts cover the small-C regime, where the
    maximiser is z₁ ∥ z₃ − z₂ (a stationary point in the angle for every C).

    d = 2 suffices (ℓ depends on z only through z₁ and w = z₃ − z₂, which span ≤ 2
    dimensions); d = 1 gives in general a smaller value. Returns (the best value, the
    maximiser z of shape (3, d)); deterministic for a given seed on a given device.
    """
    C = radius
    device = torch.device("cpu") if device is None else device
    n_doublings = max(0, math.ceil(math.log2(C)))
    radii = [C / 2 ** (n_doublings - j) for j in range(n_doublings + 1)]
    generator = torch.Generator().manual_seed(seed)
    z = _uniform_ball_points(n_starts, dim, radii[0], generator).to(device)
    for stage, ball in enumerate(radii):
        if stage:
            keep = _eig_norm(z).argsort(descending=True)[: n_starts - n_starts // 2]
            z = torch.cat(
                [
                    2 * z[keep],
                    _uniform_ball_points(n_starts // 2, dim, ball, generator).to(
                        device
                    ),
                ]
            )
        z.requires_grad_(True)
        step = lr * min(ball, 1 / ball)
        optimizer = torch.optim.Adam([z], lr=step)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimizer, max(n_steps, 1), eta_min=1e-3 * step
        )
        for _ in range(n_steps):
            optimizer.zero_grad(set_to_none=True)
            (-_eig_norm(z).sum()).backward()
            with (
                torch.no_grad()
            ):  # at an active constraint, drop the outward part of the ascent direction
                norm = z.norm(dim=-1, keepdim=True)
                unit = z / norm.clamp_min(1e-300)
                radial = (z.grad * unit).sum(-1, keepdim=True)
                active = (norm >= ball * (1 - 1e-9)) & (radial < 0)
                z.grad -= torch.where(active, radial, torch.zeros_like(radial)) * unit
            optimizer.step()
            schedule.step()
            with torch.no_grad():
                z.mul_(
                    (ball / z.norm(dim=-1, keepdim=True).clamp_min(1e-300)).clamp(
                        max=1.0
                    )
                )
        z = z.detach()
    values = torch.nan_to_num(_eig_norm(z), nan=-math.inf)
    best = int(values.argmax())
    return float(values[best]), z[best].clone()


def _smoothness_bound_source(radius: float) -> float:
    """The source's constant (Lemma 3): L_smooth ≤ 2 + 8C²."""
    C = radius
    return 2.0 + 8.0 * C * C


def _smoothness_bound_weyl(radius: float) -> float:
    """B₁(C) = max_{s ∈ [1/2, σ(2C²)]} [6C²·s(1 − s) + √2·s] = 6C² s̄(1 − s̄) + √2 s̄,
    s̄ = min(1/2 + 1/(6√2 C²), σ(2C²)).

    From Weyl: ‖∇²ℓ‖ = λ_max ≤ a‖g‖² + √2 s, ‖g‖² ≤ 6C², a = s(1 − s), and |u| ≤ 2C²
    (replacing s < 1/2 by 1 − s only increases the bound). For large C it is
    (6C² + √2)²/(24C²) = 1.5C² + 1/√2 + 1/(12C²); it is ≤ 1.5C² + √2 always."""
    C = radius
    k = 6 * C * C
    s_bar = min(0.5 + 1 / (_SQRT2 * k), 1 / (1 + math.exp(-2 * C * C)))
    return k * s_bar * (1 - s_bar) + _SQRT2 * s_bar


def _smoothness_bound_secular(radius: float) -> float:
    """B₂(C) = ¾C² + ½√(9C⁴/4 + Ȳ), Ȳ = 8σ(2C²)²·(1 + 2·min(C², W(1/e))), W(1/e) ≈
    0.2785.

    From the closed form φ = ½[aG + √(a²G² + Y)], Y = 8s² + 16asu, increasing in aG ≤
    6C²/4 and in Y; for u ∈ [0, 2C²], s ≤ σ(2C²) and a·s·u = s²·(1 − s)u with (1 − s)u ≤
    min(u/2, W(1/e)). For large C it is 1.5C² + Ȳ/(6C²) + O(C⁻⁶) ≈ 1.5C² + 2.08/C²."""
    C = radius
    s_max = 1 / (1 + math.exp(-2 * C * C))
    y_bar = 8 * s_max**2 * (1 + 2 * min(C * C, _LAMBERT_W_INV_E))
    return 0.75 * C * C + 0.5 * math.sqrt(2.25 * C**4 + y_bar)


def _smoothness_bound_tight(radius: float) -> float:
    """B(C) = min(B₁(C), B₂(C)) (:func:`_smoothness_bound_weyl`,
    :func:`_smoothness_bound_secular`): a proven bound
    sup_{B₃} ‖∇²ℓ‖ ≤ B(C) ≤ 1.5C² + √2 < 2 + 8C². B(C)/sup → 1 as C → 0 (both → 1/√2)
    and as C → ∞ (both ~ 1.5C²)."""
    return min(_smoothness_bound_weyl(radius), _smoothness_bound_secular(radius))


def smoothness_table(
    radii,
    dim: int = 2,
    n_starts: int = 128,
    n_steps: int = 300,
    seed: int = 0,
    device: torch.device | str | None = None,
):
    """pandas DataFrame, one row per radius C of ``radii`` (each > 0): the searched sup,
    the exact sup, B₁, B₂, B = min, 2 + 8C², and the ratios source/sup and sup/C², on
    B₃ = {max_j ‖z_j‖ ≤ C} for ℓ(z) = log(1 + exp(z₁ᵀ(z₃ − z₂))) (Merad et al.,
    Lemma 3):

    - ``sup_search``: sup_{z ∈ B₃} ‖∇²ℓ(z)‖₂ by projected gradient ascent on the largest
      |eigenvalue| of the explicit Hessian, from ``n_starts`` uniform starts in B₃ ⊂
      (R^d)³, ``n_steps`` Adam steps per stage of a continuation in C, seeded by
      ``seed``, on ``device`` (default the CPU);
    - ``sup_exact``: max_{0 ≤ u ≤ 2C²} φ(u, 6C²), φ(u, G) = ½[aG + √(a²G² + 8s² +
      16·a·s·u)], s = σ(u), a = s(1 − s), on a refined grid;
    - ``bound_weyl``: B₁(C) = 6C² s̄(1 − s̄) + √2 s̄, s̄ = min(1/2 + 1/(6√2 C²), σ(2C²));
    - ``bound_secular``: B₂(C) = ¾C² + ½√(9C⁴/4 + Ȳ), Ȳ = 8σ(2C²)²·(1 + 2·min(C²,
      W(1/e)));
    - ``bound_tight``: B(C) = min(B₁(C), B₂(C)), a proven bound ≤ 1.5C² + √2;
    - ``bound_source``: the source's L_smooth ≤ 2 + 8C².
    """
    import pandas as pd

    try:
        radii = list(radii)
    except TypeError:
        raise ValueError(
            f"radii must be a sequence of radii C > 0, got {radii!r}"
        ) from None
    if not radii:
        raise ValueError("radii must hold at least one radius C > 0")
    radii = [_check_radius(radius, f"radii[{i}]") for i, radius in enumerate(radii)]
    dim = check_int("dim", dim)
    n_starts = check_int("n_starts", n_starts)
    n_steps = check_int("n_steps", n_steps, 0)
    seed = check_int("seed", seed, 0)
    if device is not None:
        device = check_device("device", device)
    rows = []
    for C in radii:
        searched, _ = _smoothness_sup_search(
            C, dim=dim, n_starts=n_starts, n_steps=n_steps, seed=seed, device=device
        )
        exact = _smoothness_sup_exact(C)
        rows.append(
            {
                "C": C,
                "sup_search": searched,
                "sup_exact": exact,
                "bound_weyl": _smoothness_bound_weyl(C),
                "bound_secular": _smoothness_bound_secular(C),
                "bound_tight": _smoothness_bound_tight(C),
                "bound_source": _smoothness_bound_source(C),
                "source_over_sup": _smoothness_bound_source(C) / exact,
                "sup_over_C2": exact / (C * C),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- Wen, Lemma D.1: log(1
# + Σ exp)


@cache
def _lse_symbols(k: int) -> tuple[sp.Symbol, ...]:
    """Real symbols u_1 … u_k."""
    return sp.symbols(f"u1:{k + 1}", real=True)


def lse_hessian_symbolic(k: int = 2) -> sp.Matrix:
    """∇²g(u) for g(u) = log(1 + Σ_{j=1}^k exp(u_j)), by sympy differentiation: a k × k
    matrix of real symbols u_1 … u_k."""
    k = _check_symbolic_size("k", k, 1)
    u = _lse_symbols(k)
    return sp.hessian(sp.log(1 + sum(sp.exp(x) for x in u)), u)


def _lse_probabilities_symbolic(k: int = 2) -> tuple[sp.Expr, list[sp.Expr]]:
    """(p₀, [p_1 … p_k]): p_j = e^{u_j}/(1 + Σ_i e^{u_i}), p₀ = 1/(1 + Σ_i e^{u_i}) = 1
    − Σ_j p_j."""
    u = _lse_symbols(k)
    total = 1 + sum(sp.exp(x) for x in u)
    return 1 / total, [sp.exp(x) / total for x in u]


def lse_hessian_difference(k: int = 2) -> sp.Matrix:
    """sympy's ∇²g minus diag(p) − ppᵀ, simplified exactly: the k × k zero matrix, for
    g(u) = log(1 + Σ_{j=1}^k exp(u_j)) and p_j = e^{u_j}/(1 + Σ_i e^{u_i})."""
    k = _check_symbolic_size("k", k, 1)
    _, p = _lse_probabilities_symbolic(k)
    p = sp.Matrix(p)
    return _zero_if_identity(lse_hessian_symbolic(k) - (sp.diag(*p) - p * p.T))


def lse_gershgorin_identity(k: int = 2) -> list[sp.Expr]:
    """For each row j: [1/2 − (center + radius)] − [(1 − 2p_j)²/2 + p₀p_j], simplified:
    all zero.

    Center p_j(1 − p_j), radius p_j Σ_{i≠j} p_i; so every Gershgorin disc ends below
    1/2 − p₀p_j < 1/2, and λ_max(diag(p) − ppᵀ) < 1/2 for every u and k (p_j =
    e^{u_j}/(1 + Σ_i e^{u_i}), p₀ = 1 − Σ_j p_j)."""
    k = _check_symbolic_size("k", k, 1)
    p0, p = _lse_probabilities_symbolic(k)
    gaps = []
    for j, pj in enumerate(p):
        radius = pj * sum(pi for i, pi in enumerate(p) if i != j)
        gap = (
            sp.Rational(1, 2)
            - (pj * (1 - pj) + radius)
            - ((1 - 2 * pj) ** 2 / 2 + p0 * pj)
        )
        gaps.append(sp.cancel(sp.together(_exp_to_symbols(gap))))
    return gaps


def lse_k1_gap() -> sp.Expr:
    """k = 1: 1/4 − p(1 − p) with p = t/(1 + t), t = e^u, factored: (t − 1)²/(4(t + 1)²)
    ≥ 0, zero only at u = 0, so the k = 1 Hessian is ≤ 1/4 with equality at u = 0."""
    t = sp.Symbol("t", positive=True)
    p = t / (1 + t)
    return sp.factor(sp.Rational(1, 4) - p * (1 - p))


def lse_hessian(u: Tensor) -> Tensor:
    """diag(p) − ppᵀ, p_j = e^{u_j}/(1 + Σ_i e^{u_i}), for u (..., k) → (..., k, k)."""
    _check_logits("u", u)
    p = torch.softmax(torch.cat([torch.zeros_like(u[..., :1]), u], -1), -1)[..., 1:]
    return torch.diag_embed(p) - p[..., :, None] * p[..., None, :]


def lse_hessian_lambda_max(u: Tensor) -> Tensor:
    """λ_max(diag(p) − ppᵀ) at u (..., k) → (...,), by eigvalsh; u finite.

    Its supremum over u is 1/4 for k = 1 (attained at u = 0) and 1/2 for k ≥ 2
    (approached by u = (t, t, −∞, …), t → ∞, where λ_max = e^t/(1 + 2e^t); never
    attained since p₀ > 0)."""
    _check_logits("u", u)
    check_finite("u", u)
    return torch.linalg.eigvalsh(lse_hessian(u))[..., -1]


def lse_hessian_gershgorin_bound(u: Tensor) -> Tensor:
    """max_j p_j(2 − 2p_j − p₀) (the largest Gershgorin disc end) at u (..., k) →
    (...,): < 1/2."""
    _check_logits("u", u)
    probs = torch.softmax(torch.cat([torch.zeros_like(u[..., :1]), u], -1), -1)
    p0, p = probs[..., :1], probs[..., 1:]
    return (p * (2 - 2 * p - p0)).amax(-1)


# ---------------------------------------------------------------- Lee (2025), Lemma A.1


def smooth_max(x: Tensor, alpha: float = 1.0) -> Tensor:
    """(1/α) log Σ_i exp(α x_i) over the last dimension of x (..., n) → (...,), α >
    0."""
    _check_logits("x", x)
    check_positive("alpha", alpha)
    return torch.logsumexp(alpha * x, -1) / alpha


def smooth_max_bounds(x: Tensor, alpha: float = 1.0) -> tuple[Tensor, Tensor, Tensor]:
    """Lemma A.1: (max_i x_i, (1/α) LSE(αx), max_i x_i + log(n)/α), each (...,); first ≤
    second ≤ third."""
    value = smooth_max(x, alpha)
    top = x.amax(-1)
    return top, value, top + math.log(x.shape[-1]) / alpha
