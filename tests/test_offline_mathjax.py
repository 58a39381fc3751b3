"""The book's Sphinx extension that ships MathJax (book/_ext/offline_mathjax.py): it
unpacks the browser's files and nothing else, refuses a tarball without them, fetches
only what is missing, says what to do when a fetch fails, and points Sphinx at the
local copy with its font and line breaking. (tests/check_book_pages.py checks the
built pages, tests/render_check.py how they read.)"""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pooch
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))

import offline_mathjax  # noqa: E402


def tarball(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return path


def test_unpack_keeps_the_browser_files_only(tmp_path):
    main, font = offline_mathjax.PACKAGES
    static = tmp_path / "static"
    files = {
        "package/tex-mml-chtml.js": b"entry",
        "package/sre/speech-worker.js": b"speech",
        "package/node-main.cjs": b"node",
        "package/node-main-setup.cjs": b"node",
        "package/require.mjs": b"node",
    }
    folder = offline_mathjax.unpack(tarball(tmp_path / "m.tgz", files), main, static)
    assert folder == static / "mathjax"
    assert (static / offline_mathjax.ENTRY).read_bytes() == b"entry"
    fonts = {
        "package/chtml/woff2/mjx-ncm-n.woff2": b"woff2",
        "package/chtml/dynamic/fraktur.js": b"glyphs",
        "package/svg/dynamic/fraktur.js": b"svg glyphs",
        "package/mjs/chtml.js": b"module",
    }
    offline_mathjax.unpack(tarball(tmp_path / "f.tgz", fonts), font, static)
    unpacked = sorted(
        p.relative_to(static).as_posix() for p in static.rglob("*") if p.is_file()
    )
    assert unpacked == [
        "mathjax/fonts/mathjax-newcm-font/chtml/dynamic/fraktur.js",
        "mathjax/fonts/mathjax-newcm-font/chtml/woff2/mjx-ncm-n.woff2",
        "mathjax/sre/speech-worker.js",
        "mathjax/tex-mml-chtml.js",
    ]


def test_unpack_refuses_a_tarball_without_the_browser_files(tmp_path):
    font = offline_mathjax.PACKAGES[1]
    archive = tarball(tmp_path / "f.tgz", {"package/svg/x.js": b"x"})
    with pytest.raises(ValueError, match="package/chtml/"):
        offline_mathjax.unpack(archive, font, tmp_path / "static")
    assert not (tmp_path / "static" / font.target).exists()


def test_an_unpacked_copy_is_used_without_fetching(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_ASSETS_DIR", str(tmp_path))
    static = tmp_path / f"mathjax-{offline_mathjax.VERSION}" / "static"
    for package in offline_mathjax.PACKAGES:
        (static / package.target).mkdir(parents=True)
    (static / offline_mathjax.ENTRY).write_text("entry")

    def no_fetch(*args, **kwargs):
        raise AssertionError("fetched although the files are there")

    monkeypatch.setattr(pooch, "retrieve", no_fetch)
    assert offline_mathjax.static_folder() == static
    config = SimpleNamespace(
        html_static_path=["_static"],
        mathjax_path="https://cdn",
        mathjax3_config={"output": {"scale": 1.1}, "tex": {"tags": "ams"}},
    )
    offline_mathjax.use_local_mathjax(None, config)
    assert config.html_static_path == ["_static", str(static)]
    assert config.mathjax_path == "mathjax/tex-mml-chtml.js"
    assert config.mathjax3_config == {
        "output": {
            "scale": 1.1,
            "displayOverflow": "linebreak",
            "linebreaks": {"width": "98%"},
        },
        "tex": {"tags": "ams"},
        "loader": {"paths": {"fonts": "[mathjax]/fonts"}},
    }


def test_a_failed_fetch_says_where_the_file_goes(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_ASSETS_DIR", str(tmp_path))
    calls = []

    def offline(url, known_hash, **kwargs):
        calls.append((url, known_hash))
        raise OSError("network unreachable")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(RuntimeError, match="could not be fetched.*SHA-256"):
        offline_mathjax.static_folder()
    main = offline_mathjax.PACKAGES[0]
    assert calls == [(main.url, f"sha256:{main.sha256}")]


def test_the_stored_outputs_configuration_finds_the_extension(tmp_path):
    """The copy of _config.yml that builds from the stored outputs lives in another
    folder: it names the extension's folder by absolute path, and executes nothing."""
    import yaml
    from book_config import stored_config

    config = yaml.safe_load(stored_config(tmp_path / "c.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    folder = Path(config["sphinx"]["local_extensions"]["offline_mathjax"])
    assert folder.is_absolute() and (folder / "offline_mathjax.py").is_file()
