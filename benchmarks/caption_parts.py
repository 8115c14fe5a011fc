"""Where a changed caption's seconds go (issue 55): CPU seconds of each part of `dtfilm render dp
--jobs 1` (one process draws, so each part is timed where it runs) after dp's memory caption
changed, and what encoding that shot's frames alone costs, the floor of any way of showing a
new caption burned into the picture. Run in a project whose dp is rendered (its renders/ is
used and left rendered with the storyboard as it was):

    .venv/bin/python benchmarks/caption_parts.py            # in the project's root

Prints each part (those indented are within the one above); asserts nothing. What is left (the
interpreter's start and exit, imports after the command line's) is printed as the rest.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CAPTION = "of training state on every card"  # in dp's memory shot
SPENT: dict[str, float] = {}


def timed_part(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] = SPENT.get(name, 0.0) + time.process_time() - started

    return wrapped


def render_in_parts() -> None:
    """`dtfilm render dp --jobs 1` in this process, its parts timed (the child: --child)."""
    started = time.process_time()
    import dtfilm.cli as cli

    SPENT["importing the command line"] = time.process_time() - started
    import dtfilm.render.assemble as assemble
    import dtfilm.render.chapters as chapters
    import dtfilm.render.schedule as schedule

    started = time.process_time()
    import dtfilm.scene  # noqa: F401  (Manim: the drawing imports it; here, to time it apart)

    SPENT["importing Manim (dtfilm.scene)"] = time.process_time() - started
    chapters.find_work = timed_part("loading dp and its keys", chapters.find_work)
    schedule.StaleShots.first_tasks = timed_part("probing the cache", schedule.StaleShots.first_tasks)
    schedule.draw_shots = timed_part("drawing the shot (its frames drawn and encoded)", schedule.draw_shots)
    chapters.assemble_chapter = timed_part("joining the chapter", chapters.assemble_chapter)
    assemble.ChapterSound.join = timed_part("  of which its picture and sound", assemble.ChapterSound.join)
    assemble.chapter_cue_lines = timed_part("  of which its subtitle lines", assemble.chapter_cue_lines)
    assemble.write_slide_clips = timed_part("  of which its slide clips and their stills", assemble.write_slide_clips)
    chapters.join_film = timed_part("the film's join", chapters.join_film)
    chapters.write_gallery = timed_part("the gallery", chapters.write_gallery)
    sys.argv = ["dtfilm", "render", "dp", "--jobs", "1"]
    with open(os.devnull, "w") as quiet:
        sys.stdout = quiet
        cli.main()
        sys.stdout = sys.__stdout__
    children = os.times()
    SPENT["loading the film's other chapters (a forked child)"] = children.children_user + children.children_system
    print(json.dumps(SPENT), flush=True)
    os._exit(0)  # as `dtfilm` leaves (dtfilm.cli.run): no interpreter teardown with Manim loaded


def encode_floor(clip: Path) -> tuple[int, float, float]:
    """Frames, and CPU seconds to decode them and to encode them as a preview shot is encoded."""
    import av

    from dtfilm.system.quality import QUALITY

    quality = QUALITY["preview"]
    started = time.process_time()
    with av.open(str(clip)) as box:
        frames = [frame.to_ndarray(format="rgb24") for frame in box.decode(video=0)]
    decoded = time.process_time()
    with av.open(os.devnull, "w", format="mp4") as out:
        stream = out.add_stream(
            "libx264", rate=quality.frame_rate, options=quality.encoder_settings()["video_encoder_options"]
        )
        stream.width, stream.height, stream.pix_fmt = quality.width_pixels, quality.height_pixels, "yuv420p"
        for picture in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
        out.mux(stream.encode())
    return len(frames), decoded - started, time.process_time() - decoded


def main() -> None:
    if sys.argv[1:] == ["--child"]:
        render_in_parts()
        return
    chapter = Path("storyboard/dp.yaml")
    text = chapter.read_text()
    if CAPTION not in text:
        raise SystemExit(f"{chapter}: no caption {CAPTION!r} to change")
    try:
        chapter.write_text(text.replace(CAPTION, f"{CAPTION} ({time.time():.0f})", 1))
        before = os.times()
        done = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
        after = os.times()
        if done.returncode:
            raise SystemExit(done.stderr)
        whole = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        parts = json.loads(done.stdout.strip().splitlines()[-1])
        for name, seconds in parts.items():
            print(f"{seconds:6.2f} s  {name}")
        rest = whole - sum(seconds for name, seconds in parts.items() if not name.startswith(" "))
        print(f"{rest:6.2f} s  the rest (the interpreter's start and exit, later imports)")
        print(f"{whole:6.2f} s  CPU in all (the process and its children)")
        manifest = json.loads(Path("renders/manifest.json").read_text())  # (this benchmark's own render)
        shot = next(s for s in manifest["chapters"]["dp"]["shots"] if s["beat"] == "memory")
        frames, decode, encode = encode_floor(Path("renders") / shot["cache"])
        print(
            f"the memory shot's {frames} frames: {decode:.2f} s to decode, {encode:.2f} s to encode again"
            " (what any caption burned into them costs at least)"
        )
    finally:
        chapter.write_text(text)
        subprocess.run([sys.executable, "-m", "dtfilm", "render", "dp"], capture_output=True)


if __name__ == "__main__":
    main()
