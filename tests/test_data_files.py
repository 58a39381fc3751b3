"""Tests of ccl_helpers.data's file readers and data sets: the IDX parser on small
files the tests write; FashionMNIST on Debian's files (shapes, range, class
counts, md5 of the contents); bad files; the search order; the error that names the
ways to get the files; the download (from local HTTP servers, data_server.py: the
content md5 check, the mirrors' order, CCL_DATA_MIRROR, the Debian folder's variable)
and the fetch command's decisions (monkeypatched: no network, no apt-get)."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import socket
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from bad_calls import bad_call
from data_server import serve

from ccl_helpers import data
from ccl_helpers.data import DataNotFoundError, _fetch
from ccl_helpers.data.__main__ import main as data_main
from ccl_helpers.data._files import _load_idx

# ------------------------------------------------------------ IDX files

IDX_CODES = {
    np.uint8: 0x08,
    np.int8: 0x09,
    np.int16: 0x0B,
    np.int32: 0x0C,
    np.float32: 0x0D,
    np.float64: 0x0E,
}


def write_idx(path, array, compress=False):
    array = np.asarray(array)
    header = struct.pack(">BBBB", 0, 0, IDX_CODES[array.dtype.type], array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    raw = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize(
    "dtype, shape",
    [
        (np.uint8, (4, 3, 5)),
        (np.int8, (7,)),
        (np.int16, (2, 3)),
        (np.int32, (3, 2)),
        (np.float32, (2, 2, 2)),
        (np.float64, (5,)),
    ],
)
def test_load_idx_round_trip(tmp_path, compress, dtype, shape):
    rng = np.random.default_rng(0)
    array = (rng.normal(size=shape) * 100).astype(dtype)
    path = write_idx(tmp_path / "data.idx", array, compress)
    loaded = _load_idx(path)
    assert tuple(loaded.shape) == shape
    np.testing.assert_array_equal(loaded.numpy(), array)


def test_load_idx_bad_files(tmp_path):
    with pytest.raises(DataNotFoundError, match="not found"):
        _load_idx(tmp_path / "absent")
    (tmp_path / "text").write_bytes(b"hello world")
    with pytest.raises(ValueError, match="not an IDX file"):
        _load_idx(tmp_path / "text")
    path = write_idx(tmp_path / "short", np.zeros((4, 4), np.uint8))
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="bytes"):
        _load_idx(path)
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x02abc")[:-4])
    with pytest.raises(ValueError):
        _load_idx(tmp_path / "bad.gz")


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_load_idx_names_a_damaged_gzip_file(tmp_path, damage):
    """A truncated gzip stream (EOFError) and a damaged one (zlib's "invalid ..."
    error) are both a ValueError naming the file, not gzip's or zlib's own error."""
    array = np.random.default_rng(0).integers(0, 256, (50, 28, 28), dtype=np.uint8)
    raw = write_idx(tmp_path / "images.gz", array, compress=True).read_bytes()
    middle = len(raw) // 2
    damaged = (
        raw[:middle]
        if damage == "truncated"
        else raw[:middle]
        + bytes(b ^ 0xFF for b in raw[middle : middle + 64])
        + raw[middle + 64 :]
    )
    (tmp_path / "images.gz").write_bytes(damaged)
    with pytest.raises(ValueError, match=r"images\.gz is a truncated or corrupt gzip"):
        _load_idx(tmp_path / "images.gz")


# ---------------------------------------------------------------- FashionMNIST (Debian)

debian = pytest.mark.skipif(
    not (_fetch.DEBIAN_FASHION_MNIST / "t10k-labels-idx1-ubyte.gz").exists(),
    reason="Debian's dataset-fashion-mnist is not installed",
)


@debian
@pytest.mark.parametrize("split, n", [("train", 6000), ("test", 1000)])
def test_fashion_mnist_from_debian_files(split, n, monkeypatch):
    monkeypatch.delenv("CCL_DATA_DIR", raising=False)
    images, labels = data.fashion_mnist(split)
    assert images.shape == (10 * n, 1, 28, 28) and images.dtype == torch.float32
    assert labels.shape == (10 * n,) and labels.dtype == torch.int64
    assert float(images.min()) == 0.0 and float(images.max()) == 1.0
    assert torch.bincount(labels).tolist() == [n] * 10
    # values are k/255: the uint8 pixels, unchanged
    pixels = images[:50] * 255
    torch.testing.assert_close(pixels, pixels.round(), atol=1e-4, rtol=0)


@debian
def test_a_folder_of_truncated_copies_is_reported_not_found(tmp_path, monkeypatch):
    """The Debian files cut to their first kilobyte: fetch names the first damaged
    file (exit status 1 from the command line) and loading names a damaged one."""
    for path in _fetch.DEBIAN_FASHION_MNIST.glob("*-ubyte.gz"):
        with open(path, "rb") as handle:
            (tmp_path / path.name).write_bytes(handle.read(1000))
    monkeypatch.setenv("CCL_DATA_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=r"train-images-idx3-ubyte\.gz is damaged"):
        _fetch._fetch_files()
    with pytest.raises(ValueError, match=r"t10k-images-idx3-ubyte\.gz is a truncated"):
        data.fashion_mnist("test")


@debian
def test_debian_files_hold_the_published_contents():
    """Debian recompressed the .gz files; their contents have the published md5."""
    want = _fetch.SOURCES["fashion-mnist"].content_md5
    for name, md5 in want.items():
        raw = gzip.decompress((_fetch.DEBIAN_FASHION_MNIST / f"{name}.gz").read_bytes())
        assert hashlib.md5(raw).hexdigest() == md5, name


# ---------------------------------------------------------------- search order, errors


def write_split(folder, split="test", n=3, label=0, compress=True):
    """A small IDX pair of ``split`` in ``folder``, all labels equal to ``label``."""
    folder.mkdir(parents=True, exist_ok=True)
    images_name, labels_name = _fetch.SPLITS[split]
    suffix = ".gz" if compress else ""
    pixels = np.arange(n * 28 * 28, dtype=np.int64).reshape(n, 28, 28) % 256
    write_idx(folder / f"{images_name}{suffix}", pixels.astype(np.uint8), compress)
    write_idx(folder / f"{labels_name}{suffix}", np.full(n, label, np.uint8), compress)
    return folder


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Empty root, CCL_DATA_DIR, Debian and cache folders, wired into the search."""
    folders = {name: tmp_path / name for name in ("root", "env", "debian", "cache")}
    folders["root"].mkdir()
    folders["env"].mkdir()
    monkeypatch.setenv("CCL_DATA_DIR", str(folders["env"]))
    monkeypatch.setattr(_fetch, "DEBIAN_FASHION_MNIST", folders["debian"])
    monkeypatch.setattr(
        _fetch, "_cache_dir", lambda dataset: folders["cache"] / dataset
    )
    return folders


def test_search_order_root_env_debian_cache(places):
    write_split(places["cache"] / "fashion-mnist", label=4)
    assert data.fashion_mnist("test")[1].tolist() == [4] * 3
    write_split(places["debian"], label=3)
    assert data.fashion_mnist("test")[1].tolist() == [3] * 3
    write_split(places["env"] / "fashion-mnist", label=2, compress=False)
    assert data.fashion_mnist("test")[1].tolist() == [2] * 3
    write_split(places["root"], label=1)
    images, labels = data.fashion_mnist("test", root=places["root"])
    assert labels.tolist() == [1] * 3 and images.shape == (3, 1, 28, 28)
    assert float(images[0, 0, 0, 5]) == pytest.approx(5 / 255)
    assert _fetch._search_path("fashion-mnist", places["root"])[0] == places["root"]
    wide, _ = data.fashion_mnist("test", root=places["root"], dtype=torch.float64)
    assert wide.dtype == torch.float64
    torch.testing.assert_close(wide.float(), images, rtol=0, atol=0)
    with pytest.raises(ValueError, match="dtype must be a floating-point"):
        data.fashion_mnist("test", root=places["root"], dtype=torch.uint8)
    # MNIST has no Debian package: its own subfolder of CCL_DATA_DIR, then the cache
    write_split(places["env"] / "MNIST" / "raw", label=7)
    assert data.mnist("test")[1].tolist() == [7] * 3
    assert places["debian"] not in _fetch._search_path("mnist")


def test_a_root_that_is_no_folder_raises_rather_than_reading_elsewhere(places):
    write_split(places["cache"] / "fashion-mnist", label=4)
    missing = places["root"] / "nonexistent"
    for call in (
        lambda: data.fashion_mnist("test", root=missing),
        lambda: _fetch._search_path("fashion-mnist", missing),
        lambda: _fetch._fetch_files(root=missing),
    ):
        with pytest.raises(ValueError, match="root must be an existing folder"):
            call()


def test_missing_files_raise_one_error_naming_the_three_ways(places):
    with pytest.raises(DataNotFoundError) as caught:
        data.fashion_mnist("train", root=places["root"])
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, FileNotFoundError)
    for part in (
        "train-images-idx3-ubyte",
        str(places["root"]),
        "CCL_DATA_DIR",
        "apt-get install dataset-fashion-mnist",
        "python -m ccl_helpers.data fetch",
        "CCL_DATA_MIRROR",
        str(places["cache"] / "fashion-mnist"),
    ):
        assert part in message, part
    with pytest.raises(DataNotFoundError) as caught:
        data.mnist("test")
    assert "apt-get" not in str(caught.value) and "--dataset mnist" in str(caught.value)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: _fetch._search_path("cifar"), "dataset"),
        (lambda: _fetch._fetch_files("emnist"), "dataset"),
    ],
)
def test_an_unknown_data_set_raises_value_error(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_bad_files_raise_value_errors_naming_the_file(places):
    root = write_split(places["root"], compress=False)
    images_file = root / "t10k-images-idx3-ubyte"
    labels_file = root / "t10k-labels-idx1-ubyte"
    good = images_file.read_bytes()
    images_file.write_bytes(good[:-100])  # truncated
    with pytest.raises(ValueError, match=str(images_file)):
        data.fashion_mnist("test", root=root)
    images_file.write_bytes(b"\x00\x00\x07\x03" + good[4:])  # wrong magic number
    with pytest.raises(ValueError, match="bad magic number"):
        data.fashion_mnist("test", root=root)
    images_file.write_bytes(good)
    write_idx(labels_file, np.zeros(4, np.uint8))  # 4 labels, 3 images
    with pytest.raises(ValueError, match="4 labels") as caught:
        data.fashion_mnist("test", root=root)
    assert str(labels_file) in str(caught.value) and str(images_file) in str(
        caught.value
    )
    write_idx(labels_file, np.full(3, 10, np.uint8))
    with pytest.raises(ValueError, match="outside 0..9"):
        data.fashion_mnist("test", root=root)
    write_idx(labels_file, np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="uint8 labels"):
        data.fashion_mnist("test", root=root)


# ---------------------------------------------------------------- download and fetch


def write_mirror(folder, compresslevel=9):
    """MNIST's four files, small (3 images a split), gzipped at ``compresslevel`` in
    ``folder`` → {name: md5 of the decompressed content}."""
    write_split(folder, "train", label=1)
    write_split(folder, "test", label=2)
    md5 = {}
    for name in _fetch.MNIST.content_md5:
        path = folder / f"{name}.gz"
        raw = gzip.decompress(path.read_bytes())
        path.write_bytes(gzip.compress(raw, compresslevel))
        md5[name] = hashlib.md5(raw).hexdigest()
    return md5


def closed_port_url():
    """An http URL on 127.0.0.1 where nothing listens (a port just freed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/"


@pytest.fixture
def small_mnist(places, tmp_path, monkeypatch):
    """MNIST replaced by small files whose content md5 is "official": its official
    mirrors are a closed port, then a folder served over HTTP (``official``: URL,
    ``requested``: its requests, ``folder``); CCL_DATA_MIRROR unset."""
    folder = tmp_path / "official"
    folder.mkdir()
    md5 = write_mirror(folder, compresslevel=1)
    monkeypatch.delenv("CCL_DATA_MIRROR", raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")  # the local servers, never a proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with serve(folder) as (url, requested):
        mirrors = (closed_port_url(), url)
        source = _fetch.MNIST._replace(mirrors=mirrors, content_md5=md5)
        monkeypatch.setitem(_fetch.SOURCES, "mnist", source)
        yield {"official": url, "requested": requested, "folder": folder, "md5": md5}


def gz_names(requested):
    return sorted(path.lstrip("/") for path in requested)


ALL_GZ = sorted(f"{name}.gz" for name in _fetch.MNIST.content_md5)


def test_download_checks_the_content_md5_and_falls_back_to_the_next_mirror(
    places, small_mnist
):
    """The files are gzipped at level 1 (not as the md5 table's source did): only the
    decompressed content is compared. The first mirror is unreachable; a corrupted file
    already in the cache is replaced."""
    cache = places["cache"] / "mnist"
    cache.mkdir(parents=True)
    (cache / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(b"stale"))
    assert _fetch._download("mnist") == cache
    assert gz_names(small_mnist["requested"]) == ALL_GZ
    assert sorted(path.name for path in cache.iterdir()) == ALL_GZ
    images, labels = data.mnist("train")
    assert images.shape == (3, 1, 28, 28) and labels.tolist() == [1] * 3
    _fetch._download("mnist")  # the files in the cache pass: nothing downloaded again
    assert len(small_mnist["requested"]) == 4


def corrupt(folder, name, how):
    """Spoil ``folder``'s ``name``.gz: a changed byte of the content (still valid
    gzip), or the gzip stream cut short."""
    path = folder / f"{name}.gz"
    if how == "content":
        raw = bytearray(gzip.decompress(path.read_bytes()))
        raw[-1] ^= 0xFF
        path.write_bytes(gzip.compress(bytes(raw)))
    else:
        path.write_bytes(path.read_bytes()[:-20])


def test_a_corrupted_file_is_removed_and_the_next_mirror_tried(
    places, small_mnist, tmp_path, monkeypatch
):
    bad = tmp_path / "bad"
    shutil.copytree(small_mnist["folder"], bad)
    corrupt(bad, "train-images-idx3-ubyte", "content")
    corrupt(bad, "t10k-labels-idx1-ubyte", "truncated")
    with serve(bad) as (bad_url, bad_requested):
        monkeypatch.setenv("CCL_DATA_MIRROR", bad_url)
        _fetch._download("mnist")
    assert gz_names(bad_requested) == ALL_GZ
    assert gz_names(small_mnist["requested"]) == [
        "t10k-labels-idx1-ubyte.gz",
        "train-images-idx3-ubyte.gz",
    ]
    assert data.mnist("train")[0].shape == (3, 1, 28, 28)
    assert data.mnist("test")[1].tolist() == [2] * 3


def test_a_file_that_no_mirror_gives_right_is_not_kept(
    places, small_mnist, monkeypatch
):
    corrupt(small_mnist["folder"], "train-images-idx3-ubyte", "content")
    with pytest.raises(DataNotFoundError) as caught:
        _fetch._download("mnist")
    message = str(caught.value)
    assert "train-images-idx3-ubyte.gz removed" in message
    assert small_mnist["md5"]["train-images-idx3-ubyte"] in message
    assert "Connection refused" in message or "ConnectionError" in message, message
    assert list((places["cache"] / "mnist").iterdir()) == []  # no file, no temporary


def test_the_mirror_variable_is_tried_first(places, small_mnist, tmp_path, monkeypatch):
    own = tmp_path / "own"
    shutil.copytree(small_mnist["folder"], own)
    cache = places["cache"] / "mnist"
    with serve(own) as (url, requested):
        monkeypatch.setenv("CCL_DATA_MIRROR", url.rstrip("/"))  # "/" is added
        assert _fetch._download("mnist") == cache
    assert gz_names(requested) == ALL_GZ and small_mnist["requested"] == []
    shutil.rmtree(cache)
    monkeypatch.setenv("CCL_DATA_MIRROR", own.as_uri())  # a folder, as a file:// URL
    _fetch._download("mnist")
    assert small_mnist["requested"] == []
    assert data.mnist("test")[1].tolist() == [2] * 3


def test_fetch_downloads_from_the_mirror_rather_than_installing(
    places, system, monkeypatch
):
    """A user who names a mirror wants it: no apt-get, even as root."""
    system["network"] = True
    monkeypatch.setenv("CCL_DATA_MIRROR", "https://mirror.example.org/fashion/")
    assert _fetch._fetch_files() == places["cache"] / "fashion-mnist"
    assert system["commands"] == [] and system["downloads"] == 1


@pytest.mark.parametrize(
    "mirror",
    ["ftp://example.org/mnist/", "/srv/mnist", "example.org/mnist", "http:///mnist"],
)
def test_a_mirror_that_is_no_url_raises(places, monkeypatch, capsys, mirror):
    monkeypatch.setenv("CCL_DATA_MIRROR", mirror)
    for call in (
        lambda: _fetch._download("mnist"),
        lambda: _fetch._fetch_files("mnist"),
    ):
        with pytest.raises(ValueError, match="CCL_DATA_MIRROR must be an http://"):
            call()
    assert data_main(["fetch", "--dataset", "mnist"]) == 1
    assert repr(mirror) in capsys.readouterr().err


def test_the_debian_folder_is_read_from_the_environment(places, tmp_path, monkeypatch):
    elsewhere = write_split(tmp_path / "elsewhere", label=5)
    write_split(places["debian"], label=3)
    monkeypatch.setenv("CCL_DEBIAN_DATA_DIR", str(elsewhere))
    assert data.fashion_mnist("test")[1].tolist() == [5] * 3
    path = _fetch._search_path("fashion-mnist")
    assert places["debian"] not in path
    assert path.index(elsewhere) == path.index(places["cache"] / "fashion-mnist") - 1
    monkeypatch.delenv("CCL_DEBIAN_DATA_DIR")
    assert data.fashion_mnist("test")[1].tolist() == [3] * 3


def test_the_debian_folder_defaults_to_debian_s(monkeypatch):
    monkeypatch.delenv("CCL_DEBIAN_DATA_DIR", raising=False)
    assert _fetch.DEBIAN_FASHION_MNIST == Path("/usr/share/datasets/fashion-mnist")
    assert _fetch.DEBIAN_FASHION_MNIST in _fetch._search_path("fashion-mnist")


def test_loader_downloads_only_when_asked(places, monkeypatch):
    asked = []

    def fake_download(dataset):
        asked.append(dataset)
        return write_split(places["cache"] / dataset)

    monkeypatch.setattr(_fetch, "_download", fake_download)
    with pytest.raises(DataNotFoundError):
        data.fashion_mnist("test")
    assert asked == []
    assert data.fashion_mnist("test", download=True)[1].shape == (3,)
    assert asked == ["fashion-mnist"]


@pytest.fixture
def system(places, monkeypatch):
    """apt-get present, user root, commands recorded; apt-get install writes the
    Debian files when ``state["install_works"]``; download fails unless allowed."""
    state = {"commands": [], "install_works": True, "fail_first": False, "downloads": 0}

    def run(command):
        state["commands"].append(command)
        if command[:2] == ["apt-get", "install"]:
            if state["fail_first"] and state["commands"].count(command) == 1:
                return 100
            if state["install_works"]:
                write_split(places["debian"], "train")
                return 0
            return 100
        return 0

    def fake_download(dataset):
        state["downloads"] += 1
        if not state.get("network"):
            raise DataNotFoundError("no network")
        return write_split(places["cache"] / dataset, "train")

    monkeypatch.setattr(_fetch, "_run", run)
    monkeypatch.setattr(_fetch, "_download", fake_download)
    monkeypatch.setattr(_fetch.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(_fetch.os, "geteuid", lambda: 0, raising=False)
    return state


def accept_as_official(folder, monkeypatch, dataset="fashion-mnist"):
    """Make the small files in ``folder`` the official contents of ``dataset`` (their
    md5s replace the published ones for the test)."""
    content_md5 = _fetch.SOURCES[dataset].content_md5
    for path in folder.iterdir():
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
        name = path.name.removesuffix(".gz")
        monkeypatch.setitem(content_md5, name, hashlib.md5(raw).hexdigest())


def test_fetch_does_nothing_when_the_files_are_there(
    places, system, capsys, monkeypatch
):
    write_split(places["env"], "train")
    accept_as_official(places["env"], monkeypatch)
    assert data_main(["fetch"]) == 0
    assert str(places["env"]) in capsys.readouterr().out
    assert system["commands"] == [] and system["downloads"] == 0


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "other content"])
def test_fetch_checks_the_files_it_finds(places, system, capsys, monkeypatch, damage):
    """A found folder whose file is truncated, corrupt or not the official one is no
    found folder: exit status 1 naming the file; nothing installed or downloaded."""
    write_split(places["env"], "train")
    write_split(places["env"], "test", compress=False)
    accept_as_official(places["env"], monkeypatch)
    damaged = {
        "truncated": places["env"] / "train-labels-idx1-ubyte.gz",
        "corrupt": places["env"] / "train-images-idx3-ubyte.gz",
        "other content": places["env"] / "t10k-labels-idx1-ubyte",
    }[damage]
    raw = damaged.read_bytes()
    damaged.write_bytes(
        raw[: len(raw) // 2]
        if damage == "truncated"
        else raw[:8] + bytes(b ^ 0xFF for b in raw[8:])
    )
    assert data_main(["fetch"]) == 1
    err = capsys.readouterr().err
    assert f"{damaged} is damaged" in err and "md5" in err
    assert system["commands"] == [] and system["downloads"] == 0
    with pytest.raises(ValueError, match=damaged.name):
        _fetch._fetch_files()


def test_fetch_installs_the_debian_package_as_root(places, system):
    assert _fetch._fetch_files() == places["debian"]
    assert system["commands"] == [["apt-get", "install", "-y", "dataset-fashion-mnist"]]


def test_fetch_updates_apt_when_the_first_install_fails(places, system):
    system["fail_first"] = True
    assert _fetch._fetch_files() == places["debian"]
    install = ["apt-get", "install", "-y", "dataset-fashion-mnist"]
    assert system["commands"] == [install, ["apt-get", "update"], install]


def test_fetch_downloads_when_not_root_or_for_mnist(places, system, monkeypatch):
    system["network"] = True
    assert _fetch._fetch_files("mnist") == places["cache"] / "mnist"
    monkeypatch.setattr(_fetch.os, "geteuid", lambda: 1000, raising=False)
    assert _fetch._fetch_files() == places["cache"] / "fashion-mnist"
    assert system["commands"] == [] and system["downloads"] == 2


def test_fetch_fails_with_the_three_ways(places, system, capsys):
    system["install_works"] = False
    assert data_main(["fetch", "--root", str(places["root"])]) == 1
    err = capsys.readouterr().err
    assert "no network" in err and "apt-get install dataset-fashion-mnist" in err
    assert "CCL_DATA_DIR" in err and system["downloads"] == 1


def test_files_are_found_without_pooch(tmp_path, monkeypatch):
    """Where pooch is missing there is no download cache, and the other folders are
    still searched."""
    monkeypatch.setitem(sys.modules, "pooch", None)  # import pooch → ImportError
    monkeypatch.setenv("CCL_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(_fetch, "DEBIAN_FASHION_MNIST", tmp_path / "debian")
    write_split(tmp_path / "fashion-mnist", label=6)
    assert _fetch._search_path("fashion-mnist")[-1] == tmp_path / "debian"
    assert data.fashion_mnist("test")[1].tolist() == [6] * 3


@pytest.mark.parametrize("argv", [["--help"], ["fetch", "--help"]])
def test_the_command_line_help_is_plain_words(argv, capsys):
    with pytest.raises(SystemExit):
        data_main(argv)
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text
    if argv[0] == "fetch":
        assert "apt-get" in text and "(default: fashion-mnist)" in text
        assert "MD5" in text and "CCL_DATA_DIR" in text and "CCL_DATA_MIRROR" in text
        assert "CCL_DEBIAN_DATA_DIR" in text


# ---------------------------------------------------------------- bad calls

BAD_CALLS = [
    bad_call(data.fashion_mnist, "split", "val"),
    bad_call(data.fashion_mnist, "device", "test", device="bogus"),
    bad_call(data.fashion_mnist, "dtype", "test", dtype=torch.uint8),
    bad_call(data.mnist, "device", "test", device=1.5),
    bad_call(data.mnist, "dtype", "test", dtype=torch.int64),
    bad_call(data.find_split, "split", "mnist", "validation"),
    bad_call(data.find_split, "dataset", "cifar", "test"),
    bad_call(
        data.find_split,
        "CCL_DATA_DIR must be an existing folder",
        "mnist",
        "test",
        environment={"CCL_DATA_DIR": "/nonexistent/ccl-data"},
    ),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
