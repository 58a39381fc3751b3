"""A Sphinx extension for the API reference: the package's docstrings write shapes as
plain text, ``x (n, *input_shape)``, and conditional expectations as ``E_{T|y}``;
reST would read the ``*`` as emphasis and the ``|`` as a substitution. On
``autodoc-process-docstring`` (before napoleon) both are escaped, so the docstrings
stay plain text for ``help()`` and render as written."""

from __future__ import annotations

import re

SHAPE_STAR = re.compile(r"(?<![*\w\\])\*(?=(?:input_shape|input|shape|S)\b)")
"""A ``*`` that unpacks a shape: ``*input``, ``*input_shape``, ``*shape``, ``*S``."""
BAR = re.compile(r"(?<![|\\`])\|(?![|`])")
"""A single ``|`` outside literals' ``||``."""


def escape(lines: list[str]) -> None:
    """Escape, in place, the shape stars and the bars of a docstring's lines."""
    for i, line in enumerate(lines):
        if "``" in line:  # literals keep their text
            parts = line.split("``")
            parts[::2] = [BAR.sub(r"\\|", SHAPE_STAR.sub(r"\\*", p)) for p in parts[::2]]
            lines[i] = "``".join(parts)
        else:
            lines[i] = BAR.sub(r"\\|", SHAPE_STAR.sub(r"\\*", line))


def process(app, what, name, obj, options, lines) -> None:
    escape(lines)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("autodoc-process-docstring", process, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
