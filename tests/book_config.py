"""Write the configuration that builds the book from the stored notebook outputs: a
copy of _config.yml with execution off, its local Sphinx extensions named by absolute
path (Jupyter Book resolves them from the copy's folder).

Usage: python tests/book_config.py <output> (make test: _build/_config_stored.yml)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def stored_config(out: Path) -> Path:
    """Write the stored-outputs configuration to ``out``; returns ``out``."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {
        name: str((ROOT / path).resolve())
        for name, path in sphinx.get("local_extensions", {}).items()
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config))
    return out


if __name__ == "__main__":
    stored_config(Path(sys.argv[1]))
