"""Render check: does every page of the book read well in a real browser, on a desktop
and on a phone?

Builds the book from the stored notebook outputs (MathJax 4 ships with it), opens each
page of _toc.yml in headless Chromium at each window width (1,400 and 412 px),
screenshots it and measures in the DOM.

- At every width the page never scrolls sideways: code, printed output, tables and
  figures wider than the content column scroll inside their own box; a displayed
  equation wider than the column breaks into lines (it must fit); a figure's smallest
  font (``plotting.MIN_FONT_PT`` at ``plotting.DPI``) is at least 9 px on screen.
- At a desktop width no figure is shrunk to the column (its fonts would shrink with
  it).
- At a phone width (below 1,000 px) a verdict table has at most 4 columns.

Usage: python tests/render_check.py [--no-build] [--widths 1400 412]
Needs: ``chromium`` on PATH; ``make render-check`` installs it when missing.
Prints one line per page and width with counts, one line per problem; writes the
screenshots to _build/render-check/<width>/; exits 1 if there is any problem.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import websocket
from book_config import stored_config
from check_book_pages import toc_files

from ccl_helpers import plotting

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "render-check"
HTML = OUT / "book" / "_build" / "html"
# the jupyter-book beside this interpreter (the venv's), else the one on PATH
BESIDE = Path(sys.executable).with_name("jupyter-book")
JUPYTER_BOOK = str(BESIDE) if BESIDE.is_file() else "jupyter-book"
TILE_HEIGHT = 3000  # px of page per screenshot file
KINDS = ("code", "output", "equation", "table", "out-table", "figure")

# Runs in the page once it is rendered. Returns the content column's width, whether
# the page scrolls sideways, and for each element kind every element: how far its
# content is wider than its box ("over"), how far its box passes the column ("past"),
# whether it or a box around it inside the column scrolls sideways ("scrolls"), for a
# figure its shown and natural widths, for a table its number of columns and whether
# it is a verdict table.
MEASURE_JS = r"""
(() => {
  const article = document.querySelector("article.bd-article");
  const style = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft);
  const right = box.right - parseFloat(style.paddingRight);
  const past = (el) => {
    const r = el.getBoundingClientRect();
    return Math.max(0, r.right - right, left - r.left);
  };
  const scrolls = (el) => {
    for (let node = el; node && node !== article; node = node.parentElement) {
      const x = getComputedStyle(node).overflowX;
      if ((x === "auto" || x === "scroll") && past(node) <= 1) { return true; }
    }
    return false;
  };
  const longestLine = (el) => el.textContent.split("\n")
    .reduce((a, b) => (b.length > a.length ? b : a), "");
  const tex = (el) => {
    try {
      return MathJax.startup.document.getMathItemsWithin(el)[0].math;
    } catch (e) {
      return el.textContent;
    }
  };
  const section = (el) => {
    const heading = el.closest("section").querySelector("h1, h2, h3");
    return heading ? heading.textContent.replace("#", "") : "";
  };
  const groups = {
    code: [...article.querySelectorAll("pre")]
      .filter((el) => !el.closest(".cell_output")),
    output: [...article.querySelectorAll(".cell_output pre")],
    equation: [...article.querySelectorAll('mjx-container[display="true"]')],
    table: [...article.querySelectorAll("table")]
      .filter((el) => !el.closest(".cell_output")),
    "out-table": [...article.querySelectorAll(".cell_output table")],
    figure: [...article.querySelectorAll("img")],
  };
  const text = {
    code: longestLine, output: longestLine, equation: tex,
    table: (el) => el.innerText,
    "out-table": (el) => el.innerText,
    figure: (el) => `${el.naturalWidth} px image in "${section(el)}"`,
  };
  const headers = (el) => [...(el.querySelector("tr") || {cells: []}).cells]
    .map((cell) => cell.innerText.trim().toLowerCase());
  const result = {
    column: right - left,
    page_over: document.documentElement.scrollWidth - window.innerWidth,
    kinds: {},
  };
  for (const [kind, elements] of Object.entries(groups)) {
    result.kinds[kind] = elements.map((el) => {
      const inner = kind === "equation" ? el.querySelector("mjx-math") : el;
      const shown = text[kind](el);
      const row = {
        over: Math.round(Math.max(0, el.scrollWidth - el.clientWidth,
          inner.getBoundingClientRect().width - el.clientWidth)),
        past: Math.round(past(el)),
        scrolls: scrolls(el),
        y: Math.round(el.getBoundingClientRect().top + window.scrollY),
        chars: shown.length,
        text: shown.replace(/\s+/g, " ").trim().slice(0, 60),
      };
      if (kind === "figure") {
        row.shown = el.clientWidth;
        row.natural = el.naturalWidth;
      }
      if (kind.endsWith("table")) {
        row.columns = headers(el).length;
        row.verdicts = headers(el).includes("verdict");
      }
      return row;
    });
  }
  return result;
})()
"""

# Resolves once MathJax has typeset the page, the web fonts and every image loaded.
READY_JS = r"""
(async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  await document.fonts.ready;
  await Promise.all([...document.images].map((img) => img.complete ? null :
    new Promise((done) => { img.onload = img.onerror = done; })));
  return true;
})()
"""


def build() -> None:
    """Build the book from the stored outputs into OUT/book (MathJax shipped with it,
    book/_ext/offline_mathjax.py)."""
    config = stored_config(OUT / "_config.yml")
    subprocess.run(
        [JUPYTER_BOOK, "build", str(ROOT), "--config", str(config)]
        + ["--path-output", str(OUT / "book"), "--all", "-n", "--keep-going"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    """Serve ``directory`` on a free local port in a background thread."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    """Headless Chromium driven through its DevTools protocol (one page)."""

    def __init__(self, width: int):
        self.profile = tempfile.mkdtemp(prefix="render-check-")
        flags = ["--headless=new", "--disable-gpu", "--hide-scrollbars"]
        flags += ["--remote-debugging-port=0", "--remote-allow-origins=*"]
        flags += [f"--user-data-dir={self.profile}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")
        self.process = subprocess.Popen(
            ["chromium", *flags, "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        for _ in range(300):
            if port_file.is_file() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as reply:
            page = next(t for t in json.load(reply) if t["type"] == "page")
        self.socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=120
        )
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=1000,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.width = width

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result (events are kept)."""
        ident = next(self.ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (awaited if it is a promise)."""
        result = self.call(
            "Runtime.evaluate",
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"]["value"]

    def open(self, url: str) -> None:
        """Open ``url``; wait until it is loaded, typeset and its images shown."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(json.loads(self.socket.recv()))
        self.evaluate(READY_JS)

    def screenshots(self, stem: Path) -> list[Path]:
        """Save the whole page as PNG tiles of TILE_HEIGHT px, named after ``stem``
        with -01, -02, … appended."""
        height = self.evaluate("document.documentElement.scrollHeight")
        paths = []
        for number, top in enumerate(range(0, height, TILE_HEIGHT), start=1):
            clip = {"x": 0, "y": top, "width": self.width, "scale": 1}
            clip["height"] = min(TILE_HEIGHT, height - top)
            shot = self.call(
                "Page.captureScreenshot",
                format="png",
                clip=clip,
                captureBeyondViewport=True,
            )
            path = stem.with_name(f"{stem.name}-{number:02d}.png")
            path.write_bytes(base64.b64decode(shot["data"]))
            paths.append(path)
        return paths

    def close(self) -> None:
        self.socket.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


PHONE = 1000
"""Windows narrower than this many px are read as phones."""
MIN_FONT_PX = plotting.MIN_FONT_PT * plotting.DPI / 72
"""The smallest font of a figure, in its image's px."""
MIN_SHOWN_FONT_PX = 9.0
MAX_VERDICT_COLUMNS = 4


def problems(kind: str, row: dict, phone: bool) -> list[str]:
    """What is wrong with one measured element: content wider than the column that
    does not scroll inside its own box; a displayed equation wider than the column
    (it must break into lines); a figure shrunk to the column at a desktop width, or
    with fonts under 9 px on screen; on a phone, a verdict table of more than 4
    columns."""
    found = []
    wider = max(row["over"], row["past"])
    if kind == "figure":
        shown_font = MIN_FONT_PX * row["shown"] / max(row["natural"], 1)
        if not phone and row["natural"] - row["shown"] > 1:
            found.append(f"shrunk by {row['natural'] - row['shown']} px")
        if shown_font < MIN_SHOWN_FONT_PX:
            found.append(f"fonts {shown_font:.1f} px on screen")
        wider = row["past"]
    if kind == "equation" and wider > 1:
        found.append(f"+{wider} px, not broken into lines")
    elif wider > 1 and not row["scrolls"]:
        found.append(f"+{wider} px, no scroll box")
    if phone and row.get("verdicts") and row["columns"] > MAX_VERDICT_COLUMNS:
        found.append(f"verdict table of {row['columns']} columns")
    return found


def report(page: str, measured: dict, phone: bool) -> tuple[list[str], int]:
    """The page's summary line, then one line per problem; and the number of
    problems."""
    kinds = measured["kinds"]
    lines, n_problems, counts = [], 0, []
    for kind in KINDS:
        rows = kinds[kind]
        wide = sum(max(r["over"], r["past"]) > 1 for r in rows)
        counts.append(f"{kind} {wide}/{len(rows)}")
        for row in rows:
            for problem in problems(kind, row, phone):
                n_problems += 1
                length = f"{row['chars']} chars " if kind in ("code", "output") else ""
                lines.append(
                    f"  {page}  {kind:<9} {problem:<34} at y={row['y']:<6} "
                    f"{length}{row['text']!r}"
                )
    if measured["page_over"] > 1:
        n_problems += 1
        lines.append(
            f"  {page}  the page scrolls sideways by {measured['page_over']} px"
        )
    head = (
        f"{page}: column {measured['column']:.0f} px; wider than it (each "
        "scrolling in its own box): " + ", ".join(counts)
    )
    return [head, *lines], n_problems


def check_width(width: int, port: int) -> int:
    """Every page at one window width: prints the report, writes the screenshots to
    OUT/<width>/; returns the number of problems."""
    folder = OUT / str(width)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    browser = Browser(width)
    n_problems = 0
    try:
        for name in toc_files():
            browser.open(f"http://127.0.0.1:{port}/{name}.html")
            browser.screenshots(folder / name.replace("/", "_"))
            measured = browser.evaluate(MEASURE_JS)
            lines, found = report(f"{name}.html", measured, width < PHONE)
            print(*lines, sep="\n", flush=True)
            n_problems += found
    finally:
        browser.close()
    print(f"{width} px: {n_problems} problem(s); screenshots in {folder}")
    return n_problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-build", action="store_true", help="reuse the build")
    parser.add_argument(
        "--widths", type=int, nargs="+", default=[1400, 412], help="window widths (px)"
    )
    args = parser.parse_args()
    if min(args.widths) < 320:
        parser.error(f"--widths must be ≥ 320 px, got {args.widths}")
    if not args.no_build:
        build()
    server = serve(HTML)
    try:
        n_problems = sum(
            check_width(width, server.server_port) for width in args.widths
        )
    finally:
        server.shutdown()
    return 1 if n_problems else 0


if __name__ == "__main__":
    sys.exit(main())
