"""Chapter 3: Wen (2020), convergence of end-to-end contrastive training.

The paper: Wen, *Convergence of End-to-End Training in Deep Unsupervised Contrastive
Learning* (arXiv 2002.06979).

Setting. A training set S = {x_1 … x_n} on the unit sphere (Assumption 1) with
separation δ = min_{i≠j} ‖x_i − x_j‖₂ > 0 (Assumption 2); two (L+1)-layer ReLU networks,
the query encoder f^q_W and the key encoder f^k_θ (Definition 3.1), each W_L σ(… W_1
σ(W_0 x)) with the initialisation of Definition 3.2 (:class:`TwoEncoders`). With q_i =
f^q_W(x_i), k_i = f^k_θ(x_i) and u_ij = q_iᵀ(k_j − k_i), the loss of anchor i against a
set N ⊂ [n]∖{i} of k negatives is

    ℓ_i(N) = −log( e^{q_iᵀk_i} / (e^{q_iᵀk_i} + Σ_{j∈N} e^{q_iᵀk_j}) )
           = log(1 + Σ_{j∈N} e^{u_ij})                                        (3.1)

and the objective is its exact expectation over the C(n−1, k) equally likely negative
sets,

    L_S(W, θ) = (1/n) Σ_i E^{Neg(i)} ℓ_i(N)
              = (1/n) Σ_i C(n−1, k)^{-1} Σ_{N ⊂ [n]∖{i}, |N| = k} ℓ_i(N)      (3.2)

(:func:`contrastive_loss`, vectorised with an index tensor of all negative sets,
whose logits :func:`negative_set_logits` gives; :func:`contrastive_loss_loop` is the
direct loop, the reference the vectorised form is checked against).

Loss vectors (Definition 4.1): loss~_i = ∂L_S/∂q_i, loss^_i = ∂L_S/∂k_i, loss = (loss~,
loss^). With p_ij(N) = e^{u_ij} / (1 + Σ_{s∈N} e^{u_is}) and P̄_ij = E^{Neg(i)}[1{j ∈ N}
p_ij(N)], the closed forms are (:func:`loss_vectors`)

    loss~_i = (1/n) E^{Neg(i)}[ Σ_{j∈N} p_ij(N) (k_j − k_i) ]
            = (1/n) Σ_j P̄_ij (k_j − k_i)                                      (Fact 1)
    loss^_i = (1/n) Σ_{j≠i} ( loss^(x_j, x_i) − loss^(x_i, x_j) ),
            loss^(x_i, x_j) = P̄_ij q_i                                        (Fact 2)

The main text prints Fact 1 with the denominator 1 + Σ_{s=1}^{j} e^{u_is} (a partial
sum) and without the 1/n of L_S; Appendix C.1 has the full denominator, still without
1/n, i.e. n·∂L_S/∂q_i; Fact 2 also omits the 1/n. :func:`fact1_comparison` sets the
three forms against the definition itself (``loss_vectors(..., method="autograd")``).

Algorithm 1 (:func:`algorithm1`): simultaneous full-batch gradient descent W ← W − η∇_W
L_S, θ ← θ − γ∇_θ L_S, for several seeds at once (a
:class:`~ccl_helpers.train.StackedModel` of :class:`TwoEncoders`), recording at every
step the loss, the loss-vector norms and the output norms, and at log-spaced checkpoints
the gradient norms of Lemma 4.3 and the movement from initialisation. Theorem 4.2's step
sizes are Θ(d ε² δ² / (n⁷ L² k m)); :func:`step_size` keeps their width dependence η, γ
∝ d/m.

Analysis of the histories: :func:`running_average` (Theorem 4.2's left side),
:func:`descent_constant` (the proof's one-step descent), :func:`lemma43_ratios`,
:func:`theorem42_orders` (the theorem's sizes with constants 1),
:func:`movement_radius`, :func:`lemma44_radius_range` and :func:`radius_meeting_width`
(the lemmas' radii), :func:`late_slopes` (the log-log slope of a quantity against T late
in each run, one per seed); the movement's slope against m is fitted per seed by
:func:`ccl_helpers.verdicts.per_seed_slopes`. :data:`CLAIMS` holds the claims of the
source that the chapter tests, for its verdict table (:mod:`ccl_helpers.verdicts`).

Chapter 2's single shared encoder on the same data: :func:`shared_evaluator` (L_S(f,
f) and the norm of its loss vectors, f^q = f^k = f). Its triplets and their loss,
Merad et al.'s eq. (11) on the fixed triplets (x_i, x_i, x_j), j ≠ i, which is L_S with
k = 1 and f^q = f^k, are :func:`ccl_helpers.multineg.all_triplets` and
:func:`ccl_helpers.multineg.triplet_loss` (also reachable here as ``wen.all_triplets``
and ``wen.triplet_loss``).

The public functions check their arguments at the top and raise ``ValueError`` naming
the one at fault (k ≤ n − 1 relates k to the n points of q or x; at most 10⁷ negative
sets n·C(n − 1, k) are enumerated). :func:`contrastive_loss` checks shapes, dtypes and
devices only, never values: a NaN in q or k propagates to the result
(:func:`algorithm1`, which evaluates L_S at every step, raises ``FloatingPointError``
on a non-finite loss).
"""

from ._algorithm1 import (
    CHECKPOINT_COLUMNS,
    FINAL_COLUMNS,
    HISTORY_COLUMNS,
    TwoEncoders,
    algorithm1,
    run_widths,
    step_size,
)
from ._analysis import (
    descent_constant,
    late_slopes,
    lemma43_ratios,
    running_average,
)
from ._claims import (
    CLAIMS,
)
from ._loss import (
    contrastive_loss,
    contrastive_loss_loop,
)
from ._loss_vectors import (
    FACT1_FORMS,
    fact1_comparison,
    loss_vectors,
    shared_evaluator,
)
from ._negative_sets import (
    negative_set_logits,
)
from ._orders import (
    lemma44_radius_range,
    movement_radius,
    proof_descent_constant,
    radius_meeting_width,
    theorem42_orders,
)

__all__ = [
    "CHECKPOINT_COLUMNS",
    "CLAIMS",
    "FACT1_FORMS",
    "FINAL_COLUMNS",
    "HISTORY_COLUMNS",
    "TwoEncoders",
    "algorithm1",
    "contrastive_loss",
    "contrastive_loss_loop",
    "descent_constant",
    "fact1_comparison",
    "late_slopes",
    "lemma43_ratios",
    "lemma44_radius_range",
    "loss_vectors",
    "movement_radius",
    "negative_set_logits",
    "proof_descent_constant",
    "radius_meeting_width",
    "run_widths",
    "running_average",
    "shared_evaluator",
    "step_size",
    "theorem42_orders",
]
