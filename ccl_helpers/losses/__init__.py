"""Contrastive losses on embeddings, one loss per module with its formula.

Each formula is written out in its module's docstring.

- :func:`logistic_loss` — the logistic (triplet) loss of Arora et al. (2019), eq. (1):
  one negative, unnormalised inner products (InfoNCE with ``N = 1``), by an exact
  ζ(g) = log(1 + e^g) of the score gap (at every g).
- :func:`info_nce_loss` — InfoNCE with ``N`` explicit negatives per anchor, unnormalised
  inner products and a temperature (the theory's loss; Arora et al. 2019, Merad et al.
  2020).
- :func:`nt_xent_loss` — SimCLR's NT-Xent (Chen et al. 2020): cosine similarities, the
  other view as positive and the ``2B - 2`` other samples of the batch as negatives.
- :func:`balanced_contrastive_loss` and :func:`generalized_nt_xent_loss` — the balanced
  contrastive loss of Lee (2025, eq. (17)) with balancing parameters α, λ, without and
  with the positive in the repelling term; :func:`bound_derived_loss` — the loss derived
  from the bounds (eq. (13)), with ν.
  Similarities: cosine, dot product or negative Euclidean distance
      (:data:`SIMILARITIES`; the matrix of them: :func:`pairwise_similarity`).
- :func:`masked_logsumexp` — the log-sum-exp over the entries a mask keeps, shared by
  every loss that leaves entries out of its sum; :func:`balanced_terms` — the
  per-anchor terms −s_pos + λ·(1/α) log Σ e^(α s) of the balanced family, built on it.
- :func:`reduce` — ``"mean"``, ``"sum"`` or ``"none"`` of per-sample losses
  (:data:`REDUCTIONS`);
  :func:`nt_xent_per_anchor` — the NT-Xent terms of chosen anchors (for a loss over
  several processes).

Every loss returns per-sample values with ``reduction="none"``; takes inner products in
the inputs' dtype (float16 inputs in float32: its range cannot hold them), divides by
the temperature, takes the log-sum-exp / softplus and reduces in at least float32
(finite for float16/bfloat16 embeddings of norm up to 1e4 at low temperature); keeps
the caller's device and dtype, except float32 for float16 inputs (the package's
precision policy, ``ccl_helpers._precision``); validates argument shapes and dtypes
only, never values (so it works under ``torch.func.vmap`` and never synchronises with
the device: a NaN in the inputs propagates to the loss); and raises ``ValueError``
naming the argument on bad input, and on an empty batch with ``reduction="mean"``.

Gradients of float16 inputs are float16, and the loss cannot make them float32:
autograd returns a tensor's gradient in the tensor's own dtype, so the float32 gradient
the loss computes is rounded to float16 on its way back, and an entry beyond float16's
maximum (65504) becomes inf while the loss stays finite. Their sizes:

- :func:`info_nce_loss`, unnormalised products divided by t: the anchor's gradient
  (Σ_j w_j k_j − p)/t (w the softmax weights of the keys k, positive included) is up
  to 2‖z‖/t, 4·10⁵ at norm 10⁴ and t = 0.05: inf in float16, exactly where the float32
  gradient of the same inputs rounds past 65504;
- :func:`nt_xent_loss`, through its cosines: of order 1/(t‖z‖), finite at large
  norms, overflowing only for embeddings of norm near 0;
- :func:`logistic_loss`, and the balanced and bound-derived losses (their 1/α cancels
  the α of the scores): of order ‖z‖ at most (``"dot"``; 1/‖z‖ with ``"cosine"``),
  finite at norm 10⁴.

What to do where it overflows: train in bfloat16, which has float32's range
(``CCL_PRECISION=bf16``; :func:`~ccl_helpers.runtime.precision` offers fp32 and bf16,
not float16); normalise the embeddings (cosine similarity); or, under a float16
``torch.autocast`` with float32 parameters, scale the loss with
``torch.amp.GradScaler``, which skips a step whose gradients overflowed and lowers its
scale (below 1 if need be) until they fit.

To find where a NaN enters, run the step under
``torch.autograd.detect_anomaly(check_nan=True)``: the backward pass then raises a
``RuntimeError`` naming the first operation whose gradient is NaN, with the forward
traceback that created it (slow: for debugging, not for training).
"""

from ._masked import balanced_terms, masked_logsumexp
from ._reduction import REDUCTIONS, reduce
from ._similarity import SIMILARITIES, pairwise_similarity
from .balanced import balanced_contrastive_loss, generalized_nt_xent_loss
from .bound_derived import bound_derived_loss
from .info_nce import info_nce_loss
from .logistic import logistic_loss
from .nt_xent import nt_xent_loss, nt_xent_per_anchor

__all__ = [
    "REDUCTIONS",
    "SIMILARITIES",
    "balanced_contrastive_loss",
    "balanced_terms",
    "bound_derived_loss",
    "generalized_nt_xent_loss",
    "info_nce_loss",
    "logistic_loss",
    "masked_logsumexp",
    "nt_xent_loss",
    "nt_xent_per_anchor",
    "pairwise_similarity",
    "reduce",
]
