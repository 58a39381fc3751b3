"""Check that every page listed in _toc.yml was rendered to _build/html/ (run after a
build).

Usage: python tests/check_book_pages.py [BUILD_HTML_DIR]   (default: _build/html)
Exit status 1, with the missing pages listed, if any page is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
