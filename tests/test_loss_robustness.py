"""Every public loss of the package on embeddings of norm 1, 1e2 and 1e4 in float32,
bfloat16 and float16 (and at temperature 0.05 where the loss has one): the loss and its
gradients with respect to the embeddings are finite. Also: an empty batch with
``reduction="mean"`` is an error, not NaN.

Geometry: B = 8 samples of dimension d = 16, random directions. The true gradients of
the mean losses are at most of order norm / (t · B) per coordinate (≈ 1e4 at norm 1e4,
t = 0.05), inside float16's range (65504): a non-finite gradient is the code's, not the
mathematics'. The loss values themselves (≈ norm² / t for unnormalised inner products)
are not: float16 inputs give float32 losses.

A NaN in the embeddings propagates (values are never checked on the hot path), and
``torch.autograd.detect_anomaly`` finds it.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ccl_helpers import curl, distributed, multimodal, multineg, wen
from ccl_helpers import supervised_approx as sa
from ccl_helpers.losses import (
    REDUCTIONS,
    balanced_contrastive_loss,
    bound_derived_loss,
    generalized_nt_xent_loss,
    info_nce_loss,
    logistic_loss,
    nt_xent_loss,
    reduce,
)

DTYPES = (torch.float32, torch.bfloat16, torch.float16)
NORMS = (1.0, 1e2, 1e4)
LOW_TEMPERATURE = 0.05
B, D, N_NEGATIVES, K_VIEWS = 8, 16, 5, 2


def identity(x):
    return x


def info_nce(anchor, positive, negatives, t, chunk_size=None):
    return info_nce_loss(anchor, positive, negatives, t, chunk_size=chunk_size)


# name → (function of (embeddings, t), embedding shapes, whether it has a temperature).
# Forward-based losses (a ``loss_fn(forward, batch)``) get the identity as forward, so
# that their inputs are the embeddings.
LOSSES = {
    "logistic_loss": (lambda z, t: logistic_loss(*z), [(B, D)] * 3, False),
    "info_nce_loss": (
        lambda z, t: info_nce(*z, t),
        [(B, D), (B, D), (B, N_NEGATIVES, D)],
        True,
    ),
    "info_nce_loss(chunk_size=2)": (
        lambda z, t: info_nce(*z, t, chunk_size=2),
        [(B, D), (B, D), (B, N_NEGATIVES, D)],
        True,
    ),
    "nt_xent_loss": (lambda z, t: nt_xent_loss(*z, t), [(B, D)] * 2, True),
    "nt_xent_loss_distributed": (
        lambda z, t: distributed.nt_xent_loss_distributed(*z, t),
        [(B, D)] * 2,
        True,
    ),
    **{
        f"{loss.__name__}({similarity})": (
            lambda z, t, loss=loss, similarity=similarity: loss(
                *z, alpha=1 / t, similarity=similarity
            ),
            [(B, D)] * 2,
            True,
        )
        for loss in (balanced_contrastive_loss, generalized_nt_xent_loss)
        for similarity in ("cosine", "dot", "neg_euclidean")
    },
    **{
        f"bound_derived_loss({similarity})": (
            lambda z, t, similarity=similarity: bound_derived_loss(
                *z, alpha=1 / t, similarity=similarity
            ),
            [(B, D), (K_VIEWS, B, D)],
            True,
        )
        for similarity in ("cosine", "dot", "neg_euclidean")
    },
    **{
        f"supervised_approx.member_loss(loss {kind}, similarity {similarity})": (
            lambda z, t, kind=kind, similarity=similarity: sa.member_loss(
                *z, 1 / t, 1.0, torch.tensor(kind), torch.tensor(similarity)
            ),
            [(B, D)] * 2,
            True,
        )
        for kind in range(3)
        for similarity in range(3)
    },
    "wen.contrastive_loss": (
        lambda z, t: wen.contrastive_loss(*z, 2),
        [(B, D)] * 2,
        False,
    ),
    "wen.contrastive_loss_loop": (
        lambda z, t: wen.contrastive_loss_loop(*z, 2),
        [(B, D)] * 2,
        False,
    ),
    "multineg.triplet_loss": (
        lambda z, t: multineg.triplet_loss(identity, (z[0], multineg.all_triplets(B))),
        [(B, D)],
        False,
    ),
    **{
        f"multimodal.contrastive_loss({form})": (
            lambda z, t, form=form: multimodal.contrastive_loss(
                *z, beta=1 / t, tau=0.5, form=form
            ).mean(),
            [(2, B, D)] * 2,
            True,
        )
        for form in multimodal.FORMS
    },
    "multimodal.non_contrastive_loss": (
        lambda z, t: multimodal.non_contrastive_loss(*z).mean(),
        [(2, B, D)] * 2,
        False,
    ),
    "curl.block_contrastive_loss": (
        lambda z, t: curl.block_contrastive_loss(identity, z),
        [(B, D), (B, 3, D), (B, 3, D)],
        False,
    ),
    "curl.cross_entropy_loss": (
        lambda z, t: curl.cross_entropy_loss(identity, (z[0], torch.arange(B) % D)),
        [(B, D)],
        False,
    ),
    "multineg.contrastive_loss": (
        lambda z, t: multineg.contrastive_loss(
            identity,
            (*z, torch.arange(B * N_NEGATIVES).reshape(B, N_NEGATIVES) % (2 * B)),
        ),
        [(B, D), (B, D), (2 * B, D)],
        False,
    ),
}

CASES = [
    pytest.param(name, dtype, norm, t, id=f"{name}-{str(dtype)[6:]}-{norm:g}-t{t:g}")
    for name, (_, _, has_temperature) in LOSSES.items()
    for dtype in DTYPES
    for norm in NORMS
    for t in ((1.0, LOW_TEMPERATURE) if has_temperature else (1.0,))
]


def embeddings(shapes, norm, dtype):
    """Leaf tensors of the given shapes, rows of norm ``norm`` in random directions."""
    generator = torch.Generator().manual_seed(0)
    return [
        (norm * F.normalize(torch.randn(*shape, generator=generator), dim=-1))
        .to(dtype)
        .requires_grad_(True)
        for shape in shapes
    ]


@pytest.mark.parametrize("name, dtype, norm, t", CASES)
def test_loss_and_gradients_are_finite(name, dtype, norm, t):
    loss_fn, shapes, _ = LOSSES[name]
    z = embeddings(shapes, norm, dtype)
    loss = loss_fn(z, t)
    assert loss.ndim == 0 and bool(torch.isfinite(loss)), f"loss {loss}"
    # float16's range cannot hold ≈ norm² / t: its losses are float32.
    assert loss.dtype == (torch.float32 if dtype == torch.float16 else dtype)
    gradients = torch.autograd.grad(loss, z)
    for tensor, gradient in zip(z, gradients):
        assert gradient.dtype == tensor.dtype
        assert bool(torch.isfinite(gradient).all()), f"gradient {gradient}"


def test_info_nce_at_norm_100_and_low_temperature_is_finite_in_float16():
    """Embeddings of norm 100 at t = 0.05, the positive opposite to the anchor and the
    negatives along it: logits ±1e4 / 0.05 = ±2e5 and a loss ≈ 4e5, both beyond
    float16's 65504."""
    (anchor,) = embeddings([(B, D)], 100.0, torch.float16)
    anchor = anchor.detach()
    positive, negatives = -anchor, anchor.unsqueeze(-2).expand(B, N_NEGATIVES, D)
    for reduction in REDUCTIONS:
        loss = info_nce_loss(
            anchor, positive, negatives, LOW_TEMPERATURE, reduction=reduction
        )
        assert bool(torch.isfinite(loss).all()) and loss.dtype == torch.float32
        assert float(loss.max()) > torch.finfo(torch.float16).max


@pytest.mark.parametrize("name", ["logistic_loss", "info_nce_loss"])
def test_empty_batch_with_mean_reduction_is_an_error(name):
    loss_fn, shapes, _ = LOSSES[name]
    z = embeddings([(0, *shape[1:]) for shape in shapes], 1.0, torch.float32)
    with pytest.raises(ValueError, match="empty"):
        loss_fn(z, 1.0)


def test_reduce_of_an_empty_tensor():
    empty = torch.empty(0)
    with pytest.raises(ValueError, match="reduction='mean' of an empty"):
        reduce(empty, "mean")
    assert float(reduce(empty, "sum")) == 0.0
    assert reduce(empty, "none").shape == (0,)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.filterwarnings("ignore:Error detected in")
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_nan_propagates_and_detect_anomaly_finds_it(name):
    """Values are never checked on the hot path: a NaN embedding gives a NaN loss, no
    error. The check the package offers instead, ``torch.autograd.detect_anomaly``,
    raises in the backward pass at the first operation whose gradient is NaN."""
    loss_fn, shapes, _ = LOSSES[name]
    z = embeddings(shapes, 1.0, torch.float32)
    with torch.no_grad():
        z[0][0, 0] = float("nan")
    assert bool(torch.isnan(loss_fn(z, 1.0)))
    with torch.autograd.detect_anomaly(check_nan=True):
        loss = loss_fn(z, 1.0)
        with pytest.raises(RuntimeError, match="returned nan values"):
            loss.backward()
