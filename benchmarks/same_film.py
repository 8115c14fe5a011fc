"""Whether two renders of the film are the same: every chapter's decoded frames and sound
samples, and every shot's cache key parts (all but the code's digest, which changes with any
change to dtfilm's code). For a change that must not change the film (issue 48's refactor):

    .venv/bin/python benchmarks/same_film.py BEFORE/renders AFTER/renders

Prints a line a chapter and a summary; exits 1 when anything differs. Asserts nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import av
import numpy as np

# Key parts that name the code, not what is drawn: they change with any change to dtfilm.
CODE_PARTS = ("code",)


def decoded(path: Path) -> tuple[list[np.ndarray], np.ndarray]:
    """Every frame (RGB) and every sound sample of a file, as decoded."""
    with av.open(str(path)) as box:
        frames = [frame.to_ndarray(format="rgb24") for frame in box.decode(video=0)]
    with av.open(str(path)) as box:
        chunks = [frame.to_ndarray().reshape(-1) for frame in box.decode(audio=0)] if box.streams.audio else []
    return frames, np.concatenate(chunks) if chunks else np.zeros(0)


def film_differences(a: Path, b: Path) -> tuple[int, list[str]]:
    """How many frames the first has, and what differs between the two files' decoded frames
    and sound (empty when nothing does)."""
    frames_a, sound_a = decoded(a)
    frames_b, sound_b = decoded(b)
    out = []
    if len(frames_a) != len(frames_b):
        out.append(f"{len(frames_a)} frames against {len(frames_b)}")
    differing = [i for i, (x, y) in enumerate(zip(frames_a, frames_b, strict=False)) if not np.array_equal(x, y)]
    if differing:
        out.append(f"{len(differing)} of {min(len(frames_a), len(frames_b))} frames differ, first {differing[:5]}")
    if sound_a.shape != sound_b.shape or not np.array_equal(sound_a, sound_b):
        out.append(f"the sound differs ({sound_a.size} samples against {sound_b.size})")
    return len(frames_a), out


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
    args = parser.parse_args()
    chapters = args.chapters or sorted(p.stem for p in args.before.glob("*.mp4") if p.stem != "film")
    faults = 0
    for chapter in chapters:
        other = args.after / f"{chapter}.mp4"
        clip = args.before / f"{chapter}.mp4"
        frames, found = film_differences(clip, other) if other.exists() else (0, ["not rendered"])
        faults += bool(found)
        print(f"{chapter}: {'; '.join(found) if found else f'the same ({frames} frames and the sound)'}")
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
