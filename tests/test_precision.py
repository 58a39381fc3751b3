"""Tests of the training precision policy (ccl_helpers.runtime.precision, autocast) and
of every chapter's training loss under bfloat16 autocast against float32, on the CPU
(CPU autocast supports bfloat16; CI has no
GPU): same parameters, same inputs, the loss of each seed compared.

Safe in bf16 (relative difference below TOLERANCE, finite): Ch1's block contrastive
loss, Ch2's InfoNCE, Ch3's L_S and triplet loss at initialisation, Ch4's contrastive
batch loss, Ch5's NT-Xent, balanced and generalized NT-Xent losses (every similarity).
Not safe: Ch3's losses near convergence (L → 0), the regime Wen's theorem is about;
Chapter 3 trains in float64 by full-batch gradient descent, which autocast never
touches.

Exact, at the level of the dispatched operations: under autocast every loss that train()
runs takes its log-sum-exp (softplus, logaddexp) in float32 and returns float32, and the
chunked InfoNCE recomputes its scores in its backward pass as its forward pass computed
them.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.func import vmap
from torch.utils._python_dispatch import TorchDispatchMode

from ccl_helpers import curl, data, models, multimodal, multineg, runtime, train, wen
from ccl_helpers import supervised_approx as sa
from ccl_helpers.losses import info_nce_loss, logistic_loss, nt_xent_loss
from ccl_helpers.losses.balanced import (
    balanced_contrastive_loss,
    generalized_nt_xent_loss,
)
from ccl_helpers.losses.bound_derived import bound_derived_loss

# bfloat16 keeps 8 significant bits: each rounding errs by at most 2^-9 ≈ 2.0e-3
# relative (its spacing is 2^-8 ≈ 3.9e-3). Under autocast every matmul of the forward
# pass rounds both inputs, so an embedding carries a relative error of a few 1e-3 (≤ 2
# roundings per layer, ≤ 3 layers, partly cancelling), and so do the logits. A
# contrastive loss is a log-sum-exp of logits minus the positive's logit: its error is
# at most twice the largest logit error, |logit| · (relative embedding error). With
# logits of a few units and a loss of order 1 that is ≲ 2 · 5 · 4e-3 = 4e-2 relative,
# hence 5e-2: a bound on the whole effect of bf16 products, which a loss that lost its
# digits to cancellation or overflowed would exceed. It is too wide to see a log-sum-exp
# taken in bfloat16 (≈ 1e-2 at these logits);
# test_losses_reduce_in_float32_under_autocast checks that one exactly.
TOLERANCE = 5e-2
N_SEEDS = 2


@pytest.fixture
def bf16(monkeypatch):
    monkeypatch.setenv("CCL_PRECISION", "bf16")


@pytest.fixture(scope="module")
def digits_split():
    images, labels = data.load_digits()
    return data.train_test_split(images, labels, test_fraction=0.3, seed=0)


def both_precisions(model: train.StackedModel, loss_fn, batch, *, shared: bool = False):
    """Each seed's loss (S,) of ``loss_fn(forward, batch)`` in float32 and under
    :func:`runtime.autocast` (bf16, set by the ``bf16`` fixture), with the same
    parameters and inputs; the bf16 values as float32."""
    call = model.functional()
    per_seed = vmap(
        lambda p, b, inputs: loss_fn(lambda x: call(p, b, x), inputs),
        in_dims=(0, 0, None if shared else 0),
    )
    with torch.no_grad():
        fp32 = per_seed(model.params, model.buffers, batch)
        with runtime.autocast("cpu"):
            bf16 = per_seed(model.params, model.buffers, batch)
    return fp32, bf16.float()


def relative_difference(fp32, bf16) -> float:
    return float(((bf16 - fp32).abs() / fp32.abs()).max())


def assert_safe(fp32, bf16):
    assert fp32.dtype == torch.float32 and torch.isfinite(fp32).all()
    assert torch.isfinite(bf16).all()
    assert relative_difference(fp32, bf16) < TOLERANCE


def two_views(loss, *args, **kwargs):
    """(forward, (view1, view2)) ↦ loss(forward(view1), forward(view2), *args,
    **kwargs)."""
    return lambda forward, views: loss(
        forward(views[0]), forward(views[1]), *args, **kwargs
    )


# ---------------------------------------------------------------- the policy


def test_precision_defaults_to_fp32_at_standard_and_smoke(monkeypatch):
    monkeypatch.delenv("CCL_PRECISION", raising=False)
    for scale in ("smoke", "standard"):
        monkeypatch.setenv("CCL_SCALE", scale)
        assert runtime.precision() == "fp32"


def test_precision_defaults_to_fp32_on_the_cpu_at_paper(monkeypatch):
    monkeypatch.delenv("CCL_PRECISION", raising=False)
    monkeypatch.setenv("CCL_SCALE", "paper")
    monkeypatch.setenv("CCL_DEVICE", "cpu")
    assert runtime.precision() == "fp32"


@pytest.mark.parametrize("bf16_supported, expected", [(True, "bf16"), (False, "fp32")])
def test_precision_defaults_to_bf16_at_paper_on_a_bf16_gpu(
    monkeypatch, bf16_supported, expected
):
    monkeypatch.delenv("CCL_PRECISION", raising=False)
    monkeypatch.delenv("CCL_DEVICE", raising=False)
    monkeypatch.setenv("CCL_SCALE", "paper")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(
        torch.cuda, "is_bf16_supported", lambda *args, **kwargs: bf16_supported
    )
    assert runtime.precision() == expected
    monkeypatch.setenv("CCL_SCALE", "standard")
    assert runtime.precision() == "fp32"


@pytest.mark.parametrize(
    "raw, expected",
    [("fp32", "fp32"), ("bf16", "bf16"), (" BF16 ", "bf16"), ("", "fp32")],
)
def test_precision_reads_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("CCL_SCALE", "standard")
    monkeypatch.setenv("CCL_PRECISION", raw)
    assert runtime.precision() == expected


@pytest.mark.parametrize("raw", ["fp16", "float32", "bfloat16", "mixed", "1"])
def test_unknown_precision_raises(monkeypatch, raw):
    monkeypatch.setenv("CCL_PRECISION", raw)
    with pytest.raises(ValueError, match="CCL_PRECISION"):
        runtime.precision()


def test_autocast_is_a_no_op_in_fp32(monkeypatch):
    monkeypatch.setenv("CCL_PRECISION", "fp32")
    context = runtime.autocast("cpu")
    assert isinstance(context, contextlib.nullcontext)
    model = models.MLP(64, (256,), 32)
    x = torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    outside = model(x)
    with context:
        assert not torch.is_autocast_enabled("cpu")
        inside = model(x)
    assert inside.dtype == torch.float32 and torch.equal(inside, outside)


def test_autocast_in_bf16_computes_in_bfloat16(bf16):
    a, b = torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(0))
    with runtime.autocast(torch.device("cpu")):
        assert (
            torch.is_autocast_enabled("cpu")
            and torch.get_autocast_dtype("cpu") == torch.bfloat16
        )
        assert (a @ b).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")


# ---------------------------------------------------------------- each chapter's
# training loss, fp32 vs bf16


@pytest.mark.parametrize("block_size", [1, 5])
def test_ch1_block_contrastive_loss_is_safe_in_bf16(bf16, digits_split, block_size):
    x_train, y_train, _, _ = digits_split
    sample = curl.contrastive_batches(
        data.EmpiricalClasses(x_train, y_train),
        N_SEEDS,
        128,
        torch.Generator().manual_seed(1),
        block_size=block_size,
    )
    model = train.StackedModel(
        lambda: models.MLP(64, hidden=(256, 256), out_features=32), N_SEEDS
    )
    assert_safe(*both_precisions(model, curl.block_contrastive_loss, sample(1)))


@pytest.mark.parametrize("n_negatives", [1, 15, 35])
def test_ch2_info_nce_loss_is_safe_in_bf16(bf16, digits_split, n_negatives):
    x_train, y_train, _, _ = digits_split
    sample = multineg.contrastive_batches(
        data.EmpiricalClasses(x_train, y_train),
        N_SEEDS,
        32,
        n_negatives,
        torch.Generator().manual_seed(100 + n_negatives),
    )
    model = train.StackedModel(
        lambda: models.MLP(64, hidden=(128,), out_features=32), N_SEEDS
    )
    assert_safe(*both_precisions(model, multineg.contrastive_loss, sample(1)))


N_POINTS, N_NEGATIVES, WIDTH, OUT = (
    16,
    3,
    100,
    10,
)  # Chapter 3's n, k, m (at initialisation), d


@pytest.fixture(scope="module")
def wen_inputs():
    images, labels = data.load_digits()
    chosen = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))[
        :N_POINTS
    ]
    return data.unit_sphere(images[chosen])


def wen_setups(x):
    """(name, model, loss_fn, training set) of Chapter 3: L_S with two encoders, the
    triplet loss with one."""
    two = train.StackedModel(lambda: wen.TwoEncoders(x.shape[1], WIDTH, 2, OUT), 4)
    one = train.StackedModel(
        lambda: models.DeepReLU(x.shape[1], WIDTH, 1, OUT, trainable="all"), 4
    )
    return [
        (
            "L_S",
            two,
            lambda forward, inputs: wen.contrastive_loss(*forward(inputs), N_NEGATIVES),
            x,
        ),
        ("triplet", one, multineg.triplet_loss, (x, multineg.all_triplets(N_POINTS))),
    ]


def test_ch3_wen_losses_at_initialisation_are_safe_in_bf16(bf16, wen_inputs):
    for _, model, loss_fn, training_set in wen_setups(wen_inputs):
        assert_safe(*both_precisions(model, loss_fn, training_set, shared=True))


def test_ch3_wen_losses_near_convergence_are_excluded_from_bf16(
    monkeypatch, wen_inputs
):
    """Excluded: as L → 0, L ≈ Σ e^u with logits u ≈ log L ≈ −12 here, so bf16's
    absolute logit error |u| · 2^-8 becomes the relative error of L itself (up to
    ≈ 5e-2 per term, growing as L shrinks), while the chapter asserts descent at every
    step and identities to 1e-12. Chapter 3 stays in float64 full-batch descent."""
    monkeypatch.setenv("CCL_PRECISION", "fp32")
    setups = wen_setups(wen_inputs)
    for (
        _,
        model,
        loss_fn,
        training_set,
    ) in setups:  # full-batch Adam in float32 down to L ≈ 1e-5
        stacked = (
            tuple(t.expand(model.n_seeds, *t.shape) for t in training_set)
            if isinstance(training_set, tuple)
            else training_set.expand(model.n_seeds, *training_set.shape)
        )
        train.train(model, loss_fn, lambda step, stacked=stacked: stacked, 500, lr=3e-3)
    monkeypatch.setenv("CCL_PRECISION", "bf16")
    for name, model, loss_fn, training_set in setups:
        fp32, bf16 = both_precisions(model, loss_fn, training_set, shared=True)
        assert fp32.max() < 1e-4 and torch.isfinite(bf16).all()
        assert relative_difference(fp32, bf16) > TOLERANCE, name


@pytest.mark.parametrize("beta, tau", [(0.05, 4.0), (3.0, 4.0), (0.3, 1.0)])
def test_ch4_multimodal_contrastive_loss_is_safe_in_bf16(bf16, beta, tau):
    """Chapter 4's linear encoders at its two stages' (β, τ) and the uniform run's, in
    float32: its own loop runs in float64 (which autocast leaves alone) outside
    :func:`train.train`; this checks it could use bf16."""
    generator = torch.Generator().manual_seed(0)
    sigmas = torch.stack(
        [multimodal.geometric_sigmas(kappa, 5) for kappa in (4.0, 1.0)]
    )
    model = multimodal.make_data_model(sigmas, 0.3, 32, generator, dtype=torch.float32)
    W_A, W_B = multimodal.init_weights(2, 256, 32, generator, dtype=torch.float32)
    pairs = multimodal.sample_pairs(model, 128, generator)
    fp32 = multimodal.batch_loss(W_A, W_B, model, pairs, beta=beta, tau=tau)
    with runtime.autocast("cpu"):
        bf16 = multimodal.batch_loss(W_A, W_B, model, pairs, beta=beta, tau=tau)
    assert_safe(fp32, bf16.float())


CH5_LOSSES = (
    [("NT-Xent t=0.5", two_views(nt_xent_loss, 0.5))]
    + [
        (f"{name} alpha={alpha:g} lam={lam:g}", two_views(loss, alpha, lam))
        for name, loss in (
            ("balanced", balanced_contrastive_loss),
            ("generalized", generalized_nt_xent_loss),
        )
        for alpha in (1.0, 8.0)
        for lam in (1.0, 8.0)
    ]
    + [
        (
            f"generalized {similarity}",
            two_views(generalized_nt_xent_loss, 2.0, 1.0, similarity=similarity),
        )
        for similarity in ("cosine", "dot", "neg_euclidean")
    ]
)


@pytest.mark.parametrize(
    "name, loss_fn", CH5_LOSSES, ids=[name for name, _ in CH5_LOSSES]
)
def test_ch5_losses_are_safe_in_bf16(bf16, digits_split, name, loss_fn):
    x_train = digits_split[0]
    views = sa.two_view_batches(
        x_train, N_SEEDS, 64, data.BASE, torch.Generator().manual_seed(20)
    )(1)
    model = train.StackedModel(
        lambda: models.MLP(64, hidden=(256,), out_features=32), N_SEEDS
    )
    assert_safe(*both_precisions(model, loss_fn, views))


# ---------------------------------------------------------------- training in bf16


def run_training(x_train, n_steps=20):
    """20 Adam steps of Chapter 5's encoder on the generalized NT-Xent loss, 2 seeds;
    returns (model, history, whether autocast was on in the loss and in
    ``evaluate``)."""
    seen = {"loss": set(), "evaluate": set()}
    sample = sa.two_view_batches(
        x_train, N_SEEDS, 64, data.BASE, torch.Generator().manual_seed(20)
    )
    held_out = sample(0)

    def loss_fn(forward, views):
        seen["loss"].add(torch.is_autocast_enabled("cpu"))
        return generalized_nt_xent_loss(forward(views[0]), forward(views[1]), 2.0, 1.0)

    def evaluate(model):
        seen["evaluate"].add(torch.is_autocast_enabled("cpu"))
        z1, z2 = model(held_out[0], shared=False), model(held_out[1], shared=False)
        return {
            "held_out_loss": generalized_nt_xent_loss(
                z1, z2, 2.0, 1.0, reduction="none"
            ).mean(-1)
        }

    model = train.StackedModel(
        lambda: models.MLP(64, hidden=(256,), out_features=32), N_SEEDS
    )
    history = train.train(
        model,
        loss_fn,
        sample,
        n_steps,
        lr=1e-3,
        evaluate=evaluate,
        eval_steps=range(5, n_steps, 5),
    )
    return model, train.wide(history).set_index(["step", "seed"]), seen


def test_bf16_training_follows_fp32_training(monkeypatch, digits_split):
    """Same start, same batches: after each of 20 Adam steps (each moves a parameter by
    ≤ lr = 1e-3) the bf16 run stays next to the fp32 one, so its minibatch losses (and
    the held-out loss, evaluated in float32) agree to TOLERANCE, the bound for one
    evaluation; the parameters stay float32, evaluation runs outside autocast."""
    x_train = digits_split[0]
    monkeypatch.setenv("CCL_PRECISION", "fp32")
    fp32_model, fp32, fp32_seen = run_training(x_train)
    monkeypatch.setenv("CCL_PRECISION", "bf16")
    bf16_model, bf16, bf16_seen = run_training(x_train)
    assert fp32_seen == {"loss": {False}, "evaluate": {False}}
    assert bf16_seen == {"loss": {True}, "evaluate": {False}}
    assert all(p.dtype == torch.float32 for p in bf16_model.params.values())
    for column in ("train_loss", "held_out_loss"):
        reference, mixed = (
            torch.tensor(frame[column].dropna().to_numpy()) for frame in (fp32, bf16)
        )
        assert torch.isfinite(mixed).all() and not torch.equal(
            mixed, reference
        )  # autocast did act
        assert relative_difference(reference, mixed) < TOLERANCE
    first, last = fp32["held_out_loss"].xs(0), fp32["held_out_loss"].xs(20)
    assert (last < first).all() and (
        bf16["held_out_loss"].xs(20) < first
    ).all()  # both runs learned


# ---------------------------------------------------------------- what runs in float32
# under autocast

LOG_SUM_EXP_OPS = {
    "aten.logsumexp",
    "aten.softplus",
    "aten.logaddexp",
    "aten._log_softmax",
}
"""The operations in which a loss turns logits into its value: each must see float32 (or
wider) inputs."""


class DtypeRecorder(TorchDispatchMode):
    """Records (operation, dtypes of its tensor inputs) of every operation dispatched,
    after autocast's casts."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, list[torch.dtype]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(
            (
                str(func.overloadpacket),
                [a.dtype for a in args if isinstance(a, torch.Tensor)],
            )
        )
        return func(*args, **(kwargs or {}))


AUTOCAST_LOSSES = {
    "logistic (Ch1)": lambda a, p, n: logistic_loss(a, p, n[:, 0]),
    "info_nce (Ch2)": lambda a, p, n: info_nce_loss(a, p, n, 0.5),
    "info_nce chunked": lambda a, p, n: info_nce_loss(a, p, n, 0.5, chunk_size=2),
    "nt_xent (Ch5)": lambda a, p, n: nt_xent_loss(a, p, 0.5),
    **{
        f"{name} {similarity} (Ch5)": (
            lambda loss_of, kind: (
                lambda a, p, n: loss_of(a, p, 4.0, 2.0, similarity=kind)
            )
        )(loss, similarity)
        for name, loss in (
            ("balanced", balanced_contrastive_loss),
            ("generalized", generalized_nt_xent_loss),
        )
        for similarity in ("cosine", "dot", "neg_euclidean")
    },
    "bound_derived (Ch5)": lambda a, p, n: bound_derived_loss(
        a, n.transpose(0, 1), 4.0, 2.0
    ),
}


@pytest.mark.parametrize("name", AUTOCAST_LOSSES)
def test_losses_reduce_in_float32_under_autocast(name):
    generator = torch.Generator().manual_seed(0)
    layer = torch.nn.Linear(32, 16)
    x = torch.randn(8, 5, 32, generator=generator)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = layer(x)  # (8, 5, 16), bfloat16
        assert z.dtype == torch.bfloat16
        with DtypeRecorder() as recorder:
            value = AUTOCAST_LOSSES[name](z[:, 0], z[:, 1], z[:, 2:])
    reductions = [
        (op, dtypes) for op, dtypes in recorder.calls if op in LOG_SUM_EXP_OPS
    ]
    assert reductions, recorder.calls
    assert all(
        dtype in (torch.float32, torch.float64)
        for _, dtypes in reductions
        for dtype in dtypes
    ), reductions
    assert value.dtype == torch.float32 and torch.isfinite(value)


def test_chunked_info_nce_under_autocast_matches_the_unchunked_loss():
    """bfloat16 anchors (a Linear under autocast) against a float32 queue, the MoCo
    set-up: the chunked backward recomputes the scores under the forward's autocast, so
    its gradients are the unchunked ones up to rounding (before it did, the backward
    mixed dtypes and failed, or with float32 inputs gave gradients 23 % off)."""
    generator = torch.Generator().manual_seed(0)
    batch, n_negatives, dim = 8, 100, 16
    x = torch.randn(batch, 2, 32, generator=generator)
    layer = torch.nn.Linear(32, dim)
    queue = torch.randn(n_negatives, dim, generator=generator)

    def gradients(chunk_size, precision):
        layer.zero_grad()
        keys = queue.clone().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            z = layer(x)
            loss = info_nce_loss(
                z[:, 0],
                z[:, 1],
                keys.expand(batch, n_negatives, dim),
                0.1,
                chunk_size=chunk_size,
            )
        loss.backward()
        return loss.detach(), layer.weight.grad.clone(), keys.grad.clone()

    def relative(a, b):
        return float((a - b).norm() / b.norm())

    fp32 = gradients(None, "fp32")
    unchunked, chunked = gradients(None, "bf16"), gradients(16, "bf16")
    assert chunked[0].dtype == torch.float32
    assert relative(chunked[0], unchunked[0]) < 1e-5
    for got, expected in zip(chunked[1:], unchunked[1:]):
        assert relative(got, expected) < 1e-2  # measured 1.7e-3 and 2.1e-3
    for got, expected in zip(chunked[1:], fp32[1:]):
        assert (
            relative(got, expected) < 5e-2
        )  # bf16 products: measured 1.9e-2 and 2.9e-2
