"""The film's fonts as fontconfig finds them, and the characters they can draw: a character that
neither has draws as an empty box with a clean check, so the storyboard's drawn texts are
checked against their coverage when they load. fontconfig's own tools answer (fc-match, which
Pango asks too); no font library is loaded for it."""

from __future__ import annotations

import bisect
import functools
import subprocess
import sys

FONTS = ("Inter", "DejaVu Sans")  # the themes' font and the fallback Pango takes
FC_SECONDS = 10


def fc_match(family: str, field: str) -> str:
    """fontconfig's answer for `family`'s `field` (file, charset), or "" where it gives none."""
    try:
        done = subprocess.run(
            ["fc-match", "-f", f"%{{{field}}}", family], capture_output=True, text=True, timeout=FC_SECONDS
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _ranges(charset: str) -> list[tuple[int, int]]:
    """fontconfig's charset ("20-7e a0-148 14a") as inclusive code point ranges."""
    ranges = []
    for piece in charset.split():
        first, _, last = piece.partition("-")
        try:
            ranges.append((int(first, 16), int(last or first, 16)))
        except ValueError:
            continue
    return ranges


@functools.cache
def coverage() -> tuple[tuple[int, int], ...] | None:
    """The code points the film's fonts can draw, together; None where fontconfig cannot say
    (no fc-match on this machine: nothing is drawn there either)."""
    ranges = sorted(r for family in FONTS for r in _ranges(fc_match(family, "charset")))
    merged: list[tuple[int, int]] = []
    for first, last in ranges:  # overlapping ranges joined, so that one lookup finds a code point
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return tuple(merged) or None


def missing_glyph(text: str) -> str | None:
    """The first character of `text` (not a space) that none of the film's fonts can draw."""
    covered = coverage()
    if covered is None:
        return None
    for char in dict.fromkeys(text):
        if not (char.isspace() or _drawable(char)):
            return char
    return None


@functools.cache
def _drawable(char: str) -> bool:
    covered = coverage() or ()
    at = bisect.bisect_right(covered, (ord(char), sys.maxunicode + 1)) - 1
    return at >= 0 and covered[at][0] <= ord(char) <= covered[at][1]
