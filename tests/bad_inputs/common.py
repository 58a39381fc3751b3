"""Shared by the baselines of the API-wide bad-input test: the public callables of the
package and small builders of valid arguments (fresh tensors for every case)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import torch

import ccl_helpers
from ccl_helpers import train


def public_modules():
    """{name: module} of every public module of the package: those of
    ``ccl_helpers.__all__`` and the others (``launch``, ``runtime``)."""
    names = [
        name
        for name in ccl_helpers.__all__
        if inspect.ismodule(getattr(ccl_helpers, name))
    ]
    names += [
        info.name
        for info in pkgutil.iter_modules(ccl_helpers.__path__)
        if not info.name.startswith("_") and info.name not in names
    ]
    return {name: importlib.import_module(f"ccl_helpers.{name}") for name in names}


def public_callables():
    """{qualified name: callable} over ``ccl_helpers.__all__`` and the public modules;
    a callable re-exported at the top level keeps its top-level name only."""
    found = {
        name: getattr(ccl_helpers, name)
        for name in ccl_helpers.__all__
        if callable(getattr(ccl_helpers, name))
        and not inspect.ismodule(getattr(ccl_helpers, name))
    }
    top_level = {id(value) for value in found.values()}
    for name, obj in public_modules().items():
        names = getattr(obj, "__all__", None) or [
            n
            for n, value in vars(obj).items()
            if not n.startswith("_")
            and getattr(value, "__module__", "").startswith(obj.__name__)
        ]
        for n in names:
            value = getattr(obj, n)
            if (
                callable(value)
                and not inspect.ismodule(value)
                and id(value) not in top_level
            ):
                found[f"{name}.{n}"] = value
    return found


PUBLIC = public_callables()


def floats(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def labels(n, n_classes=2):
    return torch.arange(n) % n_classes


def generator():
    return torch.Generator().manual_seed(0)


def uniform(n_classes=2):
    return torch.full((n_classes,), 1.0 / n_classes)


def train_eval(**extra):
    """A valid classifier call: 6 fit and 4 evaluation points in 3 dimensions, with the
    argument pairs that must agree."""
    return (
        dict(
            train_features=floats(6, 3),
            train_labels=labels(6),
            eval_features=floats(4, 3, seed=1),
            eval_labels=labels(4),
            **extra,
        ),
        (
            ("train_labels", "train_features", 0),
            ("eval_labels", "eval_features", 0),
            ("eval_features", "train_features", -1),
        ),
    )


def stacked(n_seeds=2):
    return train.StackedModel(lambda: torch.nn.Linear(2, 1), n_seeds)


def mean_output(forward, batch):
    return forward(batch).mean()


def images(n, seed=0):
    return torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(seed))


def flat_encoder(x):
    return x.flatten(1)[:, :3]


def axes():
    import matplotlib.pyplot as plt

    return plt.figure().add_subplot()


def flat_module():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 3))


def run_arm(strategy="none"):
    return dict(
        pool="p",
        strategy=strategy,
        loss="generalized",
        similarity="cosine",
        alpha=1.0,
        lam=1.0,
    )


def runs_table():
    from ccl_helpers.supervised_approx import design_runs

    return design_runs({"a": run_arm()}, 2)


def results_table():
    from ccl_helpers.supervised_approx import design_runs

    table = design_runs({"a": run_arm(), "b": run_arm("base")}, 3)
    return table.assign(acc=[0.9, 0.8, 0.85, 0.5, 0.6, 0.55])


def verdict_rows():
    """The rows of a small chapter: one empirical claim, one theorem check."""
    from ccl_helpers.verdicts import Claim, Verdicts

    book = Verdicts("01_curl_framework")
    fields = dict(source="S", statement="x > y", metric="x − y")
    book.test(Claim(key="e", margin=0.5, margin_reason="r", **fields), [1.0, 2.0, 3.0])
    book.theorem(Claim(key="t", **fields), "holds", "all checkpoints")
    return book.rows()


def data_model():
    from ccl_helpers import multimodal

    return multimodal.make_data_model(
        torch.tensor([2.0, 1.0]), 0.5, 4, generator(), noise_dim=1
    )


def weights():
    from ccl_helpers import multimodal

    return multimodal.init_weights(1, 3, 4, generator())


def pairs():
    from ccl_helpers import multimodal

    return multimodal.sample_pairs(data_model(), 4, generator())


def reparametrised():
    from ccl_helpers import multimodal

    return multimodal.reparametrise(*weights(), data_model())


def ode_state():
    from ccl_helpers import multimodal

    return multimodal.integrate_ode(torch.tensor([2.0, 1.0]), 0.5, 1, [(1.0, 2)])


def ode_state_arrays():
    state = ode_state()
    return dict(a=state.a, rho=state.rho, noise=state.noise)


def unit_triplets():
    from ccl_helpers import data

    x = torch.nn.functional.normalize(floats(12, 3), dim=-1)
    return data.fixed_triplets(x, labels(12), 1, generator())


def empirical_classes():
    from ccl_helpers import data

    return data.EmpiricalClasses(floats(6, 3), labels(6))


def descent_case():
    """A valid call of multineg.descent_to_targets: 4 triplets on the sphere in 3
    dimensions, width 4, 3 steps."""
    return dict(
        triplets=sphere_triplets(),
        width=4,
        lr_constant=1.0,
        epsilons=[0.5],
        grad_epsilons=[0.5],
        max_steps=3,
        n_seeds=2,
        depth=1,
        out_features=2,
        checkpoints=2,
    )


_FILES = {}


def data_files():
    """A folder holding a small MNIST-format test split (written once)."""
    import tempfile
    from pathlib import Path

    from test_data_files import write_split

    if "idx" not in _FILES:
        _FILES["idx"] = write_split(Path(tempfile.mkdtemp()) / "mnist")
    return _FILES["idx"]


def cifar_files():
    """A folder holding small CIFAR-10 and CIFAR-100 test batches (written once)."""
    import pickle
    import tempfile
    from pathlib import Path

    from test_data_files import write_cifar

    if "cifar" not in _FILES:
        folder = Path(tempfile.mkdtemp()) / "cifar"
        write_cifar(folder, ["test_batch"])
        batch = {
            b"data": torch.zeros(3, 3072, dtype=torch.uint8).numpy(),
            b"fine_labels": [0, 1, 2],
            b"coarse_labels": [0, 1, 0],
        }
        with open(folder / "test", "wb") as handle:
            pickle.dump(batch, handle, protocol=2)
        _FILES["cifar"] = folder
    return _FILES["cifar"]


def sphere(n, d, seed=0):
    return torch.nn.functional.normalize(floats(n, d, seed=seed), dim=-1)


def sphere_triplets():
    """Four (anchor, positive, negative) triplets on the unit sphere in 3 dimensions."""
    return (sphere(4, 3), sphere(4, 3, 1), sphere(4, 3, 2))


def two_encoders():
    from ccl_helpers import wen

    return train.StackedModel(lambda: wen.TwoEncoders(3, 4, 1, 2), 1)


def wen_history():
    from ccl_helpers import wen

    if "wen" not in _FILES:
        _FILES["wen"] = wen.run_widths(
            sphere(4, 3),
            [4],
            n_layers=1,
            out_features=2,
            n_negatives=1,
            n_steps=2,
            n_seeds=1,
            checkpoints=2,
        )
    return train.wide(_FILES["wen"])


def long_history():
    import pandas as pd

    return pd.DataFrame(
        dict(step=[0, 0], seed=[0, 0], quantity=["loss", "acc"], value=[1.0, 0.5])
    )
