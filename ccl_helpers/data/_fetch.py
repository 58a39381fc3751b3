"""FashionMNIST and MNIST: where their IDX files are looked for, how they are fetched.

Search order for the four files (``*-idx?-ubyte``, gzipped or not) of a data set:

1. ``root`` if given, then the folder named by the environment variable ``CCL_DATA_DIR``
   (each directly, or its subfolder ``fashion-mnist`` / ``mnist``, or torchvision's
   ``FashionMNIST/raw`` / ``MNIST/raw``);
2. for FashionMNIST, Debian's package ``dataset-fashion-mnist``: the folder named by
   ``CCL_DEBIAN_DATA_DIR`` if set, else :data:`DEBIAN_FASHION_MNIST`;
3. the user cache that a download fills (pooch's OS cache: on Linux
   ``$XDG_CACHE_HOME/ccl_helpers``, by default ``~/.cache/ccl_helpers``).

Nothing is downloaded unless asked: ``download=True`` or ``python -m ccl_helpers.data
fetch``. A download tries the base URL ``CCL_DATA_MIRROR`` first, if set
(``http://``, ``https://`` or ``file://``, a folder holding the four ``.gz`` files),
then the official mirrors; a file is kept only if its decompressed content has the
md5 of the official file's (the same whatever the compression: Debian's recompressed
copies pass). Every variable is read at call time.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from typing import NamedTuple

import torch
from torch import Tensor

from .._checks import check_device, check_floating_dtype
from ._files import DataNotFoundError, _load_idx

DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
"""Where Debian's ``dataset-fashion-mnist`` installs the four gzipped IDX files (the
folder searched unless ``CCL_DEBIAN_DATA_DIR`` names another)."""

FETCH_COMMAND = "python -m ccl_helpers.data fetch"
SPLITS = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
N_CLASSES = 10


class Source(NamedTuple):
    """A data set in the IDX format: its name, folder names, official mirrors (base
    URLs of the ``.gz`` files) and ``content_md5``, the md5 of each official IDX file,
    decompressed (what a download is checked against: the same whatever the
    compression)."""

    name: str
    title: str
    folders: tuple[str, ...]
    mirrors: tuple[str, ...]
    content_md5: dict[str, str]
    debian_package: str | None


FASHION_MNIST = Source(
    "fashion-mnist",
    "FashionMNIST",
    ("fashion-mnist", "FashionMNIST/raw"),
    ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
    {
        "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
        "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
        "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
        "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
    },
    "dataset-fashion-mnist",
)
MNIST = Source(
    "mnist",
    "MNIST",
    ("mnist", "MNIST/raw"),
    (
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
    ),
    {
        "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
        "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
        "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
        "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
    },
    None,
)
SOURCES = {source.name: source for source in (FASHION_MNIST, MNIST)}


def _source(dataset: str) -> Source:
    if dataset not in SOURCES:
        raise ValueError(f"dataset must be one of {sorted(SOURCES)}, got {dataset!r}")
    return SOURCES[dataset]


def _debian_folder() -> Path:
    """Where Debian's FashionMNIST is looked for: ``CCL_DEBIAN_DATA_DIR`` if set, else
    :data:`DEBIAN_FASHION_MNIST`."""
    return Path(os.environ.get("CCL_DEBIAN_DATA_DIR") or DEBIAN_FASHION_MNIST)


def _env_mirror() -> str | None:
    """The base URL in ``CCL_DATA_MIRROR`` (ending in "/"), None if unset; ValueError
    unless it is an ``http://``, ``https://`` or ``file://`` URL."""
    url = os.environ.get("CCL_DATA_MIRROR")
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    web = parts.scheme in ("http", "https") and parts.netloc
    if not (web or parts.scheme == "file"):
        raise ValueError(
            "CCL_DATA_MIRROR must be an http://, https:// or file:// URL of a folder "
            f"holding the .gz files, got {url!r}"
        )
    return url if url.endswith("/") else f"{url}/"


def _copy_file_url(url: str, output_file: str, _pooch: object) -> None:
    """A pooch downloader for ``file://`` URLs: copies the file to ``output_file``."""
    shutil.copyfile(
        urllib.request.url2pathname(urllib.parse.urlsplit(url).path), output_file
    )


def _content(path: Path) -> str:
    """``"md5 <hex>"`` of ``path``'s content (decompressed if its name ends in
    ``.gz``), or ``"unreadable (<why>)"`` for a truncated or corrupt file."""
    digest = hashlib.md5()
    try:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as stream:
            while block := stream.read(1 << 20):
                digest.update(block)
    except (OSError, EOFError, zlib.error) as error:  # not gzip, truncated, corrupt
        return f"unreadable ({error})"
    return f"md5 {digest.hexdigest()}"


def _check_content(path: Path, md5: str) -> None:
    """Keep the gzipped ``path`` only if the md5 of its decompressed content is ``md5``;
    else remove it and raise ValueError."""
    found = _content(path)
    if found != f"md5 {md5}":
        path.unlink()
        raise ValueError(
            f"{path.name} removed: its decompressed content is {found}, not the "
            f"official md5 {md5}"
        )


def _cache_dir(dataset: str) -> Path:
    """The user cache of ``dataset`` that :func:`_download` fills (pooch's OS cache)."""
    import pooch

    return Path(pooch.os_cache("ccl_helpers")) / _source(dataset).name


def _search_path(dataset: str, root: str | os.PathLike | None = None) -> list[Path]:
    """The folders searched for ``dataset``'s files, in order (see the module text). A
    ``root`` or a ``CCL_DATA_DIR`` that is not a folder raises ValueError (the data
    would otherwise come silently from another place)."""
    source = _source(dataset)
    environment = os.environ.get("CCL_DATA_DIR") or None
    for name, folder in (("root", root), ("CCL_DATA_DIR", environment)):
        if folder is not None and not Path(folder).expanduser().is_dir():
            raise ValueError(f"{name} must be an existing folder, got {str(folder)!r}")
    places = []
    for base in (root, environment):
        if base is not None:
            base = Path(base).expanduser()
            places += [base, *(base / folder for folder in source.folders)]
    if source is FASHION_MNIST:
        places.append(_debian_folder())
    try:
        places.append(_cache_dir(dataset))
    except ImportError:  # without pooch there is no download cache to search
        pass
    return places


def _file_in(folder: Path, name: str) -> Path | None:
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def _not_found_message(dataset: str, what: str, places: list[Path]) -> str:
    """The error text for missing files: where they were looked for and the ways to get
    them (a folder or ``CCL_DATA_DIR``, the Debian package, the download command and
    its ``CCL_DATA_MIRROR``)."""
    source = _source(dataset)
    looked = "".join(f"\n  {place}" for place in places)
    ways = [
        f"pass root=FOLDER or set CCL_DATA_DIR=FOLDER, a folder that holds them "
        f"(or its subfolder {source.folders[0]}/)",
    ]
    if source.debian_package:
        ways.append(
            f"on Debian or Ubuntu: apt-get install {source.debian_package} "
            f"(installs them in {DEBIAN_FASHION_MNIST})"
        )
    ways.append(
        f"with a network: {FETCH_COMMAND} --dataset {source.name} "
        f"(or download=True), from the URL in CCL_DATA_MIRROR if set, then the "
        f"official mirrors, into {_cache_dir(dataset)}, each file checked against the "
        f"official md5 of its content"
    )
    listed = "".join(f"\n  ({i}) {way}" for i, way in enumerate(ways, 1))
    return (
        f"{source.title} {what} not found; looked in:{looked}\n"
        f"Get the files in one of {len(ways)} ways:{listed}"
    )


def _verify_folder(dataset: str, folder: str | os.PathLike) -> Path:
    """``folder`` if each of ``dataset``'s files in it (``name`` or ``name.gz``) has
    the official content (the md5 of the decompressed file, as :func:`_download`
    checks); ValueError naming the first file that is truncated, corrupt or another
    file. Files absent from ``folder`` are not checked."""
    source, folder = _source(dataset), Path(folder)
    for name, md5 in source.content_md5.items():
        path = _file_in(folder, name)
        if path is None:
            continue
        found = _content(path)
        if found != f"md5 {md5}":
            raise ValueError(
                f"{source.title} file {path} is damaged: its content is {found}, not "
                f"the official md5 {md5} (truncated or corrupt); replace it, or "
                f"remove the folder's files and run {FETCH_COMMAND} --dataset "
                f"{source.name}"
            )
    return folder


def find_split(
    dataset: str, split: str, root: str | os.PathLike | None = None
) -> tuple[Path, Path]:
    """The (images, labels) files of ``split`` ("train" or "test") of ``dataset``: the
    first folder of the search order (``root``, ``CCL_DATA_DIR``, Debian's folder, the
    download cache; see :func:`fashion_mnist`) that holds both. Raises
    DataNotFoundError."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    places = _search_path(dataset, root)
    for place in places:
        files = [_file_in(place, name) for name in SPLITS[split]]
        if all(files):
            return files[0], files[1]
    names = " and ".join(f"{name}[.gz]" for name in SPLITS[split])
    raise DataNotFoundError(
        _not_found_message(dataset, f"{split} files ({names})", places)
    )


def _read_split(
    images_path: Path,
    labels_path: Path,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """Images (n, 1, H, W) in [0, 1], of the floating ``dtype``, and labels (n,) int64
    in 0..9 from an IDX pair; ValueError naming the file when the pair is not a labelled
    image set (``device`` and ``dtype`` trusted: checked by the loaders)."""
    images, labels = _load_idx(images_path), _load_idx(labels_path)
    if images.ndim != 3 or images.dtype != torch.uint8:
        raise ValueError(
            f"{images_path} must hold uint8 images (n, H, W), got {images.dtype} "
            f"{tuple(images.shape)}"
        )
    if labels.ndim != 1 or labels.dtype != torch.uint8:
        raise ValueError(
            f"{labels_path} must hold uint8 labels (n,), got {labels.dtype} "
            f"{tuple(labels.shape)}"
        )
    if labels.shape[0] != images.shape[0]:
        raise ValueError(
            f"{labels_path} holds {labels.shape[0]} labels but {images_path} holds "
            f"{images.shape[0]} images"
        )
    if labels.numel() and int(labels.max()) >= N_CLASSES:
        raise ValueError(
            f"{labels_path} holds label {int(labels.max())}, outside 0..{N_CLASSES - 1}"
        )
    images = images.to(device).unsqueeze(1).to(dtype).div_(255.0)
    return images, labels.to(device=device, dtype=torch.long)


def _download(dataset: str) -> Path:
    """Download ``dataset``'s four ``.gz`` files into :func:`_cache_dir` (pooch,
    quiet) → that folder. Mirrors are tried in turn, ``CCL_DATA_MIRROR`` first if set;
    a file is kept only if the md5 of its decompressed content is the official one
    (else it is removed and the next mirror tried), a file already in the cache too.
    Raises DataNotFoundError when no mirror gives a good file, ValueError for a
    ``CCL_DATA_MIRROR`` that is no http(s) or file URL."""
    import pooch

    source, folder = _source(dataset), _cache_dir(dataset)
    first = _env_mirror()
    mirrors = source.mirrors if first is None else (first, *source.mirrors)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # no "Downloading data from ..." nor hash lines
    try:
        for name, md5 in source.content_md5.items():
            errors = []
            for mirror in mirrors:
                url = f"{mirror}{name}.gz"
                try:
                    path = pooch.retrieve(
                        url,
                        known_hash=None,  # the content's md5 is checked instead
                        fname=f"{name}.gz",
                        path=folder,
                        downloader=_copy_file_url if url.startswith("file:") else None,
                        progressbar=False,
                    )
                    _check_content(Path(path), md5)
                    break
                except Exception as error:  # network, HTTP or checksum errors alike
                    errors.append(f"{url}: {error}")
            else:
                raise DataNotFoundError(
                    f"could not download {source.title}'s {name}.gz:\n  "
                    + "\n  ".join(errors)
                )
    finally:
        logger.setLevel(level)
    return folder


def _load(
    dataset: str,
    split: str,
    root: str | os.PathLike | None,
    device: torch.device | str,
    download_missing: bool,
    dtype: torch.dtype,
) -> tuple[Tensor, Tensor]:
    try:
        paths = find_split(dataset, split, root)
    except DataNotFoundError:
        if not download_missing:
            raise
        _download(dataset)
        paths = find_split(dataset, split, root)
    return _read_split(*paths, device=device, dtype=dtype)


def fashion_mnist(
    split: str = "train",
    root: str | os.PathLike | None = None,
    device: torch.device | str = "cpu",
    download: bool = False,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """FashionMNIST (Xiao et al., 2017): images (n, 1, 28, 28) in [0, 1], of the
    floating ``dtype`` (float32 by default), and labels (n,) int64 in 0..9, n = 60,000
    (``split="train"``) or 10,000 ("test"), on ``device``; files searched as in the
    module's text, downloaded only with ``download=True``. Raises DataNotFoundError (a
    ValueError) naming the three ways to get them. Loading the gzipped files is mostly
    decompression."""
    device = check_device("device", device)
    check_floating_dtype("dtype", dtype)
    return _load("fashion-mnist", split, root, device, download, dtype)


def mnist(
    split: str = "train",
    root: str | os.PathLike | None = None,
    device: torch.device | str = "cpu",
    download: bool = False,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """MNIST (LeCun et al., 1998), as :func:`fashion_mnist`: images (n, 1, 28, 28) in
    [0, 1] of the floating ``dtype``, labels (n,) int64; from ``root``,
    ``CCL_DATA_DIR`` or the download cache (no Debian package)."""
    device = check_device("device", device)
    check_floating_dtype("dtype", dtype)
    return _load("mnist", split, root, device, download, dtype)


def _run(command: list[str]) -> int:
    """Run a command, its output passed through; its exit status."""
    return subprocess.run(command, check=False).returncode


def _apt_install(package: str) -> bool:
    """``apt-get install -y package``, after ``apt-get update`` if a first try fails."""
    install = ["apt-get", "install", "-y", package]
    if _run(install) == 0:
        return True
    return _run(["apt-get", "update"]) == 0 and _run(install) == 0


def _fetch_files(
    dataset: str = "fashion-mnist", root: str | os.PathLike | None = None
) -> Path:
    """Make ``dataset``'s files available → the folder that holds them.

    If found (:func:`_search_path`), the files are checked against their content md5 and
    nothing else is done; else, unless ``CCL_DATA_MIRROR``
    names a mirror, where ``apt-get`` exists and the user is root, the Debian package
    is installed (FashionMNIST only); else the files are downloaded (:func:`_download`).
    Raises DataNotFoundError, naming every way, when none works; ValueError naming the
    file when a found folder holds a truncated or corrupt one, or for a
    ``CCL_DATA_MIRROR`` that is no http(s) or file URL.
    """
    source = _source(dataset)
    mirror = _env_mirror()
    try:
        found = find_split(dataset, "train", root)[0].parent
    except DataNotFoundError:
        pass
    else:
        return _verify_folder(dataset, found)
    if (
        mirror is None
        and source.debian_package
        and shutil.which("apt-get")
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
        and _apt_install(source.debian_package)
    ):
        return find_split(dataset, "train", root)[0].parent
    try:
        _download(dataset)
    except DataNotFoundError as error:
        message = _not_found_message(dataset, "files", _search_path(dataset, root))
        raise DataNotFoundError(f"{error}\n{message}") from error
    return find_split(dataset, "train", root)[0].parent
