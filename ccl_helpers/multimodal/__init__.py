"""Chapter 4: Ren & Li (2023), contrastive loss in multimodal learning.

The paper: Ren & Li, *On the Importance of Contrastive Loss in Multimodal Learning*
(arXiv 2304.03717).

The model is written out in the book's appendix, *The multimodal model of Chapter 4*
(``book/appendix_multimodal_model.md``), which marks each equation as stated in the
source's prose or reconstructed; the docstrings here cite its equations as (A.1)–(A.23).

Data model (A.1)–(A.4). A positive pair shares z ∈ {±1}^r and has independent noises
ξ_A, ξ_B ∈ {±1}^{d_ξ}:

    x_A = M_A z + H_A ξ_A,   x_B = M_B z + H_B ξ_B,
    M_*ᵀM_* = diag(σ_p²),  H_*ᵀH_* = σ_ξ² I,  M_*ᵀH_* = 0
        (Haar: M = U[:, :r] diag σ, H = σ_ξ U[:, r:]).

Learners (A.6)–(A.7): f_A(x) = W_A x / N_A with N_A² = E‖W_A x_A‖² = ‖W_A M_A‖_F² + ‖W_A
H_A‖_F² = tr(W_A Σ_A W_Aᵀ) (population) or the batch mean of ‖W_A x‖² (batch).
Reparametrised: S_A = W_A M_A/N_A, Ξ_A = W_A H_A/N_A, so f_A = S_A z + Ξ_A ξ_A and
‖S_A‖_F² + ‖Ξ_A‖_F² = 1. W_A, W_B start with iid N(0, 1/m) entries.

Losses (A.8)–(A.10), τ the negative strength (the book's τ_neg): with
s_ij = ⟨f_A^i, f_B^j⟩ on a batch of n pairs (the other rows are the negatives),

    primary      ℓ_AB^i = −log[e^{βs_ii} / (e^{βs_ii} + (τ/(n−1)) Σ_{j≠i} e^{βs_ij})]
    alternative  ℓ_AB^i = −βs_ii + τ log[(1/(n−1)) Σ_{j≠i} e^{βs_ij}]
    L_C = (1/n) Σ_i (ℓ_AB^i + ℓ_BA^i),       L_NC = (1/n) Σ_i ‖f_A^i − f_B^i‖².

Algorithm 3.1 (A.11): fresh batch each step, W ← W − (η/β_t) ∇_W L̂; contrastive:
β₁ for T₁ steps then β₂ for T₂; non-contrastive: one β (only a learning rate).

Everything is batched over a leading *run* axis R (seeds, or different σ's): tensors (R,
...). The infinite-width ODE (A.18)–(A.22) is :func:`integrate_ode`.

Where each part lives: the data model and the learners (:func:`make_data_model`,
:func:`sample_pairs`, :func:`init_weights`, :func:`reparametrise`); the losses
(:func:`contrastive_loss`, :func:`non_contrastive_loss`, :func:`batch_loss`); the
alignment score and the sufficient conditions of Lemmas 4.4–4.5
(:func:`alignment_score`, :func:`alignment_margin`, :func:`balance_lower_bound`);
training (:func:`train`, :func:`population_descent`); the ODE (:func:`integrate_ode`,
:func:`ode_scores`, :func:`stage_one_gap`); the symbolic identities
(:func:`symbolic_norm_identity`, :func:`symbolic_negative_expectations`).

Histories. :func:`train`, :func:`population_descent` and :func:`ode_scores` return the
book's one long history (step, [beta], seed, quantity, value) of the scores
:data:`SCORES`, whose ``seed`` is the index of a run on the leading axis (a row of σ
for the ODE); :func:`~ccl_helpers.train.wide` is its view with one column per score.

Checks. Each public function checks its arguments once, at its top, and relations
between them (the input dimension of the weights and of the model); the values of
tensors are checked where a computation needs them finite (the starting weights of a
training run), never along the steps. The losses check shapes and dtypes only: a NaN
in their input propagates to their output.

The claims of the source that the chapter tests, each stated before looking at the
numbers, are :data:`CLAIMS`.
"""

from ._claims import CLAIMS
from ._data_model import (
    NORMALISATIONS,
    DataModel,
    Pairs,
    Reparametrised,
    geometric_sigmas,
    init_weights,
    make_data_model,
    reparametrise,
    sample_pairs,
)
from ._losses import FORMS, LOSSES, batch_loss, contrastive_loss, non_contrastive_loss
from ._ode import (
    ODEState,
    integrate_ode,
    ode_scores,
    stage_one_gap,
    stage_one_gap_finite_width,
)
from ._scores import (
    SCORES,
    alignment_cap,
    alignment_margin,
    alignment_score,
    balance_lower_bound,
)
from ._training import (
    compress_width,
    population_descent,
    record_grid,
    train,
    two_stage,
)

# the reading order of the reference page (autodoc follows __all__)
__all__ = [
    "LOSSES",
    "FORMS",
    "NORMALISATIONS",
    "SCORES",
    "geometric_sigmas",
    "DataModel",
    "make_data_model",
    "Pairs",
    "sample_pairs",
    "init_weights",
    "Reparametrised",
    "reparametrise",
    "contrastive_loss",
    "non_contrastive_loss",
    "batch_loss",
    "alignment_score",
    "alignment_cap",
    "alignment_margin",
    "balance_lower_bound",
    "two_stage",
    "train",
    "compress_width",
    "population_descent",
    "record_grid",
    "ODEState",
    "integrate_ode",
    "ode_scores",
    "stage_one_gap",
    "stage_one_gap_finite_width",
    "symbolic_norm_identity",
    "symbolic_negative_expectations",
    "CLAIMS",
]


_SYMBOLIC = ("symbolic_negative_expectations", "symbolic_norm_identity")
"""The sympy derivations, imported on first use: importing the package loads no
sympy."""


def __getattr__(name: str):
    if name in _SYMBOLIC:
        from . import _symbolic

        return getattr(_symbolic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_SYMBOLIC})
