"""Chapter 1: the CURL framework of Arora et al. (2019).

The "simple lemma", in nats, with τ = P(c⁺ = c⁻) = Σ_c ρ(c)² (the collision probability,
:func:`ccl_helpers.coupon.tau_plus` with one negative):

    L_sup(f) ≤ L^µ_sup(f) ≤ (L_un(f) − τ·log 2) / (1 − τ).

(The paper writes ℓ with log₂, where the collision term τ·ℓ(0) is τ·1; in nats it is
τ·log 2.)

- The lemma: :func:`mean_classifier_bound`, its three sides on a finite distribution
  :func:`lemma_quantities`.
- Its two extensions: k negatives with (k + 1)-way tasks, both sides of the lemma and
  its form that charges only the collisions with c⁺ (:func:`k_negative_lemma`), and
  blocks of similar points, the block loss and its bound along training
  (:func:`block_evaluator`).
- Training: the encoders of the source's Table 1, supervised and contrastive, are
  trained by one procedure, :func:`train_tuned` (a grid of step sizes and weight
  decays, early stopping on a validation split: :func:`head_accuracy`,
  :func:`probe_accuracy`), on :func:`block_contrastive_loss` with
  :func:`contrastive_batches` or :func:`cross_entropy_loss` with
  :func:`labelled_batches`.
- Table 1's downstream classifiers: :data:`CLASSIFIERS`,
  :func:`downstream_accuracies`.
- The claims of the source that the chapter tests, with their margins: :data:`CLAIMS`.

The public functions check their arguments and raise ``ValueError`` naming the one at
fault; the losses that training calls check shapes and dtypes only, so a NaN in their
inputs propagates.
"""

from ._blocks import block_evaluator
from ._claims import CLAIMS
from ._downstream import CLASSIFIERS, downstream_accuracies
from ._k_negatives import k_negative_lemma
from ._lemma import lemma_quantities, mean_classifier_bound
from ._training import (
    block_contrastive_loss,
    contrastive_batches,
    cross_entropy_loss,
    head_accuracy,
    labelled_batches,
    probe_accuracy,
    train_tuned,
)

__all__ = [
    "CLAIMS",
    "CLASSIFIERS",
    "block_contrastive_loss",
    "block_evaluator",
    "contrastive_batches",
    "cross_entropy_loss",
    "downstream_accuracies",
    "head_accuracy",
    "k_negative_lemma",
    "labelled_batches",
    "lemma_quantities",
    "mean_classifier_bound",
    "probe_accuracy",
    "train_tuned",
]
