"""`init`, `sheet` and `pacing`: making a project, and looking at what it rendered."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

from dtfilm import beneath
from dtfilm.cli import values
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.storyboard.film import find_root, load_film
from dtfilm.voice.cues import Cue
from dtfilm.voice.pace import pace_of, pace_problems


def add_project_commands(sub: Any) -> None:
    """Making a project, and looking at what it rendered."""
    ini = sub.add_parser("init", help="write a minimal film project (storyboard/, .gitignore, README) into DIR")
    ini.add_argument("folder", nargs="?", default=".", help="the project's folder (default: here); made if missing")
    ini.add_argument("--force", action="store_true", help="write into a folder that is not empty")
    ini.set_defaults(func=cmd_init)

    for name, what in (
        ("sheet", "a contact sheet: the clip's frames tiled into one PNG"),
        ("pacing", "where nothing moves"),
    ):
        look = sub.add_parser(name, help=f"{what} (CHAPTER, CHAPTER:BEAT or an MP4)")
        look.add_argument("clip", help="a chapter id (renders/CHAPTER.mp4), chapter:beat (its shot's clip), or an MP4")
        look.add_argument("--out", help="the renders folder (default: renders/ of the project)")
        if name == "sheet":
            look.add_argument("-n", "--frames", type=values.tiles, default=12, help="frames on the sheet (default 12)")
            look.add_argument("--columns", type=values.tiles, default=4, help="tiles a row (default 4)")
            look.add_argument(
                "--width", type=values.tile_width, default=427, help="a tile's width in pixels (default 427)"
            )
            look.add_argument("-o", "--output", help="the PNG (default: beside the clip, CLIP.sheet.png)")
            look.set_defaults(func=cmd_sheet)
        else:
            look.add_argument("--list", action="store_true", help="every still of --min-still seconds or more")
            look.add_argument(
                "--min-still", type=values.still_seconds, default=3.0, help="seconds a still must last to count"
            )
            look.add_argument("--json", action="store_true")
            look.add_argument(
                "--strict",
                action="store_true",
                help="exit 1 when the speech is past a bound (dtfilm check's, and"
                " under 5%% of it over stills of 2.5 s or more)",
            )
            look.set_defaults(func=cmd_pacing)


def cmd_init(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.storyboard.new_project import init_project

    folder = Path(args.folder)
    for path in init_project(folder, args.force):
        print(f"{path}")
    # quoted as a shell takes it: 'cd my film' would be two words
    here = "" if folder.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(str(folder))} && "
    print(f"dtfilm: a film project; next: {here}dtfilm check && dtfilm render && dtfilm sheet memory")
    return 0


def _film_chapters() -> list[str]:
    """The chapters of the film here, or none where there is no film (a clip named elsewhere)."""
    try:
        return list(load_film(find_root() / "storyboard" / "film.yaml").chapters)
    except DtfilmError:
        return []


def _clip(args: argparse.Namespace) -> tuple[Path, list[tuple[str, float, float]]]:
    """The clip `args.clip` names, and its shots' (beat, start, end) where it is a chapter."""
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.cache import read_manifest

    given = Path(args.clip)
    if given.suffix.lower() in (".mp4", ".webm", ".mov", ".mkv") or given.is_file():
        if not given.is_file():
            raise DtfilmError("no such clip", Where(args.clip))
        return given, []
    out = Path(args.out) if args.out else find_root() / "renders"
    chapter, _, beat = args.clip.partition(":")
    entry = read_manifest(out)["chapters"].get(chapter)
    if entry is None:
        chapters = _film_chapters()
        if chapters and chapter not in chapters:  # 'dtfilm render dp' would fail too: say what would do
            raise DtfilmError(
                f"no chapter {chapter!r} in the film{did_you_mean(chapter, chapters)}, and no such file;"
                f" valid: {', '.join(chapters)}, a shot (CHAPTER:BEAT) or an MP4",
                Where(args.clip),
            )
        raise DtfilmError(f"not rendered in {out} (dtfilm render {chapter}), and no such file", Where(args.clip))
    shots = [(s["beat"], s["start"], s["end"]) for s in entry.get("shots", [])]
    if beat:
        clip = next((out / s["clip"] for s in entry.get("shots", []) if s["beat"] == beat), None)
        if clip is None:
            raise DtfilmError(f"no shot {beat!r}; valid: {', '.join(b for b, _, _ in shots)}", Where(args.clip))
        return _kept_clip(clip), []
    return _kept_clip(out / f"{chapter}.mp4"), shots


def _kept_clip(path: Path) -> Path:
    """A clip under renders/, which a stranger may have written: a regular file, no link followed
    (a named pipe there hung `sheet` and `pacing` in PyAV's open); else a one-line error."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise DtfilmError(f"cannot be read: {error.strerror}", Where(str(path))) from None
    if not stat.S_ISREG(mode):
        raise DtfilmError(f"is {beneath.kind(mode)}; valid: a rendered clip, a regular file", Where(str(path)))
    return path


def cmd_sheet(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.look import contact_sheet, decoding

    clip, _ = _clip(args)
    target = Path(args.output) if args.output else clip.with_suffix(".sheet.png")
    with decoding(clip) as seconds:
        tiled = contact_sheet(clip, target, args.frames, args.columns, args.width)
    if not tiled:
        raise DtfilmError("no frames could be decoded", Where(str(clip)))
    print(f"{target}: {tiled} frames of {seconds:.1f} s")
    return 0


def cmd_pacing(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.film_subtitles import chapter_cues
    from dtfilm.render.look import MAX_SPEECH_OVER_STILLS, SPEECH_STILL_SECONDS, decoding, pacing, speech_over_stills

    clip, shots = _clip(args)
    with decoding(clip):
        measured = pacing(clip)
    counted = measured.counted(args.min_still)
    # the speech, from the subtitles beside the clip (renders/CHAPTER.srt: read back, text only)
    said = [
        Cue(c.content, c.start.total_seconds(), c.end.total_seconds()) for c in chapter_cues(clip.with_suffix(".srt"))
    ]
    pace = pace_of(said, [" ".join(" ".join(c.text.split()) for c in said)]) if said else None
    over = speech_over_stills([(c.start, c.end) for c in said], measured.runs) if said else 0.0
    past = pace_problems(pace) if pace is not None else []
    if over >= MAX_SPEECH_OVER_STILLS:
        past.append(
            f"speech: {100 * over:.1f}% of it over stills of {SPEECH_STILL_SECONDS:g} s or more;"
            f" under {100 * MAX_SPEECH_OVER_STILLS:g}%"
        )

    def shot_of(start: float) -> str:
        return next((f" ({beat}, {start - s:.1f} s in)" for beat, s, e in shots if s - 0.5 <= start < e), "")

    if args.json:
        report = {
            "clip": str(clip),
            "duration_s": round(measured.seconds, 2),
            "longest_still_s": round(measured.longest_seconds(), 2),
            "still_share": round(measured.still_share(args.min_still), 3),
            "stills": [{"start_s": round(s, 2), "seconds": round(n, 2)} for s, n in counted],
        }
        if pace is not None:
            report["speech"] = {
                "words_a_minute": round(pace.words_a_minute, 1),
                "most_quantities_a_sentence": pace.most_quantities,
                "over_stills_share": round(over, 3),
                "past_bounds": past,
            }
        print(json.dumps(report, indent=1))
        return 1 if args.strict and past else 0
    print(
        f"{clip}: {measured.seconds:.1f} s, longest still {measured.longest_seconds():.1f} s, stills of"
        f" {args.min_still:g} s or more {100 * measured.still_share(args.min_still):.0f}% of the clip"
    )
    if pace is not None:
        print(
            f"speech: {pace.words_a_minute:.0f} words a minute, at most {pace.most_quantities} quantities a sentence,"
            f" {100 * over:.1f}% of it over stills of {SPEECH_STILL_SECONDS:g} s or more"
        )
    if args.list:
        for start, length in counted:
            print(f"    still from {start:6.1f} s for {length:4.1f} s{shot_of(start)}")
    for problem in past:
        print(problem)
    return 1 if args.strict and past else 0
