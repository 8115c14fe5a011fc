"""How much of each rendered chapter stands still, and in which shot (figures printed, not asserted).

A frame is still when it differs from the one before by less than 0.5 grey levels on average;
stills of 3 s or more count (the definition of the project's shared `pacing.py`). Targets for
the film (issue 16): stills of 3 s or more under 25% of each chapter, none longer than 6 s but
the closing hold. Each still is placed in its shot by a dry run of the chapter, so a number
points at the shot kind to look at.

Usage: python benchmarks/pacing.py [CHAPTER ...]   (default: every chapter in renders/)
"""

from __future__ import annotations

import argparse
import sys

from dtfilm.check.inspect import inspect_chapter
from dtfilm.render.look import MIN_STILL_SECONDS, STILL_THRESHOLD, pacing
from dtfilm.storyboard import find_root, load_film

THRESHOLD = STILL_THRESHOLD


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*")
    args = parser.parse_args()
    root = find_root()
    chapters = args.chapters or list(load_film(root / "storyboard" / "film.yaml").chapters)
    worst = 0.0
    for chapter in chapters:
        clip = root / "renders" / f"{chapter}.mp4"
        if not clip.is_file():
            print(f"{chapter}: not rendered (dtfilm render {chapter})")
            continue
        measured = pacing(clip, THRESHOLD)
        seconds, runs = measured.seconds, measured.runs
        counted = [(start, length) for start, length in runs if length >= MIN_STILL_SECONDS]
        closing = counted[-1] if counted and abs(sum(counted[-1]) - seconds) < 0.2 else None
        share = sum(length for _, length in counted) / seconds
        middle = [length for run in counted if run != closing for length in [run[1]]]
        longest = max(middle, default=0.0)
        worst = max(worst, share)
        print(f"{chapter}: {seconds:.1f} s, stills of 3 s or more {100 * share:.0f}%, longest {longest:.1f} s")
        for beat, start, end in inspect_chapter(chapter, root).shot_times:
            inside = [(s, n) for s, n in counted if start - 0.5 <= s < end]
            if inside:
                shown = ", ".join(f"{s - start:.1f} s in for {n:.1f} s" for s, n in inside)
                print(f"    {beat}: {shown}")
    print(f"highest share: {100 * worst:.0f}% (target: under 25%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
