"""The texts a reader sees speak of the mathematics, and cite only files that exist.

Checked texts: the book's pages (book/*.md and the markdown cells of book/*.ipynb), the
README, benchmarks/*.md, and the docstrings and comments of ``ccl_helpers``,
``benchmarks`` and ``tests`` (but this file, whose examples are what it refuses). None
may refer to how the book was made (issue numbers, "our copy", items of an issue, notes
or files kept outside the repository), and every file path such a text names must exist
in the repository. The book's own pages also keep the machinery for developers (test
files, make targets other than ``make book`` and ``make test``, environment variables
other than ``CCL_SCALE``) in the README."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

# (pattern, what it refers to). Each is precise enough to leave mathematics alone:
# "spectral", "kernelspec", "$\#\mathcal C$" and a hex colour do not match.
PROVENANCE = [
    (re.compile(r"\bour\s+(?:own\s+)?cop(?:y|ies)\b", re.I), "a copy of a source"),
    (re.compile(r"\b(?:issue|PR|pull request)\s*#?\s*\d+", re.I), "an issue number"),
    (re.compile(r"(?<![\w&#/\\])#\d{1,5}\b(?![\w-])"), "an issue number"),
    (re.compile(r"\bof\s+the\s+issue\b|\bthe\s+issue's\b", re.I), "the issue"),
    (
        re.compile(r"\bthe\s+spec(?:'s)?\b|\bspec\s*\(?§", re.I),
        "a specification outside the book",
    ),
    (
        re.compile(r"\b(?:no|the|this|a|every)\s+(?:session|coordinator)s?\b", re.I),
        "who made the book",
    ),
    (re.compile(r"\bshared/|\bpapers/[\w.-]+\.\w+"), "a file outside the repository"),
    (re.compile(r"(?:^|[\s`'\"(])(?:/work|/tmp|/home|/root)/"), "an absolute path"),
]

# A relative path with a file extension, e.g. `book/04_multimodal_dynamics.ipynb`,
# `tests/test_x.py`, `results.md`. URLs are removed before matching.
EXTENSIONS = "py|ipynb|md|txt|json|csv|yml|yaml|toml|cfg|bib|png|svg|pdf"
PATH = re.compile(
    rf"(?<![\w./\\-])((?:\.{{0,2}}/)?(?:[\w.-]+/)*[\w-]+\.(?:{EXTENSIONS}))\b"
)
URL = re.compile(r"\b[a-z][\w+.-]*://\S+|\bwww\.\S+")
# Files a command writes (they exist after a run, not in the repository).
OUTPUT_PATH = re.compile(r"(?:--out\s+|>\s*)$")
GENERATED = ("_build/", "results/", ".venv/")
# Names that stand for a reader's file: `NN_topic.ipynb`, `script.py`, `your_x.py`.
PLACEHOLDER = re.compile(r"(?:^|/)(?:NN_\w+|script|your_\w+|my_\w+)\.\w+$")


# (pattern, what it is) of the tooling a reader of the book does not need.
DEVELOPER = [
    (re.compile(r"(?<![\w.])(?:tests|benchmarks|\.ci|_build|results)/"), "a folder"),
    (re.compile(r"\bnbval\b|\bpytest\b|\bChromium\b|\bnpm\b", re.I), "a tool"),
    (re.compile(r"`make\s+(?!book`|test`)[^`]*`"), "a make target"),
    (re.compile(r"\bCCL_(?!SCALE\b)[A-Z_]+"), "an environment variable"),
]


def developer_problems(text: str) -> list[str]:
    """Each match of a DEVELOPER pattern in ``text``, as "'match' (what)"."""
    return [
        f"{m.group(0).strip()!r} ({what})"
        for pattern, what in DEVELOPER
        for m in pattern.finditer(text)
    ]


def provenance_problems(text: str) -> list[str]:
    """Each match of a PROVENANCE pattern in ``text``, as "'match' (what)"."""
    return [
        f"{m.group(0).strip()!r} ({what})"
        for pattern, what in PROVENANCE
        for m in pattern.finditer(text)
    ]


def cited_paths(text: str) -> list[str]:
    """The relative file paths ``text`` names, except in URLs and command outputs."""
    text = URL.sub(" ", text)
    return [
        m.group(1)
        for m in PATH.finditer(text)
        if not OUTPUT_PATH.search(text[max(0, m.start() - 8) : m.start()])
    ]


def _repository_names() -> set[str]:
    """The names of the repository's files (build outputs and caches left out)."""
    skip = {".git", ".venv", "_build", "node_modules", "__pycache__", ".pytest_cache"}
    names = set()
    for _, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in skip]
        names.update(files)
    return names


REPOSITORY_NAMES = _repository_names()


def missing_paths(text: str, where: Path) -> list[str]:
    """Paths cited in ``text`` (from the file ``where``) that the repository lacks.

    A path with a folder must exist relative to the repository root or to ``where``'s
    folder; a bare file name must be the name of some file of the repository.
    """
    missing = []
    for path in cited_paths(text):
        if path.startswith(GENERATED) or PLACEHOLDER.search(path):
            continue
        if "/" in path.strip("./"):
            found = (ROOT / path).exists() or (where.parent / path).exists()
        else:
            found = Path(path).name in REPOSITORY_NAMES
        if not found:
            missing.append(path)
    return missing


def python_texts(path: Path) -> str:
    """The docstrings and comments of a Python file, one per line block."""
    source = path.read_text()
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = [
        ast.get_docstring(node, clean=False) or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, nodes)
    ]
    comments = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    return "\n".join(docstrings + comments)


def notebook_markdown(path: Path) -> str:
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(c.source for c in cells if c.cell_type == "markdown")


def reader_texts() -> dict[str, tuple[Path, str]]:
    """Every checked text, by its path relative to the repository root."""
    texts = {}
    pages = sorted((ROOT / "book").glob("*.md")) + sorted(ROOT.glob("benchmarks/*.md"))
    for path in [*pages, ROOT / "README.md"]:
        texts[path] = path.read_text()
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        texts[path] = notebook_markdown(path)
    for folder in ("ccl_helpers", "benchmarks", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != Path(__file__).resolve():
                texts[path] = python_texts(path)
    return {str(p.relative_to(ROOT)): (p, t) for p, t in texts.items()}


TEXTS = reader_texts()


# ------------------------------------------------------------------ the checkers


@pytest.mark.parametrize(
    "text",
    [
        "Our copy of the source lost all its formulas.",
        "our copies lost some formatting",
        "the target of issue 4",
        "(≥ 3× on a CPU; issue 7)",
        "fixed in #12.",
        "| item of the issue | where | command |",
        "the issue's second item",
        "checks it against the closed form of the spec (§3.4)",
        "The spec reports agreement within a few per cent",
        "rebuilt in spec §5.2",
        "The spec's §3.4 gradient",
        "follows ``shared/papers/multimodal-contrastive-spec.md``",
        "see ../shared/papers/wen.md",
        "written to /tmp/out.json",
        "no session that built the book had a GPU",
    ],
)
def test_provenance_checker_flags(text):
    assert provenance_problems(text), text


@pytest.mark.parametrize(
    "text",
    [
        "the spectral norm $\\|W\\|_2$ and the spectrum of $\\Sigma$",
        '"kernelspec": {"name": "python3"}',
        "the number of classes $\\#\\mathcal C$ and colour #1f77b4",
        "The issue with a small $\\beta$ is that the stage lasts longer.",
        "Lemma 4.4, eq. (A.3) and Section 5.2 of the source",
        "the copy of $x$ through the second encoder",
        "$\\beta = 1$ gives only a brief rise; a training session of 5 minutes",
        "`tests/test_multimodal.py` checks the gradient",
    ],
)
def test_provenance_checker_passes_mathematics(text):
    assert not provenance_problems(text), provenance_problems(text)


def test_cited_paths():
    text = (
        "See `book/04_multimodal_dynamics.ipynb`, tests/test_x.py and results.md; "
        "https://example.org/a/b.md is a URL; --out results.json is an output; "
        "torch.linalg.qr and 1.5e-3 are not paths."
    )
    assert cited_paths(text) == [
        "book/04_multimodal_dynamics.ipynb",
        "tests/test_x.py",
        "results.md",
    ]


def test_missing_paths():
    where = ROOT / "ccl_helpers" / "multimodal.py"
    text = (
        "`book/notation.md`, `tests/test_multimodal.py`, results.md (a bare name), "
        "`_build/html/index.html` (built), `book/99_missing.ipynb`, "
        "`torchrun script.py`, `book/NN_topic.ipynb` (placeholders), "
        "multimodal-contrastive-spec.md"
    )
    assert missing_paths(text, where) == [
        "book/99_missing.ipynb",
        "multimodal-contrastive-spec.md",
    ]


def test_python_texts_reads_docstrings_and_comments(tmp_path):
    path = tmp_path / "module.py"
    path.write_text(
        '"""Module doc."""\n\n\ndef f():\n    """Function doc."""\n'
        '    return "a string, not a docstring"  # a comment\n'
    )
    text = python_texts(path)
    assert "Module doc." in text and "Function doc." in text
    assert "# a comment" in text and "not a docstring" not in text


# ------------------------------------------------------------------ the texts


def test_texts_found():
    names = set(TEXTS)
    for expected in (
        "README.md",
        "book/intro.md",
        "book/04_multimodal_dynamics.ipynb",
        "ccl_helpers/multimodal/__init__.py",
    ):
        assert expected in names


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_no_reference_to_how_the_book_was_made(name):
    _, text = TEXTS[name]
    problems = provenance_problems(text)
    assert not problems, f"{name}: {problems}"


@pytest.mark.parametrize(
    "text",
    [
        "`tests/test_multimodal.py` checks that gradient",
        "writes `results/paper/05_supervised_approximation.json`",
        "compares its outputs with the stored ones (nbval)",
        "opens every page in headless Chromium",
        "`make render-check` lists the tables",
        "`make paper` needs a CUDA GPU",
        "(the environment variable `CCL_DEVICE` overrides the choice)",
    ],
)
def test_developer_checker_flags(text):
    assert developer_problems(text)


@pytest.mark.parametrize(
    "text",
    [
        "`make book` builds the book; `make test` checks it",
        "`CCL_SCALE=paper` runs the sources' sizes",
        "the unit tests check that gradient against autograd",
        "the results of Theorem 3/4",
        "make the loss smaller",
    ],
)
def test_developer_checker_passes_reader_text(text):
    assert not developer_problems(text)


BOOK_PAGES = sorted(name for name in TEXTS if name.startswith("book/"))


@pytest.mark.parametrize("name", BOOK_PAGES)
def test_book_pages_keep_the_tooling_in_the_readme(name):
    _, text = TEXTS[name]
    problems = developer_problems(text)
    assert not problems, f"{name}: {problems}"


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_cited_files_exist(name):
    path, text = TEXTS[name]
    missing = missing_paths(text, path)
    assert not missing, f"{name} cites files that are not in the repository: {missing}"


# ---------------------------------------------------------- the multimodal appendix

APPENDIX = ROOT / "book" / "appendix_multimodal_model.md"
# A displayed equation: "$$" … "$$ (label)"; the page numbers them (1), (2), … in order.
DISPLAY_MATH = re.compile(r"^\$\$\n(.*?)\n\$\$(?: \(([\w-]+)\))?$", re.M | re.S)
APPENDIX_CITATION = re.compile(r"\(A\.(\d+)\)")
EQ_REFERENCE = re.compile(r"\{eq\}`([\w-]+)`")


def appendix_labels() -> list[str | None]:
    """The label of each displayed equation of the appendix, in order (None: none)."""
    return [m.group(2) for m in DISPLAY_MATH.finditer(APPENDIX.read_text())]


def test_appendix_equations_are_labelled():
    labels = appendix_labels()
    assert len(labels) >= 20, f"only {len(labels)} displayed equations found"
    assert None not in labels, f"unlabelled equations at positions {labels}"
    assert len(set(labels)) == len(labels), "a label is used twice"


def test_appendix_citations_in_docstrings_exist():
    """(A.n) in a docstring is the appendix's equation (n): it must exist."""
    count = len(appendix_labels())
    bad = [
        f"{name}: (A.{n})"
        for name, (_, text) in TEXTS.items()
        if name.startswith("ccl_helpers/")
        for n in map(int, APPENDIX_CITATION.findall(text))
        if not 1 <= n <= count
    ]
    assert not bad, f"citations of equations the appendix lacks (it has {count}): {bad}"
    assert any(
        APPENDIX_CITATION.search(text)
        for name, (_, text) in TEXTS.items()
        if name.startswith("ccl_helpers/multimodal/")
    )


def test_equation_references_resolve():
    """Every {eq}`label` in the book names a labelled equation of some page."""
    labels = set(appendix_labels())
    for _, (path, text) in TEXTS.items():
        if path.parent.name == "book":
            labels |= {m.group(2) for m in DISPLAY_MATH.finditer(text) if m.group(2)}
            labels |= set(re.findall(r"^:label: ([\w-]+)$", text, re.M))
    bad = [
        f"{name}: {label}"
        for name, (path, text) in TEXTS.items()
        if path.parent.name == "book"
        for label in EQ_REFERENCE.findall(text)
        if label not in labels
    ]
    assert not bad, f"references to equations that no page labels: {bad}"
