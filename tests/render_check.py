"""Render check: does every page of the book fit its column in a real browser?

Builds the book from the stored notebook outputs (MathJax 3 ships with it), opens each
page of _toc.yml in headless Chromium at a 1400 px wide window,
screenshots it and measures in the DOM whether any code line, printed output,
displayed equation, table or figure is wider than the content column (a figure
wider than the column is shrunk, and its fonts with it).

Usage: python tests/render_check.py [--no-build] [--width 1400]
Needs: ``chromium`` on PATH; ``make render-check`` installs it when missing.
Prints one line per page with counts, one line per overflowing element; writes the
screenshots to _build/render-check/; exits 1 if anything overflows.
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

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "render-check"
HTML = OUT / "book" / "_build" / "html"
# the jupyter-book beside this interpreter (the venv's), else the one on PATH
BESIDE = Path(sys.executable).with_name("jupyter-book")
JUPYTER_BOOK = str(BESIDE) if BESIDE.is_file() else "jupyter-book"
TILE_HEIGHT = 3000  # px of page per screenshot file
KINDS = ("code", "output", "equation", "table", "out-table", "figure")

# Runs in the page once it is rendered. Returns the content column's box, and for
# each element kind the total and every element whose content is wider than the
# column: its scrollable content wider than its box, or its box passing the column;
# for a figure, its natural width beyond its shown width.
MEASURE_JS = r"""
(() => {
  const article = document.querySelector("article.bd-article");
  const style = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft);
  const right = box.right - parseFloat(style.paddingRight);
  const overflow = (el, inner) => {
    const r = (inner || el).getBoundingClientRect();
    return Math.max(0, el.scrollWidth - el.clientWidth, r.right - right, left - r.left);
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
  const result = {column: right - left, kinds: {}};
  for (const [kind, elements] of Object.entries(groups)) {
    const wide = [];
    for (const el of elements) {
      const inner = kind === "equation" ? el.querySelector("mjx-math") : null;
      // a figure wider than the column is shrunk to it, and its fonts with it
      const px = kind === "figure" ? el.naturalWidth - el.clientWidth
        : overflow(el, inner);
      if (px > 1) {
        const where = el.getBoundingClientRect().top + window.scrollY;
        const shown = text[kind](el);
        wide.push({px: Math.round(px), y: Math.round(where), chars: shown.length,
                   text: shown.replace(/\s+/g, " ").trim().slice(0, 60)});
      }
    }
    result.kinds[kind] = {total: elements.length, wide: wide};
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
        """Save the whole page as PNG tiles ``stem-01.png``, ... of TILE_HEIGHT px."""
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


def report(page: str, measured: dict) -> list[str]:
    """The page's summary line, then one line per element wider than the column."""
    kinds = measured["kinds"]
    counts = ", ".join(
        f"{kind} {len(kinds[kind]['wide'])}/{kinds[kind]['total']}" for kind in KINDS
    )
    lines = [f"{page}: column {measured['column']:.0f} px; wider than it: {counts}"]
    for kind in KINDS:
        for wide in kinds[kind]["wide"]:
            length = f"{wide['chars']} chars " if kind in ("code", "output") else ""
            lines.append(
                f"  {page}  {kind:<8}  +{wide['px']:>4} px  at y={wide['y']:<6} "
                f"{length}{wide['text']!r}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-build", action="store_true", help="reuse the build")
    parser.add_argument("--width", type=int, default=1400, help="window width (px)")
    args = parser.parse_args()
    if args.width < 320:
        parser.error(f"--width must be ≥ 320 px, got {args.width}")
    if not args.no_build:
        build()
    for old in OUT.glob("*.png"):
        old.unlink()
    server = serve(HTML)
    browser = Browser(args.width)
    n_wide = 0
    try:
        for name in toc_files():
            browser.open(f"http://127.0.0.1:{server.server_port}/{name}.html")
            browser.screenshots(OUT / name.replace("/", "_"))
            measured = browser.evaluate(MEASURE_JS)
            print(*report(f"{name}.html", measured), sep="\n", flush=True)
            n_wide += sum(len(k["wide"]) for k in measured["kinds"].values())
    finally:
        browser.close()
        server.shutdown()
    print(f"{n_wide} element(s) wider than the column; screenshots in {OUT}")
    return 1 if n_wide else 0


if __name__ == "__main__":
    sys.exit(main())
