"""Whether two renders of the film are the same: every chapter's decoded frames and sound
samples, and every shot's cache key parts (all but the code's digest, which changes with any
change to dtfilm's code). For a change that must not change the film (issue 48's refactor):

    .venv/bin/python benchmarks/same_film.py BEFORE/renders AFTER/renders
    .venv/bin/python benchmarks/same_film.py BEFORE/renders AFTER/renders --exact   # every pixel

Prints a line a chapter and a summary; exits 1 when anything differs. Asserts nothing else.

Frames are compared as a viewer sees them, within the encoder's noise: two renders of the same
code draw the same pixels (every RGBA frame Manim hands its encoder was the same, digest for
digest, over two renders of dp), but x264 does not always encode them to the same bytes (issue
55: its macroblock-tree rate control, in some threads of some processes; the same six frames
encoded by PyAV alone, with dtfilm's settings, came out one of two ways). Over dp renders 6 of
1,748 frames, one animation's clip, differed so, a different one each run: at most 39 levels of
255 at a pixel, at most 2 pixels past 24 levels, PSNR 66.9 dB or better. Over the whole film
(9 chapters, 16,073 frames, two renders of code that draws the same, 2026-12-06) 290 frames
differed so: at most 49 levels at a pixel (3d, one pixel, PSNR 69.5 dB), at most 91 pixels of a
frame past 16 levels (ep). A changed word or number differs by 100 levels and more over dozens
of pixels; a changed colour by a few levels over thousands. So a frame differs here when a pixel
of it is more than NOISE_LEVELS from the other's, or more than NOISE_PIXELS of its pixels are
more than FAINT_LEVELS from it; the sound (encoded once per chapter, on one thread) must be the
same sample for sample.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np

# Key parts that name the code, not what is drawn: they change with any change to dtfilm.
CODE_PARTS = ("code",)


NOISE_LEVELS = 64  # of 255: the most a pixel may differ (the encoder's noise measured 49 at most)
FAINT_LEVELS = 16  # of 255: a pixel this far off counts towards NOISE_PIXELS
NOISE_PIXELS = 1000  # of a frame's 409,920 at preview: the encoder's noise measured 91 at most


def pictures(path: Path) -> Iterator[np.ndarray]:
    """Every frame of a file (RGB), decoded one at a time (a chapter's frames together took 2 GB)."""
    with av.open(str(path)) as box:
        for frame in box.decode(video=0):
            yield frame.to_ndarray(format="rgb24")


def decoded(path: Path) -> tuple[list[np.ndarray], np.ndarray]:
    """Every frame (RGB) and every sound sample of a file, as decoded (a short clip's: all at once)."""
    return list(pictures(path)), sound(path)


def sound(path: Path) -> np.ndarray:
    """Every sound sample of a file, as decoded."""
    with av.open(str(path)) as box:
        chunks = [frame.to_ndarray().reshape(-1) for frame in box.decode(audio=0)] if box.streams.audio else []
    return np.concatenate(chunks) if chunks else np.zeros(0)


def film_differences(a: Path, b: Path, exact: bool = False) -> tuple[int, list[str], list[str]]:
    """How many frames the first has, what differs between the two files' decoded frames and
    sound (empty when nothing does), and the frames that differ only within the encoder's noise
    (NOISE_LEVELS; with `exact`, these differ too)."""
    frames, noisy, differing, most, count_b = 0, [], [], 0, 0
    mine, theirs = pictures(a), pictures(b)
    for x, y in itertools.zip_longest(mine, theirs):
        if x is None or y is None:
            count_b += y is not None
            frames += x is not None
            continue
        if not np.array_equal(x, y):
            off = np.abs(x.astype(np.int16) - y.astype(np.int16)).max(axis=2)
            worst = int(off.max())
            most = max(most, worst)
            seen = worst > NOISE_LEVELS or int((off > FAINT_LEVELS).sum()) > NOISE_PIXELS
            (differing if exact or seen else noisy).append(frames)
        frames += 1
        count_b += 1
    out = []
    if frames != count_b:
        out.append(f"{frames} frames against {count_b}")
    if differing:
        shown = f"first {differing[:5]} (by up to {most} levels)"
        out.append(f"{len(differing)} of {min(frames, count_b)} frames differ, {shown}")
    sound_a, sound_b = sound(a), sound(b)
    if sound_a.shape != sound_b.shape or not np.array_equal(sound_a, sound_b):
        out.append(f"the sound differs ({sound_a.size} samples against {sound_b.size})")
    noise = f"{len(noisy)} frames within the encoder's noise (at most {most} levels), first {noisy[:5]}"
    return frames, out, [noise] if noisy else []


def shot_parts(renders: Path) -> dict[str, dict[str, str]]:
    """Each shot's cache key parts but the code's, by chapter:beat."""
    manifest = json.loads((renders / "manifest.json").read_text())  # our own render: trusted here
    return {
        f"{chapter}:{shot['beat']}": {k: v for k, v in shot["parts"].items() if k not in CODE_PARTS}
        for chapter, entry in manifest["chapters"].items()
        for shot in entry["shots"]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the renders/ folder before the change")
    parser.add_argument("after", type=Path, help="the renders/ folder after it")
    parser.add_argument("--chapters", nargs="*", help="only these chapters (default: every one rendered before)")
    parser.add_argument("--exact", action="store_true", help="every pixel the same, the encoder's noise not tolerated")
    args = parser.parse_args()
    chapters = args.chapters or sorted(p.stem for p in args.before.glob("*.mp4") if p.stem != "film")
    faults = 0
    for chapter in chapters:
        other = args.after / f"{chapter}.mp4"
        clip = args.before / f"{chapter}.mp4"
        missing: tuple[int, list[str], list[str]] = (0, ["not rendered"], [])
        frames, found, noise = film_differences(clip, other, args.exact) if other.exists() else missing
        faults += bool(found)
        same = f"the same ({frames} frames and the sound{'; ' + noise[0] if noise else ''})"
        print(f"{chapter}: {'; '.join(found) if found else same}")
    before, after = (
        {beat: parts for beat, parts in shot_parts(renders).items() if beat.split(":")[0] in chapters}
        for renders in (args.before, args.after)
    )
    changed = sorted(s for s in before.keys() | after.keys() if before.get(s) != after.get(s))
    faults += bool(changed)
    print(f"shot keys: {len(before)} shots, {len(changed)} with other parts than the code's {changed[:5]}")
    print("the same film" if not faults else f"{faults} difference(s)")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
