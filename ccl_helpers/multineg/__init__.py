"""Chapter 2: Merad et al. (2020), multiple negatives, Section 3.

The paper: Merad, Yu, Bacry, Gaïffas, *About contrastive unsupervised representation
learning for classification and its convergence* (arXiv 2012.01064), Section 3.

The setting is the latent-class model of :mod:`ccl_helpers.data`: classes c with
probabilities ρ(c) > 0 over a set C of N_C classes, D_c one distribution per class, (x,
x⁺) ~ D_sim (c ~ ρ, x, x⁺ i.i.d. D_c), N negatives x⁻_1 … x⁻_N i.i.d. D_neg = Σ_c ρ(c)
D_c. All losses are in nats.

- L^N_un(f) = E −log( e^{f(x)ᵀf(x⁺)} / (e^{f(x)ᵀf(x⁺)} + Σ_i e^{f(x)ᵀf(x⁻_i)}) )
  (eq. 6), L_un = L^1_un;
- L^µ_sup(f, T) = E_{(x,c)~D_T} −log softmax_{c'∈T}(f(x)ᵀµ_{c'})_c with
  µ_c = E_{D_c} f(x) and D_T(c) = ρ(c | c ∈ T)   (eq. 5);
  L^µ_sup,k(f) = E_{T ~ D_{k+1}} L^µ_sup(f, T), D_{k+1} uniform over the C(N_C, k+1)
  sets of k + 1 distinct classes   (eq. 10).

The results, as implemented here (right-hand sides in nats):

- Lemma 1:  L^µ_sup(f, C) ≤ L_un(f) / p_min + log N_C,  p_min = min_c ρ(c)
  (:func:`lemma1_bound`). The log N_C is not needed: Σ_{c⁻} log(1 + e^{a_{c⁻}}) ≥ log(1
  + Σ_{c⁻} e^{a_{c⁻}}) replaces the proof's max-then-log-sum-exp step, so L^µ_sup(f, C)
  ≤ L_un(f)/p_min already (``with_log_term=False``; unit-tested on random encoders).
- Lemma 2:  L^µ_sup(f, C) ≤ L^N_un(f) / p^ρ_cc(N)   (:func:`lemma2_bound`),
  p^ρ_cc(N) = P(|J| = N_C) with J the set of classes of the N *negatives*
  (:func:`ccl_helpers.coupon.p_cc`). The proof only needs the negatives to cover
  C∖{c} (the positive term e^0 stands for the anchor's own class), so the larger
  min_c P(J ⊇ C∖{c}) (:func:`ccl_helpers.coupon.p_cc_anchor_excluded`) also works
  (``anchor_excluded=True``).
- Proposition 1 (ρ uniform, 2 ≤ k + 1 ≤ N_C), part (2): L^µ_sup,k(f) ≤ k/(1 − τ⁺_N) ·
  (L^N_un(f) − τ⁺_N log(N + 1)),  τ⁺_N = Σ_c ρ(c)^{N+1} = N_C^{−N}
  (:func:`proposition1_bound`, :func:`ccl_helpers.coupon.tau_plus`); part (1), N = 1, in
  nats: k/(1 − τ⁺) · (L_un(f) − τ⁺ log 2), τ⁺ = Σ_c ρ(c)²
  (:func:`proposition1_part1_bound`). The source prints part (1) with "− τ⁺": its
  proof uses log₂, where the collision term ζ(0) is 1, so that form
  (``proposition1_part1_bound(..., as_printed=True)``) is the same bound with L_un in
  bits; fed L_un in nats it would fail (the zero encoder has L^µ_sup,1 = log 2 above
  it).

Exact quantities on a finite labelled set (D_c uniform over the examples of class c):
:func:`average_mean_classifier_loss` (all C(N_C, k+1) tasks, exactly) and, since L^N_un
is an N-fold sum over the examples, the unbiased Monte Carlo estimators of the core
(:func:`ccl_helpers.metrics.unsupervised_loss_curve`, with standard errors).
Training and the figures of Section 3: :func:`contrastive_batches` (N
negatives per anchor, drawn from a shared pool), :func:`contrastive_loss`,
:func:`lemma_runs` (the runs, evaluated at their checkpoints), :func:`add_lemma_bounds`,
:func:`draw_lemma_curves`, :func:`draw_stored_runs`, :func:`proposition1_grid`. Section
4 (gradient descent on fixed triplets): :func:`triplet_objective` and the Theorem 1
experiment (:func:`descent_sweep`, :func:`lazy_width`, :func:`width_scaled_targets`,
:func:`lazy_values`, :func:`endpoint_ratio`). The single shared encoder on index
triplets, which Chapter 3 trains on Wen's data: :func:`all_triplets` and
:func:`triplet_loss`. The chapter's verdicts: :data:`CLAIMS` (the claims it tests, one
per row of its verdict table), :func:`progress_gap` and :func:`seed_summary` (a table
of "mean ± s.e." over the seeds).

The public functions check their arguments at the top and raise ``ValueError`` naming
the one at fault; the losses that training calls (:func:`contrastive_loss`,
:func:`triplet_objective`, :func:`triplet_loss`) check shapes and dtypes only, so a NaN
in their inputs propagates.
"""

from ._claims import (
    CHAPTER_SCOPE,
    CLAIMS,
)
from ._descent import (
    descent_sweep,
    triplet_objective,
)
from ._exact import (
    average_mean_classifier_loss,
)
from ._figures import (
    LEMMA1_CURVES,
    LEMMA2_CURVES,
    draw_lemma_curves,
    draw_stored_runs,
)
from ._lemmas import (
    LEMMA_BOUNDS,
    add_lemma_bounds,
    lemma1_bound,
    lemma2_bound,
)
from ._proposition1 import (
    proposition1_bound,
    proposition1_factor,
    proposition1_grid,
    proposition1_part1_bound,
)
from ._shared import (
    all_triplets,
    triplet_loss,
)
from ._summaries import (
    endpoint_ratio,
    lazy_values,
    lazy_width,
    progress_gap,
    seed_summary,
    width_scaled_targets,
)
from ._training import (
    contrastive_batches,
    contrastive_loss,
    lemma_runs,
)

__all__ = [
    "CHAPTER_SCOPE",
    "CLAIMS",
    "LEMMA1_CURVES",
    "LEMMA2_CURVES",
    "LEMMA_BOUNDS",
    "add_lemma_bounds",
    "all_triplets",
    "average_mean_classifier_loss",
    "contrastive_batches",
    "contrastive_loss",
    "descent_sweep",
    "draw_lemma_curves",
    "draw_stored_runs",
    "endpoint_ratio",
    "lazy_values",
    "lazy_width",
    "lemma1_bound",
    "lemma2_bound",
    "lemma_runs",
    "progress_gap",
    "proposition1_bound",
    "proposition1_factor",
    "proposition1_grid",
    "proposition1_part1_bound",
    "seed_summary",
    "triplet_loss",
    "triplet_objective",
    "width_scaled_targets",
]
