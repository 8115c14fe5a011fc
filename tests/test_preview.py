"""`dtfilm preview`: a save of the storyboard reaches the page as a new frame, in a real browser
(headless Chromium), with the new caption's words beside it; a save that does not load shows its
one-line error, escaped, and keeps the frame; only the page, its status and its frame are served."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser import Browser
from tests.conftest import run_dtfilm
from tests.test_embed import _chromium

SHOT = "memory:sixteen-bytes"
FRAME = Path("renders/one/live-memory-sixteen-bytes.png")
WAIT_S = 90.0  # bounded: a loaded machine draws a save in seconds, the first after Manim's import


@pytest.fixture
def previewing(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The project `dtfilm init` writes, previewed silently (no voice) on a free port: its root
    and the page's address."""
    project = tmp_path / "film"
    done = run_dtfilm("init", str(project))
    assert done.returncode == 0, done.stderr
    server = subprocess.Popen(
        [sys.executable, "-m", "dtfilm", "preview", SHOT, "--port", "0", "--voice", "none"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, (line, server.stderr.read() if server.poll() is not None else "")
        yield project, match.group(0)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _until(check: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {WAIT_S:.0f} s: {what}")


def _shown_generation(browser: Browser) -> int:
    """The generation whose frame the page's <img> has loaded (0: none yet)."""
    return int(browser.evaluate("Number(document.getElementById('frame').dataset.generation)"))


def _save(path: Path, text: str) -> None:
    """Write as an editor saves; the file's time moves on even within the clock's resolution."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_a_saved_caption_reaches_the_page_as_a_new_frame(previewing: tuple[Path, str]):
    project, url = previewing
    storyboard = project / "storyboard" / "memory.yaml"
    with Browser(_chromium()) as browser:
        browser.open(url)
        _until(lambda: _shown_generation(browser) >= 1, "the first frame")
        first = (project / FRAME).read_bytes()
        texts = browser.evaluate("document.getElementById('texts').textContent")
        assert "bytes a parameter:" in texts
        numbers = browser.evaluate("document.getElementById('numbers').textContent")
        assert "bytes_per_param.total" in numbers and "state.total" in numbers
        assert browser.evaluate("document.getElementById('frame').naturalWidth") == 854

        generation = _shown_generation(browser)
        original = storyboard.read_text()
        _save(storyboard, original.replace("bytes a parameter: {params:si}", "bytes each, edited: {params:si}"))
        _until(lambda: _shown_generation(browser) > generation, "the frame after the caption's save")
        assert "bytes each, edited:" in browser.evaluate("document.getElementById('texts').textContent")
        assert (project / FRAME).read_bytes() != first  # the new caption is drawn, not the old frame again
        assert browser.evaluate("document.getElementById('error').hidden")

        # a save that does not load: its one line in the page (as text, not markup), the frame kept
        generation = _shown_generation(browser)
        drawn = (project / FRAME).read_bytes()
        _save(storyboard, original.replace("    beat: sixteen-bytes", "    beat: sixteen-bytes\n    <b>bogus</b>: 1"))
        _until(lambda: not browser.evaluate("document.getElementById('error').hidden"), "the error in the page")
        error = browser.evaluate("document.getElementById('error').textContent")
        assert "memory.yaml:" in error and "<b>bogus</b>" in error and "\n" not in error, error
        assert browser.evaluate("document.querySelector('#error b') === null")
        assert _shown_generation(browser) >= generation and (project / FRAME).read_bytes() == drawn

        _save(storyboard, original)
        _until(lambda: browser.evaluate("document.getElementById('error').hidden"), "the error gone after a fix")


def test_only_the_page_its_status_and_its_frame_are_served(previewing: tuple[Path, str]):
    _, url = previewing
    status = _until(lambda: json.loads(urllib.request.urlopen(url + "status.json").read())["frame"], "a frame")
    assert urllib.request.urlopen(url + str(status).lstrip("/")).read().startswith(b"\x89PNG")
    for path in ("renders/manifest.json", "../storyboard/memory.yaml", "%2e%2e/storyboard/film.yaml", "one/"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + path)
        assert refused.value.code == 404, path
    page = urllib.request.urlopen(url).read().decode()
    assert "<title>dtfilm preview: memory:sixteen-bytes</title>" in page


BARS = """
  - kind: memory_bars
    beat: bars
    caption: "{memory.total:GB} on a card that holds {memory.capacity:GB}"
    narration: >-
      The card holds {memory.capacity:GB}.
"""


def test_the_state_kept_between_saves_draws_what_a_fresh_drawing_draws(tmp_path: Path):
    # The preview keeps the screen at the shot's start between saves (StartMemo); kept across a
    # change to what the shots before it show (the chapter's title, in the header), it would
    # draw the old title over the new caption.
    import numpy as np

    from dtfilm.publish.preview.shot_frame import StartMemo, shot_frame
    from dtfilm.storyboard import load_chapter

    project = tmp_path / "film"
    assert run_dtfilm("init", str(project)).returncode == 0
    film = project / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("voice: joe ", "voice: none"))
    storyboard = project / "storyboard" / "memory.yaml"
    storyboard.write_text(storyboard.read_text() + BARS)  # a shot after one that leaves the header
    renders = project / "renders"
    renders.mkdir()
    memo = StartMemo()

    def frame(memo: StartMemo | None) -> np.ndarray:
        return np.asarray(shot_frame(load_chapter(storyboard), "bars", None, renders, memo))

    first = frame(memo)
    assert memo.state is not None
    storyboard.write_text(storyboard.read_text().replace("title: The memory ledger", "title: What a card holds"))
    kept = frame(memo)
    assert (kept == frame(None)).all() and not (kept == first).all()
    storyboard.write_text(storyboard.read_text().replace('caption: "{memory', 'caption: "Count: {memory'))
    made_by = memo.made_by
    assert (frame(memo) == frame(None)).all() and memo.made_by == made_by  # a caption: the state is kept
