"""Readers of local image files: IDX (MNIST, FashionMNIST) and CIFAR batches.

The CIFAR batches are the python batches of CIFAR-10 and CIFAR-100."""

from __future__ import annotations

import gzip
import os
import pickle
import struct
import zlib
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from ..checks import Device, FloatingDtype, checked


class DataNotFoundError(FileNotFoundError, ValueError):
    """A data set or file that is not where it was looked for (both a
    FileNotFoundError and a ValueError)."""


_IDX_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _existing(path: str | os.PathLike, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"{what} not found at {path}")
    return path


@checked(device=Device())
def load_idx(path: str | os.PathLike, device: torch.device | str = "cpu") -> Tensor:
    """Parse an IDX file (the format of MNIST and FashionMNIST), gzipped or not
    (detected from its bytes).

    Format: two zero bytes, a type byte (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
    0x0D float32, 0x0E float64), the number of dimensions k, k big-endian uint32 sizes,
    then the values, big-endian, row-major. Returns a tensor of those sizes and type on
    ``device``. Raises DataNotFoundError when the file is absent and ValueError when it
    is not a well-formed IDX file.
    """
    raw = _existing(path, "IDX file").read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:  # truncated or damaged
            raise ValueError(
                f"path {path} is a truncated or corrupt gzip file ({error}); replace "
                "it (python -m ccl_helpers.data fetch checks a data set's files)"
            ) from error
    if len(raw) < 4 or raw[:2] != b"\x00\x00" or raw[2] not in _IDX_TYPES:
        raise ValueError(
            f"path {path} is not an IDX file (bad magic number {raw[:4].hex()})"
        )
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"path {path}: truncated IDX header")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = _IDX_TYPES[raw[2]]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"path {path}: IDX data has {len(raw) - header} bytes, its "
            f"header {shape} of "
            f"{dtype.name} needs {expected}"
        )
    values = np.frombuffer(raw, dtype=dtype, offset=header).astype(
        dtype.newbyteorder("=")
    )
    return torch.from_numpy(values.reshape(shape)).to(device)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles only containers of plain values and NumPy arrays (the CIFAR-10
    batches), nothing else."""

    _allowed = {
        ("_codecs", "encode"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
    }

    def find_class(self, module: str, name: str):
        if (module, name) not in self._allowed:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        if module == "numpy.core.multiarray":
            module = "numpy._core.multiarray" if hasattr(np, "_core") else module
        return super().find_class(module, name)


def _cifar_batches(
    directory: str | os.PathLike,
    names: list[str],
    label_key: str,
    what: str,
    device: torch.device | str,
    dtype: torch.dtype,
) -> tuple[Tensor, Tensor]:
    """Read the CIFAR "python version" batches ``names`` of ``directory``: pickled
    dicts with ``data`` (k, 3072) uint8 and labels under ``label_key`` → images
    (N, 3, 32, 32) in [0, 1] and labels (N,) long, on ``device``. Only arrays and
    plain values are unpickled."""
    directory = _existing(directory, f"{what} directory")
    missing = [name for name in names if not (directory / name).exists()]
    if missing:
        raise DataNotFoundError(f"{what} batches {missing} not found in {directory}")
    images, labels = [], []
    for name in names:
        try:
            with open(directory / name, "rb") as handle:
                batch = _ArrayUnpickler(handle, encoding="bytes").load()
            data = np.asarray(batch.get(b"data", batch.get("data")), dtype=np.uint8)
            target = np.asarray(
                batch.get(label_key.encode(), batch.get(label_key)), dtype=np.int64
            )
        except (
            pickle.UnpicklingError,
            EOFError,
            AttributeError,
            TypeError,
            ValueError,
        ) as error:
            raise ValueError(
                f"{directory / name} is not a {what} batch: {error}"
            ) from error
        if (
            data.ndim != 2
            or data.shape[1] != 3 * 32 * 32
            or target.shape != (data.shape[0],)
        ):
            raise ValueError(
                f"{directory / name} is not a {what} batch: data {data.shape}, "
                f"labels {target.shape}"
            )
        images.append(data.reshape(-1, 3, 32, 32))
        labels.append(target)
    images_t = (
        torch.from_numpy(np.concatenate(images)).to(device=device, dtype=dtype) / 255.0
    )
    return images_t, torch.from_numpy(np.concatenate(labels)).to(device)


@checked(device=Device(), dtype=FloatingDtype())
def load_cifar10_batches(
    directory: str | os.PathLike,
    train: bool = True,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """CIFAR-10 from its local "python version" batches.

    ``directory`` (e.g. ``cifar-10-batches-py``) holds ``data_batch_1`` …
    ``data_batch_5`` (``train``) and ``test_batch``; each is a pickled dict with
    ``data`` (k, 3072) uint8 — per row the 32×32 red, green and blue planes, row-major —
    and ``labels`` (k,) in 0..9. Only arrays and plain values are unpickled. Returns
    images (N, 3, 32, 32) scaled to [0, 1] and labels (N,) long, on ``device``.
    """
    names = [f"data_batch_{i}" for i in range(1, 6)] if train else ["test_batch"]
    return _cifar_batches(directory, names, "labels", "CIFAR-10", device, dtype)


@checked(device=Device(), dtype=FloatingDtype())
def load_cifar100(
    directory: str | os.PathLike,
    train: bool = True,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    labels: str = "fine",
) -> tuple[Tensor, Tensor]:
    """CIFAR-100 from its local "python version" files ``train`` and ``test`` (e.g. in
    ``cifar-100-python``), laid out as CIFAR-10's batches, with ``labels="fine"`` (100
    classes) or ``"coarse"`` (20 superclasses). Returns images (N, 3, 32, 32) in
    [0, 1] and labels (N,) long, on ``device``."""
    if labels not in ("fine", "coarse"):
        raise ValueError(f"labels must be 'fine' or 'coarse', got {labels!r}")
    names = ["train" if train else "test"]
    return _cifar_batches(
        directory, names, f"{labels}_labels", "CIFAR-100", device, dtype
    )
