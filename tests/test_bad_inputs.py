"""One API-wide test of argument checking: every public callable of the package (each
module's ``__all__``, else the public names it defines) has a small valid call in
:data:`BASELINES`; each argument of it is then replaced, one at a time, by each kind of
bad input its baseline value admits (:func:`mutations`), and the call must raise a
``ValueError`` or ``TypeError`` whose message names the argument (both arguments for a
shape mismatch). A call that returns, or raises a message without the name, fails.

The kinds of bad input: a float, a bool or a negative (or zero count) for an integer;
NaN, inf, zero and negative (as floats and as tensors) for a real; an unknown string;
an integer dtype; an integer tensor, or a NaN in it, for a floating one, and a negative
entry in an integer one (no value mutations on a per-step hot path, :data:`HOT_PATHS`);
the same inside each tensor of a tuple batch; a plain tuple for a record (NamedTuple)
and a string for a model or another object of the package; a frame without rows,
without columns, or a dict instead; an empty mapping; a string for a callable; a float,
NaN or unknown entry in a list. Every public callable has a baseline or a reason in
:data:`EXCLUDED` (a test checks it). Hypothesis feeds the shared checkers anything.

Run with ``-s`` to see how many callables and cases were covered.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ccl_helpers
from ccl_helpers import checks, train

BAD = "bogus"


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
    book.test(Claim(key="e", **fields), [1.0, 2.0, 3.0])
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


# Baselines: qualified name → a function returning (keyword arguments of a valid call,
# (argument, argument it must agree with, the dimension shortened in a mismatch)).
# Fresh tensors for every case.
BASELINES = {
    # ---- checks
    "checks.check_positive": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_int": lambda: (dict(name="x", value=1), ()),
    "checks.check_probabilities": lambda: (dict(name="rho", value=uniform()), ()),
    "checks.check_labels": lambda: (dict(name="y", labels=labels(4)), ()),
    "checks.check_classes": lambda: (
        dict(name="y", classes=labels(4), ndim=1, n_classes=2),
        (),
    ),
    "checks.check_features": lambda: (
        dict(name="f", features=floats(4, 2), labels=labels(4)),
        (),
    ),
    "checks.check_finite_real": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_positive_or_scalar_tensor": lambda: (dict(name="x", value=1.0), ()),
    "checks.check_device": lambda: (dict(name="x", value="cpu"), ()),
    "checks.check_inputs": lambda: (
        dict(name="images", inputs=floats(4, 2, 2), labels=labels(4), labels_name="y"),
        (("labels", "inputs", 0),),
    ),
    "checks.check_callable": lambda: (dict(name="fn", value=flat_encoder), ()),
    "checks.check_instance": lambda: (
        dict(name="record", value=ode_state(), cls=type(ode_state())),
        (),
    ),
    "checks.check_frame": lambda: (
        dict(name="table", frame=runs_table(), columns=["seed"], min_rows=1),
        (),
    ),
    "checks.check_batch": lambda: (
        dict(
            name="pair", batch=(floats(2, 3), labels(2)), kinds=("floating", "integer")
        ),
        (),
    ),
    "checks.check_floating_dtype": lambda: (dict(name="x", value=torch.float32), ()),
    # ---- losses (hot paths: values unchecked, a NaN propagates)
    "losses.logistic_loss": lambda: (
        dict(anchor=floats(4, 3), positive=floats(4, 3, seed=1), negative=floats(4, 3)),
        (("positive", "anchor", -1), ("negative", "anchor", -1)),
    ),
    "losses.info_nce_loss": lambda: (
        dict(
            anchor=floats(4, 3),
            positive=floats(4, 3, seed=1),
            negatives=floats(4, 2, 3),
            temperature=0.5,
            reduction="mean",
            chunk_size=1,
        ),
        (("positive", "anchor", -1), ("negatives", "anchor", -1)),
    ),
    "losses.nt_xent_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), temperature=0.5),
        (("z2", "z1", -1),),
    ),
    "losses.balanced_contrastive_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), alpha=1.0, lam=1.0),
        (("z2", "z1", -1),),
    ),
    "losses.generalized_nt_xent_loss": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), alpha=1.0, lam=1.0),
        (("z2", "z1", -1),),
    ),
    "losses.bound_derived_loss": lambda: (
        dict(anchors=floats(4, 3), views=floats(2, 4, 3), alpha=1.0, lam=1.0, nu=1.0),
        (("views", "anchors", -1),),
    ),
    "losses.pairwise_similarity": lambda: (
        dict(a=floats(4, 3), b=floats(5, 3), similarity="cosine"),
        (("b", "a", -1),),
    ),
    "losses.reduce": lambda: (dict(per_sample=floats(4), reduction="mean"), ()),
    "losses.softplus": lambda: (dict(gap=floats(4)), ()),
    "distributed.nt_xent_loss_distributed": lambda: (
        dict(z1=floats(4, 3), z2=floats(4, 3, seed=1), temperature=0.5),
        (("z2", "z1", -1),),
    ),
    "distributed.local_shard": lambda: (dict(batch=floats(4, 3), dim=0), ()),
    # ---- metrics
    "metrics.all_tasks": lambda: (dict(n_classes=3, task_size=2, device="cpu"), ()),
    "metrics.class_frequencies": lambda: (dict(labels=labels(4), n_classes=2), ()),
    "metrics.class_means": lambda: (
        dict(features=floats(4, 3), labels=labels(4), n_classes=2),
        (("labels", "features", 0),),
    ),
    "metrics.class_members": lambda: (dict(labels=labels(4), n_classes=2), ()),
    "metrics.labelled_set_sizes": lambda: (
        dict(features=floats(4, 3), labels=labels(4), n_classes=2),
        (("labels", "features", 0),),
    ),
    "metrics.exact_unsupervised_loss": lambda: (
        dict(
            features=floats(4, 3),
            labels=labels(4),
            class_probs=uniform(),
            chunk_size=2,
        ),
        (("labels", "features", 0),),
    ),
    "metrics.draw_unsupervised_samples": lambda: (
        dict(
            labels=labels(4),
            n_negatives=2,
            n_samples=5,
            generator=generator(),
            class_probs=uniform(),
        ),
        (),
    ),
    "metrics.unsupervised_loss_monte_carlo": lambda: (
        dict(
            features=floats(4, 3),
            labels=labels(4),
            n_negatives=2,
            n_samples=5,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    "metrics.mean_classifier": lambda: train_eval(task_size=2),
    "metrics.linear_probe": lambda: train_eval(task_size=2, max_iter=5),
    "metrics.knn_accuracy": lambda: train_eval(k=3, block=2),
    "data.check_class_probs": lambda: (dict(class_probs=uniform()), ()),
    "data.balanced_subset": lambda: (
        dict(labels=labels(6), generator=generator(), per_class=2),
        (),
    ),
    "data.long_tailed_counts": lambda: (
        dict(n_classes=3, largest=10, smallest=2),
        (),
    ),
    "data.long_tailed_subset": lambda: (
        dict(
            labels=labels(30, 3), imbalance_ratio=2.0, total=12, generator=generator()
        ),
        (),
    ),
    "data.subset_with_counts": lambda: (
        dict(labels=labels(6), counts=torch.tensor([2, 1]), generator=generator()),
        (),
    ),
    "data.class_subset": lambda: (dict(labels=labels(6, 3), classes=[0, 2]), ()),
    "data.train_test_split": lambda: (
        dict(inputs=floats(10, 3), labels=labels(10), test_fraction=0.3, seed=0),
        (("labels", "inputs", 0),),
    ),
    "data.unit_sphere": lambda: (dict(x=floats(4, 3)), ()),
    "data.duplicate_rows": lambda: (dict(x=floats(4, 3)), ()),
    "data.separation": lambda: (dict(x=floats(4, 3), block_elements=16), ()),
    "data.load_digits": lambda: (dict(device="cpu", dtype=torch.float32), ()),
    "data.augment": lambda: (
        dict(images=torch.rand(2, 1, 8, 8), strategy="base", generator=generator()),
        (),
    ),
    "data.fixed_triplets": lambda: (
        dict(
            inputs=floats(12, 3),
            labels=labels(12),
            n=2,
            generator=generator(),
            class_probs=uniform(),
            negatives="rho",
        ),
        (("labels", "inputs", 0),),
    ),
    # ---- coupon
    "coupon.probability_vector": lambda: (dict(class_probs=uniform()), ()),
    "coupon.p_cc": lambda: (dict(n_negatives=2, class_probs=uniform()), ()),
    "coupon.p_cc_anchor_excluded": lambda: (
        dict(n_negatives=2, class_probs=uniform()),
        (),
    ),
    "coupon.tau_plus": lambda: (dict(n_negatives=2, class_probs=uniform()), ()),
    "coupon.collection_time_mean": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_variance": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_variance_as_printed": lambda: (dict(n_classes=3), ()),
    "coupon.collection_time_tail": lambda: (dict(beta=1.0, n_classes=3), ()),
    "coupon.chebyshev_tail_bound": lambda: (dict(beta=1.0, n_classes=3), ()),
    "coupon.sample_collection_time": lambda: (
        dict(
            n_samples=5,
            class_probs=uniform(),
            generator=generator(),
            device="cpu",
            block=2,
        ),
        (),
    ),
    # ---- models
    "models.MLP": lambda: (dict(in_features=3, hidden=(4,), out_features=2), ()),
    "models.ConvNet": lambda: (
        dict(
            in_channels=1,
            image_size=12,
            channels=(2,),
            out_features=2,
            kernel_size=3,
            padding=0,
        ),
        (),
    ),
    "models.DeepReLU": lambda: (
        dict(in_features=3, width=4, depth=2, out_features=2, trainable="hidden"),
        (),
    ),
    # ---- train
    "train.log_spaced_steps": lambda: (dict(n_steps=10, n_points=3), ()),
    "train.StackedModel": lambda: (
        dict(make_module=lambda: torch.nn.Linear(2, 2), n_seeds=2, device="cpu"),
        (),
    ),
    # ---- chapters
    "curl.downstream_accuracies": lambda: (
        dict(
            train_features=floats(2, 8, 3),
            train_labels=labels(8, 4),
            test_features=floats(2, 8, 3, seed=1),
            test_labels=labels(8, 4),
            task_sizes=(2,),
            classifiers=("mean",),
            max_iter=5,
        ),
        (
            ("train_labels", "train_features", 0),
            ("test_labels", "test_features", 0),
            ("test_features", "train_features", -1),
        ),
    ),
    "multineg.best_linear_loss": lambda: (
        dict(features=floats(6, 3), labels=labels(6), max_iter=5),
        (("labels", "features", 0),),
    ),
    "supervised_approx.model_subset": lambda: (
        dict(
            model=train.StackedModel(lambda: torch.nn.Linear(2, 2), 2),
            indices=[0],
        ),
        (),
    ),
    # ---- checks (the rest)
    "checks.check_choice": lambda: (
        dict(name="x", value="a", choices=("a", "b")),
        (),
    ),
    "checks.check_finite": lambda: (dict(name="x", tensor=floats(3)), ()),
    "checks.check_tensor": lambda: (
        dict(name="x", value=floats(2, 3), ndim=2, floating=True),
        (),
    ),
    # ---- curl
    "curl.mean_classifier_bound": lambda: (
        dict(unsupervised_loss=1.0, tau=0.5),
        (),
    ),
    "curl.collision_terms": lambda: (dict(n_negatives=2, class_probs=uniform(3)), ()),
    "curl.k_negative_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=2, class_probs=uniform(3)),
        (),
    ),
    "curl.negative_counts": lambda: (dict(n_negatives=2, n_classes=3), ()),
    "curl.tuple_mean_classifier_loss": lambda: (
        dict(features=floats(2, 8, 3), labels=labels(8), n_negatives=2),
        (("labels", "features", 0),),
    ),
    "curl.draw_block_samples": lambda: (
        dict(labels=labels(8), block_size=2, n_samples=4, generator=generator()),
        (),
    ),
    "curl.block_evaluator": lambda: (
        dict(
            inputs=floats(8, 3),
            labels=labels(8),
            block_size=2,
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    "curl.lemma_quantities": lambda: (
        dict(features=floats(8, 3), labels=labels(8), max_iter=5),
        (("labels", "features", 0),),
    ),
    "curl.k_negative_lemma": lambda: (
        dict(
            features=floats(2, 8, 3),
            labels=labels(8),
            negatives=[1],
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    # ---- multineg
    "multineg.lemma1_bound": lambda: (
        dict(unsupervised_loss=1.0, class_probs=uniform(3)),
        (),
    ),
    "multineg.lemma2_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=4, class_probs=uniform(3)),
        (),
    ),
    "multineg.proposition1_factor": lambda: (
        dict(n_negatives=2, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_bound": lambda: (
        dict(unsupervised_loss=1.0, n_negatives=2, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_part1_bound": lambda: (
        dict(unsupervised_loss=1.0, task_size=2, n_classes=3),
        (),
    ),
    "multineg.proposition1_part1_bound_as_printed": lambda: (
        dict(unsupervised_loss=1.0, task_size=2, n_classes=3),
        (),
    ),
    "multineg.average_mean_classifier_loss": lambda: (
        dict(features=floats(6, 3), labels=labels(6, 3), task_size=2),
        (("labels", "features", 0),),
    ),
    "multineg.output_norm_range": lambda: (dict(features=floats(4, 3)), ()),
    "multineg.proposition1_grid": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6, 3),
            n_negatives=[1, 2],
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "features", 0),),
    ),
    "multineg.make_evaluator": lambda: (
        dict(
            inputs=floats(6, 3),
            labels=labels(6, 3),
            n_negatives=1,
            n_samples=4,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    # ---- wen
    "wen.n_negative_sets": lambda: (dict(n=4, n_negatives=2), ()),
    "coupon.collection_time_moments_exact": lambda: (dict(n_classes=3), ()),
    "multineg.seed_summary": lambda: (
        dict(
            frame=pd.DataFrame({"width": [1, 1], "seed": [0, 1], "steps": [1.0, 2.0]}),
            by="width",
            columns=["steps"],
        ),
        (),
    ),
    "wen.late_slopes": lambda: (
        dict(
            history=wen_history(),
            column="loss_norm",
            decades=1.0,
            offset=0.0,
            n_points=25,
            by=("width", "seed"),
        ),
        (),
    ),
    "wen.negative_sets": lambda: (dict(n=4, n_negatives=2, device="cpu"), ()),
    "wen.all_triplets": lambda: (dict(n=4, device="cpu"), ()),
    "wen.pairwise_logits": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1)),
        (("k", "q", -1),),
    ),
    "wen.negative_set_logits": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.log_one_plus_sum_exp": lambda: (dict(u=floats(4, 3)), ()),
    "wen.contrastive_loss": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, reduction="mean"),
        (("k", "q", -1),),
    ),
    "wen.contrastive_loss_loop": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.negative_weights": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, form="full"),
        (("k", "q", -1),),
    ),
    "wen.loss_tilde": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2, form="corrected"),
        (("k", "q", -1),),
    ),
    "wen.loss_vectors": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.loss_vectors_autograd": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.fact1_comparison": lambda: (
        dict(q=floats(4, 3), k=floats(4, 3, seed=1), n_negatives=2),
        (("k", "q", -1),),
    ),
    "wen.shared_loss_vectors": lambda: (dict(f=floats(4, 3), n_negatives=2), ()),
    "wen.step_size": lambda: (dict(width=4, out_features=2, scale=1.0), ()),
    "wen.proof_descent_constant": lambda: (
        dict(step_scale=1.0, delta=0.5, n=4),
        (),
    ),
    "wen.movement_radius": lambda: (dict(n=4, n_layers=2, delta=0.5, width=8), ()),
    "wen.lemma44_radius_range": lambda: (
        dict(width=8, out_features=2, n_layers=2),
        (),
    ),
    "wen.radius_meeting_width": lambda: (dict(out_features=2, prefactor=0.1), ()),
    "wen.theorem42_orders": lambda: (
        dict(n=4, n_layers=2, n_negatives=2, delta=0.5, epsilon=0.1),
        (),
    ),
    "wen.TwoEncoders": lambda: (
        dict(in_features=3, width=4, n_layers=2, out_features=2),
        (),
    ),
    # ---- symbolic
    "symbolic.lse_hessian": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_gershgorin_bound": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_lambda_max": lambda: (dict(u=floats(3)), ()),
    "symbolic.lse_hessian_lambda_max_sup": lambda: (dict(k=2), ()),
    "symbolic.hessian_norm_formula": lambda: (
        dict(u=floats(3), grad_sq_norm=floats(3).abs()),
        (("grad_sq_norm", "u", -1),),
    ),
    "symbolic.smooth_max": lambda: (dict(x=floats(4), alpha=1.0), ()),
    "symbolic.smooth_max_bounds": lambda: (dict(x=floats(4), alpha=1.0), ()),
    "symbolic.smoothness_bound_secular": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_source": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_tight": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_bound_weyl": lambda: (dict(radius=1.0), ()),
    "symbolic.smoothness_sup_exact": lambda: (
        dict(radius=1.0, points=16, rounds=1),
        (),
    ),
    "symbolic.smoothness_sup_search": lambda: (
        dict(radius=1.0, dim=2, n_starts=2, n_steps=2, seed=0, device="cpu"),
        (),
    ),
    "symbolic.triplet_loss": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.triplet_hessian": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.triplet_hessian_norm": lambda: (dict(z=floats(3, 2)), ()),
    "symbolic.lemma3_gradient_difference": lambda: (dict(dim=1), ()),
    "symbolic.lemma3_hessian_difference": lambda: (dict(dim=1, form="source"), ()),
    "symbolic.lse_gershgorin_identity": lambda: (dict(k=2), ()),
    "symbolic.lse_hessian_difference": lambda: (dict(k=2), ()),
    "symbolic.lse_hessian_symbolic": lambda: (dict(k=2), ()),
    "symbolic.lse_probabilities_symbolic": lambda: (dict(k=2), ()),
    "symbolic.lse_symbols": lambda: (dict(k=2), ()),
    "symbolic.triplet_gradient_source_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_gradient_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_block_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_source_form": lambda: (dict(dim=1), ()),
    "symbolic.triplet_hessian_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_loss_symbolic": lambda: (dict(dim=1), ()),
    "symbolic.triplet_symbols": lambda: (dict(dim=1), ()),
    # ---- multimodal
    "multimodal.alignment_cap": lambda: (dict(latent_dim=3), ()),
    "multimodal.geometric_sigmas": lambda: (dict(kappa_m=2.0, latent_dim=3), ()),
    "multimodal.two_stage": lambda: (
        dict(beta_1=1.0, steps_1=2, beta_2=0.5, steps_2=3),
        (),
    ),
    "multimodal.record_grid": lambda: (dict(total=10, n_points=3), ()),
    "multimodal.haar_orthogonal": lambda: (
        dict(n_runs=2, dim=3, generator=generator(), dtype=torch.float64, device="cpu"),
        (),
    ),
    "multimodal.init_weights": lambda: (
        dict(
            n_runs=2, width=3, input_dim=4, generator=generator(), dtype=torch.float64
        ),
        (),
    ),
    "multimodal.alignment_cosines": lambda: (
        dict(S_A=floats(2, 3), S_B=floats(2, 3, seed=1)),
        (("S_B", "S_A", -1),),
    ),
    "multimodal.condition_number": lambda: (dict(S=floats(3, 3)), ()),
    "multimodal.noise_ratio": lambda: (
        dict(S=floats(3, 3), Xi=floats(3, 2, seed=1)),
        (("Xi", "S", 0),),
    ),
    "multimodal.balance": lambda: (
        dict(S=floats(3, 3), Xi=floats(3, 2, seed=1), variant="fro"),
        (("Xi", "S", 0),),
    ),
    "multimodal.contrastive_loss": lambda: (
        dict(f_A=floats(4, 3), f_B=floats(4, 3, seed=1), beta=1.0, tau=1.0),
        (("f_B", "f_A", -1),),
    ),
    "multimodal.non_contrastive_loss": lambda: (
        dict(f_A=floats(4, 3), f_B=floats(4, 3, seed=1)),
        (("f_B", "f_A", -1),),
    ),
    "multimodal.symbolic_negative_expectations": lambda: (dict(latent_dim=2), ()),
    "multimodal.symbolic_norm_identity": lambda: (
        dict(width=2, input_dim=3, latent_dim=2, noise_dim=1),
        (),
    ),
    # ---- metrics (the rest)
    "metrics.task_probabilities": lambda: (
        dict(tasks=torch.tensor([[0, 1], [0, 2], [1, 2]]), class_probs=uniform(3)),
        (),
    ),
    "metrics.standardise": lambda: (dict(fit=floats(4, 3)), ()),
    "verdicts.power_law_fit": lambda: (
        dict(x=[1.0, 2.0, 4.0, 8.0], y=[1.0, 0.6, 0.3, 0.2], confidence=0.95),
        (),
    ),
    "verdicts.top_set": lambda: (
        dict(values=[1.0, 2.0, 3.0], sd=0.5, df=4, confidence=0.95),
        (),
    ),
    "metrics.fit_linear_classifiers": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6),
            tasks=torch.tensor([[0, 1]]),
            dtype=torch.float32,
            max_iter=5,
            tolerance=1e-6,
        ),
        (("labels", "features", 0),),
    ),
    "metrics.task_loss_and_accuracy": lambda: (
        dict(
            features=floats(6, 3),
            labels=labels(6),
            classifier=floats(2, 3, seed=1),
            tasks=torch.tensor([[0, 1]]),
            class_probs=uniform(),
        ),
        (("labels", "features", 0), ("classifier", "features", -1)),
    ),
    "metrics.embed": lambda: (
        dict(encoder=torch.nn.Linear(3, 2), images=floats(4, 3), chunk_size=2),
        (),
    ),
    # ---- train (the rest)
    "train.check_stages": lambda: (dict(name="x", stages=[(0.1, 2)]), ()),
    # ---- data (the rest)
    "data.GaussianClasses": lambda: (
        dict(class_probs=uniform(), means=floats(2, 3), noise_std=1.0),
        (("means", "class_probs", 0),),
    ),
    "data.cache_dir": lambda: (dict(dataset="mnist"), ()),
    "data.search_path": lambda: (dict(dataset="mnist"), ()),
    # ---- models, results
    "models.Classifier": lambda: (
        dict(encoder=torch.nn.Linear(3, 2), n_classes=2),
        (),
    ),
    "results.load_paper_results": lambda: (dict(chapter="01_curl_framework"), ()),
    # ---- supervised_approx
    "supervised_approx.attracting_terms": lambda: (
        dict(anchors=floats(4, 3), views=floats(2, 4, 3, seed=1)),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.tiled_model": lambda: (
        dict(
            make_module=lambda: torch.nn.Linear(2, 2),
            n_seeds=2,
            n_configs=2,
            device="cpu",
        ),
        (),
    ),
    "supervised_approx.seeded_model": lambda: (
        dict(make_module=lambda: torch.nn.Linear(2, 2), seeds=[0, 1], device="cpu"),
        (),
    ),
    # ---- multimodal (the rest)
    # ---- train (the loops)
    "train.train": lambda: (
        dict(
            model=stacked(),
            loss_fn=mean_output,
            sample_batch=lambda t: floats(2, 4, 2),
            n_steps=2,
            lr=0.1,
            optimizer="sgd",
            weight_decay=0.0,
            desc=None,
        ),
        (),
    ),
    "train.gradient_descent": lambda: (
        dict(
            model=stacked(),
            loss_fn=mean_output,
            data=floats(4, 2),
            max_steps=2,
            lr=0.1,
            checkpoints=2,
            desc=None,
        ),
        (),
    ),
    "train.loop": lambda: (
        dict(
            params={"w": torch.zeros(2, 3, requires_grad=True)},
            gradient=lambda t, beta: train.Evaluation(
                torch.zeros(2), [torch.ones(2, 3)]
            ),
            n_steps=2,
            seeds=[0, 1],
            lr=0.1,
            optimizer="sgd",
            weight_decay=0.0,
        ),
        (),
    ),
    "train.stacked_gradient": lambda: (
        dict(model=stacked(), loss_fn=mean_output, data=lambda t: floats(4, 2)),
        (),
    ),
    "train.wide": lambda: (dict(history=long_history()), ()),
    # ---- checks, runtime, results, symbolic (no-argument and small ones)
    "checks.check_steps": lambda: (dict(name="x", steps=[0, 2]), ()),
    "launch.check_options": lambda: (
        dict(options=PUBLIC["launch.parse_args"](["--scale", "smoke"]), world_size=2),
        (),
    ),
    "runtime.precision": lambda: (dict(), ()),
    "runtime.autocast": lambda: (dict(device="cpu"), ()),
    "device": lambda: (dict(), ()),
    "scale": lambda: (dict(), ()),
    "steps": lambda: (dict(smoke=1, standard=2, paper=3), ()),
    "progress": lambda: (dict(iterable=range(3)), ()),
    "results.results_dir": lambda: (dict(), ()),
    "results.records_dir": lambda: (dict(), ()),
    "results.chapter_path": lambda: (dict(chapter="01_curl_framework"), ()),
    "verdicts.estimate": lambda: (
        dict(
            values=[1.0, 2.0, 3.0],
            baseline=[1.5, 2.0, 2.0],
            paired=True,
            null=0.0,
            margin=0.5,
            expected="greater",
        ),
        (),
    ),
    "verdicts.holm": lambda: (dict(p_values=[0.01, 0.2, 0.03]), ()),
    "verdicts.format_estimate": lambda: (dict(value=0.5, se=0.01), ()),
    "verdicts.per_seed_slopes": lambda: (
        dict(
            frame=pd.DataFrame(
                {"seed": [0, 0, 0, 1, 1, 1], "m": [1.0, 2, 4] * 2, "y": [3.0, 2, 1] * 2}
            ),
            x="m",
            y="y",
            seed="seed",
        ),
        (),
    ),
    "verdicts.verdict_table": lambda: (dict(rows=verdict_rows()), ()),
    "verdicts.reader_table": lambda: (dict(rows=verdict_rows()), ()),
    "verdicts.scorecard": lambda: (
        dict(records=[{"chapter": "01_curl_framework", "claims": verdict_rows()}]),
        (),
    ),
    "verdicts.scorecard_page": lambda: (
        dict(
            records=[{"chapter": "01_curl_framework", "claims": verdict_rows()}],
            titles={},
        ),
        (),
    ),
    "verdicts.compare_records": lambda: (
        dict(
            stored={"claims": verdict_rows(), "numbers": {}},
            fresh={"claims": verdict_rows(), "numbers": {}},
            k=4.0,
        ),
        (),
    ),
    "results.provenance": lambda: (dict(started=0.0), ()),
    "results.provenance_line": lambda: (
        dict(record={"provenance": PUBLIC["results.provenance"]()}),
        (),
    ),
    "symbolic.lse_k1_gap": lambda: (dict(), ()),
    "symbolic.triplet_hessian_charpoly_difference": lambda: (dict(), ()),
    "symbolic.u_hessian_eigenvalues": lambda: (dict(), ()),
    "symbolic.smoothness_table": lambda: (
        dict(radii=[0.5], dim=2, n_starts=2, n_steps=2, seed=0, device="cpu"),
        (),
    ),
    # ---- metrics (the last ones)
    "metrics.class_weights": lambda: (
        dict(
            class_probs=uniform(),
            n_classes=2,
            counts=torch.tensor([2, 2]),
            uniform_default=True,
        ),
        (),
    ),
    "metrics.unsupervised_loss_curve": lambda: (
        dict(
            features=floats(4, 3),
            samples=PUBLIC["metrics.draw_unsupervised_samples"](
                labels(4), 2, 5, generator()
            ),
        ),
        (),
    ),
    # ---- plotting (the helpers that compute; the drawing ones are excluded)
    "plotting.color": lambda: (dict(name="non_contrastive"), ()),
    "plotting.markers": lambda: (dict(values=["a", "b"]), ()),
    "plotting.sweep_styles": lambda: (dict(values=[0.1, 0.2], linestyle="--"), ()),
    "plotting.quantity": lambda: (dict(name="L_un"), ()),
    "plotting.style": lambda: (dict(name="L_un", line=True), ()),
    "plotting.figsize": lambda: (dict(n_panels=2, n_rows=1), ()),
    "plotting.rendered_points": lambda: (dict(size_pt=9.0, width_in=7.6), ()),
    # ---- wen (the training and its analysis)
    "wen.algorithm1": lambda: (
        dict(
            model=two_encoders(),
            x=sphere(4, 3),
            n_negatives=1,
            n_steps=2,
            eta=0.1,
            gamma=0.1,
            checkpoints=2,
            desc=None,
        ),
        (),
    ),
    "wen.run_widths": lambda: (
        dict(
            x=sphere(4, 3),
            widths=[4],
            n_layers=1,
            out_features=2,
            n_negatives=1,
            n_steps=2,
            n_seeds=1,
            step_scale=1.0,
            seed=0,
            checkpoints=2,
        ),
        (),
    ),
    "wen.running_average": lambda: (
        dict(history=wen_history(), column="loss_norm", by=("width", "seed")),
        (),
    ),
    "wen.descent_constant": lambda: (
        dict(history=wen_history(), by=("width", "seed")),
        (),
    ),
    "wen.lemma43_ratios": lambda: (dict(history=wen_history()), ()),
    "wen.shared_evaluator": lambda: (dict(x=sphere(4, 3), n_negatives=1), ()),
    "wen.time_exact_expectation": lambda: (
        dict(
            q=floats(4, 3),
            k=floats(4, 3, seed=1),
            n_negatives=1,
            repeats=1,
            loop_repeats=1,
        ),
        (("k", "q", -1),),
    ),
    "wen.triplet_loss": lambda: (
        dict(forward=lambda x: x, data=(sphere(4, 3), torch.tensor([[0, 1, 2]]))),
        (),
    ),
    # ---- per-step losses of one seed (their batch: a tuple, from a sampler)
    "curl.block_contrastive_loss": lambda: (
        dict(
            forward=lambda x: x,
            batch=(floats(4, 3), floats(4, 2, 3, seed=1), floats(4, 2, 3, seed=2)),
        ),
        (),
    ),
    "curl.cross_entropy_loss": lambda: (
        dict(forward=lambda x: x, batch=(floats(4, 2), labels(4))),
        (),
    ),
    "multineg.contrastive_loss": lambda: (
        dict(
            forward=lambda x: x,
            batch=(
                floats(4, 3),
                floats(4, 3, seed=1),
                floats(5, 3, seed=2),
                torch.tensor([[0, 1], [2, 3], [4, 0], [1, 2]]),
            ),
        ),
        (),
    ),
    "multineg.triplet_objective": lambda: (
        dict(
            forward=lambda x: x,
            triplets=sphere_triplets(),
        ),
        (),
    ),
    "multineg.triplet_evaluator": lambda: (
        dict(triplets=sphere_triplets()),
        (),
    ),
    # ---- the chapters' samplers (a step ↦ batch function, checked when built)
    "curl.contrastive_batches": lambda: (
        dict(
            latent=empirical_classes(),
            n_seeds=2,
            batch_size=3,
            generator=generator(),
            block_size=2,
        ),
        (),
    ),
    "curl.labelled_batches": lambda: (
        dict(
            inputs=floats(6, 3),
            labels=labels(6),
            n_seeds=2,
            batch_size=3,
            generator=generator(),
        ),
        (("labels", "inputs", 0),),
    ),
    "multineg.contrastive_batches": lambda: (
        dict(
            latent=empirical_classes(),
            n_seeds=2,
            batch_size=3,
            n_negatives=2,
            generator=generator(),
            pool_size=4,
        ),
        (),
    ),
    # ---- the chapters' evaluations and runs
    "curl.block_losses": lambda: (
        dict(
            features=floats(2, 8, 3),
            samples=PUBLIC["curl.draw_block_samples"](labels(8), 2, 4, generator()),
        ),
        (),
    ),
    "curl.train_tuned": lambda: (
        dict(
            make_model=lambda: torch.nn.Linear(3, 2),
            loss_fn=PUBLIC["curl.cross_entropy_loss"],
            batches=lambda n, g: PUBLIC["curl.labelled_batches"](
                floats(6, 3), labels(6), n, 3, g
            ),
            score=PUBLIC["curl.head_accuracy"](floats(4, 3, seed=1), labels(4)),
            grid=[(0.1, 0.0)],
            n_seeds=1,
            n_steps=2,
            eval_steps=[1],
        ),
        (),
    ),
    "curl.head_accuracy": lambda: (
        dict(inputs=floats(4, 3), labels=labels(4)),
        (("labels", "inputs", 0),),
    ),
    "curl.probe_accuracy": lambda: (
        dict(
            fit_inputs=floats(6, 3),
            fit_labels=labels(6),
            val_inputs=floats(4, 3, seed=1),
            val_labels=labels(4),
        ),
        (
            ("fit_labels", "fit_inputs", 0),
            ("val_labels", "val_inputs", 0),
            ("val_inputs", "fit_inputs", -1),
        ),
    ),
    "multineg.add_lemma_bounds": lambda: (
        dict(
            runs=pd.DataFrame(
                {"N": [1, 2], "L_un": [0.5, 1.0], "L_un_se": [0.01, 0.02]}
            ),
            class_probs=uniform(3),
            confidence=2.0,
        ),
        (),
    ),
    "multineg.lemma_runs": lambda: (
        dict(
            make_encoder=lambda: torch.nn.Linear(3, 2),
            train_set=empirical_classes(),
            eval_inputs=floats(6, 3, seed=1),
            eval_labels=labels(6),
            negatives=[1],
            n_seeds=1,
            n_steps=2,
            batch_size=2,
            pool_size=None,
            checkpoints=[1],
            n_samples=4,
            fit_linear=[],
        ),
        (("eval_labels", "eval_inputs", 0),),
    ),
    "multineg.descent_to_targets": lambda: (descent_case(), ()),
    "multineg.descent_sweep": lambda: (
        dict(
            parameter="delta",
            values=[1.0],
            case=lambda delta: (sphere_triplets(), 4, 1.0),
            **{
                k: v
                for k, v in descent_case().items()
                if k not in ("triplets", "width", "lr_constant")
            },
        ),
        (),
    ),
    "multineg.width_scaled_targets": lambda: (
        dict(
            steps=pd.DataFrame({"width": [4, 8], "threshold": [0.2, 0.1]}),
            product=0.8,
        ),
        (),
    ),
    "multineg.lazy_values": lambda: (
        dict(
            frame=pd.DataFrame(
                {
                    "seed": [0, 1, 0, 1],
                    "n": [2, 2, 4, 4],
                    "steps": [3.0, 4.0, 5.0, 6.0],
                    "relative_movement": [0.01, 0.02, 0.2, 0.01],
                }
            ),
            x="n",
            threshold=0.1,
        ),
        (),
    ),
    "multineg.endpoint_ratio": lambda: (
        dict(
            frame=pd.DataFrame(
                {"seed": [0, 1, 0, 1], "n": [2, 2, 4, 4], "steps": [3.0, 4, 6, 6]}
            ),
            x="n",
            y="steps",
        ),
        (),
    ),
    "multineg.progress_gap": lambda: (
        dict(
            runs=pd.DataFrame(
                {
                    "N": [1] * 6,
                    "seed": [0, 0, 0, 1, 1, 1],
                    "step": [0, 1, 2] * 2,
                    "L_un": [3.0, 2.0, 1.0, 3.0, 2.5, 1.0],
                    "L_mu": [2.0, 1.5, 1.0, 2.0, 1.2, 1.0],
                }
            ),
        ),
        (),
    ),
    "multineg.lazy_width": lambda: (
        dict(
            steps=pd.DataFrame(
                {"width": [4, 4, 8, 8], "relative_movement": [0.2, 0.3, 0.01, 0.02]}
            ),
            threshold=0.1,
            confidence=0.9,
        ),
        (),
    ),
    # ---- distributed (no process group: one process)
    "distributed.gather_with_grad": lambda: (dict(tensor=floats(4, 3), dim=0), ()),
    "distributed.wrap_ddp": lambda: (
        dict(model=torch.nn.Linear(3, 2), device="cpu"),
        (),
    ),
    "distributed.ddp_train_step": lambda: (
        dict(
            model=(model := torch.nn.Linear(3, 2)),
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            x1=floats(4, 3),
            x2=floats(4, 3, seed=1),
            temperature=0.5,
        ),
        (("x2", "x1", 0),),
    ),
    "distributed.ddp_train": lambda: (
        dict(
            model=torch.nn.Linear(3, 2),
            sample_views=lambda step: (floats(4, 3), floats(4, 3, seed=1)),
            n_steps=1,
            temperature=0.5,
            lr=1e-3,
            device="cpu",
            desc=None,
        ),
        (),
    ),
    # ---- data (the rest of it)
    "data.EmpiricalClasses": lambda: (
        dict(inputs=floats(6, 3), labels=labels(6), class_probs=uniform()),
        (("labels", "inputs", 0),),
    ),
    "data.hard_negatives": lambda: (
        dict(triplets=unit_triplets(), delta=0.5),
        (),
    ),
    "data.pipeline": lambda: (dict(strategy="base", height=8, width=8), ()),
    "data.load_idx": lambda: (
        dict(path=data_files() / "t10k-labels-idx1-ubyte.gz", device="cpu"),
        (),
    ),
    "data.read_split": lambda: (
        dict(
            images_path=data_files() / "t10k-images-idx3-ubyte.gz",
            labels_path=data_files() / "t10k-labels-idx1-ubyte.gz",
            device="cpu",
            dtype=torch.float64,
        ),
        (),
    ),
    "data.find_split": lambda: (
        dict(dataset="mnist", split="test", root=data_files()),
        (),
    ),
    "data.mnist": lambda: (
        dict(
            split="test",
            root=data_files(),
            device="cpu",
            download=False,
            dtype=torch.float64,
        ),
        (),
    ),
    "data.fashion_mnist": lambda: (
        dict(
            split="test",
            root=data_files(),
            device="cpu",
            download=False,
            dtype=torch.float64,
        ),
        (),
    ),
    "data.load_cifar10_batches": lambda: (
        dict(directory=cifar_files(), train=False, device="cpu", dtype=torch.float32),
        (),
    ),
    "data.load_cifar100": lambda: (
        dict(
            directory=cifar_files(),
            train=False,
            device="cpu",
            dtype=torch.float32,
            labels="coarse",
        ),
        (),
    ),
    # ---- multimodal (the rest of it)
    "multimodal.make_data_model": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            input_dim=4,
            generator=generator(),
            noise_dim=1,
            dtype=torch.float64,
        ),
        (),
    ),
    "multimodal.sample_pairs": lambda: (
        dict(model=data_model(), n=4, generator=generator()),
        (),
    ),
    "multimodal.population_norm": lambda: (
        dict(W=weights()[0], covariance=data_model().covariances()[0]),
        (("covariance", "W", -1),),
    ),
    "multimodal.embed": lambda: (
        dict(
            W=weights()[0],
            x=floats(1, 5, 4, seed=1).double(),
            covariance=data_model().covariances()[0],
            normalisation="population",
        ),
        (("x", "W", -1), ("covariance", "W", -1)),
    ),
    "multimodal.reparametrise": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1], model=data_model()),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.batch_loss": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            pairs=pairs(),
            loss="contrastive",
            beta=1.0,
            tau=1.0,
            form="primary",
            normalisation="population",
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.gradients": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1], model=data_model(), pairs=pairs()),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.closed_form_gradients": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            pairs=pairs(),
            loss="contrastive",
            beta=1.0,
            tau=1.0,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.compress_width": lambda: (
        dict(W_A=weights()[0], W_B=weights()[1]),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.population_descent": lambda: (
        dict(
            W_A=weights()[0],
            W_B=weights()[1],
            model=data_model(),
            steps=2,
            lr=0.2,
            record_steps=[0, 2],
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.train": lambda: (
        dict(
            model=data_model(),
            W_A=weights()[0],
            W_B=weights()[1],
            schedule=[(1.0, 2)],
            loss="contrastive",
            lr=0.2,
            batch_size=4,
            tau=1.0,
            form="primary",
            normalisation="population",
            generator=generator(),
            record_steps=[0, 2],
            n_align=4,
            align_every=1,
            align_runs=[0],
            similarity_dtype=torch.float32,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.alignment_score": lambda: (
        dict(
            S_A=floats(1, 3, 2),
            Xi_A=floats(1, 3, 1, seed=1),
            S_B=floats(1, 3, 2, seed=2),
            Xi_B=floats(1, 3, 1, seed=3),
            n_samples=4,
            generator=generator(),
            ties="strict",
        ),
        (("S_B", "S_A", -1), ("Xi_A", "S_A", -2), ("Xi_B", "Xi_A", -1)),
    ),
    "multimodal.alignment_margin": lambda: (dict(parts=reparametrised()), ()),
    "multimodal.balance_lower_bound": lambda: (
        dict(
            kappa=torch.tensor([1.5, 2.0]),
            noise=torch.tensor([0.1, 0.2]),
            latent_dim=2,
            variant="fro",
        ),
        (("noise", "kappa", 0),),
    ),
    "multimodal.scores": lambda: (
        dict(
            parts=reparametrised(),
            n_align=4,
            generator=generator(),
            ties="strict",
            align_runs=[0],
        ),
        (),
    ),
    "multimodal.integrate_ode": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            noise_dim=1,
            schedule=[(1.0, 2)],
            loss="contrastive",
            lr=0.2,
            tau=1.0,
            form="primary",
            record_steps=[0, 2],
            rtol=1e-6,
            atol=1e-8,
        ),
        (),
    ),
    "multimodal.stage_one_gap": lambda: (
        dict(
            sigmas=torch.tensor([2.0, 1.0]),
            noise_std=0.5,
            noise_dim=1,
            beta=0.1,
            steps=2,
            lr=0.2,
            tau=1.0,
        ),
        (),
    ),
    "results.beside_stored": lambda: (
        dict(
            live=pd.DataFrame({"k": [1, 2], "x": [1.0, 2.0]}),
            stored=pd.DataFrame({"k": [1, 2], "x": [3.0, 4.0]}),
            by=["k"],
            columns=["x"],
        ),
        (),
    ),
    "multimodal.stage_one_gap_finite_width": lambda: (
        dict(
            model=data_model(),
            W_A=weights()[0],
            W_B=weights()[1],
            betas=[0.1],
            steps=2,
            lr=0.2,
            tau=1.0,
            batch_size=4,
            seed=0,
            record_steps=[0, 2],
            similarity_dtype=torch.float32,
        ),
        (("W_B", "W_A", -1),),
    ),
    "multimodal.ode_matrices": lambda: (
        dict(**ode_state_arrays(), noise_dim=1),
        (),
    ),
    "multimodal.ode_scores": lambda: (
        dict(
            state=ode_state(),
            noise_dim=1,
            n_align=4,
            generator=generator(),
            align_every=1,
        ),
        (),
    ),
    # ---- supervised_approx (the rest)
    "supervised_approx.repelling_terms": lambda: (
        dict(
            anchors=floats(4, 3),
            anchor_labels=labels(4),
            views=floats(2, 4, 3, seed=1),
            view_labels=labels(4),
            alpha=1.0,
        ),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.repelling_chain": lambda: (
        dict(
            anchors=floats(4, 3),
            anchor_labels=labels(4),
            views=floats(2, 4, 3, seed=1),
            view_labels=labels(4),
            alpha=1.0,
        ),
        (("views", "anchors", -1),),
    ),
    "supervised_approx.eq10_counterexample": lambda: (dict(), ()),
    "supervised_approx.attracting_bound": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            strategy="none",
            generator=generator(),
            n_transforms=2,
        ),
        (),
    ),
    "supervised_approx.repelling_bound": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            generator=generator(),
            alpha=1.0,
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.prototype_bias": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            strategy="none",
            generator=generator(),
            method="eq51",
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.prototype_spread": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            strategy="none",
            generator=generator(),
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.two_view_batches": lambda: (
        dict(
            images=images(6),
            n_models=2,
            batch_size=2,
            strategy="none",
            generator=generator(),
            n_streams=1,
        ),
        (),
    ),
    "supervised_approx.member_loss": lambda: (
        dict(
            z1=floats(4, 3),
            z2=floats(4, 3, seed=1),
            alpha=1.0,
            lam=1.0,
            loss_code=torch.tensor(0),
            similarity_code=torch.tensor(0),
        ),
        (("z2", "z1", -1),),
    ),
    "supervised_approx.run_loss": lambda: (
        dict(
            forward=flat_encoder,
            batch=(
                images(4),
                images(4, seed=1),
                torch.tensor(1.0),
                torch.tensor(1.0),
                torch.tensor(0),
                torch.tensor(0),
            ),
        ),
        (),
    ),
    "supervised_approx.run_batches": lambda: (
        dict(pools={"p": images(6)}, runs=runs_table(), batch_size=2, seed=0),
        (),
    ),
    "supervised_approx.train_runs": lambda: (
        dict(
            runs=runs_table(),
            pools={"p": images(6)},
            make_module=flat_module,
            n_steps=1,
            batch_size=2,
            lr=1e-3,
            seed=0,
            desc=None,
        ),
        (),
    ),
    "supervised_approx.downstream": lambda: (
        dict(
            encoder=flat_encoder,
            fit_images=images(6),
            fit_labels=labels(6),
            test_images=images(4, seed=1),
            test_labels=labels(4),
            k=(3,),
            max_iter=5,
            chunk_size=2,
        ),
        (),
    ),
    "supervised_approx.arm_values": lambda: (
        dict(results=results_table(), metric="acc", arm={"strategy": "none"}),
        (),
    ),
    "supervised_approx.seed_matrix": lambda: (
        dict(results=results_table(), metric="acc", arms=[{"strategy": "none"}]),
        (),
    ),
    "supervised_approx.arm_contrast": lambda: (
        dict(
            results=results_table(),
            metric="acc",
            terms=[({"strategy": "none"}, 1.0), ({"strategy": "base"}, -1.0)],
        ),
        (),
    ),
    "supervised_approx.contrast_values": lambda: (
        dict(
            results=results_table(),
            contrasts={"c": [({"strategy": "none"}, 1.0)]},
            metrics=["acc"],
        ),
        (),
    ),
    "supervised_approx.estimates_table": lambda: (
        dict(values=pd.DataFrame([[1.0, 2.0, 4.0]])),
        (),
    ),
    "supervised_approx.seed_rank_correlations": lambda: (
        dict(x=np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]]), y=np.eye(3)[:, :2] + 1),
        (),
    ),
    "supervised_approx.curve_shape": lambda: (
        dict(curves=np.array([[0.1, 0.3, 0.2], [0.2, 0.4, 0.3]])),
        (),
    ),
    "supervised_approx.design_runs": lambda: (
        dict(arms={"a": run_arm()}, n_seeds=2),
        (),
    ),
    "supervised_approx.pooled_seed_sd": lambda: (
        dict(results=results_table(), metric="acc"),
        (),
    ),
    "supervised_approx.bias_by_member": lambda: (
        dict(
            model=train.StackedModel(flat_module, 2),
            runs=runs_table(),
            images=images(4),
            labels=labels(4),
            seed=0,
            n_transforms=1,
        ),
        (),
    ),
    "supervised_approx.bound_evaluator": lambda: (
        dict(
            members=[0],
            alphas=[1.0],
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            seed=0,
            n_transforms_attract=2,
            n_transforms_repel=1,
        ),
        (),
    ),
    "supervised_approx.bound_terms": lambda: (
        dict(
            encoder=flat_encoder,
            images=images(4),
            labels=labels(4),
            pool_images=images(4, seed=1),
            pool_labels=labels(4),
            strategy="none",
            generator=generator(),
            alphas=1.0,
            n_transforms_attract=2,
            n_transforms_repel=1,
        ),
        (),
    ),
    "report": lambda: (
        dict(
            encoder=flat_module(),
            images=images(8),
            labels=labels(8),
            n_negatives=2,
            strategy="none",
            alpha=1.0,
            n_samples=10,
            n_transforms_attract=2,
            n_transforms_repel=1,
            seed=0,
        ),
        (("labels", "images", 0),),
    ),
    "encoder_report.draw_loss_bounds": lambda: (
        dict(ax=axes(), table=ccl_helpers.report(**BASELINES["report"]()[0])),
        (),
    ),
    "encoder_report.readable": lambda: (
        dict(table=ccl_helpers.report(**BASELINES["report"]()[0])),
        (),
    ),
    "supervised_approx.summarise_bounds": lambda: (
        dict(
            attract=PUBLIC["supervised_approx.attracting_terms"](
                floats(4, 3), floats(2, 4, 3, seed=1)
            ),
            repel=PUBLIC["supervised_approx.repelling_terms"](
                floats(4, 3), labels(4), floats(2, 4, 3, seed=1), labels(4)
            ),
        ),
        (),
    ),
}

# Callables left out, each with its reason.
EXCLUDED = {
    "glue": "records a value for the book (myst-nb); no numeric argument",
    "under_ci": "no argument",
    "checks.check_feature_dims": "shape-only helper (dtype and values are its callers' "
    "checks; names given by the caller): tests/test_checks.py",
    "checks.check_same_shape": "shape-only helper (dtype and values are its callers' "
    "checks; names given by the caller): tests/test_checks.py",
    "by_scale": "returns one of its three arguments, of any type: nothing to check",
    "evals": "returns one of its three arguments, of any type (as by_scale): nothing "
    "to check",
    "setup": "sets global state (seeds, threads) for the whole session",
    "distributed.cleanup": "no argument",
    "distributed.is_distributed": "no argument",
    "distributed.rank": "no argument",
    "distributed.world_size": "no argument",
    "models.MaxPool2x2": "a layer without constructor arguments; the network that "
    "holds it checks the input (ConvNet.forward)",
}

RECORDS = (
    "curl.BlockSamples",
    "curl.TunedRun",
    "data.Triplets",
    "verdicts.Estimate",
    "verdicts.PowerLawFit",
    "metrics.UnsupervisedSamples",
    "multimodal.DataModel",
    "multimodal.ODEState",
    "multimodal.Pairs",
    "multimodal.Reparametrised",
    "multineg.TargetDescent",
    "supervised_approx.AttractingTerms",
    "supervised_approx.RepellingChain",
    "supervised_approx.RepellingTerms",
    "supervised_approx.CurveShape",
    "train.Descent",
    "train.Evaluation",
)
EXCLUDED |= dict.fromkeys(
    RECORDS,
    "a NamedTuple of results: built by the package's functions, which check their "
    "inputs; its consumers check its fields",
)
EXCLUDED["distributed.init_from_env"] = (
    "initialises a process group under torchrun (opens ports, which these tests must "
    "not); backend and timeout_s are checked before"
)
EXCLUDED |= dict.fromkeys(
    (
        "plotting.finish",
        "plotting.plain_log_ticks",
        "plotting.PlainLogFormatter",
        "plotting.legend_below",
        "plotting.heatmap",
        "plotting.runs_and_mean",
        "plotting.runs_with_limit",
        "plotting.figure",
        "multineg.draw_lemma_curves",
        "multineg.draw_stored_runs",
    ),
    "a drawing helper: forwards a figure, an Axes and a DataFrame's named columns to "
    "matplotlib and seaborn (sizes by figsize, which has a baseline)",
)
EXCLUDED |= dict.fromkeys(
    ("launch.parse_args", "launch.main"),
    "the command line: argparse reports an unknown or malformed option with the usage "
    "and exit status 2, and check_options (a baseline) the options' ranges; "
    "tests/test_launch.py runs it",
)
EXCLUDED["runtime.plain_number"] = (
    "returns any value unchanged, a NumPy scalar or one-element tensor as a number"
)
EXCLUDED["plotting.use_style"] = "sets matplotlib's global style; no argument"
EXCLUDED["encoder_report.Row"] = (
    "a NamedTuple of report's row descriptions (REPORT_ROWS), which "
    "tests/test_encoder_report.py checks against the table"
)
EXCLUDED["plotting.Quantity"] = (
    "a NamedTuple of the palette's constants (QUANTITIES), which test_plotting checks "
    "entry by entry"
)
EXCLUDED |= dict.fromkeys(
    ("losses.at_least_float32", "losses.widen_float16", "losses.result_dtype"),
    "a dtype helper of the losses' hot path: any tensor, chosen by its dtype alone",
)
EXCLUDED["losses.nt_xent_per_anchor"] = (
    "the per-anchor kernel of nt_xent_loss and nt_xent_loss_distributed, which check "
    "its arguments (documented: unchecked here, a hot path)"
)
EXCLUDED |= dict.fromkeys(
    ("train.member_norms", "train.combined_norm"),
    "a norm of the training loop's hot path (every step): dtype and shape checked, "
    "values not (a NaN norm is what the loop's finiteness check reports; "
    "tests/test_train.py)",
)
EXCLUDED["results.save_paper_results"] = (
    "writes a chapter's stored results into the repository; chapter and numbers are "
    "checked first (tests/test_results.py)"
)
EXCLUDED["verdicts.ReaderTable"] = (
    "a display of reader_table's frame (which has a baseline); no checks of its own"
)
EXCLUDED["results.write_json"] = "writes a file; its record comes from jsonable"
EXCLUDED["verdicts.write_scorecard"] = "writes a file; scorecard_page has a baseline"
EXCLUDED["verdicts.load_records"] = "reads a folder; tests/test_verdicts.py"
EXCLUDED["verdicts.chapter_titles"] = "reads _toc.yml; tests/test_verdicts.py"
EXCLUDED["verdicts.main"] = "argparse's command line: exits with the usage"
EXCLUDED["verdicts.Verdicts"] = "a collector: its methods check their arguments "
EXCLUDED["verdicts.Verdicts"] += "(tests/test_verdicts.py)"
EXCLUDED["verdicts.claims_by_key"] = "takes *claims, which the walk cannot name; "
EXCLUDED["verdicts.claims_by_key"] += "its errors are tested in tests/test_verdicts.py"
EXCLUDED["verdicts.Claim"] = "a record checked in __post_init__ "
EXCLUDED["verdicts.Claim"] += "(tests/test_verdicts.py)"
EXCLUDED["results.jsonable"] = "any JSON data is valid (an empty dict too); `where` "
EXCLUDED["results.jsonable"] += "is any label of its error messages"
EXCLUDED["data.DataNotFoundError"] = "an exception class: its argument is a message"
EXCLUDED["data.LatentClassModel"] = "an abstract base class without arguments (its "
EXCLUDED["data.LatentClassModel"] += "subclasses GaussianClasses, EmpiricalClasses "
EXCLUDED["data.LatentClassModel"] += "have baselines)"
EXCLUDED |= dict.fromkeys(
    ("data.download", "data.fetch"),
    "downloads (tested offline against local servers in tests/test_data_files.py, a "
    "bad CCL_DATA_MIRROR included); dataset is checked first by the function that "
    "cache_dir and search_path use (baselines)",
)

# Tensors of any dtype (a shard of labels is a shard): no "integer tensor" case.
ANY_DTYPE = {
    "distributed.local_shard",
    "distributed.gather_with_grad",
    "checks.check_finite",
}

# Per-callable values of a hot path: a loss's values are not checked (no device
# synchronisation per step), so NaN and inf propagate, as their docstrings say.
HOT_PATHS = {
    name
    for name in BASELINES
    if name.startswith("losses.") or name == "distributed.nt_xent_loss_distributed"
} | {
    "distributed.local_shard",
    "distributed.gather_with_grad",
    "distributed.ddp_train_step",
    "data.augment",
    # the per-step losses of one seed (under vmap): their batch's dtypes are checked
    "curl.block_contrastive_loss",
    "curl.cross_entropy_loss",
    "multineg.contrastive_loss",
    "multineg.triplet_objective",
    "wen.triplet_loss",
    # their dtype check (never values, by design)
    "checks.check_batch",
}
"""Also ``data.augment``: it runs inside the training steps of Chapter 5 (its docstring
says a NaN propagates)."""
HOT_PATHS |= {
    # Wen's loss and its closed-form gradients: Algorithm 1's per-step computations.
    "wen.pairwise_logits",
    "wen.negative_set_logits",
    "wen.log_one_plus_sum_exp",
    "wen.contrastive_loss",
    "wen.contrastive_loss_loop",
    "wen.negative_weights",
    "wen.loss_tilde",
    "wen.loss_vectors",
    "wen.loss_vectors_autograd",
    "wen.fact1_comparison",
    "wen.shared_loss_vectors",
    # the Lemma 3 / Lemma D.1 / Lemma A.1 tensor functions: the objective of
    # smoothness_sup_search's gradient ascent and of the losses
    "symbolic.triplet_loss",
    "symbolic.triplet_hessian",
    "symbolic.lse_hessian",
    "symbolic.lse_hessian_gershgorin_bound",
    "symbolic.smooth_max",
    "symbolic.smooth_max_bounds",
    # the multimodal losses (per step)
    "multimodal.contrastive_loss",
    "multimodal.non_contrastive_loss",
    # Algorithm 3.1's per-step loss and gradients
    "multimodal.batch_loss",
    "multimodal.gradients",
    # Chapter 5's per-step loss of every stacked member (vmapped)
    "supervised_approx.member_loss",
    "supervised_approx.run_loss",
}
VALUES_UNCHECKED = {
    "verdicts.holm.p_values": "NaN marks a test not made (a claim without a margin): "
    "left out of the family, by design",
    "supervised_approx.attracting_terms.anchors": "evaluated on every member: a "
    "diverged one gives NaN terms",
    "supervised_approx.attracting_terms.views": "evaluated on every member: a "
    "diverged one gives NaN terms",
    "checks.check_tensor.value": "checks shapes and dtypes only, by design",
    **{
        f"supervised_approx.{function}.{argument}": "evaluated on every member: a "
        "diverged one gives NaN terms"
        for function in ("repelling_terms", "repelling_chain")
        for argument in ("anchors", "views")
    },
    **{
        f"supervised_approx.member_loss.{code}": "a per-step loss under vmap: its "
        "codes' values are not read (run_batches checks them)"
        for code in ("loss_code", "similarity_code")
    },
    "multineg.output_norm_range.features": "recorded at checkpoints: a diverged seed "
    "records NaN",
    "multimodal.alignment_cosines.S_A": "recorded along training: NaN propagates",
    "multimodal.alignment_cosines.S_B": "recorded along training: NaN propagates",
    "multimodal.noise_ratio.S": "recorded along training: NaN propagates",
    **{
        f"multimodal.{function}.{argument}": "recorded along training: NaN propagates"
        for function, arguments in (
            ("reparametrise", ("W_A", "W_B")),
            ("alignment_score", ("S_A", "Xi_A", "S_B", "Xi_B")),
            ("balance_lower_bound", ("kappa", "noise")),
        )
        for argument in arguments
    },
    "multimodal.noise_ratio.Xi": "recorded along training: NaN propagates",
    "wen.time_exact_expectation.q": "times the loss on any values (a benchmark)",
    "wen.time_exact_expectation.k": "times the loss on any values (a benchmark)",
    "metrics.task_loss_and_accuracy.classifier": "fitted rows that did not converge "
    "give a NaN loss, not an error",
}
"""Arguments (callable.argument) whose values are not checked, with the reason."""

COUNT_NAMES = {"k", "block", "total", "largest", "smallest", "width", "depth", "dim"}
"""Integer arguments (besides ``n_*`` and ``*_size``) for which 0 is not allowed."""
NON_NEGATIVE_INTS = {
    "seed",
    "dim",
    "padding",
    "depth",
    "multimodal.record_grid.total",
    "checks.check_frame.min_rows",
    "train.loop.n_steps",
    "symbolic.smoothness_table.n_steps",
    "multimodal.scores.n_align",
    "multimodal.ode_scores.n_align",
    "multimodal.train.n_align",
    "symbolic.smoothness_sup_search.n_steps",
}
"""Integer arguments that may be 0 (or, for ``dim``, negative: a Python index); a name,
or callable.name."""
POSITIVE_REALS = {
    "temperature",
    "alpha",
    "lam",
    "nu",
    "beta",
    "imbalance_ratio",
    "atol",
    "rtol",
    "beta_1",
    "beta_2",
    "delta",
    "epsilon",
    "eta",
    "gamma",
    "kappa_m",
    "lr",
    "lr_constant",
    "margin",
    "noise_std",
    "radius",
    "scale",
    "sd",
    "size_pt",
    "width_in",
    "step_scale",
    "tau",
    "threshold",
    "tolerance",
    "test_fraction",
    "confidence",
    "checks.check_positive.value",
    "checks.check_positive_or_scalar_tensor.value",
}
"""Real arguments that must be > 0 (a name, or callable.name)."""
NON_NEGATIVE_REALS = {
    "weight_decay",
    "curl.mean_classifier_bound.tau",
    "multineg.add_lemma_bounds.confidence",
}
"""Real arguments that may be 0 but not negative (they take precedence)."""
FREE_STRINGS = {
    "name",
    "labels_name",
    "multineg.descent_sweep.parameter",
    "plotting.markers.values",
}
"""String arguments that are not a choice among known values."""


def mutations(callable_name, name, value, hot_path, any_dtype):
    """[(label, bad value)] for argument ``name`` of ``callable_name`` whose valid value
    is ``value``."""
    cases = []
    if isinstance(value, bool):
        return cases
    if isinstance(value, int):
        cases += [("float for int", 2.5), ("bool for int", True)]
        non_negative = bool({name, f"{callable_name}.{name}"} & NON_NEGATIVE_INTS)
        if not non_negative:
            cases.append(("negative", -1))
        if (
            name.startswith("n_") or name.endswith("_size") or name in COUNT_NAMES
        ) and not non_negative:
            cases.append(("zero count", 0))
    elif isinstance(value, float):
        cases += [("nan", math.nan), ("inf", math.inf)]
        keys = {name, f"{callable_name}.{name}"}
        if keys & (POSITIVE_REALS | NON_NEGATIVE_REALS):
            cases += [("negative", -1.0), ("negative tensor", torch.tensor(-1.0))]
        if keys & POSITIVE_REALS and not keys & NON_NEGATIVE_REALS:
            cases += [("zero", 0.0), ("zero tensor", torch.tensor(0.0))]
    elif isinstance(value, str):
        if not {name, f"{callable_name}.{name}"} & FREE_STRINGS:
            cases.append(("unknown choice", BAD))
    elif isinstance(value, torch.dtype):
        cases.append(("integer dtype", torch.int64))
    elif hasattr(value, "_fields") and not isinstance(value, type):
        cases.append((f"not a {type(value).__name__}", tuple(value)))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
        cases.append(("float in int list", type(value)([0.5, *value[1:]])))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], float):
        if f"{callable_name}.{name}" not in VALUES_UNCHECKED:
            cases.append(("nan in list", type(value)([math.nan, *value[1:]])))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        if not {name, f"{callable_name}.{name}"} & FREE_STRINGS:
            cases.append(("unknown entry", type(value)([BAD, *value[1:]])))
    elif isinstance(value, list) and value and isinstance(value[0], tuple):
        cases += [
            (f"{name}[0] {label}", [bad, *value[1:]])
            for label, bad in mutations(
                callable_name, f"{name}[0]", value[0], hot_path, any_dtype
            )
        ]
    elif isinstance(value, tuple) and any(isinstance(e, torch.Tensor) for e in value):
        cases += tuple_mutations(callable_name, name, value, hot_path, any_dtype)
    elif isinstance(value, pd.DataFrame):
        cases += [
            ("no rows", value.iloc[:0]),
            ("no columns", value.iloc[:, :0]),
            ("not a DataFrame", value.to_dict("list")),
        ]
    elif isinstance(value, dict) and value:
        cases.append(("empty mapping", {}))
    elif type(value).__module__.startswith("ccl_helpers."):
        cases.append((f"not a {type(value).__name__}", BAD))
    elif callable(value) and not isinstance(value, (type, torch.nn.Module)):
        cases.append(("not callable", BAD))
    elif isinstance(value, torch.Tensor):
        if value.is_floating_point():
            if not any_dtype:
                cases.append(("integer tensor", value.round().long()))
            if not hot_path and f"{callable_name}.{name}" not in VALUES_UNCHECKED:
                nan = value.clone()
                nan.view(-1)[0] = math.nan
                cases.append(("nan tensor", nan))
        elif (
            value.numel()
            and not hot_path
            and f"{callable_name}.{name}" not in VALUES_UNCHECKED
        ):
            negative = value.clone()
            negative.view(-1)[0] = -1
            cases.append(("negative entry", negative))
    return cases


def tuple_mutations(callable_name, name, value, hot_path, any_dtype):
    """The tensor mutations of each tensor of a tuple ``value`` (a batch), one at a
    time; the element is named ``name[i]``."""
    cases = []
    for i, element in enumerate(value):
        if isinstance(element, torch.Tensor):
            cases += [
                (f"{name}[{i}] {label}", (*value[:i], bad, *value[i + 1 :]))
                for label, bad in mutations(
                    callable_name, f"{name}[{i}]", element, hot_path, any_dtype
                )
            ]
    return cases


def shape_mismatch(kwargs, pair):
    """kwargs with the first argument of ``pair`` (first, second, dim) one entry short
    along ``dim``."""
    first, _, dim = pair
    value = kwargs[first]
    return {**kwargs, first: value.narrow(dim, 0, value.shape[dim] - 1)}


def problems_of(name):
    """The cases of callable ``name`` that did not raise a clear error, and their
    count."""
    fn = PUBLIC[name]
    parameters = inspect.signature(fn).parameters
    kwargs, pairs = BASELINES[name]()
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        assert set(kwargs) <= set(parameters), (
            f"unknown arguments in baseline of {name}"
        )
    fn(**kwargs)  # the baseline is valid

    # The check helpers (checks.*, train.check_stages) report the name they are given,
    # not their own argument's (check_features, check_inputs: labels under
    # labels_name).
    def shown(arg):
        if not name.startswith("checks.") and name != "train.check_stages":
            return arg
        if arg == "labels" and name in ("checks.check_features", "checks.check_inputs"):
            return kwargs.get("labels_name", "labels")
        return kwargs["name"]

    cases = [
        (arg, label, {**kwargs, arg: bad}, (shown(arg),))
        for arg in kwargs
        for label, bad in mutations(
            name, arg, BASELINES[name]()[0][arg], name in HOT_PATHS, name in ANY_DTYPE
        )
    ]
    cases += [
        (
            pair[0],
            "shape mismatch",
            shape_mismatch(BASELINES[name]()[0], pair),
            tuple(map(shown, pair[:2])),
        )
        for pair in pairs
    ]
    problems = []
    for arg, label, call_kwargs, must_name in cases:
        try:
            fn(**call_kwargs)
        except (ValueError, TypeError) as error:
            if not all(n in str(error) for n in must_name):
                problems.append(f"{arg}={label}: message without {must_name}: {error}")
        except Exception as error:  # noqa: BLE001 - the point: a cryptic error
            problems.append(f"{arg}={label}: {type(error).__name__}: {error}")
        else:
            problems.append(f"{arg}={label}: returned silently")
    return problems, len(cases)


COUNTS = {"callables": 0, "cases": 0}


# Callables whose bad inputs still pass silently or raise cryptic errors (issue 18, not
# yet fixed): strict xfail, so that each fix must remove its name here.
KNOWN_FAILING: set[str] = set()


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=pytest.mark.xfail(strict=True, reason="issue 18: not yet fixed")
            if name in KNOWN_FAILING
            else (),
        )
        for name in sorted(BASELINES)
    ],
)
def test_bad_input_raises_a_clear_error(name):
    problems, n_cases = problems_of(name)
    COUNTS["callables"] += 1
    COUNTS["cases"] += n_cases
    assert not problems, f"{name}:\n" + "\n".join(problems)


def has_nan(out) -> bool:
    """Whether a result (a tensor, a frame, or a dict, tuple or list of them) holds a
    NaN among its floating-point values."""
    if isinstance(out, torch.Tensor):
        return out.is_floating_point() and bool(out.isnan().any())
    if isinstance(out, pd.DataFrame):
        return bool(out.select_dtypes("number").isna().any().any())
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return any(has_nan(value) for value in out)
    return isinstance(out, float) and math.isnan(out)


def unchecked_nan_cases():
    """(callable, argument or batch element, kwargs with a NaN in that floating tensor)
    for every value left unchecked: each argument of :data:`VALUES_UNCHECKED`, and each
    floating tensor (or tensor of a tuple batch) of a callable of :data:`HOT_PATHS`."""
    arguments = [key.rsplit(".", 1) for key in VALUES_UNCHECKED]
    arguments += [
        (name, arg)
        for name in sorted(HOT_PATHS & set(BASELINES))
        for arg in BASELINES[name]()[0]
    ]
    cases = []
    for name, arg in arguments:
        kwargs = BASELINES[name]()[0]
        value = kwargs[arg]
        elements = value if type(value) is tuple else (value,)
        for i, element in enumerate(elements):
            if isinstance(element, torch.Tensor) and element.is_floating_point():
                bad = element.clone()
                bad.view(-1)[0] = math.nan
                if type(value) is tuple:
                    label, changed = f"{arg}[{i}]", (*value[:i], bad, *value[i + 1 :])
                else:
                    label, changed = arg, bad
                cases.append((name, label, {**kwargs, arg: changed}))
    return cases


def nan_result_or_error(name: str, kwargs: dict) -> str:
    """The outcome of a call: "nan" if it gives a NaN, "error" if it raises a ValueError
    (a hyperparameter tensor's value is read outside vmap), else "finite"."""
    try:
        return "nan" if has_nan(PUBLIC[name](**kwargs)) else "finite"
    except ValueError:
        return "error"


def test_unchecked_values_propagate_nan():
    """Where values are not checked (a per-step hot path, or a quantity recorded along
    training), a NaN input must give a NaN result or an error, never a finite wrong one
    (as NaN compared with anything is False, a count of wins would read 0)."""
    found = {
        f"{name}({arg}=NaN)": nan_result_or_error(name, kwargs)
        for name, arg, kwargs in unchecked_nan_cases()
    }
    silent = [case for case, outcome in found.items() if outcome == "finite"]
    assert not silent, silent
    errors = sum(outcome == "error" for outcome in found.values())
    print(f"\nunchecked values: {len(found)} NaN cases, {errors} of them an error")


def test_zz_report_counts():
    print(f"\nbad inputs: {COUNTS['callables']} callables, {COUNTS['cases']} cases")


def test_every_public_callable_has_a_baseline_or_a_reason():
    missing = sorted(set(PUBLIC) - set(BASELINES) - set(EXCLUDED))
    print(f"\n{len(missing)} of {len(PUBLIC)} public callables without a baseline")
    assert not missing, missing


def test_baselines_and_exclusions_name_public_callables():
    assert set(BASELINES) | set(EXCLUDED) <= set(PUBLIC)


# ---------------------------------------------------------------- the shared checkers
# on anything (hypothesis): each returns the value it accepts or raises a ValueError
# naming the argument, never another error.

ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.integers(-3, 3), max_size=3),
    st.lists(st.floats(allow_nan=True), max_size=3).map(torch.tensor),
    st.integers(-3, 3).map(np.int64),
)


def accepted_or_named(check, *args):
    """check(*args), or None after a ValueError whose message names the argument."""
    try:
        return check(*args)
    except ValueError as error:
        assert "arg" in str(error)
        return None


@settings(max_examples=300, deadline=None)
@given(value=ANYTHING, minimum=st.integers(-3, 3))
def test_check_int_on_anything(value, minimum):
    out = accepted_or_named(checks.check_int, "arg", value, minimum)
    if out is not None:
        assert type(out) is int and out == value and out >= minimum
        assert not isinstance(value, bool)


@settings(max_examples=300, deadline=None)
@given(value=ANYTHING, allow_zero=st.booleans())
def test_check_positive_on_anything(value, allow_zero):
    out = accepted_or_named(checks.check_positive, "arg", value, allow_zero)
    if out is not None:
        assert type(out) is float and out == float(value) and math.isfinite(out)
        assert out > 0 or (allow_zero and out == 0)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.one_of(ANYTHING, st.lists(ANYTHING, max_size=3)), last=st.integers(0, 5)
)
def test_check_steps_on_anything(steps, last):
    out = accepted_or_named(checks.check_steps, "arg", steps, last)
    if out is not None:
        assert all(type(s) is int and 0 <= s <= last for s in out)


@settings(max_examples=300, deadline=None)
@given(
    value=st.one_of(
        ANYTHING,
        st.lists(
            st.one_of(st.floats(-1, 2), st.just(math.nan)), min_size=1, max_size=4
        ).map(lambda p: torch.tensor(p, dtype=torch.float64)),
    )
)
@example(value=torch.tensor([0.25, 0.75], dtype=torch.float64))
def test_check_probabilities_on_anything(value):
    out = accepted_or_named(checks.check_probabilities, "arg", value)
    if out is not None:
        assert bool((out >= 0).all()) and abs(float(out.sum()) - 1) <= 1e-5
