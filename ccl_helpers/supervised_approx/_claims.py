"""The claims of Lee (2025) that Chapter 5 tests, stated before the runs.

:data:`CLAIMS`, each with its metric and the margin below which an effect counts as
absent."""

from __future__ import annotations

from ..verdicts import Claim, claims_by_key

_POINTS = (
    "half a point of accuracy, below what a reader would act on (10 of the 2,000 "
    "test images at standard scale)"
)
_SHAPE = (
    "a tenth of the gap's largest value: a smaller change over the stretch of training "
    "is not a trend a reader of Figure 6 would see"
)
_RANKS = (
    "a rank correlation under 0.1 in size ranks the strategies almost at random "
    "(ρ² < 1 %)"
)


CLAIMS: dict[str, Claim] = claims_by_key(
    # theorem rows (verified by asserts in the chapter)
    Claim(
        key="lemma_a1",
        source="Lee (2025), Lemma A.1 and eq. (18)",
        statement="max x ≤ (1/α) log Σ e^(α x_i) ≤ max x + log(n)/α; both gaps → 0 "
        "as α → ∞",
        metric="sympy identity (n = 3); random vectors at 9 values of α",
        section="ch5-lemma-a1",
    ),
    Claim(
        key="lemma_a2",
        source="Lee (2025), Lemma A.2",
        statement="u(x) = (1/α) log Σ e^(α x_i) is convex",
        metric="sympy Hessian = α Var_p; random chords at 9 values of α",
        section="ch5-lemmas-a2-a3",
    ),
    Claim(
        key="lemma_a3",
        source="Lee (2025), Lemma A.3",
        statement="max[g1 g2] ≤ max g1 · max g2 if g1 ≥ 0 and g2 ≥ 0 somewhere",
        metric="random function pairs; a counterexample without each hypothesis",
        section="ch5-lemmas-a2-a3",
    ),
    Claim(
        key="thm44_bound",
        source="Lee (2025), Theorem 4.4, eq. (8) (Appendix A.1.1)",
        statement="−s(f(t(x)), E_T f(T(x))) ≤ −E_T s(f(t(x)), f(T(x))) under "
        "Assumptions 4.1–4.3",
        metric="per-anchor gap RHS − LHS on trained encoders; exact gap "
        "f·m (1/‖m‖ − 1)",
        section="ch5-bounds",
    ),
    Claim(
        key="thm44_strict",
        source="Lee (2025), Theorem 4.4 as stated in Section 4.1",
        statement="eq. (8) with a strict “<”",
        metric="the gap under the identity augmentation (view invariance)",
        section="ch5-bounds",
    ),
    Claim(
        key="thm44_equality",
        source="Lee (2025), Appendix A.4.5",
        statement="equality in eq. (8) holds when ‖E_T f(T(x))‖ = 1 (view invariance)",
        metric="the exact gap: identity views; an anchor orthogonal to the mean of "
        "its views",
        section="ch5-bounds",
    ),
    Claim(
        key="thm46_bound",
        source="Lee (2025), Theorem 4.6, eq. (10)",
        statement="max_{y′≠y} s(f(t(x)), μ̂_{y′}) ≤ B/ν for any α > 0 under "
        "Assumptions 4.1, 4.2, 4.5",
        metric="per-anchor gap on trained encoders; a constructed configuration "
        "with B < 0",
        section="ch5-bounds",
    ),
    # Figure 6: the gaps along training, SimCLR arm
    *(
        Claim(
            key=f"f6_{gap}_{kind}",
            source="Lee (2025), Figure 6 (Appendix A.4.5)",
            statement=statement.format(name=name),
            metric=metric,
            expected=expected,
            margin=0.1,
            margin_reason=_SHAPE,
            section="ch5-bounds",
        )
        for gap, name in (
            ("attract", "attracting bound (8)"),
            ("repel", "repelling bound (10)"),
        )
        for kind, statement, metric, expected in (
            (
                "decreases",
                "the mean gap of the {name} decreases along training",
                "(gap at the end − gap at the first checkpoint, 5 % of training) / "
                "largest gap, per seed (SimCLR arm)",
                "less",
            ),
            (
                "settles",
                "… and then stabilises",
                "(gap at the end − gap at half of training) / largest gap, per seed "
                "(SimCLR arm)",
                "equal",
            ),
        )
    ),
    # Table 1
    Claim(
        key="t1_cos_dot",
        source="Lee (2025), Table 1",
        statement="cosine similarity with normalisation beats the dot product "
        "without (ImageNet: 65.98 against 0.43 %)",
        metric="linear-probe accuracy, cosine − dot product (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=65.55,
        section="ch5-similarity",
    ),
    Claim(
        key="t1_cos_euc",
        source="Lee (2025), Table 1",
        statement="cosine similarity with normalisation beats the negative Euclidean "
        "distance without (65.98 against 10.63 %)",
        metric="linear-probe accuracy, cosine − negative Euclidean (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=55.35,
        section="ch5-similarity",
    ),
    Claim(
        key="t1_euc_dot",
        source="Lee (2025), Table 1",
        statement="among the unnormalised, the negative Euclidean distance beats the "
        "dot product (10.63 against 0.43 %)",
        metric="linear-probe accuracy, negative Euclidean − dot product (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=10.2,
        section="ch5-similarity",
    ),
    # Tables 2 and 5
    Claim(
        key="t2_simclr",
        source="Lee (2025), Table 2",
        statement="a uniform class distribution beats a long-tailed one of the same "
        "size (SimCLR, ImageNet subsets: 20.82 against 13.65 %)",
        metric="linear-probe accuracy, uniform − long-tailed pool, SimCLR (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=7.17,
        section="ch5-balance",
    ),
    Claim(
        key="t2_balanced",
        source="Lee (2025), Table 5",
        statement="the same with the balanced loss at (α, λ) = (2, 1)",
        metric="linear-probe accuracy, uniform − long-tailed pool, balanced (2, 1) "
        "(points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balance",
    ),
    Claim(
        key="t2_rare_classes",
        source="this chapter, a reading of Table 2's smaller effect",
        statement="the long tail costs its rarest classes more accuracy than its most "
        "frequent ones",
        metric="linear-probe accuracy per class, [uniform − long-tailed] on the 3 "
        "rarest classes − the same on the 3 most frequent, mean over 3 class "
        "orderings (points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balance",
    ),
    # Figure 3
    Claim(
        key="f3_bias_accuracy",
        source="Lee (2025), Figure 3",
        statement="lower prototype representation bias goes with higher accuracy",
        metric="Spearman correlation of the bias (eq. 51) and the linear-probe "
        "accuracy over the six strategies, per seed",
        expected="less",
        margin=0.1,
        margin_reason=_RANKS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_relative_bias_accuracy",
        source="Lee (2025), Figure 3, the bias read against the prototype spread",
        statement="lower bias relative to the distance between class prototypes goes "
        "with higher accuracy",
        metric="Spearman correlation of bias / spread (plug-in) and the linear-probe "
        "accuracy over the six strategies, per seed",
        expected="less",
        margin=0.1,
        margin_reason=_RANKS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_base_accuracy",
        source="Lee (2025), Figure 3",
        statement="SimCLR's augmentation (base) is the most accurate of the six",
        metric="linear-probe accuracy, base − the mean of the other five strategies "
        "(points; a necessary condition of the claim)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_base_bias",
        source="Lee (2025), Figure 3",
        statement="SimCLR's augmentation (base) has the smallest bias of the six",
        metric="bias (eq. 51), the mean of the other five strategies − base (a "
        "necessary condition of the claim)",
        margin=0.01,
        margin_reason="a hundredth of the distance between class prototypes, which "
        "is of order 1 for unit-norm embeddings: a smaller bias moves no prototype "
        "visibly",
        section="ch5-bias",
    ),
    # Figures 4 and 5, Section 4.3
    Claim(
        key="headline",
        source="Lee (2025), abstract and Section 7; Figure 5",
        statement="the balanced contrastive loss improves on SimCLR (CIFAR-10: 86.08 % "
        "at (α, λ) = (2, 4) against 84.95 % for SimCLR's (2, 1))",
        metric="linear-probe accuracy, balanced (2, 4) − SimCLR (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=1.13,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_lambda",
        source="Lee (2025), Figures 4–5 (i)",
        statement="balancing matters: the balanced loss is best away from λ = 1 "
        "(CIFAR-10: 86.08 % at (2, 4) against 84.07 % at (2, 1))",
        metric="linear-probe accuracy, balanced (2, 4) − balanced (2, 1) (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=2.01,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_generalized_lambda",
        source="Lee (2025), Figures 4–5 (i)",
        statement="the same for the generalized NT-Xent (CIFAR-10: 85.85 % at (2, 4) "
        "against 84.95 % at (2, 1))",
        metric="linear-probe accuracy, generalized (2, 4) − generalized (2, 1) "
        "(points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=0.9,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_beats_generalized",
        source="Lee (2025), Figures 4–5 (ii)",
        statement="the balanced loss peaks higher than the generalized NT-Xent "
        "(CIFAR-10, both at (2, 4): 86.08 against 85.85 %)",
        metric="linear-probe accuracy, balanced − generalized at (2, 4) (points)",
        margin=0.1,
        margin_reason="a tenth of a point, under half the source's own effect of "
        "0.23 points",
        source_effect=0.23,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_beats_generalized_21",
        source="Lee (2025), Table 5 (Appendix A.4.4); Yeh et al. (2022), cited in "
        "Section 5.1",
        statement="at SimCLR's (α, λ) = (2, 1), where the two losses differ only by "
        "the positive in the sum, the balanced loss improves on SimCLR",
        metric="linear-probe accuracy, balanced − generalized at (2, 1) (points)",
        margin=0.1,
        margin_reason="as at (2, 4): under half the source's effect of 0.23 points",
        section="ch5-balancing",
    ),
    Claim(
        key="f45_alpha_interaction",
        source="Lee (2025), Figures 4–5 (iii)",
        statement="the generalized NT-Xent prefers a smaller α than the balanced loss "
        "(CIFAR-10, α 2 → 4 at λ = 1: +1.95 against −0.12 points)",
        metric="linear-probe accuracy, [balanced (4, 1) − (2, 1)] − [generalized "
        "(4, 1) − (2, 1)] (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=2.07,
        section="ch5-balancing",
    ),
    Claim(
        key="s43_eq15_vs_eq14",
        source="Lee (2025), Section 5.1 (a remark, not tested there)",
        statement="NT-Xent's second sum, the same view's other images as negatives "
        "(eq. (15)), “can be seen as” exploiting the representations more fully than "
        "eq. (14)",
        metric="linear-probe accuracy, eq. (15) (SimCLR) − eq. (14) (points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balancing",
    ),
)
"""The claims of the source that the chapter tests, by key, stated before the runs:
the theorem rows first (verified by asserts), then the empirical claims, each with the
linear probe (the source's own evaluation) as its primary metric where it is about
accuracy, paired by seed, with the margin below which it counts as absent."""
