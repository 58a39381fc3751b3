"""A reader opening every chapter on Colab, simulated on this machine, offline.

- The repository: the working tree as it is now (tracked files and the untracked ones
  git does not ignore, uncommitted changes included, so that the current code is what
  is tested) committed into a fresh repository and tagged by ``make release``. The
  notebooks' repository URL is replaced, in memory, by that repository's file:// URL.
- Colab's interpreter: a fresh virtual environment, without pip, whose one extra
  path (a .pth file) is a view of this interpreter's site-packages without
  ccl_helpers: torch, numpy, pip, setuptools… are preinstalled, as on Colab, and
  nothing is installed outside the new environment. A package ``google.colab``
  (:func:`fake_colab`), imported before the cells as Colab's kernel does. pip runs
  offline: ``PIP_NO_INDEX=1`` and ``PIP_NO_BUILD_ISOLATION=0`` (pip reads the latter
  as "build isolation: off", so the build uses the view's setuptools).
- The network: FashionMNIST's four .gz files served on 127.0.0.1 (data_server.py) and
  named by ``CCL_DATA_MIRROR``; ``CCL_DEBIAN_DATA_DIR`` an empty folder and
  ``XDG_CACHE_HOME`` (pooch's cache) a new one, so that the fetch downloads them.
- The reader: each chapter's opening cells (:func:`opening_cells`) run, as one script,
  by the new environment's python at ``CCL_SCALE=smoke``. The first chapter installs
  ccl_helpers and downloads FashionMNIST; the next ones run the same cells and find
  both there.

FashionMNIST's files come from wherever this interpreter finds them (``make test``
runs ``python -m ccl_helpers.data fetch`` first); without them the test fails, naming
that command.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
import yaml
from data_server import serve

import ccl_helpers
from ccl_helpers import data

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
CHAPTERS = sorted((ROOT / "book").glob("0*.ipynb"))
LOADERS = re.compile(r"\b(fashion_mnist|load_digits|make_data_model)\b")
"""What names a chapter's data: FashionMNIST's loader, the digits, a data model."""
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def opening_cells(path: Path) -> list[str]:
    """The sources of a chapter's opening cells: its code cells from the first (the
    set-up, with the Colab install) through the first that names the chapter's data
    (:data:`LOADERS`): the one that loads FashionMNIST in Chapters 1 and 5 (in
    Chapter 2, picks its loader), the digits in Chapter 3, the data model in Chapter
    4. ValueError when no cell does."""
    notebook = nbformat.read(path, as_version=4)
    sources = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    for end, source in enumerate(sources):
        if LOADERS.search(source):
            return sources[: end + 1]
    raise ValueError(f"{path.name}: no code cell names {LOADERS.pattern}")


def script(path: Path, repository: str, cells: list[str] | None = None) -> str:
    """A chapter's opening ``cells`` (default: :func:`opening_cells`) as one script,
    the notebook's repository URL replaced by ``repository``: google.colab imported
    first, a last line "REPORT {json}" with ccl_helpers' file and version."""
    cells = opening_cells(path) if cells is None else cells
    assert REPOSITORY in cells[0], f"{path.name}: the first cell names no repository"
    for source in cells:
        assert not re.search(r"^\s*[%!]", source, re.M), "IPython syntax in " + source
    report = (
        "import json as _json\n"
        "import ccl_helpers as _ccl\n"
        'print("REPORT", _json.dumps({"file": _ccl.__file__, '
        '"version": _ccl.__version__}))\n'
    )
    body = "\n\n".join(cells).replace(REPOSITORY, repository)
    return f"import google.colab  # as in Colab's kernel\n\n{body}\n\n{report}"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    """The working tree committed into a new repository and tagged by `make release` →
    {"path", "url" (file://), "commit"}."""
    snapshot = tmp_path_factory.mktemp("colab") / "repository"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name, follow_symlinks=False)
    env = {**os.environ, **IDENTITY}
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=snapshot, env=env, check=True)
    subprocess.run(
        ["git", "commit", "-q", "--no-verify", "-m", "snapshot"],
        cwd=snapshot,
        env=env,
        check=True,
    )
    tagged = subprocess.run(
        ["make", "-s", "release"], cwd=snapshot, env=env, capture_output=True, text=True
    )
    assert tagged.returncode == 0, tagged.stdout + tagged.stderr
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=snapshot,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # pip's URL parser wants a host: file://localhost/… (git accepts it)
    return {"path": snapshot, "url": f"file://localhost{snapshot}", "commit": commit}


def fake_colab(folder: Path) -> Path:
    """A folder for PYTHONPATH holding the package google.colab (a namespace
    ``google``, as on Colab) → that folder."""
    package = folder / "google" / "colab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""A stand-in: the notebooks test its import."""\n'
    )
    return folder


def colab_python(folder: Path) -> Path:
    """A new virtual environment without pip in ``folder``, seeing this interpreter's
    packages (not ccl_helpers) through a .pth file → its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True)
    view = folder / "preinstalled"
    view.mkdir()
    places = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    for place in map(Path, sorted(places)):
        for entry in place.iterdir():
            hidden = "ccl_helpers" in entry.name.lower() or entry.suffix == ".pth"
            if not hidden and not (view / entry.name).exists():
                (view / entry.name).symlink_to(entry)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "preinstalled.pth").write_text(f"{view}\n")
    hidden = subprocess.run(
        [python, "-c", "import ccl_helpers"], cwd=folder, capture_output=True
    )
    assert hidden.returncode != 0, "the new environment sees ccl_helpers"
    return python


def fashion_mnist_gz(folder: Path) -> Path:
    """FashionMNIST's four files, gzipped, in ``folder`` (from where this interpreter
    finds them) → ``folder``; pytest.fail naming the fetch command if none."""
    folder.mkdir()
    for split in ("train", "test"):
        try:
            found = data.find_split("fashion-mnist", split)
        except data.DataNotFoundError as error:
            pytest.fail(
                f"the test serves FashionMNIST's files, not found here: {error}"
            )
        for path in found:
            target = folder / (path.name.removesuffix(".gz") + ".gz")
            if path.suffix == ".gz":
                shutil.copyfile(path, target)
            else:
                target.write_bytes(gzip.compress(path.read_bytes(), compresslevel=1))
    return folder


def run(python: Path, text: str, env: dict, folder: Path):
    """Run ``text`` as a script by ``python`` in a new subfolder of ``folder`` (its
    working directory and first import path) → CompletedProcess."""
    folder = folder / "work"
    folder.mkdir(exist_ok=True)
    path = folder / "opening.py"
    path.write_text(text)
    return subprocess.run(
        [python, path],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def colab_env(tmp: Path, mirror: str) -> dict:
    """The environment of the simulated Colab: a new HOME and cache, no Debian files,
    ``mirror`` as CCL_DATA_MIRROR, pip offline, the smoke scale."""
    for name in ("home", "cache", "empty", "records"):
        (tmp / name).mkdir()
    return {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "PYTHONPATH": str(fake_colab(tmp / "colab")),
        "CCL_DATA_MIRROR": mirror,
        "CCL_DEBIAN_DATA_DIR": str(tmp / "empty"),
        "no_proxy": "127.0.0.1",
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # read by pip as build_isolation = False
        "CCL_SCALE": "smoke",
        "CI": "1",
        "CCL_DEVICE": "cpu",
        "CCL_THREADS": "1",
        "CCL_RECORDS_DIR": str(tmp / "records"),
        "MPLBACKEND": "Agg",
    }


def test_opening_cells_end_at_the_data():
    ends = {path.name[:2]: opening_cells(path)[-1] for path in CHAPTERS}
    assert set(ends) == {"01", "02", "03", "04", "05"}
    for chapter in ("01", "05"):
        assert "data.fashion_mnist(" in ends[chapter]
    assert '{"FashionMNIST": data.fashion_mnist}' in ends["02"]
    assert "data.load_digits(" in ends["03"]
    assert "make_data_model(" in ends["04"]


def test_every_chapter_opens_on_colab(release, tmp_path):
    """Each chapter's opening cells succeed with the ccl_helpers pip installed from the
    tag (this version, the snapshot's commit), FashionMNIST downloaded once from the
    mirror into the cache and found there by the later chapters."""
    python = colab_python(tmp_path / "venv")
    fashion = fashion_mnist_gz(tmp_path / "mirror")
    cache = tmp_path / "cache" / "ccl_helpers" / "fashion-mnist"
    gz = sorted(path.name for path in fashion.iterdir())
    with serve(fashion) as (url, requested):
        env = colab_env(tmp_path, url)
        for path in CHAPTERS:
            cells = opening_cells(path)
            done = run(python, script(path, release["url"], cells), env, tmp_path)
            output = done.stdout + done.stderr
            assert done.returncode == 0, f"{path.name}:\n{output[-6000:]}"
            report = json.loads(done.stdout.rsplit("REPORT ", 1)[1])
            installed = Path(report["file"]).resolve()
            assert installed.is_relative_to((tmp_path / "venv").resolve()), report
            assert report["version"] == ccl_helpers.__version__
            # the first chapter downloads the files, once; the others find them
            assert sorted(p.lstrip("/") for p in requested) == gz, path.name
            assert sorted(p.name for p in cache.iterdir()) == gz
            if '"ccl_helpers.data", "fetch"' in cells[0]:
                assert f"FashionMNIST: {cache}\n" in done.stdout, output[-3000:]
            assert "ccl_helpers.setup: scale smoke" in done.stdout, output[-3000:]
    direct = json.loads(
        next(installed.parents[1].glob("ccl_helpers-*/direct_url.json")).read_text()
    )
    assert direct["url"] == release["url"]
    assert direct["vcs_info"]["requested_revision"] == f"v{ccl_helpers.__version__}"
    assert direct["vcs_info"]["commit_id"] == release["commit"]


@pytest.mark.parametrize("chapter", ["01", "03"], ids=["fetches", "no-fetch"])
def test_a_failed_install_stops_the_first_cell(release, tmp_path, chapter):
    """A repository without the version's tag: the first cell stops with pip's error
    and CalledProcessError, not at the data fetch (Chapter 1) or the import of
    ccl_helpers (Chapter 3) with a ModuleNotFoundError (nothing is installed)."""
    untagged = tmp_path / "untagged"
    subprocess.run(
        ["git", "clone", "-q", "--no-tags", release["path"], untagged], check=True
    )
    python = colab_python(tmp_path / "venv")
    env = colab_env(tmp_path, "http://127.0.0.1:9/")  # never reached
    chapter = next(path for path in CHAPTERS if path.name.startswith(chapter))
    first = opening_cells(chapter)[:1]
    done = run(
        python, script(chapter, f"file://localhost{untagged}", first), env, tmp_path
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "subprocess.CalledProcessError" in output, output[-3000:]
    assert f"v{ccl_helpers.__version__}" in output  # pip names the missing revision
    assert "ModuleNotFoundError" not in output and "REPORT" not in output
    error = next(line for line in output.splitlines() if "CalledProcessError:" in line)
    assert "'-m', 'pip', 'install'" in error  # the install, not the fetch
