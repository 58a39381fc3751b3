"""The sympy identities behind the model: the norm of (A.6) and (A.19)'s expectations.

Each returns a difference that simplifies to 0.
"""

from __future__ import annotations

import itertools

import sympy as sp

from ..checks import Int, checked

_MAX_MONOMIALS = 10**5
"""The most monomials :func:`symbolic_norm_identity` expands (a few seconds)."""


@checked(width=Int(1), input_dim=Int(1), latent_dim=Int(1), noise_dim=Int(1))
def symbolic_norm_identity(
    width: int = 2, input_dim: int = 3, latent_dim: int = 2, noise_dim: int = 1
) -> sp.Expr:
    """E‖W x‖² − (‖W M‖_F² + ‖W H‖_F²) for symbolic W (m×d), M (d×r), H (d×d_ξ), x = Mz
    + Hξ, the expectation taken exactly over all z ∈ {±1}^r, ξ ∈ {±1}^{d_ξ}; simplifies
    to 0 (no M ⊥ H needed)."""
    if latent_dim + noise_dim > 6:
        raise ValueError(
            "latent_dim + noise_dim must be ≤ 6 (2^(r+d_ξ) terms), got "
            f"{latent_dim + noise_dim}"
        )
    signs = latent_dim + noise_dim
    monomials = 2**signs * width * (input_dim * signs) ** 2
    if monomials > _MAX_MONOMIALS:
        raise ValueError(
            f"width={width}, input_dim={input_dim} would expand "
            f"2^(r+d_ξ) m (d(r+d_ξ))² = {monomials:,} monomials, whose time grows "
            f"with them: at most {_MAX_MONOMIALS:,}; use a smaller width or input_dim"
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


@checked(latent_dim=Int(1, 4))
def symbolic_negative_expectations(latent_dim: int = 2) -> dict[str, sp.Expr]:
    """The identities (A.19) as differences that simplify to 0.

    For every z ∈ {±1}^r, exactly over z⁻ uniform on {±1}^r:

    ``cosh``: E_{z⁻} e^{β Σ_p c_p z_p z⁻_p} − Π_q cosh(β c_q); ``tanh_p``: E[z⁻_p e^{…}]
    − z_p tanh(β c_p) E[e^{…}]  (i.e. E[z⁻_p e^{…}]/E[e^{…}] = z_p tanh(β c_p)).
    Returned as the sum over z of squared differences (rewritten in exponentials)."""
    r = latent_dim  # at most 4: 4^r terms
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
