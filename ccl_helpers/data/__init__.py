"""Data: the latent-class model, real image data sets, subsets and augmentations.

- The latent-class model of contrastive learning (Arora et al., 2019): D_sim, D_neg
  over Gaussian or empirical classes (:class:`GaussianClasses`,
  :class:`EmpiricalClasses`); scikit-learn's 8×8 digits (:func:`load_digits`); fixed
  training sets on the unit sphere (:func:`unit_sphere`, :func:`separation`,
  :func:`fixed_triplets`, with negatives at a set distance
  :func:`hard_negatives`).
- Real image data sets: :func:`fashion_mnist` and :func:`mnist` (IDX files from a
  folder, ``CCL_DATA_DIR``, Debian's ``dataset-fashion-mnist`` or a checksummed
  download, see :func:`fetch` and ``python -m ccl_helpers.data fetch``);
  :func:`load_idx`, :func:`load_cifar10_batches`, :func:`load_cifar100` for local
  files.
- Subsets: :func:`balanced_subset`, :func:`subset_with_counts`,
  :func:`long_tailed_counts`, :func:`long_tailed_subset`, :func:`class_subset`.
- Batched, seeded, on-device augmentations (kornia): :func:`augment`,
  :data:`STRATEGIES`.
"""

from ._augment import BASE, STRATEGIES, augment, pipeline
from ._fetch import (
    DEBIAN_FASHION_MNIST,
    FETCH_COMMAND,
    SOURCES,
    cache_dir,
    download,
    fashion_mnist,
    fetch,
    find_split,
    mnist,
    read_split,
    search_path,
)
from ._files import DataNotFoundError, load_cifar10_batches, load_cifar100, load_idx
from ._latent import (
    NEGATIVES,
    EmpiricalClasses,
    GaussianClasses,
    LatentClassModel,
    Triplets,
    check_class_probs,
    duplicate_rows,
    fixed_triplets,
    hard_negatives,
    load_digits,
    separation,
    train_test_split,
    unit_sphere,
)
from ._subsets import (
    balanced_subset,
    class_subset,
    long_tailed_counts,
    long_tailed_subset,
    subset_with_counts,
)

__all__ = [
    "BASE",
    "DEBIAN_FASHION_MNIST",
    "FETCH_COMMAND",
    "NEGATIVES",
    "SOURCES",
    "STRATEGIES",
    "DataNotFoundError",
    "EmpiricalClasses",
    "GaussianClasses",
    "LatentClassModel",
    "Triplets",
    "augment",
    "balanced_subset",
    "cache_dir",
    "check_class_probs",
    "class_subset",
    "download",
    "duplicate_rows",
    "fashion_mnist",
    "fetch",
    "find_split",
    "fixed_triplets",
    "hard_negatives",
    "load_cifar10_batches",
    "load_cifar100",
    "load_digits",
    "load_idx",
    "long_tailed_counts",
    "long_tailed_subset",
    "mnist",
    "pipeline",
    "read_split",
    "search_path",
    "separation",
    "subset_with_counts",
    "train_test_split",
    "unit_sphere",
]
