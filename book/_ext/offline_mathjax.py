"""A Sphinx extension that ships MathJax 4 with the book, so that every page typesets
its formulas offline and from a ``file://`` URL, and long displayed equations break
into lines at the width of the page.

On ``config-inited`` it fetches the pinned npm packages of MathJax and of its font
(once, into the download cache, each checked against its SHA-256), unpacks them into
``<cache>/mathjax-<version>/static/mathjax/`` (the font's CHTML files under
``fonts/``), adds that ``static`` folder to the static files, points ``mathjax_path``
at ``mathjax/tex-mml-chtml.js`` (each page loads it by a path relative to itself) and
configures MathJax to take its fonts from there and to break long displays
(:data:`MATHJAX_CONFIG`). ``CCL_ASSETS_DIR`` overrides the cache folder.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path
from typing import NamedTuple

VERSION = "4.1.3"


class Package(NamedTuple):
    """One npm tarball: its URL and SHA-256, the folder of it that the browser needs
    (``member``, a prefix of the tarball's paths), and where that goes under the
    static folder (``target``)."""

    url: str
    sha256: str
    member: str
    target: str


PACKAGES = (
    Package(
        f"https://registry.npmjs.org/mathjax/-/mathjax-{VERSION}.tgz",
        "b7109f516f3d842de62b95d653e35fa0976dc223706a2a77440e7f7723f0c54d",
        "package/",
        "mathjax",
    ),
    Package(
        "https://registry.npmjs.org/@mathjax/mathjax-newcm-font/-/"
        f"mathjax-newcm-font-{VERSION}.tgz",
        "87d7b869c6a2a6169d9a53acc4eab6c846a9cbe11752738226461bb5070c8b88",
        "package/chtml/",
        "mathjax/fonts/mathjax-newcm-font/chtml",
    ),
)
"""MathJax (the components; the Node.js entry points left out) and its default font,
New Computer Modern (the web fonts and glyph data of the CHTML output)."""
NODE_ONLY = ("node-main", "require.mjs")
"""Names of MathJax's files for Node.js, not for a browser."""
ENTRY = "mathjax/tex-mml-chtml.js"
"""``mathjax_path``, relative to the static folder."""
MATHJAX_CONFIG = {
    "loader": {"paths": {"fonts": "[mathjax]/fonts"}},
    "output": {"displayOverflow": "linebreak", "linebreaks": {"width": "98%"}},
}
"""Fonts from the book's own copy (``[mathjax]`` is the folder of ``ENTRY``), and
displayed equations wider than the page broken into lines of at most 98 % of its
width (the rest: room for the 2 px by which MathJax shifts a broken display)."""


def cache_dir() -> Path:
    """The folder of the downloaded tarballs and the unpacked files."""
    import pooch

    return Path(os.environ.get("CCL_ASSETS_DIR") or pooch.os_cache("ccl-book"))


def unpack(tarball: Path, package: Package, static: Path) -> Path:
    """Unpack ``package.member`` of ``tarball`` into ``static/package.target``
    (replacing it), Node.js files left out; returns that folder."""
    target = static / package.target
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with tarfile.open(tarball, "r:gz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(package.member)]
        for member in members:
            member.name = member.name[len(package.member) :]
        members = [
            m
            for m in members
            if m.name
            and (m.isfile() or m.isdir())
            and not Path(m.name).name.startswith(NODE_ONLY)
        ]
        if not any(m.isfile() for m in members):
            raise ValueError(f"{tarball} holds no files under {package.member}")
        archive.extractall(partial, members=members, filter="data")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


def static_folder() -> Path:
    """The folder whose ``mathjax/`` holds MathJax and its font, fetched and unpacked
    first where they are missing."""
    import pooch

    home = cache_dir() / f"mathjax-{VERSION}"
    static = home / "static"
    for package in PACKAGES:
        if (static / package.target).is_dir():
            continue
        try:
            tarball = pooch.retrieve(
                package.url,
                known_hash=f"sha256:{package.sha256}",
                path=home,
                progressbar=False,
            )
        except Exception as error:  # no network, a proxy, a changed file
            raise RuntimeError(
                f"{package.url} could not be fetched into {home} ({error}); fetch it "
                f"once with the network on, or put the file there (SHA-256 "
                f"{package.sha256})"
            ) from error
        unpack(Path(tarball), package, static)
    if not (static / ENTRY).is_file():
        raise RuntimeError(f"{static} holds no {ENTRY}: remove {home} and build again")
    return static


def merged(config: dict | None, extra: dict) -> dict:
    """``config`` with ``extra`` merged in, dictionaries key by key."""
    result = dict(config or {})
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def use_local_mathjax(app, config) -> None:
    """config-inited: serve MathJax from the book's own static files."""
    config.html_static_path = [*config.html_static_path, str(static_folder())]
    config.mathjax_path = ENTRY
    config.mathjax3_config = merged(config.mathjax3_config, MATHJAX_CONFIG)


def setup(app):
    app.connect("config-inited", use_local_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
