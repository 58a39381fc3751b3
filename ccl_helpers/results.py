"""Results stored as data: ``results/paper/<chapter>.json`` and the chapters' records.

A chapter run at ``CCL_SCALE=paper`` (``make paper``, on a GPU) saves its key numbers
with :func:`save_paper_results`; at every scale it reads them back with
:func:`load_paper_results` and plots them beside its live run, saying where they came
from (:func:`provenance_line`).

A file holds ``{"chapter", "provenance", "numbers"}``. ``provenance``: the command,
the git commit (and whether the tree had uncommitted changes), the device, the UTC
date, the wall time, the torch and Python versions and the scale. The wall time runs
from ``started`` when the chapter passes it, else from the import of this module,
which a chapter's first cell does (``import ccl_helpers``). ``CCL_COMMIT``, where set,
names the commit (a copy of the tree sent to another machine, whose repository, if any,
is not that commit's) and the dirty flag is None; ``CCL_PAPER_COMMAND`` the command.

The folder: ``CCL_RESULTS_DIR`` if set; else ``results/paper`` in the book's root
(the package's parent folder, when it holds ``_toc.yml``); else ``results/paper``
under the working directory.

A chapter's record of its ``standard`` or ``smoke`` run (its verdicts and trained
numbers, :class:`ccl_helpers.verdicts.Verdicts`) goes to :func:`records_dir`:
``CCL_RECORDS_DIR`` if set; else ``results/standard`` (committed: the stored outputs'
numbers) or ``_build/results/smoke`` in the book's root, or under the working directory
where the package is installed without the book. At ``paper`` it goes to
``records/`` inside the results folder, beside the chapter's numbers, not over them.
A missing folder is created by the first record; either variable naming a file raises
ValueError.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ._checks import check_frame
from .runtime import device, scale

__all__ = [
    "CHAPTER_PATTERN",
    "beside_stored",
    "chapter_path",
    "jsonable",
    "load_paper_results",
    "provenance_line",
    "records_dir",
    "save_paper_results",
    "write_json",
]

_IMPORTED_AT = time.time()
"""Time of this module's import: the default start of a chapter's wall time."""

CHAPTER_PATTERN = re.compile(r"\d\d_[a-z0-9_]+")
"""A chapter's name, as its notebook's: two digits, "_", a lower-case topic."""

_BOOK_ROOT = Path(__file__).resolve().parent.parent


def _root() -> Path:
    return _BOOK_ROOT if (_BOOK_ROOT / "_toc.yml").is_file() else Path.cwd()


def _folder_of(variable: str) -> Path | None:
    """The folder the environment variable ``variable`` names (created by the first
    record if missing); None if unset or blank; ValueError naming the variable if it
    names something that is no folder (a file)."""
    if not os.environ.get(variable):
        return None
    folder = Path(os.environ[variable])
    if folder.exists() and not folder.is_dir():
        raise ValueError(
            f"{variable} must name a folder (an existing one, or a missing one that "
            f"the first record creates), got the file {str(folder)!r}"
        )
    return folder


def _results_dir() -> Path:
    """The folder of the paper-scale results (see the module's docstring)."""
    folder = _folder_of("CCL_RESULTS_DIR")
    return _root() / "results" / "paper" if folder is None else folder


def records_dir() -> Path:
    """The folder of the chapters' records at the current scale (module docstring):
    at ``paper``, ``records/`` in the folder of the paper-scale results."""
    if scale() == "paper":
        return _results_dir() / "records"
    folder = _folder_of("CCL_RECORDS_DIR")
    if folder is not None:
        return folder
    if scale() == "standard":
        return _root() / "results" / "standard"
    return _root() / "_build" / "results" / scale()


def _check_chapter(name: str, value) -> str:
    """``value`` if it is a chapter's name (:data:`CHAPTER_PATTERN`); else
    ``ValueError`` naming ``name``."""
    if not isinstance(value, str) or not CHAPTER_PATTERN.fullmatch(value):
        raise ValueError(
            f"{name} must be a chapter's name such as '02_multiple_negatives' "
            f"(two digits, '_', lower-case letters, digits or '_'), got {value!r}"
        )
    return value


def _check_past_time(name: str, value) -> float:
    """``value`` if it is a past ``time.time()``, a real number (not a bool) not after
    now; else ``ValueError`` naming ``name``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value <= time.time()
    ):
        raise ValueError(f"{name} must be a past time.time(), got {value!r}")
    return value


def chapter_path(chapter: str, folder: Path | None = None) -> Path:
    """``<folder>/<chapter>.json`` (folder: the paper-scale results' folder, see the
    module's docstring), after checking that ``chapter`` is a chapter's name."""
    _check_chapter("chapter", chapter)
    return (_results_dir() if folder is None else Path(folder)) / f"{chapter}.json"


def write_json(path: Path, record: dict) -> Path:
    """Write the JSON data ``record`` (a dict, as :func:`jsonable` makes it) to
    ``path`` (atomically, folders made)."""
    if not isinstance(record, dict):
        raise ValueError(f"record must be a dict, got {type(record).__name__}")
    try:
        text = json.dumps(record, indent=1, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"record must be JSON data without NaN or inf (pass it through "
            f"jsonable): {error}"
        ) from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(text)
    os.replace(partial, path)
    return path


def jsonable(value, where: str):
    """``value`` as JSON data: tensors, arrays and NumPy scalars as lists and
    numbers, DataFrames as lists of records, Series as dicts; NaN as None."""
    if isinstance(value, pd.DataFrame):
        value = value.to_dict("records")
    elif isinstance(value, pd.Series):
        value = value.to_dict()
    elif isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    elif isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    if isinstance(value, dict):
        return {
            _key(key, where): jsonable(item, f"{where}[{key!r}]")
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [jsonable(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            raise ValueError(f"{where} must be finite or NaN, got {value}")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise ValueError(
        f"{where} must be JSON data (numbers, strings, lists, dicts, tensors, arrays, "
        f"DataFrames), got {type(value).__name__}"
    )


def _key(key, where: str) -> str:
    if isinstance(key, (str, int, np.integer)) and not isinstance(key, bool):
        return str(key)
    raise ValueError(f"{where} must have str or int keys, got {key!r}")


def _git(*args: str) -> str | None:
    """Output of ``git args`` in the book's root, None where git or the repository
    is missing."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=_BOOK_ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _device_name() -> str:
    here = device()
    if here.type == "cuda":
        return torch.cuda.get_device_name(here)
    return f"{here.type} ({platform.machine()}, {os.cpu_count()} cores)"


def _provenance(started: float | None = None) -> dict:
    """Where and how the numbers are computed now: command, commit, dirty, device,
    date (UTC, ISO 8601), wall_time_s (since ``started``, a ``time.time()``, default
    this module's import), torch, python, scale. ``CCL_COMMIT``, where set, names the
    commit (a copy of the tree sent to another machine, whose repository, if any, is
    not that commit's) and dirty is None; else git's HEAD, else "unknown"."""
    named = os.environ.get("CCL_COMMIT")
    status = None if named else _git("status", "--porcelain", "--untracked-files=no")
    return {
        "command": os.environ.get("CCL_PAPER_COMMAND") or shlex.join(sys.argv),
        "commit": named or _git("rev-parse", "HEAD") or "unknown",
        "dirty": None if status is None else bool(status),
        "device": _device_name(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(
            time.time() - (_IMPORTED_AT if started is None else started), 1
        ),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "scale": scale(),
    }


def save_paper_results(
    chapter: str, numbers: dict, *, started: float | None = None
) -> Path:
    """Write ``numbers`` with their provenance (see the module's docstring) to
    ``<results folder>/<chapter>.json`` (replacing the file atomically); only at
    ``CCL_SCALE=paper``.

    Args:
        chapter: the chapter's name, e.g. ``"02_multiple_negatives"``.
        numbers: a dict with str keys of JSON data, tensors, arrays, NumPy scalars,
            DataFrames (stored as lists of records) or Series; NaN is stored as null.
        started: ``time.time()`` at the chapter's start (default: this module's
            import).
    Returns: the path written.
    """
    _check_chapter("chapter", chapter)
    if started is not None:
        _check_past_time("started", started)
    path = _results_dir() / f"{chapter}.json"
    if scale() != "paper":
        raise ValueError(
            f"CCL_SCALE must be 'paper' to save paper-scale results, got {scale()!r}"
        )
    if not isinstance(numbers, dict):
        raise ValueError(f"numbers must be a dict, got {type(numbers).__name__}")
    record = {
        "chapter": chapter,
        "provenance": _provenance(started),
        "numbers": jsonable(numbers, "numbers"),
    }
    return write_json(path, record)


def load_paper_results(chapter: str) -> dict | None:
    """The record that :func:`save_paper_results` wrote for ``chapter`` (keys
    ``chapter``, ``provenance``, ``numbers``; DataFrames come back as lists of
    records: ``pd.DataFrame(records)``), or None when there is no file.

    Raises: ValueError when the file is not such a record.
    """
    _check_chapter("chapter", chapter)
    path = _results_dir() / f"{chapter}.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if (
        not isinstance(record, dict)
        or record.get("chapter") != chapter
        or not isinstance(record.get("provenance"), dict)
        or not isinstance(record.get("numbers"), dict)
    ):
        raise ValueError(
            f"{path} must hold a dict with 'chapter' = {chapter!r}, and 'provenance' "
            f"and 'numbers' dicts"
        )
    return record


def provenance_line(record: dict) -> str:
    """One sentence that says where a loaded record's numbers came from, e.g. "paper
    scale, NVIDIA H100 80GB HBM3, 2026-11-23, commit 1a2b3c4, 12.5 min"."""
    try:
        origin = record["provenance"]
        when = str(origin["date"])[:10]
        commit = str(origin["commit"])[:7] + (" (modified)" if origin["dirty"] else "")
        minutes = float(origin["wall_time_s"]) / 60
        return (
            f"{origin['scale']} scale, {origin['device']}, {when}, commit {commit}, "
            f"{minutes:.1f} min"
        )
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            "record must be a record of load_paper_results (a 'provenance' dict with "
            "scale, device, date, commit, dirty and wall_time_s)"
        ) from None


def beside_stored(
    live: pd.DataFrame, stored, by: Sequence[str], columns: Sequence[str]
) -> pd.DataFrame:
    """The means of ``columns`` over the rows of each group ``by``, for the live run
    and for a stored paper-scale run, side by side.

    Args:
        live: the live run, one row per seed (and group).
        stored: the same frame as saved by :func:`save_paper_results` and read back by
            :func:`load_paper_results` (a list of records) or a DataFrame.
        by: the grouping columns, e.g. ``["kappa_m"]``.
        columns: the quantities to average.

    Returns:
        One row per group; columns (scale, quantity) with scale "this run" and
        "paper", and the number of seeds of each as ("this run", "n") and
        ("paper", "n").
    """
    check_frame("live", live)
    if isinstance(stored, list) and all(isinstance(row, dict) for row in stored):
        stored = pd.DataFrame(stored)
    if not isinstance(stored, pd.DataFrame):
        raise ValueError(
            "stored must be a DataFrame or a list of records, got "
            f"{type(stored).__name__}"
        )
    check_frame("stored", stored)
    for name, names in (("by", by), ("columns", columns)):
        if isinstance(names, str) or not all(isinstance(c, str) for c in names):
            raise ValueError(f"{name} must be a list of column names, got {names!r}")
        missing = [c for c in names if c not in live or c not in stored]
        if not names or missing:
            raise ValueError(
                f"{name} must name columns of both live and stored, got {list(names)}"
            )
    by, columns = list(by), list(columns)
    return pd.concat(
        {
            label: frame.groupby(by)[columns].mean().assign(n=frame.groupby(by).size())
            for label, frame in (("this run", live), ("paper", stored))
        },
        axis=1,
    )
