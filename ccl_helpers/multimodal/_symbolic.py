"""The sympy identities behind the model: the norm of (A.6) and (A.19)'s expectations.

Each returns a difference that simplifies to 0.
"""

from __future__ import annotations

import itertools

import sympy as sp

from ..checks import SECONDS_PER_SYMBOLIC_TERM, Duration, Int, Sized, checked


def _expansion_seconds(arguments: dict) -> float:
    """A lower bound on the time of :func:`symbolic_norm_identity`: it expands
    2^(r+d_ξ) m (d(r+d_ξ))² monomials, each at least
    :data:`~ccl_helpers.checks.SECONDS_PER_SYMBOLIC_TERM`."""
    signs = arguments["latent_dim"] + arguments["noise_dim"]
    if signs > 64:  # more than 2⁶⁴ monomials: this lower bound, not the count
        return SECONDS_PER_SYMBOLIC_TERM * 2.0**64
    monomials = 2**signs * arguments["width"] * (arguments["input_dim"] * signs) ** 2
    return SECONDS_PER_SYMBOLIC_TERM * monomials


EXPANSION = Duration(
    "multimodal.symbolic_norm_identity's expansion",
    ("width", "input_dim", "latent_dim", "noise_dim"),
    _expansion_seconds,
)
"""The time of :func:`symbolic_norm_identity`'s sympy expansion."""


@checked(
    width=Sized(Int(1), EXPANSION),
    input_dim=Sized(Int(1), EXPANSION),
    latent_dim=Sized(Int(1), EXPANSION),
    noise_dim=Sized(Int(1), EXPANSION),
)
def symbolic_norm_identity(
    width: int = 2, input_dim: int = 3, latent_dim: int = 2, noise_dim: int = 1
) -> sp.Expr:
    """E‖W x‖² − (‖W M‖_F² + ‖W H‖_F²) for symbolic W (m×d), M (d×r), H (d×d_ξ), x = Mz
    + Hξ, the expectation taken exactly over all z ∈ {±1}^r, ξ ∈ {±1}^{d_ξ}; simplifies
    to 0 (no M ⊥ H needed). Its time is checked before the expansion."""
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


def _negative_expectation_seconds(arguments: dict) -> float:
    """A lower bound on the time of :func:`symbolic_negative_expectations`: for each of
    the 2^r signs z, r + 1 sums over the 2^r signs z⁻ of exponentials of r terms."""
    r = arguments["latent_dim"]
    if r > 64:  # more than 2¹²⁸ terms: this lower bound, not the count
        return SECONDS_PER_SYMBOLIC_TERM * 2.0**128
    return SECONDS_PER_SYMBOLIC_TERM * 4**r * (r + 1) * r


NEGATIVE_EXPECTATIONS = Duration(
    "multimodal.symbolic_negative_expectations's sums",
    ("latent_dim",),
    _negative_expectation_seconds,
)
"""The time of :func:`symbolic_negative_expectations` (4^r terms)."""


@checked(latent_dim=Sized(Int(1), NEGATIVE_EXPECTATIONS))
def symbolic_negative_expectations(latent_dim: int = 2) -> dict[str, sp.Expr]:
    """The identities (A.19) as differences that simplify to 0.

    For every z ∈ {±1}^r, exactly over z⁻ uniform on {±1}^r:

    ``cosh``: E_{z⁻} e^{β Σ_p c_p z_p z⁻_p} − Π_q cosh(β c_q); ``tanh_p``: E[z⁻_p e^{…}]
    − z_p tanh(β c_p) E[e^{…}]  (i.e. E[z⁻_p e^{…}]/E[e^{…}] = z_p tanh(β c_p)).
    Returned as the sum over z of squared differences (rewritten in exponentials)."""
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
