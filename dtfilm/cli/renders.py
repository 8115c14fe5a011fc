"""`render`, `still`, `clean` and `status`: drawing the film, and what renders/ holds."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from dtfilm.cli import values
from dtfilm.cli.flags import add_input_flags, add_verbose_flag, add_voice_flag, input_overrides, show_manim_lines
from dtfilm.errors import DtfilmError, Where
from dtfilm.render.job import RenderRequest
from dtfilm.render.watch import watch
from dtfilm.system.quality import QUALITY_NAMES
from dtfilm.system.terminal import for_terminal


def add_render_command(sub: Any) -> None:
    """`render`."""
    ren = sub.add_parser("render", help="render chapters to renders/<chapter>.mp4")
    ren.add_argument(
        "chapters", nargs="*", help="chapter ids (default: every chapter of film.yaml), or chapter:beat for one shot"
    )
    ren.add_argument("--quality", choices=QUALITY_NAMES, default="preview")
    ren.add_argument("--out", help="output folder (default: renders/ of the project)")
    ren.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    add_voice_flag(ren)
    ren.add_argument(
        "--jobs", type=values.jobs, default=os.cpu_count() or 1, help="shots drawn at once, here (default: the cores)"
    )
    ren.add_argument("--force", action="store_true", help="render even the chapters that are fresh")
    ren.add_argument(
        "--cluster",
        type=values.cluster,
        metavar="ADDRESS",
        help="draw the stale shots on this Dask scheduler (tcp:// or tls://; none: here); default:"
        " $DTFILM_CLUSTER, else film.yaml's scheduler:, else here. Trust it: Dask runs pickled code",
    )
    ren.add_argument(
        "--cluster-wait",
        type=values.wait_seconds,
        default=None,
        metavar="SECONDS",
        help="how long to wait for a first worker on a scheduler that has none yet (an adaptive cluster scales up"
        " when work arrives; default 120)",
    )
    ren.add_argument("--watch", action="store_true", help="re-render stale chapters at preview on every save")
    ren.add_argument(
        "--format", type=values.formats, default=(), help="also write these copies of each clip: gif, webm or gif,webm"
    )
    add_input_flags(ren)
    add_verbose_flag(ren)
    ren.set_defaults(func=cmd_render)


def render_request(args: argparse.Namespace) -> RenderRequest:
    """What `render`, `still` and `status` ask for: their input flags, --quality, --out, --theme."""
    return RenderRequest(input_overrides(args), args.quality, Path(args.out) if args.out else None, args.theme)


def cmd_render(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.publish.slides import rebuild_stale_slides
    from dtfilm.render.chapters import render_chapters
    from dtfilm.render.one_shot import render_one_shot, split_target

    show_manim_lines(args)
    shots = [split_target(name) for name in args.chapters]
    if any(shots):  # chapter:beat, one shot drawn alone (renders/one/)
        if len(shots) > 1 or args.watch:
            raise DtfilmError("draws one shot at a time (chapter:beat) and alone", Where(flag=args.chapters[0]))
        chapter, beat = shots[0]
        render_one_shot(chapter, beat, render_request(args))
        return 0
    if args.watch:
        return watch(args.chapters, render_request(args), jobs=args.jobs)
    render_chapters(
        args.chapters,
        render_request(args),
        jobs=args.jobs,
        force=args.force,
        formats=args.format,
        cluster=args.cluster,
        cluster_wait_seconds=args.cluster_wait,
    )
    # what was made from the renders before (the slide deck), made again once, at the end
    rebuild_stale_slides(Path(args.out) if args.out else None)
    return 0


def add_renders_commands(sub: Any) -> None:
    """`still`, `clean` and `status`: one frame, and what renders/ holds."""
    stl = sub.add_parser("still", help="one frame of one shot as a PNG (renders/one/), like manim -s")
    stl.add_argument("shot", help="chapter:beat, as `dtfilm kinds` and the storyboard name them (dp:ring)")
    stl.add_argument("--at", type=values.seconds, required=True, help="seconds into the shot")
    stl.add_argument("--quality", choices=QUALITY_NAMES, default="preview")
    stl.add_argument("--out", help="output folder (default: renders/ of the project)")
    stl.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    add_voice_flag(stl)
    add_input_flags(stl)
    add_verbose_flag(stl)
    stl.set_defaults(func=cmd_still)

    cln = sub.add_parser("clean", help="evict cached audio and renders no current storyboard uses")
    cln.add_argument("--out", help="renders folder (default: renders/ of the project)")
    add_voice_flag(cln)
    cln.set_defaults(func=cmd_clean)

    sta = sub.add_parser("status", help="every chapter, fresh or stale, and why")
    sta.add_argument("chapters", nargs="*", help="chapter ids (default: every chapter, and the film)")
    sta.add_argument("--quality", choices=QUALITY_NAMES, default="preview")
    sta.add_argument("--out", help="output folder (default: renders/ of the project)")
    sta.add_argument("--theme", choices=("dark", "light"))
    sta.add_argument(
        "--shots",
        action="store_true",
        help="play each stale chapter without drawing to name every shot a render would draw (imports manim)",
    )
    sta.add_argument(
        "--verify",
        action="store_true",
        help="check every output's and cached clip's digest against its record (else sizes, and digests"
        " where a file's time changed)",
    )
    add_voice_flag(sta)
    add_input_flags(sta)
    sta.set_defaults(func=cmd_status)


def cmd_still(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.one_shot import split_target, write_still

    show_manim_lines(args)
    target = split_target(args.shot)
    if target is None:
        raise DtfilmError(f"{args.shot!r} names no shot; valid: chapter:beat, such as dp:ring", Where(flag="still"))
    write_still(*target, args.at, render_request(args))
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.clean import clean

    for line in clean(Path(args.out) if args.out else None).lines():
        print(line)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.status import status_lines

    for line in status_lines(render_request(args), args.shots, verify=args.verify, chapter_ids=args.chapters):
        print(for_terminal(line, keep_newlines=False))  # (a manifest's fields are read back: not trusted)
    return 0
