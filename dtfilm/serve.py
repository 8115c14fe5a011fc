"""`dtfilm serve`: the renders folder over HTTP on this machine.

Opened from file://, Chromium refuses a page's WebVTT subtitles ("Unsafe attempt to load
URL"), so the gallery shows no captions; over HTTP they load. The standard library's server,
bound to loopback by default.
"""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar


class _Quiet(SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".vtt": "text/vtt",
        ".mp4": "video/mp4",
    }

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(folder: Path, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve `folder` until interrupted; prints the gallery's address."""
    handler = functools.partial(_Quiet, directory=str(folder))
    with ThreadingHTTPServer((host, port), handler) as server:
        shown = host if ":" not in host else f"[{host}]"
        print(f"dtfilm: serving {folder} at http://{shown}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0
