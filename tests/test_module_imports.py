"""The package's import rule, read from every module's source (ast): the modules of one
source (Chapters 1–5) import the shared core only, never each other; the core imports
no source module (only the entries above the sources do); and no module imports a
private module (``_name``) of another package (``ccl_helpers._checks`` and
``ccl_helpers._precision`` are the whole package's)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ccl_helpers"

SOURCE_MODULES = {"curl", "multineg", "wen", "multimodal", "supervised_approx"}
"""One module per theory source: each may use the core, none another source's module."""

ENTRY_POINTS = {"launch", "encoder_report"}
"""Modules above the sources, which may import them: the command-line entry that runs a
chapter's experiment, and the report of every source's bounds on one encoder."""


def module_name(path: Path) -> str:
    """ccl_helpers/losses/info_nce.py → "ccl_helpers.losses.info_nce"."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[str]:
    """The absolute names of the ccl_helpers modules that ``path`` imports."""
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = (
                    package.rsplit(".", node.level - 1)[0]
                    if node.level > 1
                    else package
                )
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names.append(base)
            # ``from . import curl``, ``from .losses import nt_xent`` name modules too
            names += [
                f"{base}.{alias.name}"
                for alias in node.names
                if (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/"))
                .with_suffix(".py")
                .exists()
                or (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).is_dir()
            ]
    return [name for name in names if name.split(".")[0] == "ccl_helpers"]


def top_level(name: str) -> str:
    """ "ccl_helpers.losses.nt_xent" → "losses"; "ccl_helpers" → ""."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_the_modules_the_rule_names():
    names = {top_level(module_name(path)) for path in MODULES}
    assert SOURCE_MODULES | ENTRY_POINTS | {"losses", "metrics"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_rule(path):
    importer = module_name(path)
    own = top_level(importer)
    for name in imported_modules(path):
        target = top_level(name)
        if own in SOURCE_MODULES:
            assert target not in SOURCE_MODULES - {own}, (
                f"{importer} (a source's module) imports {name}, another source's"
            )
        elif own not in ENTRY_POINTS and own:
            assert target not in SOURCE_MODULES, (
                f"{importer} (core) imports {name}, a source's module"
            )
        importer_package = (
            importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        )
        private = [part for part in name.split(".")[1:] if part.startswith("_")]
        if private:
            owner = name.rpartition(".")[0]  # a package's private module serves it all
            assert f"{importer_package}.".startswith(f"{owner}."), (
                f"{importer} imports the private module {name} of another package"
            )


def test_the_rule_catches_violations(tmp_path, monkeypatch):
    """The checks above can fail: a source module importing another; a private one."""
    text = "from . import curl\nfrom .losses._reduction import reduce\n"
    fake = tmp_path / "ccl_helpers" / "wen.py"
    fake.parent.mkdir()
    fake.write_text(text)
    monkeypatch.setattr(
        "test_module_imports.PACKAGE", tmp_path / "ccl_helpers", raising=True
    )
    for target in ("curl.py", "losses/_reduction.py"):
        (tmp_path / "ccl_helpers" / target).parent.mkdir(exist_ok=True)
        (tmp_path / "ccl_helpers" / target).write_text("")
    assert imported_modules(fake) == [
        "ccl_helpers",
        "ccl_helpers.curl",
        "ccl_helpers.losses._reduction",
    ]
    with pytest.raises(AssertionError, match="another source's"):
        test_imports_follow_the_rule(fake)
    fake.write_text("from .losses._reduction import reduce\n")
    with pytest.raises(AssertionError, match="private module"):
        test_imports_follow_the_rule(fake)


LINE_LENGTH = 88
"""ruff's line length: the first docstring line, quotes included, fits in it."""


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_states_its_purpose_in_one_line(path):
    """A module docstring opens with one sentence on one line, then a blank line."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstring = ast.get_docstring(tree, clean=False)
    assert docstring, f"{path.name} has no module docstring"
    lines = docstring.splitlines()
    first = lines[0]
    assert first.strip() == first and first.endswith("."), (
        f"{module_name(path)}: the first docstring line is no sentence: {first!r}"
    )
    assert len('"""' + first) <= LINE_LENGTH, (
        f"{module_name(path)}: the first docstring line is longer than {LINE_LENGTH}"
    )
    assert len(lines) == 1 or lines[1] == "", (
        f"{module_name(path)}: the first sentence wraps onto a second line: "
        f"{lines[1]!r}"
    )
