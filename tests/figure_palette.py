"""The book's palette as drawn: which quantity each artist of a figure draws, in
which colour, recorded while a chapter runs, and the rules the records must keep.

``record(path)`` runs inside a notebook's kernel: from then on every figure the
kernel renders appends one JSON line to ``path`` with the (gid, colour) of each of
its data artists (lines, collections, patches; heatmaps and images excepted).
``problems(records)`` reads them back against ``ccl_helpers.plotting.QUANTITIES``:

- every artist names its quantity (its gid is a key of QUANTITIES, or the sweep's);
- a quantity is drawn in its own colour, so no colour is used for two quantities;
- the colours of one figure are at least ``MIN_COLOR_DISTANCE`` apart (CIE76 ΔE),
  which extends the palette's own spacing to the viridis shades of a sweep.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
from matplotlib.colors import to_hex, to_rgb

from ccl_helpers import plotting

_SRGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])


def lab(colour) -> np.ndarray:
    """CIELAB (L*, a*, b*) of a Matplotlib colour (sRGB, D65 white)."""
    rgb = np.array(to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = _SRGB_TO_XYZ @ linear / _WHITE_D65
    delta = 6 / 29
    f = np.where(xyz > delta**3, np.cbrt(xyz), xyz / (3 * delta**2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def color_distance(a, b) -> float:
    """CIE76 colour difference ΔE between two Matplotlib colours."""
    return float(np.linalg.norm(lab(a) - lab(b)))


def _artist_colour(artist) -> str | None:
    """The colour an artist shows (hex, alpha dropped); None if it shows none."""
    if hasattr(artist, "get_linestyle") and hasattr(artist, "get_marker"):  # a line
        return to_hex(artist.get_color(), keep_alpha=False)
    for colours in (artist.get_facecolor(), artist.get_edgecolor()):
        colours = np.atleast_2d(colours)
        visible = colours[colours[:, 3] > 0] if colours.size else colours
        if len(visible):
            return to_hex(visible[0], keep_alpha=False)
    return None


def drawn(figure) -> list[dict]:
    """The data artists of ``figure``: axes title, label, gid and colour of each."""
    from matplotlib.collections import QuadMesh

    artists = []
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>":
            continue
        children = [*ax.lines, *ax.patches]
        children += [c for c in ax.collections if not isinstance(c, QuadMesh)]
        for artist in children:
            colour = _artist_colour(artist)
            if artist.get_visible() and colour is not None:
                artists.append(
                    {
                        "axes": ax.get_title(),
                        "label": str(artist.get_label()),
                        "gid": artist.get_gid(),
                        "color": colour,
                    }
                )
    return artists


def record(path: str) -> None:
    """Append the artists of every figure rendered from now on to ``path`` (JSON
    lines), by wrapping ``FigureCanvasBase.print_figure``."""
    from matplotlib.backend_bases import FigureCanvasBase

    print_figure = FigureCanvasBase.print_figure

    def print_and_record(canvas, *args, **kwargs):
        with open(path, "a", encoding="utf-8") as out:
            title = canvas.figure.get_suptitle()
            artists = drawn(canvas.figure)
            out.write(json.dumps({"suptitle": title, "artists": artists}) + "\n")
        return print_figure(canvas, *args, **kwargs)

    FigureCanvasBase.print_figure = print_and_record


def read(path: Path) -> list[dict]:
    """The figures recorded in ``path`` by :func:`record`."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def problems(figures: list[dict]) -> list[str]:
    """Every break of the palette's rules in ``figures`` (see the module), as text."""
    found = []
    used_by: dict[str, set[str]] = {}
    for number, figure in enumerate(figures, 1):
        where = f"figure {number} ({figure['suptitle'] or 'no suptitle'})"
        looks = set()
        for artist in figure["artists"]:
            gid, colour = artist["gid"], artist["color"]
            what = f"{where}, axes {artist['axes']!r}, artist {artist['label']!r}"
            if gid != plotting.SWEEP and gid not in plotting.QUANTITIES:
                found.append(f"{what}: gid {gid!r} names no quantity")
                continue
            if gid in plotting.QUANTITIES and colour != plotting.color(gid):
                found.append(f"{what}: {gid} drawn in {colour}, not its own colour")
            used_by.setdefault(colour, set()).add(gid)
            looks.add((gid, colour))
        for (gid_a, a), (gid_b, b) in itertools.combinations(sorted(looks), 2):
            if a != b and color_distance(a, b) < plotting.MIN_COLOR_DISTANCE:
                distance = color_distance(a, b)
                found.append(
                    f"{where}: {gid_a} ({a}) and {gid_b} ({b}) look alike "
                    f"(ΔE {distance:.1f} < {plotting.MIN_COLOR_DISTANCE})"
                )
    for colour, gids in sorted(used_by.items()):
        if len(gids) > 1:
            found.append(f"colour {colour} is used for {sorted(gids)}")
    return found
