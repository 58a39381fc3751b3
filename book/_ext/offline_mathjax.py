"""A Sphinx extension that ships MathJax 3 with the book, so that every page typesets
its formulas offline and from a ``file://`` URL.

On ``config-inited`` it fetches the pinned npm package of MathJax (once, into the
download cache, checked against its SHA-256), unpacks the browser bundle ``es5/`` into
``<cache>/mathjax-<version>/static/mathjax/``, adds that ``static`` folder to the
static files and points ``mathjax_path`` at ``mathjax/tex-mml-chtml.js``: each page
loads it by a path relative to itself. ``CCL_ASSETS_DIR`` overrides the cache folder.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

VERSION = "3.2.2"
URL = f"https://registry.npmjs.org/mathjax/-/mathjax-{VERSION}.tgz"
SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
"""Of the npm tarball; npm's own integrity for it is sha512-Bt+SSVU8eBG27zChVewOicYs7X
sdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw== (the same file)."""
BUNDLE = "package/es5/"
"""The browser bundle inside the tarball: the combined component and what it loads
(fonts, TeX extensions)."""
ENTRY = "mathjax/tex-mml-chtml.js"
"""``mathjax_path``, relative to the static folder."""


def cache_dir() -> Path:
    """The folder of the downloaded tarball and the unpacked bundle."""
    import pooch

    return Path(os.environ.get("CCL_ASSETS_DIR") or pooch.os_cache("ccl-book"))


def unpack(tarball: Path, static: Path) -> Path:
    """Unpack ``BUNDLE`` of ``tarball`` into ``static/mathjax/`` (replacing it);
    returns the entry script's path."""
    target = static / "mathjax"
    partial = static / "mathjax.partial"
    shutil.rmtree(partial, ignore_errors=True)
    with tarfile.open(tarball, "r:gz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(BUNDLE)]
        for member in members:
            member.name = member.name[len(BUNDLE) :]
        members = [m for m in members if m.name and (m.isfile() or m.isdir())]
        archive.extractall(partial, members=members, filter="data")
    if not (partial / Path(ENTRY).name).is_file():
        raise ValueError(f"{tarball} holds no {BUNDLE}{Path(ENTRY).name}")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return static / ENTRY


def static_folder() -> Path:
    """The folder whose ``mathjax/`` holds the bundle, fetched and unpacked first where
    it is missing."""
    import pooch

    home = cache_dir() / f"mathjax-{VERSION}"
    static = home / "static"
    if not (static / ENTRY).is_file():
        try:
            tarball = pooch.retrieve(
                URL, known_hash=f"sha256:{SHA256}", path=home, progressbar=False
            )
        except Exception as error:  # no network, a proxy, a changed file
            raise RuntimeError(
                f"MathJax {VERSION} could not be fetched from {URL} into {home} "
                f"({error}); fetch it once with the network on, or put the file "
                f"there (SHA-256 {SHA256})"
            ) from error
        unpack(Path(tarball), static)
    return static


def use_local_mathjax(app, config) -> None:
    """config-inited: serve MathJax from the book's own static files."""
    config.html_static_path = [*config.html_static_path, str(static_folder())]
    config.mathjax_path = ENTRY


def setup(app):
    app.connect("config-inited", use_local_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
