"""Tests of ccl_helpers.distributed: two CPU processes (gloo) against the single-process
run on the concatenated batch (loss, embedding gradients, a DDP step, a short DDP
training run), each rank's shard of a global batch, the failure of plain all_gather that
gather_with_grad fixes, and the bad calls.

The two processes are started once per module (spawn, a free port found at run time,
every join under a timeout); each writes its results to a file that the tests compare
with the single-process reference in float64.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import socket
import time
import traceback
import warnings
from pathlib import Path

import pytest
import torch
from bad_calls import bad_call
from torch import nn

from ccl_helpers import distributed
from ccl_helpers.losses import nt_xent_loss

WORLD_SIZE = 2
LOCAL_BATCH = 3  # b per rank; global B = 6
DIM_IN, DIM = 5, 4
TEMPERATURE = 0.3
SGD_LR = 0.1
ADAM_LR, ADAM_STEPS = 0.05, 3
JOIN_TIMEOUT_S = 90.0  # the processes need ~5 s; this only guards against a hang
TOL = 1e-6


def make_inputs() -> dict[str, torch.Tensor]:
    """The fixed global batch: embeddings (B, d) of two views, and encoder inputs (B,
    d_in)."""
    g = torch.Generator().manual_seed(1234)
    B = WORLD_SIZE * LOCAL_BATCH
    return {
        name: torch.randn(B, size, generator=g, dtype=torch.float64)
        for name, size in (("z1", DIM), ("z2", DIM), ("x1", DIM_IN), ("x2", DIM_IN))
    }


def make_encoder() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(DIM_IN, DIM, dtype=torch.float64)


def adam_views(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global views (B, d_in) of step ``step`` of the short training run."""
    g = torch.Generator().manual_seed(100 + step)
    B = WORLD_SIZE * LOCAL_BATCH
    return (
        torch.randn(B, DIM_IN, generator=g, dtype=torch.float64),
        torch.randn(B, DIM_IN, generator=g, dtype=torch.float64),
    )


def shard(tensor: torch.Tensor, rank: int) -> torch.Tensor:
    return tensor[rank * LOCAL_BATCH : (rank + 1) * LOCAL_BATCH]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------
# What each of the two processes runs


def plain_all_gather(tensor: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """The common mistake: torch.distributed.all_gather, whose outputs carry no autograd
    history."""
    parts = [torch.empty_like(tensor) for _ in range(distributed.world_size())]
    torch.distributed.all_gather(parts, tensor.contiguous())
    return torch.cat(parts, dim=dim)


def plain_all_gather_own_slot(tensor: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """The usual workaround: plain all_gather, then the local tensor (with grad) put
    back in its slot."""
    parts = [torch.empty_like(tensor) for _ in range(distributed.world_size())]
    torch.distributed.all_gather(parts, tensor.contiguous())
    parts[distributed.rank()] = tensor
    return torch.cat(parts, dim=dim)


def run_checks(rank: int, inputs: dict[str, torch.Tensor]) -> dict:
    out: dict = {
        "rank": rank,
        "world_size": distributed.world_size(),
        "is_distributed": distributed._is_distributed(),
    }

    # (a), (b): the loss and the gradients w.r.t. the local embeddings.
    z1 = shard(inputs["z1"], rank).clone().requires_grad_(True)
    z2 = shard(inputs["z2"], rank).clone().requires_grad_(True)
    with warnings.catch_warnings(record=True) as caught:  # e.g. a deprecated gather
        warnings.simplefilter("always")
        loss = distributed.nt_xent_loss_distributed(z1, z2, TEMPERATURE)
        loss.backward()
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    out.update(loss=loss.detach(), z1_grad=z1.grad, z2_grad=z2.grad)
    with torch.no_grad():
        out["per_anchor"] = distributed.nt_xent_loss_distributed(
            z1, z2, TEMPERATURE, reduction="none"
        )
        out["loss_sum"] = distributed.nt_xent_loss_distributed(
            z1, z2, TEMPERATURE, reduction="sum"
        )
    gathered = distributed.gather_with_grad(z1, dim=0)
    out["gathered_requires_grad"] = gathered.requires_grad
    out["gathered"] = gathered.detach()

    # The failure that gather_with_grad fixes, by swapping the gather inside the same
    # loss.
    original = distributed.gather_with_grad
    try:
        distributed.gather_with_grad = plain_all_gather
        plain_loss = distributed.nt_xent_loss_distributed(z1, z2, TEMPERATURE)
        out["plain_requires_grad"] = plain_loss.requires_grad
        out["plain_loss"] = plain_loss.detach()
        distributed.gather_with_grad = plain_all_gather_own_slot
        w1, w2 = (
            z1.detach().clone().requires_grad_(True),
            z2.detach().clone().requires_grad_(True),
        )
        distributed.nt_xent_loss_distributed(w1, w2, TEMPERATURE).backward()
        out.update(own_slot_z1_grad=w1.grad, own_slot_z2_grad=w2.grad)
    finally:
        distributed.gather_with_grad = original

    # The DDP path: one SGD step of a linear encoder (ddp_train's step, with SGD).
    model = distributed._wrap_ddp(make_encoder())
    out["wrapped_in_ddp"] = isinstance(model, nn.parallel.DistributedDataParallel)
    optimizer = torch.optim.SGD(model.parameters(), lr=SGD_LR)
    out["ddp_loss"] = distributed._ddp_backward(
        model, shard(inputs["x1"], rank), shard(inputs["x2"], rank), TEMPERATURE
    )
    optimizer.step()
    out["ddp_grads"] = {
        n: p.grad.detach().clone() for n, p in model.module.named_parameters()
    }
    out["ddp_params"] = {
        n: p.detach().clone() for n, p in model.module.named_parameters()
    }

    # A short Adam run through ddp_train.
    def sample_views(step: int):
        x1, x2 = adam_views(step)
        return shard(x1, rank), shard(x2, rank)

    trained, history = distributed.ddp_train(
        make_encoder(), sample_views, ADAM_STEPS, temperature=TEMPERATURE, lr=ADAM_LR
    )
    out["train_history"] = history[["step", "seed", "quantity"]].to_dict("list")
    out["train_losses"] = history["value"].tolist()
    out["train_returns_encoder"] = not isinstance(
        trained, nn.parallel.DistributedDataParallel
    )
    out["train_params"] = {n: p.detach().clone() for n, p in trained.named_parameters()}

    # Each rank's shard of a global batch: rows rank * b .. rank * b + b - 1, along any
    # dim.
    out["shard"] = distributed.local_shard(inputs["x1"])
    out["shard_dim1"] = distributed.local_shard(inputs["x1"].T, dim=1)
    try:
        distributed.local_shard(torch.zeros(WORLD_SIZE * LOCAL_BATCH + 1, DIM))
        out["shard_error"] = None
    except ValueError as error:
        out["shard_error"] = str(error)

    # Different local batch sizes: a ValueError on every rank, no hang.
    uneven = torch.zeros(LOCAL_BATCH + rank, DIM, dtype=torch.float64)
    try:
        distributed.gather_with_grad(uneven)
        out["uneven_error"] = None
    except ValueError as error:
        out["uneven_error"] = str(error)
    return out


def worker(rank: int, port: int, inputs_path: str, out_dir: str) -> None:
    """One rank: join the gloo group, run the checks, save the results (or the
    traceback)."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(WORLD_SIZE),
        LOCAL_RANK=str(rank),
    )
    torch.set_num_threads(int(os.environ.get("CCL_THREADS", "1")))
    try:
        torch.distributed.init_process_group(
            "gloo",
            rank=rank,
            world_size=WORLD_SIZE,
            timeout=datetime.timedelta(seconds=30),
        )
        results = run_checks(rank, torch.load(inputs_path))
        torch.save(results, Path(out_dir) / f"rank{rank}.pt")
    except BaseException:
        (Path(out_dir) / f"rank{rank}.err").write_text(traceback.format_exc())
        raise
    finally:
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> list[dict]:
    """Run the checks in 2 spawned processes; return each rank's results."""
    directory = tmp_path_factory.mktemp("distributed")
    inputs_path = directory / "inputs.pt"
    torch.save(make_inputs(), inputs_path)
    context = multiprocessing.get_context("spawn")
    port = free_port()
    processes = [
        context.Process(
            target=worker, args=(r, port, str(inputs_path), str(directory)), daemon=True
        )
        for r in range(WORLD_SIZE)
    ]
    for process in processes:
        process.start()
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    for process in processes:
        process.join(timeout=max(deadline - time.monotonic(), 0.1))
    hung = [r for r, p in enumerate(processes) if p.is_alive()]
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(timeout=5)
    errors = {
        r: (directory / f"rank{r}.err").read_text()
        for r in range(WORLD_SIZE)
        if (directory / f"rank{r}.err").exists()
    }
    if hung or errors or any(p.exitcode != 0 for p in processes):
        details = "\n".join(f"rank {r}:\n{e}" for r, e in errors.items())
        pytest.fail(
            f"distributed workers failed: hung ranks {hung}, exit codes "
            f"{[p.exitcode for p in processes]}, errors:\n{details}"
        )
    return [torch.load(directory / f"rank{r}.pt") for r in range(WORLD_SIZE)]


@pytest.fixture(scope="module")
def single() -> dict:
    """The single-process reference on the concatenated batch."""
    inputs = make_inputs()
    z1, z2 = (
        inputs["z1"].clone().requires_grad_(True),
        inputs["z2"].clone().requires_grad_(True),
    )
    loss = nt_xent_loss(z1, z2, TEMPERATURE)
    loss.backward()
    ref = {
        "loss": loss.detach(),
        "z1_grad": z1.grad,
        "z2_grad": z2.grad,
        "per_anchor": nt_xent_loss(
            inputs["z1"], inputs["z2"], TEMPERATURE, reduction="none"
        ),
        "loss_sum": nt_xent_loss(
            inputs["z1"], inputs["z2"], TEMPERATURE, reduction="sum"
        ),
    }

    model = make_encoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=SGD_LR)
    z1, z2 = model(torch.cat([inputs["x1"], inputs["x2"]])).chunk(2)
    loss = nt_xent_loss(z1, z2, TEMPERATURE)
    loss.backward()
    optimizer.step()
    ref.update(
        ddp_loss=loss.detach(),
        ddp_grads={n: p.grad.clone() for n, p in model.named_parameters()},
        ddp_params={n: p.detach().clone() for n, p in model.named_parameters()},
    )

    model = make_encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=ADAM_LR)
    losses = []
    for step in range(1, ADAM_STEPS + 1):
        optimizer.zero_grad()
        z1, z2 = model(torch.cat(adam_views(step))).chunk(2)
        loss = nt_xent_loss(z1, z2, TEMPERATURE)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ref.update(
        train_losses=losses,
        train_params={n: p.detach().clone() for n, p in model.named_parameters()},
    )
    return ref


def close(actual, expected) -> None:
    torch.testing.assert_close(actual, expected, rtol=0, atol=TOL)


# --------------------------------------------------------------------------------------
# Two processes vs one


def test_workers_ran_distributed(ranks):
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["world_size"] == WORLD_SIZE and r["is_distributed"] for r in ranks)


def test_gather_and_its_backward_warn_nothing(ranks):
    """No deprecation or other warning from the gather under the installed torch."""
    assert [r["warnings"] for r in ranks] == [[]] * len(ranks)


def test_gather_concatenates_in_rank_order(ranks):
    inputs = make_inputs()
    for r in ranks:
        close(r["gathered"], inputs["z1"])
        assert r["gathered_requires_grad"]


def test_loss_equals_single_process(ranks, single):
    # (a) the mean over ranks of the ranks' mean losses is nt_xent_loss on the
    # concatenated batch
    close(sum(r["loss"] for r in ranks) / WORLD_SIZE, single["loss"])
    close(sum(r["loss_sum"] for r in ranks), single["loss_sum"])
    # per anchor: rank r holds [z1 rows of its shard, z2 rows of its shard]
    B = WORLD_SIZE * LOCAL_BATCH
    for rank, r in enumerate(ranks):
        rows = torch.cat(
            [
                torch.arange(rank * LOCAL_BATCH, (rank + 1) * LOCAL_BATCH),
                B + torch.arange(rank * LOCAL_BATCH, (rank + 1) * LOCAL_BATCH),
            ]
        )
        close(r["per_anchor"], single["per_anchor"][rows])


def test_embedding_gradients_equal_single_process(ranks, single):
    # (b) each rank's backward gives its local embeddings the gradient of the sum of the
    # ranks' losses, sum_r L_r = W * nt_xent_loss(concatenated): W times the
    # single-process gradient (DDP's average over ranks divides by W, see the parameter
    # test below).
    for rank, r in enumerate(ranks):
        close(r["z1_grad"], WORLD_SIZE * shard(single["z1_grad"], rank))
        close(r["z2_grad"], WORLD_SIZE * shard(single["z2_grad"], rank))


def test_ddp_step_equals_single_process(ranks, single):
    for r in ranks:
        assert r["wrapped_in_ddp"]
        close(r["ddp_loss"], single["ddp_loss"])
        assert r["ddp_grads"].keys() == single["ddp_grads"].keys()
        for name, grad in single["ddp_grads"].items():
            close(r["ddp_grads"][name], grad)
            close(r["ddp_params"][name], single["ddp_params"][name])


def test_ddp_train_equals_single_process(ranks, single):
    for r in ranks:
        assert r["train_returns_encoder"]
        assert r["train_history"] == {  # one run, the same frame on every rank
            "step": list(range(ADAM_STEPS)),
            "seed": [0] * ADAM_STEPS,
            "quantity": ["loss"] * ADAM_STEPS,
        }
        close(
            torch.tensor(r["train_losses"], dtype=torch.float64),
            torch.tensor(single["train_losses"], dtype=torch.float64),
        )
        for name, value in single["train_params"].items():
            close(r["train_params"][name], value)


def test_plain_all_gather_loses_gradients(ranks, single):
    for rank, r in enumerate(ranks):
        # the same loss value ...
        close(r["plain_loss"], r["loss"])
        # ... but without history: backward would fail, the negatives train nothing
        assert not r["plain_requires_grad"]
        # and the usual workaround (own slot put back) misses the other rank's terms
        correct = WORLD_SIZE * shard(single["z1_grad"], rank)
        assert (r["own_slot_z1_grad"] - correct).abs().max() > 1e-2
        assert (
            r["own_slot_z2_grad"] - WORLD_SIZE * shard(single["z2_grad"], rank)
        ).abs().max() > 1e-2


def test_local_shard_takes_the_rank_block(ranks):
    inputs = make_inputs()
    for rank, r in enumerate(ranks):
        close(r["shard"], shard(inputs["x1"], rank))
        close(r["shard_dim1"], shard(inputs["x1"], rank).T)
        assert (
            r["shard_error"] is not None
            and "world_size = 2 equal shards" in r["shard_error"]
        )


def test_uneven_shapes_raise_on_every_rank(ranks):
    for r in ranks:
        assert (
            r["uneven_error"] is not None
            and "same shape on every rank" in r["uneven_error"]
        )


# --------------------------------------------------------------------------------------
# One process (not distributed)


def test_single_process_helpers():
    assert not distributed._is_distributed()
    assert distributed.rank() == 0 and distributed.world_size() == 1
    tensor = torch.randn(3, 2)
    assert distributed.gather_with_grad(tensor) is tensor
    assert torch.equal(distributed.local_shard(tensor), tensor)
    assert torch.equal(distributed.local_shard(tensor, dim=1), tensor)


@pytest.mark.parametrize("lead", [(), (2,)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_single_process_loss_is_nt_xent(lead, reduction):
    g = torch.Generator().manual_seed(0)
    z1 = torch.randn(*lead, 4, 3, generator=g, dtype=torch.float64, requires_grad=True)
    z2 = torch.randn(*lead, 4, 3, generator=g, dtype=torch.float64, requires_grad=True)
    ours = distributed.nt_xent_loss_distributed(z1, z2, 0.5, reduction)
    reference = nt_xent_loss(z1, z2, 0.5, reduction)
    close(ours, reference)
    grads = torch.autograd.grad(ours.sum(), (z1, z2))
    close(grads, torch.autograd.grad(reference.sum(), (z1, z2)))


def test_single_process_training_runs_without_torchrun(monkeypatch, capsys):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("CI", raising=False)  # CI silences progress bars
    device = distributed.init_from_env()
    assert isinstance(device, torch.device) and not distributed._is_distributed()
    model = make_encoder()
    assert distributed._wrap_ddp(model) is model

    def sample_views(step):
        x1, x2 = adam_views(step)
        return x1, x2

    _, history = distributed.ddp_train(
        model, sample_views, 2, temperature=TEMPERATURE, lr=ADAM_LR, desc="ddp test"
    )
    assert list(history.columns) == ["step", "seed", "quantity", "value"]
    assert history["step"].tolist() == [0, 1] and history["seed"].tolist() == [0, 0]
    assert set(history["quantity"]) == {"loss"}
    assert torch.isfinite(torch.tensor(history["value"].to_numpy())).all()
    assert "ddp test" in capsys.readouterr().err  # rank 0's progress bar


# --------------------------------------------------------------------------------------
# Argument validation

Z = torch.randn(4, 3)


def _views(step):
    return Z, Z


BAD_CALLS = [
    bad_call(distributed.gather_with_grad, "tensor", [1.0, 2.0]),
    bad_call(distributed.gather_with_grad, "tensor", torch.tensor(1.0)),
    bad_call(distributed.gather_with_grad, "dim", Z, dim=2),
    bad_call(distributed.gather_with_grad, "dim", Z, dim=-3),
    bad_call(distributed.gather_with_grad, "dim", Z, dim=True),
    bad_call(distributed.gather_with_grad, "dim", Z, dim=0.0),
    bad_call(distributed.gather_with_grad, "tensor", torch.zeros((1,) * 17)),
    bad_call(distributed.local_shard, "batch", [1.0, 2.0]),
    bad_call(distributed.local_shard, "dim", Z, dim=2),
    bad_call(distributed.nt_xent_loss_distributed, "z1", Z.long(), Z),
    bad_call(distributed.nt_xent_loss_distributed, "z2", Z, Z[:3]),
    bad_call(distributed.nt_xent_loss_distributed, "z1", Z[0], Z[0]),
    bad_call(distributed.nt_xent_loss_distributed, "z1 and z2", Z[:1], Z[:1]),
    bad_call(distributed.nt_xent_loss_distributed, "temperature", Z, Z, 0.0),
    bad_call(distributed.nt_xent_loss_distributed, "temperature", Z, Z, float("nan")),
    bad_call(distributed.nt_xent_loss_distributed, "reduction", Z, Z, reduction="max"),
    bad_call(distributed.init_from_env, "backend", backend="mpi"),
    bad_call(distributed.init_from_env, "timeout_s", timeout_s=0),
    bad_call(
        distributed.init_from_env, "WORLD_SIZE", environment={"WORLD_SIZE": "two"}
    ),
    bad_call(distributed.ddp_train, "model", "model", _views, 1),
    bad_call(distributed.ddp_train, "model", nn.ReLU(), _views, 1),
    bad_call(distributed.ddp_train, "sample_views", nn.Linear(3, 2), None, 1),
    bad_call(distributed.ddp_train, "n_steps", nn.Linear(3, 2), _views, 0),
    bad_call(distributed.ddp_train, "lr", nn.Linear(3, 2), _views, 1, lr=-1.0),
    bad_call(
        distributed.ddp_train, "temperature", nn.Linear(3, 2), _views, 1, temperature=0
    ),
    bad_call(
        distributed.ddp_train, "device", nn.Linear(3, 2), _views, 1, device="bogus"
    ),
    # the views of every step: shapes and dtypes
    bad_call(
        distributed.ddp_train,
        r"sample_views\(step\)\[1\]",
        nn.Linear(3, 2),
        lambda step: (Z, Z[:2]),
        1,
    ),
    bad_call(
        distributed.ddp_train,
        r"sample_views\(step\)\[0\]",
        nn.Linear(3, 2),
        lambda step: (Z.long(), Z),
        1,
    ),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
