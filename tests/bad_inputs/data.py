"""The baselines of ``ccl_helpers.data``."""

from __future__ import annotations

import torch

from .common import (
    cifar_files,
    data_files,
    floats,
    generator,
    labels,
    uniform,
    unit_triplets,
)

BASELINES = {
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
    "data.GaussianClasses": lambda: (
        dict(class_probs=uniform(), means=floats(2, 3), noise_std=1.0),
        (("means", "class_probs", 0),),
    ),
    "data.cache_dir": lambda: (dict(dataset="mnist"), ()),
    "data.search_path": lambda: (dict(dataset="mnist"), ()),
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
}
