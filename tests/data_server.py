"""A local data mirror for the download tests: a folder served over HTTP on 127.0.0.1
at a free port, in a thread, every request recorded (``from data_server import
serve``; used by test_data_files.py and test_colab.py)."""

from __future__ import annotations

import contextlib
import http.server
import os
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def serve(folder: str | os.PathLike) -> Iterator[tuple[str, list[str]]]:
    """Serve ``folder`` → (its base URL, ending in "/"; the list of the paths requested
    with GET, in order, filled while the server runs). Nothing is logged."""
    requested: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

        def log_message(self, format, *args):  # quiet: the requests are recorded
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
