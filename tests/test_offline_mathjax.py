"""The book's Sphinx extension that ships MathJax (book/_ext/offline_mathjax.py): it
unpacks the browser bundle and nothing else, refuses a tarball without it, fetches only
when the bundle is missing, says what to do when the fetch fails, and points Sphinx at
the local copy. (tests/check_book_pages.py checks the built pages.)"""

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


def test_unpack_keeps_the_browser_bundle_only(tmp_path):
    files = {
        "package/es5/tex-mml-chtml.js": b"entry",
        "package/es5/output/chtml/fonts/woff-v2/Main.woff": b"font",
        "package/js/core.js": b"source",
        "package/README.md": b"readme",
    }
    static = tmp_path / "static"
    entry = offline_mathjax.unpack(tarball(tmp_path / "m.tgz", files), static)
    assert entry == static / "mathjax" / "tex-mml-chtml.js"
    assert entry.read_bytes() == b"entry"
    unpacked = sorted(
        p.relative_to(static).as_posix() for p in static.rglob("*") if p.is_file()
    )
    assert unpacked == [
        "mathjax/output/chtml/fonts/woff-v2/Main.woff",
        "mathjax/tex-mml-chtml.js",
    ]


def test_unpack_refuses_a_tarball_without_the_entry(tmp_path):
    archive = tarball(tmp_path / "m.tgz", {"package/es5/other.js": b"x"})
    with pytest.raises(ValueError, match="tex-mml-chtml.js"):
        offline_mathjax.unpack(archive, tmp_path / "static")
    assert not (tmp_path / "static" / "mathjax").exists()


def test_an_unpacked_bundle_is_used_without_fetching(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_ASSETS_DIR", str(tmp_path))
    static = tmp_path / f"mathjax-{offline_mathjax.VERSION}" / "static"
    (static / "mathjax").mkdir(parents=True)
    (static / offline_mathjax.ENTRY).write_text("entry")

    def no_fetch(*args, **kwargs):
        raise AssertionError("fetched although the bundle is there")

    monkeypatch.setattr(pooch, "retrieve", no_fetch)
    assert offline_mathjax.static_folder() == static
    config = SimpleNamespace(html_static_path=["_static"], mathjax_path="https://cdn")
    offline_mathjax.use_local_mathjax(None, config)
    assert config.html_static_path == ["_static", str(static)]
    assert config.mathjax_path == "mathjax/tex-mml-chtml.js"


def test_a_failed_fetch_says_where_the_file_goes(tmp_path, monkeypatch):
    monkeypatch.setenv("CCL_ASSETS_DIR", str(tmp_path))
    calls = []

    def offline(url, known_hash, **kwargs):
        calls.append((url, known_hash))
        raise OSError("network unreachable")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(RuntimeError, match="could not be fetched.*SHA-256"):
        offline_mathjax.static_folder()
    assert calls == [(offline_mathjax.URL, f"sha256:{offline_mathjax.SHA256}")]


def test_the_stored_outputs_configuration_finds_the_extension(tmp_path):
    """The copy of _config.yml that builds from the stored outputs lives in another
    folder: it names the extension's folder by absolute path, and executes nothing."""
    import yaml
    from book_config import stored_config

    config = yaml.safe_load(stored_config(tmp_path / "c.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    folder = Path(config["sphinx"]["local_extensions"]["offline_mathjax"])
    assert folder.is_absolute() and (folder / "offline_mathjax.py").is_file()
