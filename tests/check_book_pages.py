"""Check the HTML build (run after it): every page listed in _toc.yml was rendered to
_build/html/, and the book reads offline: no page loads a script from elsewhere (links
may point anywhere), and every page with formulas loads MathJax from the book's own
static files.

Usage: python tests/check_book_pages.py [BUILD_HTML_DIR]   (default: _build/html)
Exit status 1, with the missing pages or remote scripts listed, if any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPT_SOURCE = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.IGNORECASE)
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
MATHJAX = "_static/mathjax/tex-mml-chtml.js"


def toc_files() -> list[str]:
    """Every file listed in _toc.yml (root, chapters and sections), without
    extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def offline_problems(html: Path) -> list[str]:
    """Every page's scripts from another host (any scheme, or protocol-relative), and
    each page with formulas that does not load MathJax by a relative path from the
    book's static files."""
    problems = []
    for page in sorted(html.rglob("*.html")):
        name, text = page.relative_to(html), page.read_text(errors="replace")
        sources = SCRIPT_SOURCE.findall(text)
        problems += [f"{name}: remote script {s}" for s in sources if REMOTE.match(s)]
        paths = [s.split("?")[0] for s in sources if not REMOTE.match(s)]
        local = any(path.endswith(MATHJAX) for path in paths)
        if 'class="math' in text and not local:
            problems.append(f"{name}: formulas, but no {MATHJAX}")
    return problems


def main() -> int:
    html = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    pages = [html / "index.html"] + [html / f"{name}.html" for name in toc_files()]
    missing = [
        str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
        for p in pages
        if not p.is_file()
    ]
    if missing:
        print(
            "Pages listed in _toc.yml but missing from the HTML build:",
            *missing,
            sep="\n  ",
        )
        return 1
    print(f"All {len(pages)} pages of _toc.yml are in {html}.")
    problems = offline_problems(html)
    if problems:
        print("The book does not read offline:", *problems, sep="\n  ")
        return 1
    n_pages = len(list(html.rglob("*.html")))
    print(
        f"No remote scripts in its {n_pages} HTML files; each page with formulas "
        f"loads {MATHJAX}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
