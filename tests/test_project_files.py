"""The project's set-up files agree with each other: one repository URL (in _config.yml)
behind every Colab install cell and link, one Python version, every imported package
declared in pyproject.toml and pinned in .ci/constraints.txt."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

import ccl_helpers

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
REPOSITORY = CONFIG["repository"]["url"]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def install_cell(path: Path) -> str:
    """The source of a notebook's first code cell (the set-up cell)."""
    notebook = nbformat.read(path, as_version=4)
    return next(c.source for c in notebook.cells if c.cell_type == "code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_install_cell_pins_the_configured_repository_and_version(path):
    source = install_cell(path)
    repo = re.search(r'^\s*repo = "([^"]+)"$', source, re.M)
    assert repo and repo.group(1) == REPOSITORY, source
    assert (
        f'package = f"ccl_helpers @ git+{{repo}}@v{ccl_helpers.__version__}"' in source
    )
    # a failed install stops the cell with pip's error (no "!pip", which goes on)
    assert "subprocess.run(pip, check=True)" in source and "!pip" not in source
    assert source.index('"google.colab" in sys.modules') < source.index("package =")
    uses_data = "fashion_mnist(" in path.read_text()
    fetches = '"ccl_helpers.data", "fetch"' in source
    assert fetches == uses_data and ("subprocess.run(fetch, check=True)" in source) == (
        uses_data
    )


def test_readme_colab_links_use_the_configured_repository():
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    branch = CONFIG["repository"]["branch"]
    links = re.findall(
        r"https://colab\.research\.google\.com/github/\S+?\.ipynb",
        (ROOT / "README.md").read_text(),
    )
    assert links, "the README links at least one chapter on Colab"
    for link in links:
        prefix = f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/"
        assert link.startswith(prefix), link
        assert (ROOT / link.removeprefix(prefix)).is_file(), link


def test_repository_url_is_written_only_in_the_config_and_notebooks():
    """Only the README's Colab links (checked above) repeat it."""
    for path in [ROOT / "pyproject.toml", ROOT / "environment.yml", ROOT / "Makefile"]:
        assert REPOSITORY not in path.read_text(), path


def test_environment_python_satisfies_requires_python():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    python = next(
        d for d in environment["dependencies"] if str(d).startswith("python=")
    )
    version = python.removeprefix("python=")
    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains(
        f"{version}.0"
    )


def test_environment_pins_the_constrained_torch_in_the_tested_range():
    """conda installs the torch that pip would (the constraints' pin), so pip keeps it;
    that version is in pyproject.toml's range."""
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_torch = next(
        str(d) for d in environment["dependencies"] if str(d).startswith("pytorch")
    )
    assert conda_torch.split("=", 1)[1] == pinned()["torch"]
    torch = next(
        Requirement(r) for r in PYPROJECT["project"]["dependencies"] if "torch" in r
    )
    assert torch.specifier.contains(pinned()["torch"])


def declared() -> set[str]:
    """Canonical names of the distributions pyproject.toml declares, with extras."""
    project = PYPROJECT["project"]
    requirements = project["dependencies"] + [
        r for extra in project["optional-dependencies"].values() for r in extra
    ]
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def pinned() -> dict[str, str]:
    lines = (ROOT / ".ci" / "constraints.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pins}


def imported_distributions(paths) -> set[str]:
    """Canonical names of the installed distributions the files import at top level."""
    modules = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    owners = packages_distributions()
    return {
        canonicalize_name(dist)
        for module in modules - set(sys.stdlib_module_names)
        for dist in owners.get(module, [])
    }


def test_every_imported_package_is_declared_and_pinned():
    code = [
        *(ROOT / "ccl_helpers").rglob("*.py"),
        *(ROOT / "tests").glob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
    ]
    makefile = (ROOT / "Makefile").read_text()
    used = imported_distributions(code) - {"ccl-helpers"}
    used |= {"pyyaml"} if "import yaml" in makefile else set()
    assert used - declared() == set()
    assert declared() - set(pinned()) == set()


def test_constraints_pin_the_installed_versions():
    """The pins are what this environment runs (refreshed with pip freeze); the extras
    that are not installed here (bench) are not compared."""
    for name in declared():
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue
        assert installed.split("+")[0] == pinned()[name], name


def test_make_release_tags_the_package_version_once(tmp_path):
    """`make release` in a clone tags v<__version__> (what the Colab cells install) and
    refuses a second time and on a changed tree."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    identity = {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    env = {**os.environ, **identity}

    def release():
        return subprocess.run(
            ["make", "-s", "release"],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
        )

    first = release()
    assert first.returncode == 0, first.stdout + first.stderr
    tags = subprocess.run(
        ["git", "tag"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tags == [f"v{ccl_helpers.__version__}"]
    assert "exists" in release().stdout
    subprocess.run(["git", "tag", "-d", tags[0]], cwd=clone, check=True, stdout=-3)
    (clone / "README.md").write_text("changed")
    assert "changes" in release().stdout
