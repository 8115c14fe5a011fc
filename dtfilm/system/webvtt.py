"""WebVTT for <track>: subtitles from SubRip and chapter markers, each cue's text shown as written."""

from __future__ import annotations

import datetime
import re

# Every character that ends a line in a WebVTT file or in a player that reads it, and every other
# control character: a cue's text keeps none of them but the newline between its two lines.
_VTT_BREAKS = re.compile("[\r\n\x0b\x0c\x85\u2028\u2029]+")


_VTT_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def vtt_text(text: str, one_line: bool = False) -> str:
    """Text shown as itself in a WebVTT cue: `&`, `<` and `>` as character references (so no
    `-->` ends the cue's text and no tag starts in it), no blank line (which would end the cue),
    no control character; with `one_line`, its line breaks as spaces (a chapter's title)."""
    text = _VTT_CONTROLS.sub("", text)
    text = _VTT_BREAKS.sub(" " if one_line else "\n", text).strip("\n")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def chapters_vtt(chapters: list[tuple[str, float, float]]) -> str:
    """A WebVTT file for <track kind="chapters"> (browsers ignore MP4 chapter markers); each
    title escaped as one line of cue text (vtt_text)."""

    def stamp(seconds: float) -> str:
        ms = round(seconds * 1000)
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"

    cues = [
        f"{i}\n{stamp(start)} --> {stamp(end)}\n{vtt_text(title, one_line=True)}\n"
        for i, (title, start, end) in enumerate(chapters, 1)
    ]
    return "WEBVTT\n\n" + "\n".join(cues)


# Where a browser draws the subtitles: their last line ends at this share of the frame's
# height, just above the burned-in caption (the caption region starts at 86.9%), so the two
# never cover each other when a viewer turns the subtitles on.
SUBTITLE_BOTTOM_PERCENT = 86


def srt_to_vtt(srt_text: str, lines: list[int] | None = None) -> str:
    """WebVTT for <track> from SubRip (whose text is plain: dtfilm writes no markup in it): a
    header, a dot before the milliseconds, each cue placed where `lines` says (the percent of the
    height its last line ends at, one a cue: dtfilm.render.subtitle_place) or else above the
    burned-in caption, and its text escaped for WebVTT (vtt_text), so a `-->`, `&` or `<` in it
    is shown as written."""
    # (here: the srt package, which writes and reads the SubRip files)
    import srt

    def stamp(at: datetime.timedelta) -> str:
        return srt.timedelta_to_srt_timestamp(at).replace(",", ".")

    parsed = list(srt.parse(srt_text))
    placed = lines if lines is not None and len(lines) == len(parsed) else [SUBTITLE_BOTTOM_PERCENT] * len(parsed)
    cues = [
        f"{cue.index}\n{stamp(cue.start)} --> {stamp(cue.end)} line:{line}%,end\n{vtt_text(cue.content)}\n\n"
        for cue, line in zip(parsed, placed, strict=True)
    ]
    return "WEBVTT\n\n" + "".join(cues)
