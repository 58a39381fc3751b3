"""The claims of Merad et al. (2020) that Chapter 2 tests, with their margins."""

from __future__ import annotations

from ..verdicts import Claim, claims_by_key

_MERAD = "Merad et al. (2020)"
CHAPTER_SCOPE = (
    "FashionMNIST: conv nets → ℝ³² trained with Adam (Sections 3, 5); deep ReLU nets "
    "trained by gradient descent on fixed triplets (Section 4)"
)
"""The chapter's scope; each claim of :data:`CLAIMS` states its own."""
_LEMMA = "{lemma}"
_DESCENT = "{descent}"
_SLOPE = (
    "a quarter of a power: the steps' exponent of ε or δ read within ±0.25 of −2, a "
    "factor 1.19 per halving, is the smallest difference a reader would act on"
)


CLAIMS: dict[str, Claim] = claims_by_key(
    # ---- Section 3: theorem rows (asserted in the chapter)
    Claim(
        key="lemma1",
        source=f"{_MERAD}, Lemma 1, eq. (7)",
        statement="L^µ_sup(f, C) ≤ L_un(f)/p_min + log N_C for every encoder f",
        metric="L^µ_sup exact on the held-out set, bound at L_un + 4 Monte Carlo s.e. "
        "(nats), at every checkpoint",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lsup_below_lmu",
        source=f"{_MERAD}, Lemma 1, eq. (7)",
        statement="L_sup(f, C) ≤ L^µ_sup(f, C): the best linear classifier beats the "
        "mean classifier",
        metric="L_sup fitted by L-BFGS, L^µ_sup exact, two independent computations "
        "(nats), at every checkpoint",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lemma1_without_log",
        source=f"{_MERAD}, Section 5, Figure 1",
        statement="inequality (7) holds even when the log N_C term is discarded",
        metric="L^µ_sup ≤ L_un/p_min, proven for every f and checked at every "
        "checkpoint (nats)",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="lemma2",
        source=f"{_MERAD}, Lemma 2, eq. (8)",
        statement="L^µ_sup(f, C) ≤ L^N_un(f)/p_cc(N), for N = Ω(N_C log N_C)",
        metric="L^µ_sup exact, bound at L^N_un + 4 Monte Carlo s.e. (nats), at every "
        "checkpoint; the proof needs no assumption on N, and the factor "
        "min_c P(J ⊇ C∖{c}) ≥ p_cc(N) suffices",
        scope=_LEMMA,
        section="multineg-exact",
    ),
    Claim(
        key="coupon_moments",
        source=f"{_MERAD}, Section 3.1",
        statement="the coupon-collector time T has E T = N_C H_{N_C} and Var T = "
        "(N_C π)²/6",
        metric="E T and Var T as exact rationals, against (N_C π)²/6",
        scope="exact law of T, uniform ρ, N_C = 10",
        section="multineg-coupon",
    ),
    Claim(
        key="coupon_tail",
        source=f"{_MERAD}, Section 3.1",
        statement="P(|T − N_C H_{N_C}| ≥ βN_C) ≤ π²/(6β²) for every β > 0 (Chebyshev)",
        metric="the exact tail of T against Var T/(βN_C)² and π²/(6β²), β = 0.05 to 3",
        scope="exact law of T, uniform ρ, N_C = 10",
        section="multineg-coupon",
    ),
    Claim(
        key="prop1_part1",
        source=f"{_MERAD}, Proposition 1 (1)",
        statement="L^µ_sup,k(f) ≤ k/(1 − τ⁺)·(L_un(f) − τ⁺) (N = 1)",
        metric="the printed form in bits against part (2) at N = 1 in nats, exact at "
        "f ≡ 0",
        scope="exact, zero encoder, N_C = 10, k = 1",
        section="multineg-prop1-units",
    ),
    Claim(
        key="prop1_part2",
        source=f"{_MERAD}, Proposition 1 (2)",
        statement="L^µ_sup,k(f) ≤ k/(1 − τ⁺_N)·(L^N_un(f) − τ⁺_N log(N + 1)) for "
        "uniform ρ and 1 ≤ k ≤ N_C − 1",
        metric="L^µ_sup,k exact (all tasks), bound at L^N_un + 4 Monte Carlo s.e. "
        "(nats), every (seed, k, N)",
        scope="the N = 15 encoders of {lemma}; k = 1 to 9, N = 1 to 64",
        section="multineg-prop1-grid",
    ),
    # ---- Section 5 (Figures 1–3): empirical claims, one number per seed
    Claim(
        key="lemma2_without_factor",
        source=f"{_MERAD}, Section 5, Figure 2",
        statement="inequality (8) seems to hold even without the 1/p_cc factor",
        metric="min over checkpoints and N = 15, 25, 35 of L^N_un − L^µ_sup, per seed "
        "(nats)",
        expected="greater",
        margin=0.01,
        margin_reason="a hundredth of a nat, a 1 % change in the odds of the "
        "positive: a gap below it is no gap a reader would act on",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="similar_trend",
        source=f"{_MERAD}, Section 5, Figures 1–2",
        statement="the unsupervised and the supervised loss follow a similar trend "
        "along training",
        metric="lag between the shares of their whole fall that L^N_un and L^µ_sup "
        "have reached, mean over the checkpoints and N, per seed",
        expected="equal",
        null=0.0,
        margin=0.1,
        margin_reason="a lag of a tenth of the fall, about a line's width on the "
        "figures, is the smallest a reader would call a different trend",
        scope=_LEMMA,
        section="multineg-lemmas-training",
    ),
    Claim(
        key="assumption2",
        source=f"{_MERAD}, Assumption 2, Figure 3",
        statement="the output norms stay away from 0 along training, η < ‖f(x)‖ < C",
        metric="η: the smallest output norm over the held-out images, checkpoints "
        "and N, per seed",
        expected="greater",
        margin=0.01,
        margin_reason="a hundredth of the output norm at which the embeddings of "
        "a conv net on [0, 1] pixels start (of order 1): a norm within it of 0 is "
        "read as touching 0",
        scope=_LEMMA,
        section="multineg-assumption2",
    ),
    Claim(
        key="prop1_more_negatives",
        source=f"{_MERAD}, Section 3.2 (what its remark on the factor suggests)",
        statement="with its factor k/(1 − τ⁺_N) falling to k, more negatives bring "
        "the bound of Proposition 1 closer to the loss it bounds",
        metric="bound / L^µ_sup,1 of the encoder trained with the largest N, through "
        "its own L^N_un, minus that of the encoder trained with N = 1 (k = 1), per "
        "seed",
        expected="less",
        margin=0.1,
        margin_reason="a tenth of L^µ_sup,1, the loss the bound is divided "
        "by: a bound that closes less of the gap than that is not closer",
        scope="the encoders of {lemma}; k = 1",
        section="multineg-prop1-grid",
    ),
    # ---- Section 4: theorem rows
    Claim(
        key="lemma3_hessian",
        source=f"{_MERAD}, Lemma 3, proof",
        statement="the Hessian of ℓ is (v₁ − 1)∂²cos₁₂ + v₂∂²cos₁₃ + (∂cos₁₂ ∂cos₁₃)∂v",
        metric="sympy: the source's form minus the Hessian of ℓ",
        scope="symbolic, d = 2",
        section="multineg-lemma3",
    ),
    Claim(
        key="lemma3_smoothness",
        source=f"{_MERAD}, Lemma 3",
        statement="ℓ is L_smooth-smooth on B₃ with L_smooth ≤ 2 + 8C²",
        metric="the exact sup of ‖∇²ℓ‖ over B₃ (a one-dimensional maximisation), "
        "against B(C) and 2 + 8C²",
        scope="C = 0.5 to 8",
        section="multineg-lemma3",
    ),
    Claim(
        key="lemma4",
        source=f"{_MERAD}, Lemma 4",
        statement="if ‖∇_z L̂_un‖ ≤ ε' < η/2 then ℓ(z_i) ≤ 2ε'/η for every i",
        metric="max_i ℓ(z_i) against 2ε'/η at every checkpoint of every descent run "
        "where ε' < η/2",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    # ---- Section 4: empirical claims, one number per seed (an initialisation)
    Claim(
        key="lazy_movement",
        source="Merad et al. (2020), Theorem 1 (the lazy regime of Allen-Zhu et al.)",
        statement="with ν ∝ 1/m the relative weight movement falls like m^{−1}",
        metric="log-log slope of ‖W^(T) − W^(0)‖_F/‖W^(0)‖_F in m, m = 16 to 2048, "
        "per seed",
        expected="equal",
        null=-1.0,
        margin=0.2,
        margin_reason="a fifth of the predicted exponent: a slope of −0.8 or −1.2 "
        "would no longer be read as m^{−1}",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="lazy_width",
        source="Merad et al. (2020), Theorem 1 (the lazy regime of Allen-Zhu et al.)",
        statement="from some width on the weights barely move (relative movement "
        "< 0.1)",
        metric="relative movement ‖W^(T) − W^(0)‖_F/‖W^(0)‖_F at the widest width, "
        "per seed",
        expected="less",
        null=0.1,
        margin=0.01,
        margin_reason="a tenth of the source's own threshold 0.1",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_free_of_width",
        source=f"{_MERAD}, Theorem 1",
        statement="with ν ∝ 1/m the number of steps T does not depend on m",
        metric="log-log slope of the steps to L̂_un ≤ ε in m for m ≥ m*, per seed",
        expected="equal",
        null=0.0,
        margin=0.25,
        margin_reason="T ∝ m^{±1/4}, a factor 1.19 per doubling of the width, is "
        "the smallest dependence a reader would act on",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_epsilon",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(ε^{−2}): the steps grow no faster than ε^{−2}",
        metric="log-log slope of the steps to L̂_un ≤ ε in ε, width m ∝ 1/ε, lazy "
        "runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        margin=0.25,
        margin_reason=_SLOPE,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_gradient",
        source=f"{_MERAD}, Lemma 6",
        statement="‖∇_z L̂_un‖ ≤ ε' within O(ε'^{−2}) steps",
        metric="log-log slope of the steps to ‖∇_z L̂_un‖ ≤ ε' in ε', width m ∝ 1/ε', "
        "lazy runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        margin=0.25,
        margin_reason=_SLOPE,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_delta",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(δ^{−2}): the steps grow no faster than δ^{−2}",
        metric="log-log slope of the steps to L̂_un ≤ 0.2 in the separation δ of "
        "hard negatives, ν ∝ δ, lazy runs, per seed (the bound: −2)",
        expected="greater",
        null=-2.0,
        margin=0.25,
        margin_reason=_SLOPE,
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="steps_triplets",
        source=f"{_MERAD}, Theorem 1",
        statement="T = O(poly(n)): more triplets take more steps, polynomially (no "
        "exponent given)",
        metric="steps to L̂_un ≤ ε at the largest over the smallest number n of "
        "triplets, ν ∝ 1/n, lazy runs, per seed",
        expected="greater",
        null=1.0,
        margin=0.25,
        margin_reason="a quarter more steps: a ratio within 1 ± 0.25 is read as "
        "no dependence on n",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="width_delta",
        source=f"{_MERAD}, Theorem 1",
        statement="the width needed grows with 1/δ (m ≥ poly(δ^{−1})): at a fixed m "
        "the weights move more as δ shrinks",
        metric="relative movement at m* at the largest over the smallest δ, ν ∝ δ, "
        "per seed",
        expected="less",
        null=1.0,
        margin=0.1,
        margin_reason="a 10 % change in the relative movement, the smallest a "
        "reader would act on",
        scope=_DESCENT,
        section="multineg-descent",
    ),
    Claim(
        key="width_triplets",
        source=f"{_MERAD}, Theorem 1",
        statement="the width needed grows with n (m ≥ poly(n)): at a fixed m the "
        "weights move more as n grows",
        metric="relative movement at m* at the largest over the smallest n, ν ∝ 1/n, "
        "per seed",
        expected="greater",
        null=1.0,
        margin=0.1,
        margin_reason="a 10 % change in the relative movement, the smallest a "
        "reader would act on",
        scope=_DESCENT,
        section="multineg-descent",
    ),
)
"""The claims of the source the chapter tests, by key
(:class:`~ccl_helpers.verdicts.Claim`), stated before the runs that test them: the
theorem rows of Section 3 (Lemmas 1 and 2, the coupon collector, Proposition 1), the
empirical claims of Section 5 (one number per seed of the conv-net runs), the theorem
rows of Section 4 (Lemmas 3 and 4) and its empirical claims (one number per
initialisation seed of the descent runs; a slope is fitted to each seed's runs alone). A
scope may hold the fields ``{lemma}`` and ``{descent}``: the chapter fills them
(``str.format``) with the settings of its conv-net runs and of its descent runs. Every
empirical claim states its margin with its reason (the source gives no effect sizes, so
each margin is the smallest effect a reader would act on).
"""
