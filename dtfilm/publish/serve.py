"""`dtfilm serve`: the renders folder over HTTP on this machine.

Opened from file://, Chromium refuses a page's WebVTT subtitles ("Unsafe attempt to load
URL"), so the gallery shows no captions; over HTTP they load. The standard library's server,
bound to loopback by default. Only the folder's files are served: no folder listings, and no
link followed out of it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from dtfilm.inside import within


class _RendersOnly(SimpleHTTPRequestHandler):
    """Files of the renders folder and nothing else: a path whose links lead outside it is not
    found, and a folder is served by its index.html or not at all (no listings)."""

    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".vtt": "text/vtt",
        ".mp4": "video/mp4",
    }

    def translate_path(self, path: str) -> str:
        translated = super().translate_path(path)
        if not within(Path(self.directory), Path(translated)):
            return str(Path(self.directory) / ".dtfilm-not-served")  # (a 404, as for any missing file)
        return translated

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")

    def log_message(self, format: str, *args: object) -> None:
        pass


def handler_for(folder: Path) -> Callable[..., _RendersOnly]:
    """A request handler serving `folder`'s files only."""
    return functools.partial(_RendersOnly, directory=str(folder.resolve()))


def serve(folder: Path, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve `folder` until interrupted; prints the gallery's address."""
    with ThreadingHTTPServer((host, port), handler_for(folder)) as server:
        shown = host if ":" not in host else f"[{host}]"
        print(f"dtfilm: serving {folder} at http://{shown}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0
