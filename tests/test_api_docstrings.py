"""The book's Sphinx extension for the API reference (book/_ext/api_docstrings.py):
plain-text docstrings render as written. Formulas on their own indented lines become
literal blocks, lines continued at a deeper indentation join their paragraph, napoleon
keeps its sections, the words napoleon takes for a type go back into the sentence,
and a package's re-exported constants keep their docstrings. (The -W -n build of the
book checks the whole reference.)"""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

from sphinx.ext.napoleon import Config
from sphinx.ext.napoleon.docstring import GoogleDocstring

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import api_docstrings  # noqa: E402
from check_book_pages import toc_files  # noqa: E402

import ccl_helpers  # noqa: E402


def rendered(what: str, text: str, name: str = "ccl_helpers.x.f") -> list[str]:
    """The reST the extension and napoleon make of a docstring, in Sphinx's order."""
    lines = text.splitlines()
    api_docstrings.before_napoleon(None, what, name, None, None, lines)
    config = Config(napoleon_use_rtype=True, napoleon_numpy_docstring=False)
    lines = GoogleDocstring(lines, config, what=what, name=name).lines()
    api_docstrings.after_napoleon(None, what, name, None, None, lines)
    return lines


def test_a_formula_block_is_shown_as_written():
    text = (
        "As in Lemma 2, with J = {I_1, …, I_N},\n"
        "\n"
        "    p(N) = P(|J| = N_C)\n"
        "         = N! Σ Π_c ρ(c)^{n_c} / n_c!,\n"
        "\n"
        "zero for N < N_C; the *input shape."
    )
    assert rendered("function", text) == [
        "As in Lemma 2, with J = {I_1, …, I_N},",
        "",
        ".. code-block:: text",
        "",
        "    p(N) = P(|J| = N_C)",
        "         = N! Σ Π_c ρ(c)^{n_c} / n_c!,",
        "",
        r"zero for N < N_C; the \*input shape.",
    ]


def test_bars_and_shape_stars_are_escaped_outside_literal_blocks():
    lines = ["E_{T|y} of x (n, *input_shape)", "", "    |J| = *S", "", "after |x|"]
    api_docstrings.escape(lines, keep=api_docstrings.lay_out(lines))
    assert lines == [
        r"E_{T\|y} of x (n, \*input_shape)",
        "",
        ".. code-block:: text",
        "",
        "    |J| = *S",
        "",
        r"after \|x\|",
    ]


def test_a_continued_line_joins_its_paragraph_or_list_item():
    lines = [
        "Returns: a float in [0, 1].",
        "Raises: ValueError where the value cannot be computed to a",
        "    relative accuracy of 1e-10.",
        "",
        "- an item whose text",
        "      goes on deeper",
        "  and on.",
    ]
    api_docstrings.lay_out(lines)
    assert lines == [
        "Returns: a float in [0, 1].",
        "Raises: ValueError where the value cannot be computed to a",
        "relative accuracy of 1e-10.",
        "",
        "- an item whose text",
        "  goes on deeper",
        "  and on.",
    ]


def test_sections_definitions_literal_blocks_and_directives_are_left_alone():
    lines = [
        "Args:",
        "    x: the inputs, shape (n, d),",
        "        unit rows.",
        "",
        "Reference:",
        "    S. Arora et al. (2019).",
        "",
        "Typical use::",
        "",
        "    for step in range(n):",
        "            step(x)",
        "",
        ".. math::",
        "",
        r"    \|x\|",
    ]
    before = list(lines)
    assert api_docstrings.lay_out(lines) == {9, 10, 12, 14}
    assert lines == before


def test_the_words_before_a_colon_stay_in_the_sentence():
    constant = "The claims of the source, by key: each stated before the runs."
    assert rendered("data", constant) == [constant]
    returns = "Summary.\n\nReturns:\n    One row per β and run: ``beta`` and ``gap``."
    lines = rendered("function", returns)
    assert ":returns: One row per β and run: ``beta`` and ``gap``." in lines
    assert not [line for line in lines if line.startswith(":rtype:")]
    plain = "Summary.\n\nReturns:\n    The loss, shape (n,)."
    assert ":returns: The loss, shape (n,)." in rendered("function", plain)


def test_a_package_constant_keeps_the_docstring_of_its_definition():
    doc = api_docstrings.defining_docstring(
        "ccl_helpers.data", "STRATEGIES", ccl_helpers.data.STRATEGIES
    )
    assert doc and doc[0].startswith("The augmentation strategies")
    found = api_docstrings.defining_docstring("ccl_helpers.data", "STRATEGIES", ())
    assert found is None  # another value of that name


def test_the_reference_documents_the_package_beside_the_book():
    assert api_docstrings.ROOT == Path(ccl_helpers.__file__).resolve().parents[1]


def test_every_public_module_has_its_page_in_the_table_of_contents():
    modules = {
        module.name
        for module in pkgutil.iter_modules(ccl_helpers.__path__)
        if not module.name.startswith("_")
    }
    pages = {path.stem: path for path in (ROOT / "book" / "api").glob("*.md")}
    assert set(pages) - {"index"} == modules
    assert {f"book/api/{name}" for name in pages} <= set(toc_files())
    for name in modules:
        assert f".. automodule:: ccl_helpers.{name}\n" in pages[name].read_text()
