"""Tests of ccl_helpers.train: the stacked seeds (initialisation, forward passes),
training several seeds at once against separate plain PyTorch loops, the tidy history,
determinism, validation; the full-batch gradient-descent runner against a hand-written
single-seed loop (trajectory, gradient norm, weight movement, target steps)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from bad_calls import bad_call
from conftest import randn as randn64
from torch import nn

from ccl_helpers import train as training
from ccl_helpers.models import MLP, Classifier, ConvNet, DeepReLU
from ccl_helpers.train import (
    Evaluation,
    StackedModel,
    check_stages,
    combined_norm,
    gradient_descent,
    log_spaced_steps,
    loop,
    member_norms,
    train,
    wide,
)

IN, OUT, BATCH = 5, 3, 8


def make_mlp():
    return MLP(IN, (6,), OUT)


def make_classifier():
    return Classifier(MLP(IN, (6,), 4), n_classes=OUT)


randn = partial(randn64, dtype=torch.float32)


# ---------------------------------------------------------------- StackedModel


@pytest.mark.parametrize("seed", [0, 11])
def test_stacked_seed_i_is_the_module_built_after_manual_seed(seed):
    model = StackedModel(make_mlp, n_seeds=3, seed=seed)
    assert model.seeds == [seed, seed + 1, seed + 2] and model.n_seeds == 3
    for i in range(3):
        torch.manual_seed(seed + i)
        reference = make_mlp()
        for name, value in reference.named_parameters():
            assert model.params[name].shape == (3, *value.shape)
            assert torch.equal(model.params[name][i], value.detach())
    # distinct seeds give distinct parameters
    assert not torch.equal(
        model.params["net.1.weight"][0], model.params["net.1.weight"][1]
    )


def test_seed_module_rejects_an_index_out_of_range():
    model = StackedModel(lambda: nn.Linear(2, 2), 3)
    for index in (-1, 3, 1.5):
        with pytest.raises(ValueError, match=r"index must be an integer 0\.\.2"):
            model.seed_module(index)


def test_stacked_forward_shared_equals_loop_over_seed_modules():
    model = StackedModel(make_mlp, n_seeds=4, seed=2)
    x = randn(7, IN, seed=1)
    out = model(x)
    assert out.shape == (4, 7, OUT)
    for i in range(4):
        torch.testing.assert_close(
            out[i], model.seed_module(i)(x), rtol=1e-6, atol=1e-6
        )


def test_stacked_forward_per_seed_inputs():
    model = StackedModel(make_mlp, n_seeds=3)
    x = randn(3, 6, IN, seed=2)
    out = model(x, shared=False)
    assert out.shape == (3, 6, OUT)
    for i in range(3):
        torch.testing.assert_close(
            out[i], model.seed_module(i)(x[i]), rtol=1e-6, atol=1e-6
        )
    with pytest.raises(ValueError, match="n_seeds"):
        model(randn(2, 6, IN), shared=False)


def test_stacked_forward_of_a_submodule():
    model = StackedModel(make_classifier, n_seeds=2, seed=5)
    x = randn(4, IN, seed=3)
    features = model(x, submodule="encoder")
    assert features.shape == (2, 4, 4)
    for i in range(2):
        module = model.seed_module(i)
        torch.testing.assert_close(features[i], module.encoder(x), rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(model(x)[i], module(x), rtol=1e-6, atol=1e-6)


def test_seed_module_is_an_independent_copy():
    model = StackedModel(make_mlp, n_seeds=2)
    module = model.seed_module(1)
    before = model.params["net.1.weight"][1].detach().clone()
    with torch.no_grad():
        for p in module.parameters():
            p.add_(1.0)
    assert torch.equal(model.params["net.1.weight"][1], before)
    assert not torch.equal(
        model.seed_module(1).net[1].weight, model.seed_module(0).net[1].weight
    )


@pytest.mark.parametrize("n_seeds", [0, -1])
def test_stacked_rejects_non_positive_seed_count(n_seeds):
    with pytest.raises(ValueError, match="n_seeds"):
        StackedModel(make_mlp, n_seeds=n_seeds)


# ---------------------------------------------------------------- training: stacked =
# separate


def regression_loss(forward, batch):
    x, y = batch
    return F.mse_loss(forward(x), y)


def classification_loss(forward, batch):
    x, y = batch
    return F.cross_entropy(forward(x), y)


def fixed_batches(n_steps, n_seeds, seed=0, classes=False):
    """Batches (n_steps + 1, S, B, ...) indexed by step: every seed has its own data."""
    x = randn(n_steps + 1, n_seeds, BATCH, IN, seed=seed)
    if classes:
        y = torch.randint(
            OUT,
            (n_steps + 1, n_seeds, BATCH),
            generator=torch.Generator().manual_seed(seed + 1),
        )
    else:
        y = randn(n_steps + 1, n_seeds, BATCH, OUT, seed=seed + 1)
    return x, y


def plain_loop(make, seed, loss_fn, x, y, n_steps, lr, optimizer):
    """One seed trained with an ordinary PyTorch loop; returns the module and its
    minibatch losses."""
    torch.manual_seed(seed)
    module = make()
    opt = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[optimizer](
        module.parameters(), lr=lr
    )
    losses = []
    for step in range(1, n_steps + 1):
        opt.zero_grad()
        loss = loss_fn(module, (x[step], y[step]))
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return module, losses


@pytest.mark.parametrize("optimizer, lr", [("adam", 0.05), ("sgd", 0.2)])
@pytest.mark.parametrize(
    "make, loss_fn, classes",
    [(make_mlp, regression_loss, False), (make_classifier, classification_loss, True)],
)
def test_training_seeds_together_equals_training_each_alone(
    optimizer, lr, make, loss_fn, classes
):
    n_steps, n_seeds, seed = 12, 3, 4
    x, y = fixed_batches(n_steps, n_seeds, classes=classes)
    together = StackedModel(make, n_seeds, seed=seed)
    train(
        together,
        loss_fn,
        lambda step: (x[step], y[step]),
        n_steps,
        lr=lr,
        optimizer=optimizer,
    )
    for i in range(n_seeds):
        alone = StackedModel(make, 1, seed=seed + i)
        train(
            alone,
            loss_fn,
            lambda step, i=i: (x[step, i : i + 1], y[step, i : i + 1]),
            n_steps,
            lr=lr,
            optimizer=optimizer,
        )
        reference, _ = plain_loop(
            make, seed + i, loss_fn, x[:, i], y[:, i], n_steps, lr, optimizer
        )
        for name, value in reference.named_parameters():
            torch.testing.assert_close(
                together.params[name][i], alone.params[name][0], rtol=1e-5, atol=1e-5
            )
            torch.testing.assert_close(
                together.params[name][i], value.detach(), rtol=1e-5, atol=1e-5
            )
        # and training moved the parameters
        torch.manual_seed(seed + i)
        initial = make()
        moved = max(
            float((together.params[n][i] - p).detach().abs().max())
            for n, p in initial.named_parameters()
        )
        assert moved > 1e-3


def test_train_loss_is_the_mean_minibatch_loss_since_the_last_checkpoint():
    n_steps, n_seeds, seed = 10, 2, 0
    x, y = fixed_batches(n_steps, n_seeds, seed=3)
    model = StackedModel(make_mlp, n_seeds, seed=seed)
    history = train(
        model,
        regression_loss,
        lambda step: (x[step], y[step]),
        n_steps,
        lr=0.05,
        eval_steps=[3, 7],
    )
    table = wide(history).set_index(["step", "seed"])["train_loss"]
    for i in range(n_seeds):
        _, losses = plain_loop(
            make_mlp, seed + i, regression_loss, x[:, i], y[:, i], n_steps, 0.05, "adam"
        )
        for step, (start, stop) in {3: (0, 3), 7: (3, 7), 10: (7, 10)}.items():
            expected = sum(losses[start:stop]) / (stop - start)
            assert table[(step, seed + i)] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("drop", ["x", "y", "both"])
def test_train_names_a_batch_without_its_seed_axis(drop):
    """A batch of one model's shape (no leading S) gets a plain ValueError, not vmap's
    size mismatch."""
    x, y = fixed_batches(2, 2, seed=3)
    model = StackedModel(make_mlp, 2)

    def batch(step):
        xs, ys = x[step - 1], y[step - 1]
        return (xs[0] if drop in ("x", "both") else xs), (
            ys[0] if drop in ("y", "both") else ys
        )

    with pytest.raises(ValueError, match="leading seed axis of size S = 2"):
        train(model, regression_loss, batch, 2)


# ---------------------------------------------------------------- the history


def evaluate_norm(model):
    return {
        "norm": model.params["net.1.weight"].flatten(1).norm(dim=1),
        "one": torch.ones(model.n_seeds),
    }


def run(
    seed=0,
    n_steps=6,
    n_seeds=2,
    eval_steps=(2, 4),
    evaluate=evaluate_norm,
    lr=0.01,
    optimizer="adam",
):
    model = StackedModel(make_mlp, n_seeds, seed=seed)
    generator = torch.Generator().manual_seed(seed)

    def sample_batch(step):
        return randn_g(generator, n_seeds, BATCH, IN), randn_g(
            generator, n_seeds, BATCH, OUT
        )

    return model, train(
        model,
        regression_loss,
        sample_batch,
        n_steps,
        lr=lr,
        optimizer=optimizer,
        evaluate=evaluate,
        eval_steps=eval_steps,
    )


def randn_g(generator, *shape):
    return torch.randn(*shape, generator=generator)


@pytest.mark.parametrize("eval_steps", [(2, 7), (-1, 2)])
def test_train_rejects_steps_outside_the_run(eval_steps):
    with pytest.raises(ValueError, match=r"eval_steps\[\d\] must be an integer 0\.\.6"):
        run(n_steps=6, eval_steps=eval_steps)


def test_history_is_tidy_with_the_checkpoints():
    model, history = run(seed=3, n_steps=6, n_seeds=2, eval_steps=(2, 4, 4))
    assert list(history.columns) == ["step", "seed", "quantity", "value"]
    assert history["value"].dtype == "float64"
    assert sorted(history["step"].unique()) == [0, 2, 4, 6]
    assert sorted(history["seed"].unique()) == [3, 4]
    by_quantity = (
        history.groupby("quantity")["step"].apply(lambda s: sorted(set(s))).to_dict()
    )
    assert by_quantity == {
        "norm": [0, 2, 4, 6],
        "one": [0, 2, 4, 6],
        "train_loss": [2, 4, 6],
    }
    assert len(history) == 2 * (4 + 4 + 3)
    assert not history.duplicated(["step", "seed", "quantity"]).any()
    assert (history.loc[history.quantity == "one", "value"] == 1.0).all()
    # the last evaluation is of the final parameters
    final = (
        history[(history.step == 6) & (history.quantity == "norm")]
        .sort_values("seed")["value"]
        .to_numpy()
    )
    torch.testing.assert_close(
        torch.tensor(final),
        model.params["net.1.weight"].flatten(1).norm(dim=1).double(),
    )


def test_history_without_evaluate_has_only_the_train_loss():
    _, history = run(evaluate=None, n_steps=5, eval_steps=())
    assert set(history["quantity"]) == {"train_loss"}
    assert history["step"].tolist() == [5, 5]


def test_evaluate_at_step_zero_sees_the_initial_parameters():
    model0 = StackedModel(make_mlp, 2, seed=1)
    initial = model0.params["net.1.weight"].flatten(1).norm(dim=1).double()
    _, history = run(seed=1, n_steps=3, eval_steps=(2,))
    start = (
        history[(history.step == 0) & (history.quantity == "norm")]
        .sort_values("seed")["value"]
        .to_numpy()
    )
    torch.testing.assert_close(torch.tensor(start), initial.detach())


def test_training_is_deterministic_under_the_seed():
    model_a, first = run(seed=2)
    model_b, second = run(seed=2)
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    for name in model_a.params:
        assert torch.equal(model_a.params[name], model_b.params[name])
    _, other = run(seed=3)
    assert not first["value"].equals(other["value"])


def test_wide_pivots_one_column_per_quantity():
    _, history = run(seed=0, n_steps=4, eval_steps=(2,))
    table = wide(history)
    assert set(table.columns) == {"step", "seed", "norm", "one", "train_loss"}
    assert len(table) == 3 * 2  # steps 0, 2, 4 × 2 seeds
    assert table.loc[table.step == 0, "train_loss"].isna().all()
    for row in history.itertuples():
        match = table[(table.step == row.step) & (table.seed == row.seed)][row.quantity]
        assert match.item() == row.value


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"n_steps": 0}, "n_steps"),
        ({"n_steps": -3}, "n_steps"),
        ({"n_steps": 2.5}, "n_steps"),
        ({"n_steps": True}, "n_steps"),
        ({"lr": 0.0}, "lr"),
        ({"lr": -1e-3}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"optimizer": "Adam"}, "optimizer"),
    ],
)
def test_bad_training_arguments_raise(kwargs, argument):
    model = StackedModel(make_mlp, 1)
    before = {k: v.detach().clone() for k, v in model.params.items()}
    arguments = {"n_steps": 2, "lr": 0.01, "optimizer": "adam", **kwargs}
    with pytest.raises(ValueError, match=argument):
        train(
            model,
            regression_loss,
            lambda step: (randn(1, BATCH, IN), randn(1, BATCH, OUT)),
            arguments.pop("n_steps"),
            **arguments,
        )
    for k, v in model.params.items():
        assert torch.equal(v, before[k])


# ---------------------------------------------------------------- full-batch gradient
# descent

D_IN, WIDTH, D_OUT, N_TRIPLETS = 6, 24, 3, 10


def triplet_data(seed=0):
    x = randn(3, N_TRIPLETS, D_IN, seed=seed).double()
    x = x / x.norm(dim=-1, keepdim=True)
    return x[0], x[1], x[2]


def triplet_loss(forward, data):
    """L̂_un of Merad et al., eq. (11): Σᵢ log(1 + exp(f(xᵢ)ᵀ(f(xᵢ⁻) − f(xᵢ⁺))))."""
    anchor, positive, negative = data
    z1, z2, z3 = forward(anchor), forward(positive), forward(negative)
    return F.softplus((z1 * (z3 - z2)).sum(-1)).sum()


def make_deep(trainable="hidden"):
    return lambda: DeepReLU(D_IN, WIDTH, 2, D_OUT, trainable=trainable).double()


def hand_loop(make, seed, data, n_steps, lr):
    """One seed, written out: W ← W − lr ∇L̂(W); returns per step (loss, ‖∇L̂‖, ‖W −
    W⁰‖_F per parameter)."""
    torch.manual_seed(seed)
    module = make()
    params = dict(module.named_parameters())
    lrs = lr if isinstance(lr, dict) else {name: lr for name in params}
    initial = {name: p.detach().clone() for name, p in params.items()}
    trajectory = []
    for step in range(n_steps + 1):
        loss = triplet_loss(module, data)
        grads = torch.autograd.grad(loss, list(params.values()))
        moved = {
            name: float((p.detach() - initial[name]).norm())
            for name, p in params.items()
        }
        trajectory.append(
            (
                float(loss.detach()),
                float(torch.cat([g.flatten() for g in grads]).norm()),
                moved,
            )
        )
        if step == n_steps:
            break
        with torch.no_grad():
            for (name, p), g in zip(params.items(), grads):
                p -= lrs[name] * g
    return module, initial, trajectory


def at(history, step, seed, quantity):
    rows = history[
        (history.step == step) & (history.seed == seed) & (history.quantity == quantity)
    ]
    return rows["value"].item()


def test_log_spaced_steps():
    steps = log_spaced_steps(1000, 7)  # 0 and geomspace(1, 1000, 6), rounded
    assert steps == [0, 1, 4, 16, 63, 251, 1000]
    assert log_spaced_steps(5, 50) == [0, 1, 2, 3, 4, 5]
    assert log_spaced_steps(7, 1) == [0, 7]
    with pytest.raises(ValueError, match="n_points"):
        log_spaced_steps(10, 0)
    with pytest.raises(ValueError, match="n_steps must be an integer"):
        log_spaced_steps(10.0, 5)


@pytest.mark.parametrize("trainable", ["hidden", "all"])
def test_gradient_descent_seeds_together_equal_the_hand_written_loop(trainable):
    data, n_steps, lr, seed = triplet_data(), 12, 0.05, 3
    model = StackedModel(make_deep(trainable), n_seeds=3, seed=seed)
    fixed = {k: v.clone() for k, v in model.buffers.items()}
    result = gradient_descent(
        model, triplet_loss, data, n_steps, lr=lr, checkpoints=[0, 2, 5, 12]
    )
    history = result.history
    assert result.n_steps == n_steps and result.first_step.isna().all()
    assert sorted(history.step.unique()) == [0, 2, 5, 12]
    for i in range(3):
        module, initial, trajectory = hand_loop(
            make_deep(trainable), seed + i, data, n_steps, lr
        )
        for name, value in module.named_parameters():
            torch.testing.assert_close(
                model.params[name][i], value.detach(), rtol=1e-9, atol=1e-10
            )
        for step in (0, 2, 5, 12):
            loss, grad_norm, moved = trajectory[step]
            assert at(history, step, seed + i, "loss") == pytest.approx(loss, rel=1e-9)
            assert at(history, step, seed + i, "grad_norm") == pytest.approx(
                grad_norm, rel=1e-9
            )
            for name, distance in moved.items():
                assert at(history, step, seed + i, f"movement/{name}") == pytest.approx(
                    distance, rel=1e-7, abs=1e-12
                )
                relative = distance / float(initial[name].norm())
                assert at(
                    history, step, seed + i, f"relative_movement/{name}"
                ) == pytest.approx(relative, rel=1e-7, abs=1e-12)
            total = sum(d**2 for d in moved.values()) ** 0.5
            size = sum(float(p.norm()) ** 2 for p in initial.values()) ** 0.5
            assert at(history, step, seed + i, "movement") == pytest.approx(
                total, rel=1e-7, abs=1e-12
            )
            assert at(history, step, seed + i, "relative_movement") == pytest.approx(
                total / size, rel=1e-7, abs=1e-12
            )
    # the loss went down and fixed layers did not move
    table = wide(history).set_index(["step", "seed"])["loss"]
    assert (table.loc[12].to_numpy() < table.loc[0].to_numpy()).all()
    for name, value in model.buffers.items():
        assert torch.equal(value, fixed[name])


def test_gradient_descent_target_first_steps_and_stopping():
    data, lr, seed = triplet_data(1), 0.1, 0
    model = StackedModel(make_deep(), n_seeds=3, seed=seed)
    losses = [
        [t[0] for t in hand_loop(make_deep(), seed + i, data, 60, lr)[2]]
        for i in range(3)
    ]
    # reached by some seeds before step 25, not all: halfway between the median seed's
    # losses at steps 24 and 25, so that no crossing hangs on the last bit of a loss
    # (the stacked runs add in another order than the hand loop)
    median = sorted(losses, key=lambda seq: seq[25])[1]
    epsilon = (median[24] + median[25]) / 2
    assert min(abs(loss - epsilon) for seq in losses for loss in seq) > 1e-6 * epsilon
    expected = [
        next((t for t, loss in enumerate(seq) if loss <= epsilon), None)
        for seq in losses
    ]
    assert all(e is not None for e in expected) and len(set(expected)) > 1
    result = gradient_descent(
        model, triplet_loss, data, 60, lr=lr, target=("loss", epsilon), checkpoints=4
    )
    assert result.first_step.tolist() == expected
    assert list(result.first_step.index) == [0, 1, 2]
    assert result.n_steps == max(expected)
    steps = set(result.history.step)
    assert set(expected) <= steps and 0 in steps and max(steps) == max(expected)
    for i, step in enumerate(expected):
        assert at(result.history, step, seed + i, "loss") <= epsilon
    # without stopping: all max_steps are run, the first steps are the same
    model = StackedModel(make_deep(), n_seeds=3, seed=seed)
    result = gradient_descent(
        model,
        triplet_loss,
        data,
        60,
        lr=lr,
        target=("loss", epsilon),
        stop_at_target=False,
        checkpoints=4,
    )
    assert result.n_steps == 60 and result.first_step.tolist() == expected
    # a target no seed reaches
    model = StackedModel(make_deep(), n_seeds=2, seed=seed)
    result = gradient_descent(
        model, triplet_loss, data, 5, lr=lr, target=("grad_norm", 0.0)
    )
    assert (
        result.first_step.isna().all()
        and str(result.first_step.dtype) == "Int64"
        and result.n_steps == 5
    )


class TwoEncoders(nn.Module):
    """Wen's query and key encoders; the loss below uses both."""

    def __init__(self):
        super().__init__()
        self.query = DeepReLU(D_IN, WIDTH, 1, D_OUT, trainable="all").double()
        self.key = DeepReLU(D_IN, WIDTH, 1, D_OUT, trainable="all").double()

    def forward(self, x):
        return torch.stack([self.query(x), self.key(x)])


def two_encoder_loss(forward, data):
    anchor, positive, negative = data
    q, k_pos, k_neg = forward(anchor)[0], forward(positive)[1], forward(negative)[1]
    return F.softplus((q * (k_neg - k_pos)).sum(-1)).mean()


def test_gradient_descent_step_sizes_per_prefix_and_groups():
    data, n_steps, eta, gamma = triplet_data(2), 6, 0.3, 0.05
    model = StackedModel(TwoEncoders, n_seeds=2, seed=1)
    result = gradient_descent(
        model,
        two_encoder_loss,
        data,
        n_steps,
        lr={"query.": eta, "key.": gamma},
        groups={"W": "query.", "theta": "key."},
        checkpoints=[n_steps],
    )
    for i in range(2):
        torch.manual_seed(1 + i)
        module = TwoEncoders()
        initial = {n: p.detach().clone() for n, p in module.named_parameters()}
        for _ in range(n_steps):
            grads = torch.autograd.grad(
                two_encoder_loss(module, data), list(module.parameters())
            )
            with torch.no_grad():
                for (name, p), g in zip(module.named_parameters(), grads):
                    p -= (eta if name.startswith("query.") else gamma) * g
        for name, p in module.named_parameters():
            torch.testing.assert_close(
                model.params[name][i], p.detach(), rtol=1e-9, atol=1e-10
            )
        for group, prefix in {"W": "query.", "theta": "key."}.items():
            moved = (
                sum(
                    float((p.detach() - initial[n]).norm()) ** 2
                    for n, p in module.named_parameters()
                    if n.startswith(prefix)
                )
                ** 0.5
            )
            assert at(
                result.history, n_steps, 1 + i, f"movement/{group}"
            ) == pytest.approx(moved, rel=1e-7)


def test_gradient_descent_per_seed_data_and_evaluate():
    x = randn(2, 3, N_TRIPLETS, D_IN, seed=5).double()
    x = x / x.norm(dim=-1, keepdim=True)
    data = (x[:, 0], x[:, 1], x[:, 2])  # seed s trains on its own triplets
    model = StackedModel(make_deep(), n_seeds=2, seed=0)
    result = gradient_descent(
        model,
        triplet_loss,
        data,
        4,
        lr=0.1,
        shared=False,
        checkpoints=[2],
        evaluate=lambda m: {"out_norm": m(data[0][0]).norm(dim=-1).amax(-1)},
    )
    for i in range(2):
        module, _, trajectory = hand_loop(
            make_deep(), i, (x[i, 0], x[i, 1], x[i, 2]), 4, 0.1
        )
        assert at(result.history, 4, i, "loss") == pytest.approx(
            trajectory[4][0], rel=1e-9
        )
        expected = float(module(x[0, 0]).detach().norm(dim=-1).max())
        assert at(result.history, 4, i, "out_norm") == pytest.approx(expected, rel=1e-9)
    assert set(result.history.step) == {0, 2, 4}


def test_gradient_descent_is_deterministic_and_tidy():
    def go():
        model = StackedModel(make_deep(), n_seeds=2, seed=6)
        return gradient_descent(
            model, triplet_loss, triplet_data(), 8, lr=0.05, checkpoints=3
        )

    first, second = go(), go()
    pd.testing.assert_frame_equal(first.history, second.history, check_exact=True)
    assert list(first.history.columns) == ["step", "seed", "quantity", "value"]
    assert first.history["value"].dtype == "float64"
    assert not first.history.duplicated(["step", "seed", "quantity"]).any()
    assert sorted(first.history.step.unique()) == log_spaced_steps(8, 3)


def test_gradient_descent_divergence_raises():
    model = StackedModel(make_deep(), n_seeds=2)
    with pytest.raises(FloatingPointError, match="lr"):
        gradient_descent(model, triplet_loss, triplet_data(), 200, lr=1e6)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 2.5}, "max_steps"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("inf")}, "lr"),
        ({"lr": {"W1": 0.1}}, "lr"),  # W2 has no step size
        ({"lr": {"W": -0.1}}, "lr"),
        ({"target": ("accuracy", 0.1)}, "target"),
        ({"target": ("loss", float("nan"))}, "target"),
        ({"groups": {"outer": "A"}}, "groups"),  # A is a fixed buffer, not a parameter
        ({"checkpoints": 0}, "checkpoints"),
        ({"checkpoints": [1, 4]}, r"checkpoints\[1\] must be an integer 0\.\.3"),
        ({"checkpoints": [-1]}, r"checkpoints\[0\]"),
    ],
)
def test_gradient_descent_bad_arguments_raise(kwargs, argument):
    model = StackedModel(make_deep(), n_seeds=1)
    before = {k: v.detach().clone() for k, v in model.params.items()}
    arguments = {"max_steps": 3, "lr": 0.1, **kwargs}
    with pytest.raises(ValueError, match=argument):
        gradient_descent(
            model, triplet_loss, triplet_data(), arguments.pop("max_steps"), **arguments
        )
    for k, v in model.params.items():
        assert torch.equal(v, before[k])


# ---------------------------------------------------------------- the one loop


CENTRES = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], dtype=torch.float64)


def quadratic(params, seen):
    """gradient for loop: L_s(w, β) = β ‖w_s − c_s‖² / 2 + Σ w_s³ / 3 (each seed its own
    centre c_s), the β of each call appended to ``seen``."""

    def gradient(step, beta):
        seen.append((step, beta))
        w = params["w"]
        losses = beta * (w - CENTRES).square().sum(1) / 2 + w.pow(3).sum(1) / 3
        (grad,) = torch.autograd.grad(losses.sum(), [w])
        return Evaluation(losses.detach(), [grad], {"w0": w.detach()[:, 0].clone()})

    return gradient


def fresh_w():
    w = torch.tensor([[0.3, 0.1, -0.2], [0.5, -0.4, 0.2]], dtype=torch.float64)
    return {"w": w.requires_grad_(True)}


def test_loop_applies_the_step_size_and_beta_stages_as_stated():
    lr, factors, betas = 0.1, [(1.0, 1), (0.5, 2)], [(2.0, 2), (4.0, 1)]
    params, seen = fresh_w(), []
    history = loop(
        params,
        quadratic(params, seen),
        3,
        seeds=[0, 1],
        lr=lr,
        lr_factor=factors,
        beta=betas,
        full_batch=True,
    )
    # the hand-written loop: w ← w − (η a_t / β_t) ∇L(w, β_t), t = 0, 1, 2
    w = fresh_w()["w"].detach()
    for a, beta in [(1.0, 2.0), (0.5, 2.0), (0.5, 4.0)]:
        grad = beta * (w - CENTRES) + w.square()
        w = w - lr * a / beta * grad
    torch.testing.assert_close(params["w"], w, rtol=1e-12, atol=1e-12)
    # β_t reaches the objective; at t = T the last stage's
    assert seen == [(0, 2.0), (1, 2.0), (2, 4.0), (3, 4.0)]
    # and the history records it beside each step
    assert list(history.columns) == ["step", "beta", "seed", "quantity", "value"]
    assert dict(zip(history.step, history.beta)) == {0: 2.0, 3: 4.0}


def test_loop_bar_counts_the_update_steps_then_the_final_evaluation_runs():
    params, seen, wrapped = fresh_w(), [], []

    def bar(steps):
        wrapped.append(list(steps))
        return iter(wrapped[-1])

    loop(
        params,
        quadratic(params, seen),
        3,
        seeds=[0, 1],
        lr=0.1,
        full_batch=True,
        bar=bar,
    )
    assert wrapped == [[0, 1, 2]]  # a bar over them shows 3/3, not 4/3
    assert [t for t, _ in seen] == [0, 1, 2, 3]


def test_loop_adam_follows_torch_adam_with_the_scheduled_rate():
    params, seen = fresh_w(), []
    loop(
        params,
        quadratic(params, seen),
        3,
        seeds=[0, 1],
        lr=0.05,
        optimizer="adam",
        beta=[(0.5, 1), (2.0, 2)],
    )
    w = fresh_w()["w"]
    adam = torch.optim.Adam([w], lr=0.05)
    for beta in (0.5, 2.0, 2.0):
        adam.param_groups[0]["lr"] = 0.05 / beta
        adam.zero_grad()
        (beta * (w - CENTRES).square().sum() / 2 + w.pow(3).sum() / 3).backward()
        adam.step()
    torch.testing.assert_close(params["w"], w.detach(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_loop_a_seed_in_a_stack_equals_the_seed_alone(optimizer):
    both = fresh_w()
    loop(
        both,
        quadratic(both, []),
        4,
        seeds=[0, 1],
        lr=0.05,
        optimizer=optimizer,
        beta=[(1.5, 4)],
        full_batch=True,
    )
    for s in range(2):
        alone = {"w": fresh_w()["w"].detach()[s : s + 1].clone().requires_grad_()}

        def gradient(step, beta, alone=alone, s=s):
            w = alone["w"]
            loss = beta * (w - CENTRES[s]).square().sum(1) / 2 + w.pow(3).sum(1) / 3
            return Evaluation(loss.detach(), torch.autograd.grad(loss.sum(), [w]))

        loop(
            alone,
            gradient,
            4,
            seeds=[s],
            lr=0.05,
            optimizer=optimizer,
            beta=[(1.5, 4)],
            full_batch=True,
        )
        torch.testing.assert_close(both["w"][s], alone["w"][0], rtol=0, atol=0)


def test_full_batch_equals_minibatch_with_the_whole_set_as_the_batch():
    data, n_steps, lr, seed = triplet_data(), 6, 0.05, 2
    full = StackedModel(make_deep(), n_seeds=2, seed=seed)
    descent = gradient_descent(
        full, triplet_loss, data, n_steps, lr=lr, checkpoints=range(n_steps + 1)
    )
    mini = StackedModel(make_deep(), n_seeds=2, seed=seed)
    stacked = tuple(x.expand(2, *x.shape) for x in data)
    history = train(
        mini, triplet_loss, lambda step: stacked, n_steps, lr=lr, optimizer="sgd"
    )
    for name in full.params:
        torch.testing.assert_close(full.params[name], mini.params[name], rtol=0, atol=0)
    # train_loss at T: the mean of L(W^(t)), t = 0 … T − 1
    losses = wide(descent.history).set_index(["step", "seed"])["loss"]
    final = history[history.quantity == "train_loss"].set_index("seed")["value"]
    for s in (seed, seed + 1):
        expected = losses.xs(s, level="seed").loc[: n_steps - 1].mean()
        assert final[s] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("checkpoints", [[2, 9], [-1]])
def test_loop_rejects_checkpoints_outside_the_run(checkpoints):
    params = fresh_w()
    with pytest.raises(
        ValueError, match=r"checkpoints\[\d\] must be an integer 0\.\.5"
    ):
        loop(params, quadratic(params, []), 5, seeds=[0, 1], checkpoints=checkpoints)


@pytest.mark.parametrize("full_batch", [True, False])
def test_loop_history_schema_and_hooks_at_the_checkpoints(full_batch):
    params, calls = fresh_w(), []

    def on_checkpoint(step, evaluation):
        calls.append((step, evaluation is None))
        return {"w_norm": params["w"].norm(dim=1)}

    history = loop(
        params,
        quadratic(params, []),
        5,
        seeds=[7, 8],
        lr=0.01,
        full_batch=full_batch,
        checkpoints=[2, 2],
        on_checkpoint=on_checkpoint,
        every_step=["w0"],
    )
    assert list(history.columns) == ["step", "seed", "quantity", "value"]
    assert [str(history[c].dtype) for c in ("step", "seed", "value")] == [
        "int64",
        "int64",
        "float64",
    ]
    assert pd.api.types.is_string_dtype(history["quantity"])
    assert not history.duplicated(["step", "seed", "quantity"]).any()
    assert (
        history.groupby(["step", "quantity"])
        .seed.apply(sorted)
        .map(lambda s: s == [7, 8])
        .all()
    )
    # hooks at 0, the given checkpoints and the last step; no evaluation at
    # the last minibatch step (its batch is never drawn)
    assert calls == [(0, False), (2, False), (5, not full_batch)]
    steps = history.groupby("quantity").step.apply(lambda s: sorted(set(s))).to_dict()
    evaluated = [0, 1, 2, 3, 4, 5] if full_batch else [0, 1, 2, 3, 4]
    loss = {"loss": [0, 2, 5]} if full_batch else {"train_loss": [2, 5]}
    assert steps == {"w0": evaluated, "w_norm": [0, 2, 5], **loss}
    w_norm = history[(history.step == 5) & (history.quantity == "w_norm")]
    torch.testing.assert_close(
        torch.tensor(w_norm.value.to_numpy()), params["w"].norm(dim=1)
    )


def test_loop_stops_at_the_target_and_raises_on_divergence():
    params = fresh_w()
    history = loop(
        params,
        quadratic(params, []),
        500,
        seeds=[0, 1],
        lr=0.2,
        full_batch=True,
        target=("loss", -0.5),
    )
    table = wide(history)
    last = table.step.max()
    assert last < 500 and (table[table.step == last]["loss"] <= -0.5).all()
    params = {"w": torch.full((2, 3), 10.0, dtype=torch.float64, requires_grad=True)}
    with pytest.raises(FloatingPointError, match="step size"):
        loop(params, quadratic(params, []), 50, seeds=[0, 1], lr=5.0, full_batch=True)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"n_steps": -1}, "n_steps"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"lr": {"v": 0.1}}, "lr"),
        ({"lr": 0.0}, "lr"),
        ({"beta": [(1.0, 2)]}, "beta must cover"),
        ({"beta": [(0.0, 3)]}, "beta"),
        ({"lr_factor": []}, "lr_factor"),
        ({"lr_factor": [(1.0, 1.5), (1.0, 2)]}, "lr_factor"),
        ({"target": ("loss",)}, "target"),
        ({"target": ("loss", float("inf"))}, "target"),
        ({"target": ("accuracy", 0.1)}, "target quantity"),
    ],
)
def test_loop_bad_arguments_raise(kwargs, argument):
    params, before = fresh_w(), fresh_w()["w"].detach()
    arguments = {"n_steps": 3, "lr": 0.1, "full_batch": True, **kwargs}
    with pytest.raises(ValueError, match=argument):
        loop(
            params,
            quadratic(params, []),
            arguments.pop("n_steps"),
            seeds=[0, 1],
            **arguments,
        )
    assert torch.equal(params["w"], before)


def test_loop_checks_the_shapes_of_the_evaluations():
    params = fresh_w()
    with pytest.raises(ValueError, match=r"loss of shape \(len\(seeds\),\) = \(3,\)"):
        loop(params, quadratic(params, []), 2, seeds=[0, 1, 2], lr=0.1)
    assert torch.equal(params["w"], fresh_w()["w"])


def test_check_stages():
    assert check_stages("s", [(0.5, 2), (3, 0)]) == [(0.5, 2), (3.0, 0)]
    with pytest.raises(ValueError, match="s must not be empty"):
        check_stages("s", [])
    with pytest.raises(ValueError, match="s must be a list"):
        check_stages("s", [(1.0, -1)])


# ---------------------------------------------------------------- weight decay


def test_train_sgd_step_with_weight_decay_is_written_out():
    lr, decay, n_seeds, seed = 0.1, 0.3, 2, 5
    x, y = fixed_batches(1, n_seeds, seed=2)
    model = StackedModel(make_mlp, n_seeds, seed=seed)
    train(
        model,
        regression_loss,
        lambda step: (x[step], y[step]),
        1,
        lr=lr,
        optimizer="sgd",
        weight_decay=decay,
        desc=None,
    )
    for i in range(n_seeds):
        torch.manual_seed(seed + i)
        module = make_mlp()
        loss = regression_loss(module, (x[1, i], y[1, i]))
        names = [name for name, _ in module.named_parameters()]
        grads = torch.autograd.grad(loss, list(module.parameters()))
        for name, w, g in zip(names, module.parameters(), grads):
            expected = w.detach() - lr * (g + decay * w.detach())
            torch.testing.assert_close(
                model.params[name][i].detach(), expected, rtol=1e-6, atol=1e-7
            )
            # the decay term is not negligible here
            without = w.detach() - lr * g
            assert not torch.allclose(expected, without, rtol=0, atol=1e-4)


def test_loop_sgd_with_weight_decay_follows_the_hand_written_loop():
    lr, decay = 0.1, 0.4
    params = fresh_w()
    loop(
        params,
        quadratic(params, []),
        3,
        seeds=[0, 1],
        lr=lr,
        weight_decay=decay,
        full_batch=True,
    )
    w = fresh_w()["w"].detach()
    for _ in range(3):
        grad = (w - CENTRES) + w.square()
        w = w - lr * (grad + decay * w)
    torch.testing.assert_close(params["w"], w, rtol=1e-12, atol=1e-12)


def test_train_adam_with_weight_decay_follows_torch_adam():
    lr, decay, n_steps, seed = 0.05, 0.2, 3, 1
    x, y = fixed_batches(n_steps, 1, seed=3, classes=True)
    model = StackedModel(make_classifier, 1, seed=seed)
    train(
        model,
        classification_loss,
        lambda step: (x[step], y[step]),
        n_steps,
        lr=lr,
        optimizer="adam",
        weight_decay=decay,
        desc=None,
    )
    torch.manual_seed(seed)
    module = make_classifier()
    adam = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=decay)
    for step in range(1, n_steps + 1):
        adam.zero_grad()
        classification_loss(module, (x[step, 0], y[step, 0])).backward()
        adam.step()
    torch.manual_seed(seed)
    plain = make_classifier()
    adam = torch.optim.Adam(plain.parameters(), lr=lr)
    for step in range(1, n_steps + 1):
        adam.zero_grad()
        classification_loss(plain, (x[step, 0], y[step, 0])).backward()
        adam.step()
    moved_apart = 0.0
    for (name, value), other in zip(module.named_parameters(), plain.parameters()):
        torch.testing.assert_close(
            model.params[name][0].detach(), value.detach(), rtol=1e-5, atol=1e-6
        )
        moved_apart = max(moved_apart, float((value - other).detach().abs().max()))
    assert moved_apart > 1e-4  # the decay changed the trajectory


def test_loop_adam_with_weight_decay_follows_torch_adam():
    lr, decay = 0.05, 0.5
    params = fresh_w()
    loop(
        params,
        quadratic(params, []),
        3,
        seeds=[0, 1],
        lr=lr,
        optimizer="adam",
        weight_decay=decay,
    )
    w = fresh_w()["w"]
    adam = torch.optim.Adam([w], lr=lr, weight_decay=decay)
    for _ in range(3):
        adam.zero_grad()
        ((w - CENTRES).square().sum() / 2 + w.pow(3).sum() / 3).backward()
        adam.step()
    torch.testing.assert_close(params["w"], w.detach(), rtol=1e-12, atol=1e-12)
    # and the decay changed the trajectory
    plain = fresh_w()
    loop(plain, quadratic(plain, []), 3, seeds=[0, 1], lr=lr, optimizer="adam")
    assert not torch.allclose(plain["w"], params["w"], rtol=0, atol=1e-6)


@pytest.mark.parametrize("decay", [-0.1, float("nan"), float("inf"), True, "0.1"])
def test_bad_weight_decay_raises(decay):
    model = StackedModel(make_mlp, 1)
    before = {k: v.detach().clone() for k, v in model.params.items()}
    with pytest.raises(ValueError, match="weight_decay"):
        train(
            model,
            regression_loss,
            lambda step: (randn(1, BATCH, IN), randn(1, BATCH, OUT)),
            2,
            lr=0.01,
            weight_decay=decay,
            desc=None,
        )
    for k, v in model.params.items():
        assert torch.equal(v, before[k])
    params = fresh_w()
    with pytest.raises(ValueError, match="weight_decay"):
        loop(
            params,
            quadratic(params, []),
            2,
            seeds=[0, 1],
            lr=0.1,
            weight_decay=decay,
            full_batch=True,
        )
    assert torch.equal(params["w"], fresh_w()["w"])


def test_member_norms_of_a_transposed_stack_equal_the_flattened_sums():
    stacked = randn64(3, 5, 4)
    transposed = stacked.transpose(1, 2)  # not contiguous, as a stacked layer's grad
    expected = transposed.reshape(3, -1).square().sum(1).sqrt()
    torch.testing.assert_close(member_norms(transposed), expected, rtol=1e-14, atol=0)
    together = combined_norm([member_norms(stacked), member_norms(stacked[:, 0])])
    by_hand = (stacked.square().sum((1, 2)) + stacked[:, 0].square().sum(1)).sqrt()
    torch.testing.assert_close(together, by_hand, rtol=1e-14, atol=0)


def test_member_norms_need_a_member_axis():
    with pytest.raises(ValueError, match="member axis"):
        member_norms(torch.tensor(2.0))


# ---------------------------------------------------------------- seeds and subsets


def test_from_seeds_members_start_from_their_seeds():
    def make():
        return nn.Linear(6, 2)

    model = StackedModel.from_seeds(make, [3, 0, 3])
    x = torch.rand(4, 6)
    out = model(x)
    torch.testing.assert_close(
        out[0], StackedModel(make, 1, seed=3)(x)[0], rtol=0, atol=0
    )
    torch.testing.assert_close(
        out[1], StackedModel(make, 1, seed=0)(x)[0], rtol=0, atol=0
    )
    torch.testing.assert_close(out[0], out[2], rtol=0, atol=0)
    assert model.seeds == [3, 0, 3] and model.n_seeds == 3
    for bad in ([], "0", [1.5], [-1]):
        with pytest.raises(ValueError, match="seeds"):
            StackedModel.from_seeds(make, bad)


def test_tiled_is_config_major_over_seeds():
    model = StackedModel.tiled(lambda: nn.Linear(4, 3), n_seeds=2, n_configs=3)
    assert model.seeds == [0, 1] * 3
    out = model(torch.rand(5, 4))
    torch.testing.assert_close(out[0], out[4], rtol=0, atol=0)
    assert not torch.equal(out[0], out[1])


def test_subset_is_a_stacked_model_of_the_chosen_members():
    model = StackedModel.tiled(lambda: nn.Linear(64, 3), n_seeds=3, n_configs=2)
    x = torch.rand(4, 64)
    chosen = model.subset([1, 4])
    assert isinstance(chosen, StackedModel) and chosen.n_seeds == 2
    assert chosen.seeds == [1, 1]
    torch.testing.assert_close(chosen(x), model(x)[[1, 4]], rtol=0, atol=0)
    for bad in ([6], [], [-1], "1"):
        with pytest.raises(ValueError, match="indices"):
            model.subset(bad)
    with torch.no_grad():  # a copy: training the subset leaves the model alone
        chosen.params["weight"].add_(1.0)
    torch.testing.assert_close(model(x)[[1, 4]], model.subset([1, 4])(x))


def test_loop_records_the_configuration_columns_on_every_record():
    model = StackedModel.from_seeds(lambda: nn.Linear(3, 1), [0, 0, 1])
    data = torch.rand(3, 4, 3)
    configuration = pd.DataFrame({"loss": ["a", "b", "a"], "alpha": [1.0, 2.0, 1.0]})
    history = train(
        model,
        lambda forward, x: forward(x).pow(2).mean(),
        lambda step: data,
        3,
        eval_steps=[1],
        desc=None,
        configuration=configuration,
    )
    assert list(history.columns) == [
        "step",
        "seed",
        "quantity",
        "value",
        "loss",
        "alpha",
    ]
    assert history["seed"].tolist()[:3] == [0, 0, 1]
    assert history["loss"].tolist()[:3] == ["a", "b", "a"]
    table = wide(history)
    assert len(table) == 2 * 3  # steps 1 and 3, three members
    for bad in (configuration.iloc[:2], configuration.assign(seed=0)):
        with pytest.raises(ValueError, match="configuration"):
            train(
                model,
                lambda forward, x: forward(x).pow(2).mean(),
                lambda step: data,
                1,
                desc=None,
                configuration=bad,
            )


def test_stacked_call_without_gradients_equals_the_call_with_them():
    # the chunked path (⌈1000 / S⌉ inputs at a time) against one vmapped call
    model = StackedModel(ConvNet, 3, seed=0)
    x = torch.randn(700, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    whole = model(x).detach()
    with torch.no_grad():
        chunked = model(x)
    assert chunked.shape == (3, 700, 32)
    assert torch.allclose(chunked, whole, rtol=0, atol=1e-6)


# ---------------------------------------------------------------- bad calls


def _linear():
    return nn.Linear(2, 1)


def _mean_output(forward, batch):
    return forward(batch).mean()


_TWO = StackedModel(_linear, 2)
_BATCH = torch.randn(2, 4, 2, generator=torch.Generator().manual_seed(0))
_DATA = torch.randn(4, 2, generator=torch.Generator().manual_seed(1))


def _zero_gradient(step, beta):
    return Evaluation(torch.zeros(2), [torch.ones(2, 3)])


def _params():
    return {"w": torch.zeros(2, 3, requires_grad=True)}


_HISTORY = pd.DataFrame(
    {"step": [0, 0], "seed": [0, 0], "quantity": ["a", "b"], "value": [1.0, 2.0]}
)

BAD_CALLS = [
    bad_call(training.StackedModel, "n_seeds", _linear, 0),
    bad_call(training.StackedModel, "n_seeds", _linear, 2.5),
    bad_call(training.StackedModel, "make_module", "linear", 2),
    bad_call(training.StackedModel, "device", _linear, 2, device="bogus"),
    # 10⁷ members, built one by one in a Python loop: refused by count at once
    bad_call(training.StackedModel, "n_seeds=10,000,000 give", _linear, 10**7),
    bad_call(training.StackedModel.from_seeds, "seeds", _linear, []),
    bad_call(training.StackedModel.from_seeds, r"seeds\[0\]", _linear, [-1]),
    bad_call(training.StackedModel.from_seeds, r"len\(seeds\)", _linear, range(10**9)),
    bad_call(training.StackedModel.tiled, "n_configs", _linear, 2, 0),
    bad_call(
        training.StackedModel.tiled, "n_seeds=10,000, n_configs", _linear, 10**4, 10**4
    ),
    bad_call(_TWO.subset, "indices", [0, 2]),
    bad_call(_TWO.subset, "indices", []),
    bad_call(_TWO.subset, r"len\(indices\)=1,000,000 give", range(10**6)),
    bad_call(_TWO.seed_module, "index", 2),
    bad_call(_TWO.seed_module, "index", -1),
    bad_call(training.check_stages, "beta must not be empty", "beta", []),
    bad_call(
        training.check_stages, "lr_factor must be a list", "lr_factor", [(0.0, 2)]
    ),
    bad_call(training.combined_norm, "norms", []),
    bad_call(training.combined_norm, r"norms\[1\]", [torch.ones(2), torch.ones(3)]),
    bad_call(training.member_norms, "tensor", torch.tensor(2.0)),
    bad_call(training.member_norms, "tensor", torch.ones(2, 3, dtype=torch.long)),
    bad_call(training.log_spaced_steps, "n_points", 10, 0),
    bad_call(training.log_spaced_steps, "n_steps", 10.0, 5),
    bad_call(training.loop, "gradient", _params(), "gradient", 2, seeds=[0, 1]),
    bad_call(training.loop, "n_steps", _params(), _zero_gradient, -1, seeds=[0, 1]),
    bad_call(training.loop, r"seeds\[0\]", _params(), _zero_gradient, 2, seeds=[-1]),
    bad_call(
        training.loop,
        "optimizer",
        _params(),
        _zero_gradient,
        2,
        seeds=[0, 1],
        optimizer="rmsprop",
    ),
    bad_call(
        training.loop,
        "weight_decay",
        _params(),
        _zero_gradient,
        2,
        seeds=[0, 1],
        weight_decay=-0.1,
    ),
    bad_call(training.train, "model", "model", _mean_output, lambda t: _BATCH, 2),
    bad_call(training.train, "loss_fn", _TWO, None, lambda t: _BATCH, 2),
    bad_call(training.train, "sample_batch", _TWO, _mean_output, _BATCH, 2),
    bad_call(training.train, "n_steps", _TWO, _mean_output, lambda t: _BATCH, 0),
    bad_call(
        training.gradient_descent, "max_steps", _TWO, _mean_output, _DATA, 0, lr=0.1
    ),
    bad_call(
        training.gradient_descent, "model", "model", _mean_output, _DATA, 2, lr=0.1
    ),
    bad_call(
        training.gradient_descent,
        "target",
        _TWO,
        _mean_output,
        _DATA,
        2,
        lr=0.1,
        target=("accuracy", 0.1),
    ),
    bad_call(training.wide, "history", _HISTORY.drop(columns="value")),
    bad_call(training.wide, "history", _HISTORY.to_dict("list")),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
