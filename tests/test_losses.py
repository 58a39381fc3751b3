"""Tests of ccl_helpers.losses: naive references, identities, extreme logits, half
precision, gradients, argument validation, vmap, and hypothesis properties."""

from __future__ import annotations

import math
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from bad_calls import bad_call
from hypothesis import given, settings
from hypothesis import strategies as st

from ccl_helpers import _precision, losses
from ccl_helpers.losses import (
    REDUCTIONS,
    info_nce_loss,
    logistic_loss,
    nt_xent_loss,
    reduce,
)

LOSSES = {"logistic": logistic_loss, "info_nce": info_nce_loss, "nt_xent": nt_xent_loss}
HALF_DTYPES = [torch.bfloat16, torch.float16]


def loss_dtype(dtype):
    """The dtype of a loss of inputs in ``dtype``: float32 for float16 (whose range
    cannot hold the logits), else ``dtype``."""
    return torch.float32 if dtype == torch.float16 else dtype


def draw(*shape, seed=0, scale=1.0, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(*shape, generator=generator, dtype=torch.float64)).to(
        dtype
    )


def make_inputs(
    name, lead, dim=5, n_negatives=3, seed=0, scale=1.0, dtype=torch.float64
):
    """Positional args and keyword args of loss ``name``; for nt_xent, ``lead`` ends
    with B."""

    def x(*shape, offset):
        return draw(*shape, seed=seed * 10 + offset, scale=scale, dtype=dtype)

    if name == "logistic":
        return (
            x(*lead, dim, offset=0),
            x(*lead, dim, offset=1),
            x(*lead, dim, offset=2),
        ), {}
    if name == "info_nce":
        return (
            (
                x(*lead, dim, offset=0),
                x(*lead, dim, offset=1),
                x(*lead, n_negatives, dim, offset=2),
            ),
            {"temperature": 0.7},
        )
    return (x(*lead, dim, offset=0), x(*lead, dim, offset=1)), {"temperature": 0.3}


def per_sample_shape(name, lead):
    return (*lead[:-1], 2 * lead[-1]) if name == "nt_xent" else tuple(lead)


# ----------------------------------------------------------- naive references (float64)


def dot(u, v):
    return sum(a * b for a, b in zip(u, v))


def naive_logistic(anchor, positive, negative):
    return torch.tensor(
        [
            math.log(1 + math.exp(dot(a, n) - dot(a, p)))
            for a, p, n in zip(anchor.tolist(), positive.tolist(), negative.tolist())
        ],
        dtype=torch.float64,
    )


def naive_info_nce(anchor, positive, negatives, temperature):
    losses = []
    for a, p, ns in zip(anchor.tolist(), positive.tolist(), negatives.tolist()):
        numerator = math.exp(dot(a, p) / temperature)
        denominator = numerator + sum(math.exp(dot(a, n) / temperature) for n in ns)
        losses.append(-math.log(numerator / denominator))
    return torch.tensor(losses, dtype=torch.float64)


def naive_nt_xent(z1, z2, temperature):
    views = z1.tolist() + z2.tolist()
    views = [[c / math.sqrt(dot(v, v)) for c in v] for v in views]
    two_b, batch_size = len(views), len(z1)
    losses = []
    for i in range(two_b):
        positive = (i + batch_size) % two_b
        numerator = math.exp(dot(views[i], views[positive]) / temperature)
        denominator = sum(
            math.exp(dot(views[i], views[j]) / temperature)
            for j in range(two_b)
            if j != i
        )
        losses.append(-math.log(numerator / denominator))
    return torch.tensor(losses, dtype=torch.float64)


# ------------------------------------------------------------ values against references


def test_logistic_matches_naive_loop():
    anchor, positive, negative = (
        draw(7, 5, seed=1),
        draw(7, 5, seed=2),
        draw(7, 5, seed=3),
    )
    expected = naive_logistic(anchor, positive, negative)
    torch.testing.assert_close(
        logistic_loss(anchor, positive, negative, reduction="none"), expected
    )


@pytest.mark.parametrize("temperature", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("n_negatives", [1, 4])
def test_info_nce_matches_naive_loop(temperature, n_negatives):
    anchor, positive, negatives = (
        draw(6, 5, seed=1),
        draw(6, 5, seed=2),
        draw(6, n_negatives, 5, seed=3),
    )
    expected = naive_info_nce(anchor, positive, negatives, temperature)
    actual = info_nce_loss(
        anchor, positive, negatives, temperature=temperature, reduction="none"
    )
    torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("temperature", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("batch_size", [2, 5])
def test_nt_xent_matches_naive_loop(temperature, batch_size):
    z1, z2 = draw(batch_size, 4, seed=1, scale=3.0), draw(batch_size, 4, seed=2)
    expected = naive_nt_xent(z1, z2, temperature)
    torch.testing.assert_close(
        nt_xent_loss(z1, z2, temperature=temperature, reduction="none"), expected
    )


def test_nt_xent_matches_cross_entropy_formula():
    """SimCLR's formulation: cross-entropy over the 2B x 2B cosine logits, self masked
    out."""
    batch_size, temperature = 6, 0.2
    z1, z2 = draw(batch_size, 8, seed=4), draw(batch_size, 8, seed=5)
    views = F.normalize(torch.cat([z1, z2]), dim=1)
    logits = (views @ views.T / temperature).fill_diagonal_(-math.inf)
    targets = (torch.arange(2 * batch_size) + batch_size) % (2 * batch_size)
    expected = F.cross_entropy(logits, targets, reduction="none")
    torch.testing.assert_close(
        nt_xent_loss(z1, z2, temperature=temperature, reduction="none"), expected
    )


def test_logistic_is_info_nce_with_one_negative():
    anchor, positive, negative = (
        draw(3, 4, 6, seed=1),
        draw(3, 4, 6, seed=2),
        draw(3, 4, 6, seed=3),
    )
    torch.testing.assert_close(
        logistic_loss(anchor, positive, negative, reduction="none"),
        info_nce_loss(anchor, positive, negative.unsqueeze(-2), reduction="none"),
    )


def test_info_nce_temperature_scales_the_anchor():
    anchor, positive, negatives = (
        draw(5, 4, seed=1),
        draw(5, 4, seed=2),
        draw(5, 3, 4, seed=3),
    )
    torch.testing.assert_close(
        info_nce_loss(anchor, positive, negatives, temperature=0.25, reduction="none"),
        info_nce_loss(4 * anchor, positive, negatives, reduction="none"),
    )


@pytest.mark.parametrize("n_negatives", [1, 7])
def test_info_nce_is_log_n_plus_one_when_all_scores_are_equal(n_negatives):
    anchor = torch.zeros(4, 3, dtype=torch.float64)
    loss = info_nce_loss(
        anchor, draw(4, 3, seed=1), draw(4, n_negatives, 3, seed=2), reduction="none"
    )
    torch.testing.assert_close(
        loss, torch.full((4,), math.log(n_negatives + 1), dtype=torch.float64)
    )


def test_nt_xent_accepts_leading_dimensions():
    z1, z2 = draw(3, 4, 5, seed=1), draw(3, 4, 5, seed=2)
    expected = torch.stack(
        [nt_xent_loss(z1[k], z2[k], reduction="none") for k in range(3)]
    )
    torch.testing.assert_close(nt_xent_loss(z1, z2, reduction="none"), expected)


def test_nt_xent_zero_embedding_gives_finite_loss_and_gradient():
    z1, z2 = draw(4, 3, seed=1), draw(4, 3, seed=2)
    z1[0] = 0.0
    z1.requires_grad_(True)
    loss = nt_xent_loss(z1, z2)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(z1.grad).all()


# ------------------------------------------------------------ reductions, dtype, device


@pytest.mark.parametrize("name", LOSSES)
def test_reductions(name):
    lead = (3, 4)
    args, kwargs = make_inputs(name, lead)
    per_sample = LOSSES[name](*args, **kwargs, reduction="none")
    assert per_sample.shape == per_sample_shape(name, lead)
    assert (per_sample > 0).all()
    mean = LOSSES[name](*args, **kwargs, reduction="mean")
    total = LOSSES[name](*args, **kwargs, reduction="sum")
    assert mean.shape == total.shape == ()
    torch.testing.assert_close(mean, per_sample.mean())
    torch.testing.assert_close(total, per_sample.sum())
    torch.testing.assert_close(
        LOSSES[name](*args, **kwargs), mean
    )  # the default is "mean"


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_reduce(reduction):
    per_sample = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    expected = {
        "mean": torch.tensor(3.0),
        "sum": torch.tensor(12.0),
        "none": per_sample,
    }[reduction]
    torch.testing.assert_close(reduce(per_sample, reduction), expected)


@pytest.mark.parametrize(
    "dtype, at_least_32, widened, result",
    [
        (torch.float16, torch.float32, torch.float32, torch.float32),
        (torch.bfloat16, torch.float32, torch.bfloat16, torch.bfloat16),
        (torch.float32, torch.float32, torch.float32, torch.float32),
        (torch.float64, torch.float64, torch.float64, torch.float64),
    ],
)
def test_precision_policy_dtypes(dtype, at_least_32, widened, result):
    x = torch.ones(3, dtype=dtype)
    assert _precision.at_least_float32(x).dtype == at_least_32
    assert _precision.widen_float16(x).dtype == widened
    assert _precision.result_dtype(x) == result


def test_precision_softplus_is_exact_past_torchs_threshold():
    gap = torch.tensor([-30.0, 0.0, 19.0, 25.0, 30.0], dtype=torch.float64)
    found = _precision.softplus(gap)
    torch.testing.assert_close(found, torch.log1p(torch.exp(gap)))
    assert (found[3:] > gap[3:]).all()  # torch's softplus returns g itself there


@pytest.mark.parametrize("name", ["logistic", "info_nce"])
def test_leading_dimensions_are_samples(name):
    args, kwargs = make_inputs(name, (3, 4))
    flat_args = [a.reshape(12, *a.shape[2:]) for a in args]
    torch.testing.assert_close(
        LOSSES[name](*args, **kwargs, reduction="none"),
        LOSSES[name](*flat_args, **kwargs, reduction="none").reshape(3, 4),
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, *HALF_DTYPES])
@pytest.mark.parametrize("name", LOSSES)
def test_output_keeps_dtype(name, dtype):
    args, kwargs = make_inputs(name, (4,), dtype=dtype)
    assert LOSSES[name](*args, **kwargs, reduction="none").dtype == loss_dtype(dtype)
    assert LOSSES[name](*args, **kwargs).dtype == loss_dtype(dtype)


@pytest.mark.parametrize("name", LOSSES)
def test_output_keeps_device(name):
    """On the meta device nothing can be read back: no .item(), no hidden copy to the
    CPU."""
    args, kwargs = make_inputs(name, (2, 4))
    meta_args = [a.to("meta") for a in args]
    loss = LOSSES[name](*meta_args, **kwargs, reduction="none")
    assert loss.device.type == "meta" and loss.shape == per_sample_shape(name, (2, 4))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", LOSSES)
def test_cuda_matches_cpu(name):
    args, kwargs = make_inputs(name, (8,), dtype=torch.float32)
    loss = LOSSES[name](*[a.cuda() for a in args], **kwargs, reduction="none")
    assert loss.device.type == "cuda"
    torch.testing.assert_close(
        loss.cpu(), LOSSES[name](*args, **kwargs, reduction="none")
    )


# ----------------------------------------------------------- extreme logits (up to 1e4)


@pytest.mark.parametrize(
    "dtype, rtol",
    [
        (torch.float64, 1e-12),
        (torch.float32, 1e-6),
        (torch.bfloat16, 1e-2),
        (torch.float16, 1e-3),
    ],
)
def test_logistic_at_logits_1e4_is_the_hinge_limit(dtype, rtol):
    """Inner products of ±1e4: the loss is max(0, gap), its gradient
    sigmoid(gap)·(n − p)."""
    anchor = torch.tensor([[100.0, 0.0]] * 4)
    positive = torch.tensor([[-100.0, 0.0], [100.0, 0.0], [0.0, 1.0], [0.0, 5.0]])
    negative = torch.tensor([[100.0, 0.0], [-100.0, 0.0], [100.0, 0.0], [0.0, 5.0]])
    gap = torch.tensor([2e4, -2e4, 1e4, 0.0])
    expected_loss = torch.tensor([2e4, 0.0, 1e4, math.log(2)])
    weight = torch.tensor([1.0, 0.0, 1.0, 0.5]).unsqueeze(-1)  # sigmoid(gap)
    anchor, positive, negative = (
        t.to(dtype).requires_grad_(True) for t in (anchor, positive, negative)
    )
    loss = logistic_loss(anchor, positive, negative, reduction="none")
    loss.sum().backward()
    assert torch.isfinite(loss).all()
    assert (loss.float() >= 0).all() and gap.shape == loss.shape
    torch.testing.assert_close(loss.float(), expected_loss, rtol=rtol, atol=rtol)
    torch.testing.assert_close(
        anchor.grad.float(), weight * (negative - positive).detach().float()
    )
    torch.testing.assert_close(positive.grad.float(), -weight * anchor.detach().float())
    torch.testing.assert_close(negative.grad.float(), weight * anchor.detach().float())


def unit_vectors(*shape, seed):
    return F.normalize(draw(*shape, seed=seed), dim=-1)


@pytest.mark.parametrize("norm, temperature", [(100.0, 1.0), (10.0, 0.01), (1.0, 1e-4)])
def test_info_nce_at_logits_1e4(norm, temperature):
    """|logits| up to 1e4: max(0, max gap) ≤ loss ≤ max(0, max gap) + log(N + 1), and
    the gradient with respect to the anchor is Σ_j softmax(logits)_j v_j / t − p / t."""
    anchor, positive = (
        norm * unit_vectors(16, 8, seed=1),
        norm * unit_vectors(16, 8, seed=2),
    )
    negatives = norm * unit_vectors(16, 5, 8, seed=3)
    candidates = torch.cat([positive.unsqueeze(1), negatives], dim=1)  # (B, 1 + N, d)
    logits = (
        torch.einsum("bd,bkd->bk", anchor, candidates) / temperature
    )  # float64 reference
    assert logits.abs().max() > 5e3
    hinge = (logits.max(-1).values - logits[:, 0]).clamp_min(0)
    weights = logits.softmax(-1)
    expected_grad = (
        torch.einsum("bk,bkd->bd", weights, candidates) - positive
    ) / temperature

    anchor32 = anchor.float().requires_grad_(True)
    loss = info_nce_loss(
        anchor32,
        positive.float(),
        negatives.float(),
        temperature=temperature,
        reduction="none",
    )
    loss.sum().backward()
    assert torch.isfinite(loss).all() and torch.isfinite(anchor32.grad).all()
    loss = loss.double()
    assert (loss >= hinge - 1e-2).all() and (loss <= hinge + math.log(6) + 1e-2).all()
    torch.testing.assert_close(
        anchor32.grad.double(), expected_grad, rtol=1e-3, atol=1e-3 * norm / temperature
    )


def test_nt_xent_at_logits_1e4():
    """t = 1e-4: max(0, max_neg − pos)/t ≤ loss ≤ that + log(2B − 1), with cosines in
    float64."""
    batch_size, temperature = 8, 1e-4
    z1, z2 = draw(batch_size, 4, seed=1), draw(batch_size, 4, seed=2)
    views = F.normalize(torch.cat([z1, z2]), dim=1)
    cosines = views @ views.T
    positive = torch.cat([cosines.diagonal(batch_size), cosines.diagonal(-batch_size)])
    negatives = cosines.masked_fill(torch.eye(2 * batch_size, dtype=torch.bool), -2.0)
    negatives[
        torch.arange(2 * batch_size),
        (torch.arange(2 * batch_size) + batch_size) % (2 * batch_size),
    ] = -2.0
    hinge = (negatives.max(-1).values - positive).clamp_min(0) / temperature
    assert hinge.max() > 5e3

    z1_32 = z1.float().requires_grad_(True)
    loss = nt_xent_loss(z1_32, z2.float(), temperature=temperature, reduction="none")
    loss.sum().backward()
    assert torch.isfinite(loss).all() and torch.isfinite(z1_32.grad).all()
    loss = loss.double()
    tolerance = 1e-6 / temperature  # float32 cosines, divided by t
    assert (loss >= hinge - tolerance).all()
    assert (loss <= hinge + math.log(2 * batch_size - 1) + tolerance).all()


def test_nt_xent_perfect_alignment_at_logits_1e4_gives_zero_loss():
    z1 = draw(6, 8, seed=3, dtype=torch.float32).requires_grad_(True)
    loss = nt_xent_loss(z1, z1.detach().clone(), temperature=1e-4, reduction="none")
    loss.sum().backward()
    torch.testing.assert_close(loss, torch.zeros(12), atol=2e-3, rtol=0)
    assert torch.isfinite(z1.grad).all()


# ---------------------------------------------------------------- half precision

# Tolerances against the float32 loss of the same (rounded) inputs: the inner products
# are taken in the half dtype and the result is rounded to it (float16: both in float32,
# so only the inputs' rounding remains), so the error is a few units of its epsilon
# (bfloat16 2^-7, float16 2^-10) times the logits' magnitude.
HALF_TOLERANCE = {torch.bfloat16: 3e-2, torch.float16: 4e-3}


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize("name", LOSSES)
def test_half_precision_close_to_float32(name, dtype):
    args, kwargs = make_inputs(name, (32,), dim=16, n_negatives=8, dtype=dtype)
    args = [a.requires_grad_(True) for a in args]
    loss = LOSSES[name](*args, **kwargs, reduction="none")
    loss.sum().backward()
    reference = LOSSES[name](
        *[a.detach().float() for a in args], **kwargs, reduction="none"
    )
    assert loss.dtype == loss_dtype(dtype) and torch.isfinite(loss).all()
    assert all(torch.isfinite(a.grad).all() for a in args)
    tol = HALF_TOLERANCE[dtype]
    torch.testing.assert_close(loss.float(), reference, rtol=tol, atol=tol)


def near_parallel(norm, *shape, seed, spread=0.05):
    """Vectors of norm ``norm`` within a small angle of one common direction."""
    direction = unit_vectors(shape[-1], seed=0)
    return norm * F.normalize(direction + spread * draw(*shape, seed=seed), dim=-1)


@pytest.mark.parametrize(
    "dtype, norm, temperature",
    [(torch.float16, 30.0, 0.01), (torch.bfloat16, 100.0, 1.0)],
)
def test_half_precision_info_nce_with_logits_beyond_the_float16_range(
    dtype, norm, temperature
):
    """Inner products ≈ 900 (float16) or 1e4 (bfloat16), divided by t: logits ≈ 9e4 or
    1e4, past float16's maximum 65504 in the first case, while the loss (a difference of
    logits) stays in range. The inner products are rounded to the dtype, so the error
    bound is eps · max |logit|."""
    anchor, positive = (
        near_parallel(norm, 16, 8, seed=1),
        near_parallel(norm, 16, 8, seed=2),
    )
    negatives = near_parallel(norm, 16, 5, 8, seed=3)
    args = [t.to(dtype) for t in (anchor, positive, negatives)]
    loss = info_nce_loss(*args, temperature=temperature, reduction="none")
    reference = info_nce_loss(
        *[a.double() for a in args], temperature=temperature, reduction="none"
    )
    max_logit = (args[0].double() * args[1].double()).sum(-1).abs().max() / temperature
    assert max_logit > 0.9 * norm**2 / temperature and reference.max() > 1
    assert loss.dtype == loss_dtype(dtype) and torch.isfinite(loss).all()
    torch.testing.assert_close(
        loss.double(), reference, rtol=0, atol=torch.finfo(dtype).eps * max_logit
    )


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_half_precision_nt_xent_at_low_temperature(dtype):
    """Cosines rounded to the dtype, divided by t = 1e-4: the error bound is eps / t."""
    z1, z2 = draw(8, 16, seed=1, dtype=dtype), draw(8, 16, seed=2, dtype=dtype)
    loss = nt_xent_loss(z1, z2, temperature=1e-4, reduction="none")
    reference = nt_xent_loss(
        z1.double(), z2.double(), temperature=1e-4, reduction="none"
    )
    assert torch.isfinite(loss).all() and reference.max() > 1e3
    torch.testing.assert_close(
        loss.double(), reference, rtol=0, atol=torch.finfo(dtype).eps / 1e-4
    )


# -------------------------------------------- float16 gradients (the documented limit)
# Autograd returns a tensor's gradient in the tensor's dtype: float16 embeddings get the
# float32 gradient the loss computes, rounded to float16, inf past its range.

FLOAT16_OVERFLOW = torch.finfo(torch.float16).max + 16  # 65520: rounds to inf
"""The magnitude from which a float32 value rounds to inf in float16: its maximum
65504 plus half the spacing there (32)."""


def gradients(loss_fn, tensors, dtype):
    """(the loss, the gradients of ``tensors``) with the tensors in ``dtype``, a sum
    over the batch (each anchor's own gradient, unscaled by the batch size)."""
    leaves = [tensor.to(dtype).requires_grad_() for tensor in tensors]
    loss = loss_fn(*leaves, reduction="sum")
    loss.backward()
    return loss, [leaf.grad for leaf in leaves]


def at_norm(norm, *shape, seed):
    return norm * F.normalize(draw(*shape, seed=seed), dim=-1)


def test_float16_info_nce_gradient_overflows_where_the_float32_one_exceeds_its_range():
    """Norm 1e4, t = 0.05: the anchor's gradient (Σ softmax-weighted keys − p)/t
    reaches 2.7e5. In float16 the loss is finite (float32), the gradients inf exactly
    where the float32 gradient of the same inputs rounds past float16's maximum, equal
    to it rounded elsewhere; bfloat16 (float32's range) gives finite gradients."""
    tensors = at_norm(1e4, 16, 8, seed=1), at_norm(1e4, 16, 8, seed=2)
    tensors += (at_norm(1e4, 16, 4, 8, seed=3),)
    info_nce = partial(info_nce_loss, temperature=0.05)
    loss16, grads16 = gradients(info_nce, tensors, torch.float16)
    same_inputs = [tensor.half().float() for tensor in tensors]
    loss32, grads32 = gradients(info_nce, same_inputs, torch.float32)
    assert loss16.dtype == torch.float32 and torch.isfinite(loss16)
    assert loss16 == loss32
    for grad16, grad32 in zip(grads16, grads32, strict=True):
        assert grad16.dtype == torch.float16 and torch.isfinite(grad32).all()
        beyond = grad32.abs() >= FLOAT16_OVERFLOW
        assert beyond.any() and not beyond.all()
        assert torch.equal(grad16.isinf(), beyond)
        assert torch.equal(grad16[~beyond], grad32[~beyond].half())
    assert max(float(g.abs().max()) for g in grads32) > 2e5
    _, grads_bf16 = gradients(info_nce, tensors, torch.bfloat16)
    assert all(torch.isfinite(grad).all() for grad in grads_bf16)


FLOAT16_FINITE_AT_NORM_1E4 = {
    "nt_xent (cosine, ~1/(t‖z‖))": (partial(nt_xent_loss, temperature=0.05), 2),
    "balanced, dot (~‖z‖)": (
        partial(losses.balanced_contrastive_loss, alpha=20.0, similarity="dot"),
        2,
    ),
    "generalized_nt_xent, dot (~‖z‖)": (
        partial(losses.generalized_nt_xent_loss, alpha=20.0, similarity="dot"),
        2,
    ),
    "logistic (~‖z‖)": (logistic_loss, 3),
}


@pytest.mark.parametrize("name", FLOAT16_FINITE_AT_NORM_1E4)
def test_float16_gradients_without_a_one_over_t_stay_finite_at_norm_1e4(name):
    """The losses whose gradient has no factor 1/t (the package's text): at norm 1e4
    and t = 0.05 (α = 20), their float16 gradients are finite."""
    loss_fn, n_tensors = FLOAT16_FINITE_AT_NORM_1E4[name]
    tensors = [at_norm(1e4, 16, 8, seed=seed) for seed in range(n_tensors)]
    loss16, grads16 = gradients(loss_fn, tensors, torch.float16)
    assert torch.isfinite(loss16)
    assert all(torch.isfinite(grad).all() for grad in grads16)


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("name", LOSSES)
def test_gradcheck(name, reduction):
    args, kwargs = make_inputs(name, (3,), dim=4, n_negatives=2)
    args = tuple(a.requires_grad_(True) for a in args)
    assert torch.autograd.gradcheck(
        partial(LOSSES[name], **kwargs, reduction=reduction), args
    )


# ---------------------------------------------------------------- argument validation

A, P, NEG = (draw(4, 3, seed=1), draw(4, 3, seed=2), draw(4, 2, 3, seed=3))
VIEWS = draw(2, 4, 3, seed=4)
AP = torch.cat([A, P])  # two stacked views
SIMS = losses.pairwise_similarity(AP, AP, "cosine")
EVERY_ANCHOR = torch.arange(8)
BAD_CALLS = [
    bad_call(losses.logistic_loss, "positive must have the shape", A, P[:3], P),
    bad_call(losses.logistic_loss, "negative", A, P, draw(4, 5)),
    bad_call(losses.logistic_loss, "anchor", *(torch.tensor(1.0),) * 3),
    bad_call(losses.logistic_loss, "anchor", torch.ones(4, 3, dtype=torch.long), P, P),
    bad_call(losses.logistic_loss, "negative must have the dtype", A, P, P.float()),
    bad_call(losses.logistic_loss, "reduction", A, P, P, reduction="avg"),
    bad_call(losses.info_nce_loss, r"negatives.*N >= 1", A, P, draw(4, 0, 3)),
    bad_call(losses.info_nce_loss, "negatives", A, P, draw(4, 3)),
    bad_call(losses.info_nce_loss, "negatives", A, P, draw(4, 2, 5)),
    bad_call(losses.info_nce_loss, "negatives", A, P, draw(5, 2, 3)),
    bad_call(losses.info_nce_loss, "positive", A, draw(4, 4), NEG),
    bad_call(losses.info_nce_loss, "negatives must have the dtype", A, P, NEG.float()),
    *(
        bad_call(losses.info_nce_loss, "temperature", A, P, NEG, temperature=t)
        for t in (0.0, -1.0, math.nan, math.inf, "1", torch.tensor(0.5))
    ),
    bad_call(losses.info_nce_loss, "reduction", A, P, NEG, reduction=None),
    *(
        bad_call(losses.info_nce_loss, "chunk_size", A, P, NEG, chunk_size=size)
        for size in (0, -1, 2.5, True, "4")
    ),
    bad_call(losses.nt_xent_loss, r"z1 must hold at least 2", A[:1], P[:1]),
    bad_call(losses.nt_xent_loss, "z2", A, P[:3]),
    bad_call(losses.nt_xent_loss, "z1", A[0], P[0]),
    bad_call(losses.nt_xent_loss, "z2 must have the dtype", A, P.float()),
    bad_call(losses.nt_xent_loss, "temperature", A, P, temperature=0),
    bad_call(losses.nt_xent_loss, "temperature", A, P, temperature=-0.5),
    bad_call(losses.nt_xent_loss, "reduction", A, P, reduction="Mean"),
    bad_call(losses.nt_xent_per_anchor, "views must stack", A[:3], EVERY_ANCHOR[:3], 1),
    bad_call(losses.nt_xent_per_anchor, "views", AP[0], EVERY_ANCHOR, 1),
    bad_call(losses.nt_xent_per_anchor, "anchor_index", AP, [0, 1], 1),
    bad_call(losses.nt_xent_per_anchor, "anchor_index", AP, EVERY_ANCHOR * 1.0, 1),
    bad_call(losses.nt_xent_per_anchor, "temperature", AP, EVERY_ANCHOR, 0),
    *(
        bad_call(loss, argument, A, P, **arguments)
        for loss in (losses.balanced_contrastive_loss, losses.generalized_nt_xent_loss)
        for argument, arguments in (
            ("alpha", {"alpha": 0.0}),
            ("alpha", {"alpha": torch.tensor(-1.0)}),
            ("alpha", {"alpha": torch.ones(2)}),
            ("lam", {"lam": -1}),
            ("similarity", {"similarity": "cos"}),
            ("reduction", {"reduction": "avg"}),
        )
    ),
    bad_call(losses.balanced_contrastive_loss, "z2", A, P[:3]),
    bad_call(losses.balanced_contrastive_loss, "z1 must hold at least 2", A[:1], P[:1]),
    bad_call(losses.generalized_nt_xent_loss, "z2 must have the dtype", A, P.float()),
    bad_call(losses.bound_derived_loss, "views must have shape", A, VIEWS[:, :3]),
    bad_call(losses.bound_derived_loss, "views", A, A),
    bad_call(losses.bound_derived_loss, "views must have the dtype", A, VIEWS.float()),
    bad_call(losses.bound_derived_loss, "anchors must hold", A[:1], VIEWS[:, :1]),
    bad_call(losses.bound_derived_loss, "nu", A, VIEWS, nu=0.0),
    bad_call(losses.bound_derived_loss, "similarity", A, VIEWS, similarity="l2"),
    bad_call(losses.pairwise_similarity, "similarity", A, P, "euclidean"),
    bad_call(losses.pairwise_similarity, "b must have the size", A, draw(4, 5), "dot"),
    bad_call(losses.pairwise_similarity, "a", A[0], P, "dot"),
    bad_call(losses.pairwise_similarity, "b must have the dtype", A, P.float(), "dot"),
    bad_call(losses.masked_logsumexp, "logits", torch.ones(3, dtype=torch.long)),
    bad_call(losses.masked_logsumexp, "excluded must be", A, torch.zeros(4, 3)),
    bad_call(
        losses.masked_logsumexp,
        r"excluded must broadcast to the shape \(4, 3\) of logits",
        A,
        torch.zeros(4, 5, dtype=torch.bool),
    ),
    bad_call(losses.balanced_terms, "sims must be square", SIMS[..., :7], 2.0, 3.0),
    bad_call(losses.balanced_terms, "positive", SIMS, 2.0, 3.0, positive=SIMS[0, :7]),
    bad_call(
        losses.balanced_terms,
        "positive must have the dtype",
        SIMS,
        2.0,
        3.0,
        positive=SIMS[0].float(),
    ),
    bad_call(losses.balanced_terms, "excluded", SIMS, 2.0, 3.0, torch.eye(7) > 0),
    bad_call(losses.balanced_terms, "alpha", SIMS, -1.0, 3.0),
    bad_call(losses.balanced_terms, "lam", SIMS, 1.0, "3"),
    bad_call(losses.reduce, "reduction", A, "average"),
    bad_call(losses.reduce, "per_sample", [1.0, 2.0], "mean"),
    bad_call(losses.reduce, "reduction='mean' of an empty batch", A[:0], "mean"),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()


def test_reduction_error_lists_the_allowed_values():
    with pytest.raises(ValueError, match=r"\('mean', 'sum', 'none'\)"):
        info_nce_loss(A, P, NEG, reduction="avg")


# ----------------------------------------------------------- torch.func.vmap over seeds


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("name", LOSSES)
def test_vmap_over_seeds_equals_loop(name, reduction):
    args, kwargs = make_inputs(name, (3, 4))  # 3 seeds, 4 samples each
    loss = partial(LOSSES[name], **kwargs, reduction=reduction)
    expected = torch.stack([loss(*(a[seed] for a in args)) for seed in range(3)])
    torch.testing.assert_close(torch.func.vmap(loss)(*args), expected)


@pytest.mark.parametrize("name", LOSSES)
def test_vmap_of_grad_equals_loop_of_autograd(name):
    args, kwargs = make_inputs(name, (3, 4))
    loss = partial(LOSSES[name], **kwargs)
    expected = []
    for seed in range(3):
        first = args[0][seed].clone().requires_grad_(True)
        expected.append(
            torch.autograd.grad(loss(first, *(a[seed] for a in args[1:])), first)[0]
        )
    torch.testing.assert_close(
        torch.func.vmap(torch.func.grad(loss))(*args), torch.stack(expected)
    )


# ---------------------------------------------------------------- hypothesis properties

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)
seeds = st.integers(0, 2**31 - 1)
scales = st.floats(1e-2, 30.0)
temperatures = st.floats(1e-2, 10.0)
INFO_NCE_CASES = {
    "seed": seeds,
    "dim": st.integers(1, 6),
    "n_negatives": st.integers(1, 6),
    "scale": scales,
    "temperature": temperatures,
}
"""The draws of the InfoNCE property tests: 8 anchors with N negatives each."""


@PROPERTY_SETTINGS
@given(
    seed=seeds,
    batch_size=st.integers(2, 6),
    dim=st.integers(1, 6),
    scale=scales,
    n_negatives=st.integers(1, 6),
    name=st.sampled_from(list(LOSSES)),
)
def test_property_loss_is_nonnegative(seed, batch_size, dim, scale, n_negatives, name):
    args, kwargs = make_inputs(
        name,
        (batch_size,),
        dim=dim,
        n_negatives=n_negatives,
        seed=seed,
        scale=scale,
        dtype=torch.float32,
    )
    loss = LOSSES[name](*args, **kwargs, reduction="none")
    assert torch.isfinite(loss).all() and (loss >= 0).all()


@PROPERTY_SETTINGS
@given(**INFO_NCE_CASES)
def test_property_info_nce_is_bracketed_by_the_score_gaps(
    seed, dim, n_negatives, scale, temperature
):
    """With gaps g_i = (aᵀn_i − aᵀp)/t:
    log(1 + N e^{min g}) ≤ loss ≤ log(1 + N e^{max g})."""
    args, _ = make_inputs(
        "info_nce", (8,), dim=dim, n_negatives=n_negatives, seed=seed, scale=scale
    )
    anchor, positive, negatives = args
    gaps = (
        torch.einsum("bd,bnd->bn", anchor, negatives)
        - (anchor * positive).sum(-1, keepdim=True)
    ) / temperature
    log_n = math.log(n_negatives)
    lower, upper = (
        F.softplus(gaps.min(-1).values + log_n),
        F.softplus(gaps.max(-1).values + log_n),
    )
    loss = info_nce_loss(*args, temperature=temperature, reduction="none")
    slack = 1e-9 * (1 + loss.abs())
    assert (lower - slack <= loss).all() and (loss <= upper + slack).all()


@PROPERTY_SETTINGS
@given(**INFO_NCE_CASES, step=st.floats(1e-3, 10.0))
def test_property_info_nce_decreases_when_the_positive_score_increases(
    seed, dim, n_negatives, scale, temperature, step
):
    """p → p + step·a raises aᵀp by step·|a|² and leaves the negative scores
    unchanged."""
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (8,), dim=dim, n_negatives=n_negatives, seed=seed, scale=scale
    )
    before = info_nce_loss(
        anchor, positive, negatives, temperature=temperature, reduction="none"
    )
    after = info_nce_loss(
        anchor,
        positive + step * anchor,
        negatives,
        temperature=temperature,
        reduction="none",
    )
    assert (after <= before).all()
    assert (after < before)[before > 1e-6].all()


@PROPERTY_SETTINGS
@given(**INFO_NCE_CASES)
def test_property_info_nce_invariant_to_a_common_shift_of_positive_and_negatives(
    seed, dim, n_negatives, scale, temperature
):
    """Adding one vector v to p and to every n_i adds aᵀv/t to every logit:
    log-sum-exp − positive is unchanged."""
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (8,), dim=dim, n_negatives=n_negatives, seed=seed, scale=scale
    )
    shift = draw(8, dim, seed=seed + 1, scale=scale)
    before = info_nce_loss(
        anchor, positive, negatives, temperature=temperature, reduction="none"
    )
    after = info_nce_loss(
        anchor,
        positive + shift,
        negatives + shift.unsqueeze(1),
        temperature=temperature,
        reduction="none",
    )
    torch.testing.assert_close(
        after, before, rtol=1e-7, atol=1e-9 * (1 + scale**2 / temperature)
    )


@PROPERTY_SETTINGS
@given(seed=seeds, dim=st.integers(1, 6), scale=scales)
def test_property_logistic_antisymmetry(seed, dim, scale):
    """softplus(g) − softplus(−g) = g: swapping positive and negative changes the loss
    by the gap."""
    (anchor, positive, negative), _ = make_inputs(
        "logistic", (8,), dim=dim, seed=seed, scale=scale
    )
    gap = (anchor * negative).sum(-1) - (anchor * positive).sum(-1)
    difference = logistic_loss(
        anchor, positive, negative, reduction="none"
    ) - logistic_loss(anchor, negative, positive, reduction="none")
    torch.testing.assert_close(difference, gap, rtol=1e-9, atol=1e-9 * (1 + scale**2))


@PROPERTY_SETTINGS
@given(
    seed=seeds,
    batch_size=st.integers(2, 6),
    dim=st.integers(2, 6),
    temperature=temperatures,
)
def test_property_nt_xent_invariances(seed, batch_size, dim, temperature):
    """Invariant to a positive rescaling of each embedding and to a common rotation; a
    permutation of the pairs permutes the per-anchor losses;
    0 ≤ loss ≤ log(2B − 1) + 2/t."""
    (z1, z2), _ = make_inputs("nt_xent", (batch_size,), dim=dim, seed=seed)
    loss = nt_xent_loss(z1, z2, temperature=temperature, reduction="none")
    assert (loss >= 0).all() and (
        loss <= math.log(2 * batch_size - 1) + 2 / temperature + 1e-9
    ).all()

    rescale = torch.exp(draw(2, batch_size, 1, seed=seed + 1, scale=2.0))
    rotation = torch.linalg.qr(draw(dim, dim, seed=seed + 2)).Q
    transformed = nt_xent_loss(
        rescale[0] * z1 @ rotation,
        rescale[1] * z2 @ rotation,
        temperature=temperature,
        reduction="none",
    )
    torch.testing.assert_close(transformed, loss)

    order = torch.randperm(batch_size, generator=torch.Generator().manual_seed(seed))
    permuted = nt_xent_loss(
        z1[order], z2[order], temperature=temperature, reduction="none"
    )
    torch.testing.assert_close(permuted, loss[torch.cat([order, order + batch_size])])


# ----------------------------------------------------- chunked InfoNCE (chunk_size)

CHUNK_SIZES = [1, 2, 3, 5, 7, 12, 13, 100]
"""For N = 12 negatives: dividing N, not dividing it, N itself, and more than N."""


def _info_nce_value_and_grads(
    chunk_size, reduction="mean", scale=1.0, temperature=0.7, seed=0
):
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (4, 3), dim=6, n_negatives=12, seed=seed, scale=scale
    )
    leaves = [t.clone().requires_grad_() for t in (anchor, positive, negatives)]
    loss = info_nce_loss(
        *leaves, temperature=temperature, reduction=reduction, chunk_size=chunk_size
    )
    weights = (
        draw(*loss.shape, seed=99) if loss.ndim else torch.tensor(1.0, dtype=loss.dtype)
    )
    grads = torch.autograd.grad((loss * weights).sum(), leaves)
    return loss.detach(), grads


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_info_nce_chunked_equals_unchunked_value_and_gradient(chunk_size, reduction):
    value, grads = _info_nce_value_and_grads(None, reduction)
    chunked_value, chunked_grads = _info_nce_value_and_grads(chunk_size, reduction)
    torch.testing.assert_close(chunked_value, value, rtol=1e-12, atol=1e-12)
    for chunked, reference in zip(chunked_grads, grads):
        torch.testing.assert_close(chunked, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chunk_size", [1, 5, 12])
def test_info_nce_chunked_gradcheck(chunk_size):
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (3,), dim=4, n_negatives=12
    )
    leaves = [t.clone().requires_grad_() for t in (anchor, positive, negatives)]
    assert torch.autograd.gradcheck(
        lambda a, p, n: info_nce_loss(
            a, p, n, temperature=0.7, reduction="none", chunk_size=chunk_size
        ),
        leaves,
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("chunk_size", [1, 5, 12])
def test_info_nce_chunked_finite_and_equal_with_logits_up_to_1e4(chunk_size, dtype):
    # Scores a^T n of order 1e4 / t: the per-block maximum keeps every exp finite.
    anchor = torch.full((2, 1), 100.0, dtype=dtype)
    positive = torch.tensor([[100.0], [99.0]], dtype=dtype)
    negatives = (
        torch.linspace(-100.0, 100.0, 12, dtype=dtype)
        .expand(2, 12)
        .unsqueeze(-1)
        .clone()
    )
    leaves = [t.clone().requires_grad_() for t in (anchor, positive, negatives)]
    chunked = info_nce_loss(
        *leaves, temperature=1.0, reduction="none", chunk_size=chunk_size
    )
    chunked_grads = torch.autograd.grad(chunked.sum(), leaves)
    reference = info_nce_loss(*leaves, temperature=1.0, reduction="none")
    grads = torch.autograd.grad(reference.sum(), leaves)
    assert torch.isfinite(chunked).all() and all(
        torch.isfinite(g).all() for g in chunked_grads
    )
    torch.testing.assert_close(chunked, reference)
    # The anchor's gradient is a difference of terms of order 100 whose softmax weights
    # carry an absolute rounding error of order 1e4 * eps: in float32 that is ~1e-3 *
    # 100 in absolute terms.
    tolerance = {} if dtype == torch.float64 else {"rtol": 1e-4, "atol": 0.1}
    for c, r in zip(chunked_grads, grads):
        torch.testing.assert_close(c, r, **tolerance)
    # Anchor and positive at 1e4, the largest negative 1e4 too: a tie, the loss is log 2
    # exactly; the second anchor's positive is 100 below the largest negative: the loss
    # is about 100. (float32: the logits are 1e4, whose spacing is ~1e-3, so the loss is
    # known to ~1e-3.)
    absolute = 1e-9 if dtype == torch.float64 else 4e-3
    assert chunked[0].item() == pytest.approx(math.log(2), abs=absolute)
    assert chunked[1].item() == pytest.approx(100.0, abs=absolute)


def test_info_nce_chunked_without_gradient_on_the_negatives():
    # A MoCo-style queue: no gradient is asked for the negatives, only for anchor and
    # positive.
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (4,), dim=6, n_negatives=12
    )
    leaves = [anchor.clone().requires_grad_(), positive.clone().requires_grad_()]
    grads = torch.autograd.grad(info_nce_loss(*leaves, negatives, chunk_size=5), leaves)
    reference = torch.autograd.grad(info_nce_loss(*leaves, negatives), leaves)
    for c, r in zip(grads, reference):
        torch.testing.assert_close(c, r, rtol=1e-12, atol=1e-12)


def test_info_nce_chunked_under_vmap_of_grad_equals_unchunked():
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (3, 4), dim=5, n_negatives=12
    )

    def gradients(chunk_size):
        loss = partial(info_nce_loss, temperature=0.7, chunk_size=chunk_size)
        return torch.func.vmap(torch.func.grad(loss, argnums=(0, 1, 2)))(
            anchor, positive, negatives
        )

    for c, r in zip(gradients(5), gradients(None)):
        torch.testing.assert_close(c, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_info_nce_chunked_half_precision_close_to_unchunked(dtype):
    (anchor, positive, negatives), _ = make_inputs(
        "info_nce", (8,), dim=6, n_negatives=12, dtype=dtype
    )
    chunked = info_nce_loss(
        anchor, positive, negatives, temperature=0.1, reduction="none", chunk_size=5
    )
    reference = info_nce_loss(
        anchor, positive, negatives, temperature=0.1, reduction="none"
    )
    assert chunked.dtype == loss_dtype(dtype)
    torch.testing.assert_close(chunked.float(), reference.float(), rtol=2e-2, atol=2e-2)


# ------------------------------------------------------ the triplet loss's entry points


def naive_triplet_losses(anchor, positive, negative):
    """log(1 + exp(f(x)ᵀf(x⁻) − f(x)ᵀf(x⁺))) per row, in Python floats."""
    values = []
    for a, p, n in zip(anchor.tolist(), positive.tolist(), negative.tolist()):
        gap = sum(x * (z - y) for x, y, z in zip(a, p, n))
        values.append(max(gap, 0.0) + math.log1p(math.exp(-abs(gap))))
    return torch.tensor(values, dtype=torch.float64)


def test_every_triplet_loss_entry_point_is_the_naive_formula():
    from ccl_helpers import multineg, symbolic

    anchor, positive, negative = draw(3, 40, 3, seed=11, scale=3.0)
    expected = naive_triplet_losses(anchor, positive, negative)
    assert float(expected.max()) > 20 and float(expected.min()) < 1e-9  # both tails
    torch.testing.assert_close(
        logistic_loss(anchor, positive, negative, reduction="none"),
        expected,
        rtol=1e-13,
        atol=0,
    )
    torch.testing.assert_close(
        symbolic.triplet_loss(torch.stack([anchor, positive, negative], -2)),
        expected,
        rtol=1e-13,
        atol=0,
    )
    identity = partial(torch.mul, 1.0)
    total = multineg.triplet_objective(identity, (anchor, positive, negative))
    assert float(total) == pytest.approx(float(expected.sum()), rel=1e-13)
    x, index = draw(6, 3, seed=12, scale=3.0), multineg.all_triplets(6)
    mean = multineg.triplet_loss(identity, (x, index))
    expected = naive_triplet_losses(*x[index].unbind(1))
    assert float(mean) == pytest.approx(float(expected.mean()), rel=1e-13)


# ---------------------------------------------------------------- the shared masked sum


def test_masked_logsumexp_leaves_the_excluded_entries_out():
    logits = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    excluded = torch.zeros(3, 5, dtype=torch.bool)
    excluded[0, 1] = excluded[2, :] = True
    found = losses.masked_logsumexp(logits, excluded)
    kept = [logits[0, [0, 2, 3, 4]], logits[1]]
    for row, values in enumerate(kept):
        torch.testing.assert_close(found[row], torch.logsumexp(values, -1))
    assert found[2] == -torch.inf  # every entry left out
    torch.testing.assert_close(
        losses.masked_logsumexp(logits), torch.logsumexp(logits, -1)
    )
    with pytest.raises(ValueError, match="excluded"):
        losses.masked_logsumexp(logits, excluded.int())


def test_balanced_terms_are_the_balanced_losses_per_anchor():
    z1, z2 = draw(2, 4, 3, seed=1), draw(2, 4, 3, seed=2)
    views = torch.cat([z1, z2], -2)
    sims = losses.pairwise_similarity(views, views, "cosine")
    eye = torch.eye(8, dtype=torch.bool)
    excluded = eye | eye.roll(4, -1)
    found = losses.balanced_terms(sims, 2.0, 3.0, excluded)
    want = losses.balanced_contrastive_loss(z1, z2, 2.0, 3.0, reduction="none")
    assert torch.equal(found, want)
    cosine = F.cosine_similarity(z1, z2, dim=-1).repeat(1, 2)  # the positives
    explicit = losses.balanced_terms(sims, 2.0, 3.0, excluded, positive=cosine)
    torch.testing.assert_close(explicit, want)
    with pytest.raises(ValueError, match="sims"):
        losses.balanced_terms(sims[..., :7], 2.0, 3.0)
    with pytest.raises(ValueError, match="positive"):
        losses.balanced_terms(sims, 2.0, 3.0, positive=cosine[..., :7])
    with pytest.raises(ValueError, match="excluded"):
        losses.balanced_terms(sims, 2.0, 3.0, excluded[:7, :7])
    with pytest.raises(ValueError, match="alpha"):
        losses.balanced_terms(sims, -1.0, 3.0)


def test_balanced_family_reads_no_values_under_vmap_over_alpha():
    # every training step calls them: shapes, dtypes and scalars only, so that α may
    # vary under vmap, where no value can be read
    alphas = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    z1, z2 = draw(4, 3, seed=1), draw(4, 3, seed=2)
    sims = losses.pairwise_similarity(torch.cat([z1, z2]), torch.cat([z1, z2]), "dot")
    eye = torch.eye(8, dtype=torch.bool)
    cases = {
        "balanced": lambda a: losses.balanced_contrastive_loss(z1, z2, a, 1.0),
        "generalized": lambda a: losses.generalized_nt_xent_loss(z1, z2, a, 1.0),
        "bound_derived": lambda a: losses.bound_derived_loss(z1, z2[None], a, 1.0, a),
        "balanced_terms": lambda a: losses.balanced_terms(sims, a, 1.0, eye),
        "masked_logsumexp": lambda a: losses.masked_logsumexp(a * sims, eye),
    }
    for name, loss in cases.items():
        found = torch.func.vmap(loss)(alphas)
        expected = torch.stack([loss(a) for a in alphas])
        torch.testing.assert_close(found, expected, msg=name)


@pytest.mark.parametrize(
    "loss, arguments, second",
    [
        (losses.nt_xent_loss, ((4, 3), (4, 3)), "z2"),
        (losses.balanced_contrastive_loss, ((4, 3), (4, 3)), "z2"),
        (losses.generalized_nt_xent_loss, ((4, 3), (4, 3)), "z2"),
        (losses.info_nce_loss, ((4, 3), (4, 3), (4, 5, 3)), "positive"),
        (losses.logistic_loss, ((4, 3), (4, 3), (4, 3)), "positive"),
        (losses.bound_derived_loss, ((4, 3), (2, 4, 3)), "views"),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_losses_reject_mixed_dtypes_naming_both_arguments(loss, arguments, second):
    first, *rest = (torch.randn(*shape) for shape in arguments)
    loss(first, *rest)  # one dtype: valid
    with pytest.raises(ValueError, match=f"{second} must have the dtype of .*float64"):
        loss(first.double(), *rest)


def test_mixed_dtypes_are_allowed_under_autocast():
    anchor = torch.randn(4, 3, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = losses.info_nce_loss(anchor, anchor, torch.randn(4, 5, 3))
    assert torch.isfinite(loss)
