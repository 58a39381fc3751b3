"""``python -m ccl_helpers.data fetch [--dataset fashion-mnist|mnist] [--root FOLDER]``:
make a data set's files available (see :func:`ccl_helpers.data.fetch`) and print
where they are; exit status 1, with the ways to get them, when that fails."""

from __future__ import annotations

import argparse
import sys

from ._fetch import SOURCES, fetch
from ._files import DataNotFoundError


def main(argv: list[str] | None = None) -> int:
    """The command line; returns its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m ccl_helpers.data", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_parser = commands.add_parser("fetch", help="make a data set available")
    fetch_parser.add_argument(
        "--dataset", choices=sorted(SOURCES), default="fashion-mnist"
    )
    fetch_parser.add_argument("--root", help="a folder searched first")
    options = parser.parse_args(argv)
    try:
        folder = fetch(options.dataset, options.root)
    except DataNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{SOURCES[options.dataset].title}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
