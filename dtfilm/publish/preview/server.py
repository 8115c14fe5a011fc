"""The preview's server and its loop: `dtfilm serve`'s handler (dtfilm.publish.serve) with three
answers of its own, and the main thread drawing the shot again on every save.

The page (assets/preview.html.j2, autoescaped) polls /status.json and shows /frame.png when the
status names a new generation. The frame is written under renders/one/ and read back through
dtfilm.beneath (no link followed, a regular file within its size), as nothing under renders/ is
trusted; nothing else is served, and the server listens on 127.0.0.1 only. Manim draws in the
main thread (it is not thread-safe); the server answers from another."""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where
from dtfilm.publish.preview.shot_frame import StartMemo, shot_facts, shot_frame
from dtfilm.publish.serve import _RendersOnly
from dtfilm.render.one_shot import ONE_FOLDER, check_beat
from dtfilm.render.sidecars import write_png
from dtfilm.render.watch import POLL_SECONDS, _snapshot
from dtfilm.storyboard import find_root, load_chapter

HOST = "127.0.0.1"  # the preview is for the person editing, on this machine only
ASSETS = Path(__file__).parent / "assets"
MAX_FRAME_BYTES = 8 << 20  # a preview frame (854x480 PNG) is far smaller; more is not ours


@dataclass
class PreviewState:
    """What the page is told: the generation (one more per drawing), the shot, its facts, the
    last error; changed by the drawing thread, read by the server's, under `lock`."""

    shot: str
    generation: int = 0
    frame: str | None = None  # the frame's name under renders/one/, once one is drawn
    error: str | None = None
    drawing: bool = False
    draw_seconds: float | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    memo: StartMemo | None = None  # the state at the shot's start from the last drawing
    lock: threading.Lock = field(default_factory=threading.Lock)

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "shot": self.shot,
                "generation": self.generation,
                "frame": f"/frame.png?g={self.generation}" if self.frame else None,
                "error": self.error,
                "drawing": self.drawing,
                "draw_seconds": self.draw_seconds,
                **self.facts,
            }


def page_html(shot: str) -> str:
    env = Environment(loader=FileSystemLoader(ASSETS), autoescape=select_autoescape(["html", "j2"]))
    return env.get_template("preview.html.j2").render(shot=shot)


def handler_for(renders: Path, state: PreviewState, page: str) -> type[_RendersOnly]:
    """serve's handler (renders/ only, no listings, quiet), answering the page, its status and
    its frame, and nothing else."""
    root = renders.resolve()

    class _Preview(_RendersOnly):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self) -> None:
            route = self.path.split("?", 1)[0]
            if route in ("/", "/index.html"):
                self._answer(page.encode(), "text/html; charset=utf-8")
            elif route == "/status.json":
                self._answer(json.dumps(state.as_json()).encode(), "application/json")
            elif route == "/frame.png" and state.frame is not None:
                try:
                    data = beneath.read(root, f"{ONE_FOLDER}/{state.frame}", MAX_FRAME_BYTES)
                except OSError:  # (a link, a FIFO or a file too large: not served)
                    self.send_error(HTTPStatus.NOT_FOUND, "File not found")
                    return
                self._answer(data, "image/png")
            else:
                self.send_error(HTTPStatus.NOT_FOUND, "File not found")

        def do_HEAD(self) -> None:
            self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)

        def _answer(self, body: bytes, content_type: str) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

    return _Preview


def _failed(state: PreviewState, line: str) -> None:
    with state.lock:
        state.error, state.drawing = line, False
        state.generation += 1


def _draw_once(
    state: PreviewState, chapter_id: str, beat: str | None, overrides: dict[str, Any], theme: str | None, renders: Path
) -> None:
    """Load the chapter as saved and draw the shot's frame; a DtfilmError is the page's error
    (the frame before it stays)."""
    started = time.perf_counter()
    with state.lock:
        state.drawing = True
    try:
        chapter = load_chapter(chapter_id, overrides)
        chosen = beat or chapter.shots[0].beat
        check_beat(chapter, chosen, f"{chapter_id}:{chosen}")
        facts = shot_facts(chapter, chosen)
        image = shot_frame(chapter, chosen, theme, renders, state.memo)
        name = f"live-{chapter.id}-{chosen}.png"
        write_png(image, renders / ONE_FOLDER / name)
    except DtfilmError as error:
        print(f"dtfilm: error: {error.line()}", file=sys.stderr, flush=True)
        _failed(state, error.line())
        return
    except Exception as error:  # a fault in dtfilm's drawing, not the save: the preview keeps on
        traceback.print_exc()
        _failed(state, f"{chapter_id}: dtfilm failed drawing it ({type(error).__name__}; the terminal has the trace)")
        return
    seconds = time.perf_counter() - started
    with state.lock:
        state.shot, state.frame, state.facts, state.error = f"{chapter.id}:{chosen}", name, facts, None
        state.drawing, state.draw_seconds = False, round(seconds, 3)
        state.generation += 1
    print(f"dtfilm: {chapter.id}:{chosen} drawn in {seconds:.1f} s", flush=True)


def preview(
    target: str,
    overrides: dict[str, Any],
    theme: str | None,
    port: int,
    out_dir: Path | None = None,
    max_rounds: int | None = None,
) -> int:
    """Serve the preview page on 127.0.0.1:`port` and draw `target` (CHAPTER or CHAPTER:SHOT)
    again whenever storyboard/ changes, until Ctrl-C (or `max_rounds` drawings)."""
    chapter_id, _, beat = target.partition(":")
    if not chapter_id or (":" in target and not beat):
        raise DtfilmError(
            f"{target!r} names no shot; valid: CHAPTER or CHAPTER:SHOT, such as dp:ring", Where(flag="preview")
        )
    root = find_root()
    renders = out_dir or root / "renders"
    beneath.check_renders_folder(
        renders, given=out_dir is not None, may_make=True, writes=True, where=Where(str(renders))
    )
    beneath.mark(renders)
    beneath.mkdirs(renders, ONE_FOLDER)
    state = PreviewState(target, memo=StartMemo())
    folder = root / "storyboard"
    server = ThreadingHTTPServer((HOST, port), handler_for(renders, state, page_html(target)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"dtfilm: previewing {target} at http://{HOST}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    rounds, seen = 0, None
    try:
        while max_rounds is None or rounds < max_rounds:
            current = _snapshot(folder)
            if current != seen:
                seen, rounds = current, rounds + 1
                _draw_once(state, chapter_id, beat or None, overrides, theme, renders)
                continue
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return 0
