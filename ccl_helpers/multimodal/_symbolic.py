"""The sympy identities behind the model: the norm of (A.6) and (A.19)'s expectations.

Each returns a difference that simplifies to 0.
"""

from __future__ import annotations

import itertools

import sympy as sp

from .._checks import check_count, check_int

_MAX_MONOMIALS = 10**6
"""The most monomials :func:`symbolic_norm_identity` expands, 2^(r+d_ξ) m (d(r+d_ξ))²:
the book's call (2, 3, 2, 1) expands 1,296 in 0.1 s, 331,776 (4, 6, 3, 3) take about
16 s and 4,194,304 (4, 8, 4, 4) about 100 s on one core; sympy holds the whole sum, with
no allocation of torch's to fail first."""

_MAX_NEGATIVE_TERMS = 10**4
"""The most exponential terms :func:`symbolic_negative_expectations` simplifies,
4^r (r + 1) r (for each of the 2^r signs z, r + 1 sums over the 2^r signs z⁻): r = 3
(768, the book's largest call) takes about 5 s, r = 4 (5,120) about 40 s, r = 5
(30,720) did not finish in 300 s."""

_EXACT_SIGNS = 64
"""Beyond 2⁶⁴ sign vectors a count is reported at 2⁶⁴ (a lower bound, enough to refuse
it) instead of computed."""


def _sign_vectors(k: int) -> tuple[int, str]:
    """2^k, at most 2^64, and the word that says whether the count built on it is exact
    ("") or a lower bound (" or more")."""
    return 2 ** min(k, _EXACT_SIGNS), "" if k <= _EXACT_SIGNS else " or more"


def symbolic_norm_identity(
    width: int = 2, input_dim: int = 3, latent_dim: int = 2, noise_dim: int = 1
) -> sp.Expr:
    """E‖W x‖² − (‖W M‖_F² + ‖W H‖_F²) for symbolic W (m×d), M (d×r), H (d×d_ξ), x = Mz
    + Hξ, the expectation taken exactly over all z ∈ {±1}^r, ξ ∈ {±1}^{d_ξ}; simplifies
    to 0 (no M ⊥ H needed). It expands 2^(r+d_ξ) m (d(r+d_ξ))² monomials, at most
    ``_MAX_MONOMIALS``."""
    width = check_int("width", width, 1)
    input_dim = check_int("input_dim", input_dim, 1)
    latent_dim = check_int("latent_dim", latent_dim, 1)
    noise_dim = check_int("noise_dim", noise_dim, 1)
    vectors, more = _sign_vectors(latent_dim + noise_dim)
    check_count(
        f"sympy monomials{more}",
        vectors * width * (input_dim * (latent_dim + noise_dim)) ** 2,
        _MAX_MONOMIALS,
        f"width={width}, input_dim={input_dim}, latent_dim={latent_dim}, "
        f"noise_dim={noise_dim}",
    )
    W = sp.Matrix(width, input_dim, lambda i, j: sp.Symbol(f"w_{i}{j}"))
    M = sp.Matrix(input_dim, latent_dim, lambda i, j: sp.Symbol(f"m_{i}{j}"))
    H = sp.Matrix(input_dim, noise_dim, lambda i, j: sp.Symbol(f"h_{i}{j}"))
    total = sp.Integer(0)
    for signs in itertools.product((-1, 1), repeat=latent_dim + noise_dim):
        z = sp.Matrix(signs[:latent_dim])
        xi = sp.Matrix(signs[latent_dim:])
        y = W * (M * z + H * xi)
        total += (y.T * y)[0, 0]
    expectation = total / 2 ** (latent_dim + noise_dim)
    frobenius = sum(v**2 for v in W * M) + sum(v**2 for v in W * H)
    return sp.expand(expectation - frobenius)


def symbolic_negative_expectations(latent_dim: int = 2) -> dict[str, sp.Expr]:
    """The identities (A.19) as differences that simplify to 0.

    For every z ∈ {±1}^r, exactly over z⁻ uniform on {±1}^r:

    ``cosh``: E_{z⁻} e^{β Σ_p c_p z_p z⁻_p} − Π_q cosh(β c_q); ``tanh_p``: E[z⁻_p e^{…}]
    − z_p tanh(β c_p) E[e^{…}]  (i.e. E[z⁻_p e^{…}]/E[e^{…}] = z_p tanh(β c_p)).
    Returned as the sum over z of squared differences (rewritten in exponentials). It
    simplifies 4^r (r + 1) r exponential terms, at most ``_MAX_NEGATIVE_TERMS``."""
    latent_dim = check_int("latent_dim", latent_dim, 1)
    vectors, more = _sign_vectors(latent_dim)
    check_count(
        f"sympy terms{more}",
        vectors**2 * (latent_dim + 1) * latent_dim,
        _MAX_NEGATIVE_TERMS,
        f"latent_dim={latent_dim}",
    )
    r = latent_dim
    beta = sp.Symbol("beta", positive=True)
    c = sp.symbols(f"c_1:{r + 1}", real=True)
    out = {"cosh": sp.Integer(0), **{f"tanh_{p + 1}": sp.Integer(0) for p in range(r)}}
    for z in itertools.product((-1, 1), repeat=r):
        weights = [
            sp.exp(beta * sum(c[p] * z[p] * zn[p] for p in range(r)))
            for zn in itertools.product((-1, 1), repeat=r)
        ]
        negatives = list(itertools.product((-1, 1), repeat=r))
        mean = sum(weights) / 2**r
        product = sp.Mul(*[sp.cosh(beta * c[q]) for q in range(r)])
        out["cosh"] += sp.simplify((mean - product).rewrite(sp.exp)) ** 2
        for p in range(r):
            first = sum(zn[p] * wt for zn, wt in zip(negatives, weights)) / 2**r
            diff = (first - z[p] * sp.tanh(beta * c[p]) * mean).rewrite(sp.exp)
            out[f"tanh_{p + 1}"] += sp.simplify(diff) ** 2
    return {k: sp.simplify(v) for k, v in out.items()}
