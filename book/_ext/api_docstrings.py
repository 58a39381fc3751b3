"""A Sphinx extension for the API reference: the package's docstrings are plain text,
written for ``help()``, with Google-style sections (napoleon). Three things make them
render as written:

- Shapes and bars: the docstrings write shapes as ``x (n, *input_shape)`` and
  conditional expectations as ``E_{T|y}``; reST would read the ``*`` as emphasis and
  the ``|`` as a substitution, so both are escaped (:func:`escape`).
- Layout (:func:`lay_out`): a formula written out on its own indented lines is shown
  as written, a literal block (reST would join its lines into a block quote); a line
  that continues a paragraph or list item at a deeper indentation (``Raises: ... /
  <indented rest>``) continues it (reST would read a definition list or an error).
- Types (:func:`keep_words`): napoleon reads a first line ``X: Y`` of an attribute's
  docstring, and of a ``Returns:`` section, as "of type X". The package writes no
  types there (the annotations give them, ``autodoc_typehints``), so X goes back into
  the sentence.

The first two run on ``autodoc-process-docstring`` before napoleon, the third after
it. A package's constants that it imports from its submodules (``data.STRATEGIES``,
``losses.SIMILARITIES``) are documented with the docstring written after their
assignment (:func:`defining_docstring`). The reference documents the package beside
the book: its repository root goes first on ``sys.path``, ahead of any installed
copy."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sphinx.ext.autodoc import ModuleDocumenter, ObjectMember
from sphinx.pycode import ModuleAnalyzer

ROOT = Path(__file__).resolve().parents[2]

SHAPE_STAR = re.compile(r"(?<![*\w\\])\*(?=(?:input_shape|input|shape|S)\b)")
"""A ``*`` that unpacks a shape: ``*input``, ``*input_shape``, ``*shape``, ``*S``."""
BAR = re.compile(r"(?<![|\\`])\|(?![|`])")
"""A single ``|`` outside literals' ``||``."""
LABEL = re.compile(r"^\s*[\w ]+:\s*$")
"""A line that is only a label: a napoleon section's header (``Args:``) or the term of
a definition (``Reference:``) when deeper lines follow it."""
ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#\.)\s+")
"""The marker of a list item; the item's text is indented by the match's length."""
BEFORE_NAPOLEON, AFTER_NAPOLEON = 100, 600
"""Priorities on ``autodoc-process-docstring`` (napoleon's is the default, 500)."""


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape(lines: list[str], keep: set[int] = frozenset()) -> None:
    """Escape, in place, the shape stars and the bars of a docstring's lines, except
    the lines numbered in ``keep`` (literal blocks and directives)."""
    for i, line in enumerate(lines):
        if i in keep:
            continue
        if "``" in line:  # literals keep their text
            parts = line.split("``")
            parts[::2] = [
                BAR.sub(r"\\|", SHAPE_STAR.sub(r"\\*", p)) for p in parts[::2]
            ]
            lines[i] = "``".join(parts)
        else:
            lines[i] = BAR.sub(r"\\|", SHAPE_STAR.sub(r"\\*", line))


def lay_out(lines: list[str]) -> set[int]:
    """Lay out, in place, a docstring's formulas and continued lines for reST.

    Outside napoleon's sections, definitions, directives and literal blocks: a block
    of lines after a blank line, indented deeper than the text around it, becomes a
    ``code-block:: text`` (its lines and alignment kept); a line of a paragraph or
    list item indented deeper than that text is brought to its indentation. Returns
    the numbers of the lines to keep as they are (literal blocks and directives)."""
    out: list[str] = []
    keep: set[int] = set()
    held: tuple[int, bool] | None = None  # (indentation, literal) of a held region
    text = 0  # the indentation of the text the lines continue
    after_blank = True
    for i, line in enumerate(lines):
        if not line.strip():
            out.append(line)
            after_blank = True
            continue
        depth = indentation(line)
        if held is not None and depth > held[0]:
            if held[1]:
                keep.add(len(out))
            out.append(line)
            after_blank = False
            continue
        held = None
        item = ITEM.match(line)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if after_blank and depth > text and not item:  # a displayed formula
            keep.add(len(out))
            out += [" " * text + ".. code-block:: text", ""]
            keep.add(len(out))
            held = (text, True)
            out.append(line)
        elif after_blank and line.lstrip().startswith(".. "):
            keep.add(len(out))
            held = (depth, True)
            out.append(line)
        elif LABEL.match(line) and following.strip() and indentation(following) > depth:
            held = (depth, False)  # napoleon's section, or a definition
            out.append(line)
        else:
            if item:
                text = len(item.group(0))
            elif after_blank or depth < text:
                text = depth
            out.append(" " * text + line.lstrip() if depth > text else line)
            if line.rstrip().endswith("::"):
                held = (text, True)
        after_blank = False
    lines[:] = out
    return keep


def keep_words(what: str, lines: list[str]) -> None:
    """Put back, in place, the words that napoleon took for a type: the ``:type: X``
    it adds to an attribute's docstring, the ``:rtype: X`` of a ``Returns:`` section."""
    if what in ("attribute", "data", "property") and lines[-2:-1] == [""]:
        if lines[-1].startswith(":type: "):
            words = lines.pop()[len(":type: ") :]
            lines.pop()
            first = next(i for i, line in enumerate(lines) if line.strip())
            lines[first] = f"{words}: {lines[first]}"
    for i, line in enumerate(lines):
        if line.startswith(":rtype: "):
            words = line[len(":rtype: ") :]
            returns = [j for j in range(i) if lines[j].startswith(":returns: ")]
            if returns:
                j = returns[-1]
                lines[j] = f":returns: {words}: {lines[j][len(':returns: ') :]}"
                del lines[i]
            else:
                lines[i] = f":returns: {words}"
            return


def defining_docstring(package: str, name: str, value: object) -> list[str] | None:
    """The docstring after the assignment of ``name`` in the submodule of ``package``
    that defines it (whose ``name`` is ``value`` itself), if any."""
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith(package + ".") or module is None:
            continue
        if getattr(module, name, None) is not value:
            continue
        docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        if ("", name) in docs:
            return list(docs["", name])
    return None


class PackageDocumenter(ModuleDocumenter):
    """A module whose constants may come from its submodules, with their docstrings."""

    def get_module_members(self) -> dict[str, ObjectMember]:
        members = super().get_module_members()
        # the module's analysis, which autodoc caches and reads again to select the
        # documented constants and to find each one's docstring: it learns those of
        # the constants imported from the submodules
        docs = self.analyzer.find_attr_docs() if self.analyzer else {}
        for name, member in members.items():
            if ("", name) not in docs and not callable(member.object):
                doc = defining_docstring(self.modname, name, member.object)
                if doc:
                    docs["", name] = doc
                    members[name] = ObjectMember(
                        name, member.object, docstring="\n".join(doc)
                    )
        return members


def before_napoleon(app, what, name, obj, options, lines) -> None:
    escape(lines, keep=lay_out(lines))


def after_napoleon(app, what, name, obj, options, lines) -> None:
    keep_words(what, lines)


def setup(app):
    sys.path.insert(0, str(ROOT))
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(PackageDocumenter, override=True)
    app.connect("autodoc-process-docstring", before_napoleon, priority=BEFORE_NAPOLEON)
    app.connect("autodoc-process-docstring", after_napoleon, priority=AFTER_NAPOLEON)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
