"""The command ``python -m ccl_helpers.data fetch``: make a data set available.

``python -m ccl_helpers.data fetch [--dataset fashion-mnist|mnist] [--root FOLDER]``:
make a data set's files available (found where
:func:`ccl_helpers.data.fashion_mnist` looks, else installed or downloaded) and print
where they are; exit status 1, with the ways to get them, when that fails (or with the
error, for a --root that is no folder, a found file that is truncated or corrupt, or a
CCL_DATA_MIRROR that is no URL)."""

from __future__ import annotations

import argparse
import sys

from ._fetch import DEBIAN_FASHION_MNIST, SOURCES, _fetch_files

FETCH_HELP = f"""Find a data set's files and print the folder that holds them. Where
they are missing: as root on a machine with apt-get, install the Debian package
dataset-fashion-mnist (FashionMNIST only, into {DEBIAN_FASHION_MNIST}), unless the
CCL_DATA_MIRROR variable names a mirror; otherwise download the four files into the
download cache, from the URL in CCL_DATA_MIRROR if set, then the official mirrors, and
check the MD5 sums of their contents. Folders searched, in order: --root, the
CCL_DATA_DIR variable, {DEBIAN_FASHION_MNIST} (or the CCL_DEBIAN_DATA_DIR variable),
the download cache; the files of the folder found are checked against the same MD5
sums. Exit status 1, with the ways to get the files, when none works, or naming the
file when a found one is truncated or corrupt."""
"""The fetch command's description in plain words (``--help``)."""


def main(argv: list[str] | None = None) -> int:
    """The command line; returns its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m ccl_helpers.data",
        description="The data sets of the book: make them available.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_parser = commands.add_parser(
        "fetch",
        help="make a data set's files available and print where they are",
        description=FETCH_HELP,
    )
    fetch_parser.add_argument(
        "--dataset",
        choices=sorted(SOURCES),
        default="fashion-mnist",
        help="the data set (default: fashion-mnist)",
    )
    fetch_parser.add_argument(
        "--root",
        metavar="FOLDER",
        help="an existing folder searched first (default: none)",
    )
    options = parser.parse_args(argv)
    try:
        folder = _fetch_files(options.dataset, options.root)
    except ValueError as error:  # not found, a bad file, --root or CCL_DATA_MIRROR
        print(error, file=sys.stderr)
        return 1
    print(f"{SOURCES[options.dataset].title}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
