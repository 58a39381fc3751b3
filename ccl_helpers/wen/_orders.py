"""The sizes of Theorem 4.2 and radii of Lemmas 4.3–4.4, hidden constants set to 1."""

from __future__ import annotations

import math

from .._checks import check_int, check_positive
from ._negative_sets import _check_negative_count


def theorem42_orders(
    n: int, n_layers: int, n_negatives: int, delta: float, epsilon: float
) -> dict[str, float]:
    """Theorem 4.2's requirements with every hidden constant set to 1 and log m dropped
    (log10 of each): ``log10_m`` of m ≥ n¹⁵ L¹² δ⁻⁵ ε⁻² (main text; the appendix has
    n¹²: ``log10_m_appendix``), ``log10_T`` of T = n¹⁰ L² k δ⁻³ ε⁻⁴, and
    ``log10_eta_m_over_d`` of η·m/d = ε² δ² / (n⁷ L² k).

    n ≥ 2 points, n_layers L ≥ 1, n_negatives k in 1..n − 1, delta δ > 0, epsilon
    ε > 0."""
    n = check_int("n", n, 2)
    n_layers = check_int("n_layers", n_layers, 1)
    n_negatives = _check_negative_count(n_negatives, n, "n")
    delta = check_positive("delta", delta)
    epsilon = check_positive("epsilon", epsilon)
    lg = math.log10
    return {
        "log10_m": 15 * lg(n) + 12 * lg(n_layers) - 5 * lg(delta) - 2 * lg(epsilon),
        "log10_m_appendix": 12 * lg(n)
        + 12 * lg(n_layers)
        - 5 * lg(delta)
        - 2 * lg(epsilon),
        "log10_T": 10 * lg(n)
        + 2 * lg(n_layers)
        + lg(n_negatives)
        - 3 * lg(delta)
        - 4 * lg(epsilon),
        "log10_eta_m_over_d": 2 * lg(epsilon)
        + 2 * lg(delta)
        - 7 * lg(n)
        - 2 * lg(n_layers)
        - lg(n_negatives),
    }


def proof_descent_constant(step_scale: float, delta: float, n: int) -> float:
    """The proof's one-step descent constant c of L_S^(t+1) ≤ L_S^(t) − c‖loss^(t)‖²,
    Ω(min(η, γ) δ m / (n³ d)) for loss vectors without the 1/n of L_S, in Definition
    4.1's units (with it): min(η, γ)(m/d) δ / n = ``step_scale`` · δ / n for
    η = γ = step_scale · d/m, every hidden constant set to 1. step_scale > 0, delta
    δ > 0, n ≥ 2."""
    step_scale = check_positive("step_scale", step_scale)
    delta = check_positive("delta", delta)
    n = check_int("n", n, 2)
    return step_scale * delta / n


def movement_radius(n: int, n_layers: int, delta: float, width: int) -> float:
    """Lemma 4.3's radius ω = δ^{3/2} / (n³ L⁶ log^{3/2} m) of the ball around
    initialisation (per-layer spectral norm, Lemma B.4) in which its gradient bounds
    hold, every hidden constant set to 1 (natural log). n ≥ 2, n_layers L ≥ 1,
    delta δ > 0, width m ≥ 2."""
    n = check_int("n", n, 2)
    n_layers = check_int("n_layers", n_layers, 1)
    delta = check_positive("delta", delta)
    width = check_int("width", width, 2)
    return delta**1.5 / (n**3 * n_layers**6 * math.log(width) ** 1.5)


def lemma44_radius_range(
    width: int, out_features: int, n_layers: int
) -> tuple[float, float]:
    """Lemma 4.4's interval for its radius, ω, τ ∈ [Ω(√(d/m)), O(1/(L^{9/2} log^{3/2}
    m))], every hidden constant set to 1 (natural log): (√(d/m), 1/(L^{9/2} log^{3/2}
    m)). The interval is empty where the first exceeds the second. width m ≥ 2,
    out_features d ≥ 1, n_layers L ≥ 1."""
    width = check_int("width", width, 2)
    out_features = check_int("out_features", out_features, 1)
    n_layers = check_int("n_layers", n_layers, 1)
    low = math.sqrt(out_features / width)
    high = 1 / (n_layers**4.5 * math.log(width) ** 1.5)
    return low, high


def radius_meeting_width(out_features: int, prefactor: float) -> float:
    """The width m* from which √(d/m) ≤ prefactor / log^{3/2} m holds: where Lemma
    4.4's lower end √(d/m) meets an upper end of that form (1/L^{9/2}, Lemma 4.4's own,
    or δ^{3/2}/(n³L⁶), Lemma 4.3's radius :func:`movement_radius`), constants 1.

    Solves log m = log d + 3 log log m − 2 log(prefactor) for its largest root by
    fixed-point iteration from above (it contracts there, the slope 3/log m < 1);
    returns 1.0 where the inequality holds at every width m > 1 (no root).
    out_features d ≥ 1, prefactor > 0."""
    d = check_int("out_features", out_features, 1)
    prefactor = check_positive("prefactor", prefactor)
    log_a = math.log(prefactor)

    def gap(y: float) -> float:  # > 0 where the inequality fails at m = e^y
        return math.log(d) + 3 * math.log(y) - 2 * log_a - y

    if gap(3.0) <= 0:  # the largest value of the gap, at log m = 3
        return 1.0
    y = max(3.0, gap(3.0) + 3.0) * 10
    for _ in range(1000):
        updated = math.log(d) + 3 * math.log(y) - 2 * log_a
        if abs(updated - y) <= 1e-13 * y:
            return math.exp(updated)
        y = updated
    raise ArithmeticError("the fixed-point iteration did not converge")  # unreachable
