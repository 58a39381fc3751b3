"""The reader of IDX files (MNIST, FashionMNIST), and the error of a missing file.

IDX files are read whole, gzipped or not; a damaged file raises ValueError."""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import torch
from torch import Tensor


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


def _load_idx(path: str | os.PathLike) -> Tensor:
    """Parse an IDX file (the format of MNIST and FashionMNIST), gzipped or not
    (detected from its bytes).

    Format: two zero bytes, a type byte (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
    0x0D float32, 0x0E float64), the number of dimensions k, k big-endian uint32 sizes,
    then the values, big-endian, row-major. Returns a CPU tensor of those sizes and
    type. Raises DataNotFoundError when the file is absent and ValueError when it
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
    return torch.from_numpy(values.reshape(shape))
