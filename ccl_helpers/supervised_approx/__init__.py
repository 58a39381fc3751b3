"""Chapter 5: Lee (2025), contrastive learning through supervised objectives.

What only Chapter 5 needs, from Lee (2025), *Understanding Self-supervised
Contrastive Learning through Supervised Objectives* (TMLR 2025, arXiv 2510.10572).

- The augmentations T are :func:`ccl_helpers.data.augment`'s strategies, by name
  (:data:`ccl_helpers.data.STRATEGIES`), with parameters drawn per image or shared along
  chosen dimensions (one transformation t applied to many images).
- The bounds on representations: the attracting bound, Theorem 4.4 / eq. (8)
  (:func:`attracting_terms`); the repelling bound, Theorem 4.6 / eq. (10), in the
  source's form and in a corrected form (:func:`repelling_terms`), and a configuration
  where the source's form fails (:func:`eq10_counterexample`). On an encoder, both
  bounds on one draw of views, with every step of the proof of Theorem 4.6
  (:func:`bound_terms`).
- Training many configurations of the (α, λ) grid in one stacked model
  (:class:`ccl_helpers.train.StackedModel`, its members paired by seed):
  :func:`two_view_batches` (the subsets are :mod:`ccl_helpers.data`'s);
  :func:`member_loss` (the loss kind of :data:`MEMBER_LOSSES`, the similarity, α and λ
  chosen per member), :func:`run_batches`, :func:`run_loss` and :func:`train_runs`,
  with the runs table of :data:`RUN_COLUMNS`; the history is the book's long frame,
  one row per (step, seed, configuration, quantity).
- The evaluations of every member: the standard ones (linear probe, k-NN),
  :func:`downstream`; both bounds along training, :func:`bound_evaluator`; the
  prototype representation bias, eq. (16), estimated as in eq. (51) and directly, and
  the distance between class prototypes it can be read against, of each member under
  its strategy, :func:`bias_by_member`.
- The source's empirical claims as contrasts of arms of runs, one number per seed
  for :meth:`ccl_helpers.verdicts.Verdicts.test`: :func:`design_runs`,
  :func:`arm_values`, :func:`contrast_values`, :func:`estimates_table`,
  :func:`seed_rank_correlations` (Figure 3), :func:`curve_shape` (Figure 6); the
  spread of one run, :func:`pooled_seed_sd`; the claims themselves, :data:`CLAIMS`.

Representations are l2-normalised inside the bound functions (Assumption 4.2). Encoders
are callables images (N, C, H, W) → (..., N, d), e.g. a
:class:`ccl_helpers.train.StackedModel` (leading seed dimension) or an ``nn.Module``.
Public functions check their arguments once, at the top (images and labels by value);
the losses and the training step check shapes and dtypes only, never values, so a NaN
in the inputs or the representations propagates to the result.
"""

from ._bounds import attracting_terms, eq10_counterexample, repelling_terms
from ._claims import CLAIMS
from ._design import (
    arm_values,
    contrast_values,
    curve_shape,
    design_runs,
    estimates_table,
    pooled_seed_sd,
    seed_rank_correlations,
)
from ._evaluation import (
    FASHION_MNIST_CLASSES,
    bias_by_member,
    bound_evaluator,
    bound_terms,
    downstream,
)
from ._training import (
    MEMBER_LOSSES,
    RUN_COLUMNS,
    member_loss,
    run_batches,
    run_loss,
    train_runs,
    two_view_batches,
)

__all__ = [
    "CLAIMS",
    "FASHION_MNIST_CLASSES",
    "MEMBER_LOSSES",
    "RUN_COLUMNS",
    "arm_values",
    "attracting_terms",
    "bias_by_member",
    "bound_evaluator",
    "bound_terms",
    "contrast_values",
    "curve_shape",
    "design_runs",
    "downstream",
    "eq10_counterexample",
    "estimates_table",
    "member_loss",
    "pooled_seed_sd",
    "repelling_terms",
    "run_batches",
    "run_loss",
    "seed_rank_correlations",
    "train_runs",
    "two_view_batches",
]
