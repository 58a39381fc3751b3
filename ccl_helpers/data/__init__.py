"""Data: the latent-class model, real image data sets, subsets and augmentations.

- The latent-class model of contrastive learning (Arora et al., 2019): D_sim, D_neg
  over Gaussian or empirical classes (:class:`GaussianClasses`,
  :class:`EmpiricalClasses`); scikit-learn's 8×8 digits (:func:`load_digits`) and a
  stratified split (:func:`train_test_split`); fixed training sets on the unit sphere
  (:func:`unit_sphere`, :func:`separation`, :func:`fixed_triplets`, with negatives at
  a set distance :func:`hard_negatives`).
- Real image data sets: :func:`fashion_mnist` and :func:`mnist` (IDX files from a
  folder, ``CCL_DATA_DIR``, Debian's ``dataset-fashion-mnist`` or a checksummed
  download, see ``python -m ccl_helpers.data fetch``), :func:`find_split` for where
  their files are; :class:`DataNotFoundError` when they are nowhere.
- Subsets: :func:`balanced_subset`, :func:`long_tailed_subset`, :func:`class_subset`.
- Batched, seeded, on-device augmentations (kornia): :func:`augment`,
  :data:`STRATEGIES`, :func:`pipeline`.
"""

from ._augment import BASE, STRATEGIES, augment, pipeline
from ._fetch import fashion_mnist, find_split, mnist
from ._files import DataNotFoundError
from ._latent import (
    NEGATIVES,
    EmpiricalClasses,
    GaussianClasses,
    LatentClassModel,
    Triplets,
    fixed_triplets,
    hard_negatives,
    load_digits,
    separation,
    train_test_split,
    unit_sphere,
)
from ._subsets import balanced_subset, class_subset, long_tailed_subset

__all__ = [
    "Triplets",
    "BASE",
    "NEGATIVES",
    "STRATEGIES",
    "DataNotFoundError",
    "EmpiricalClasses",
    "GaussianClasses",
    "LatentClassModel",
    "augment",
    "balanced_subset",
    "class_subset",
    "fashion_mnist",
    "find_split",
    "fixed_triplets",
    "hard_negatives",
    "load_digits",
    "long_tailed_subset",
    "mnist",
    "pipeline",
    "separation",
    "train_test_split",
    "unit_sphere",
]
