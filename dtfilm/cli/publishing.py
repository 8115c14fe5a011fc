"""`page` and `slides`: the explorer page and the slide deck."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dtfilm.cli import values
from dtfilm.publish.explore.states import DEFAULT_CARDS, DEFAULT_GPUS, DEFAULT_MODELS, MICRO_BATCHES
from dtfilm.system.quality import QUALITY_NAMES


def add_publishing_commands(sub: Any) -> None:
    """`page` and `slides`."""
    pge = sub.add_parser("page", help="the explorer page (renders/explore/): the rack, pills, slider, stats, film")

    pge.add_argument(
        "--models",
        type=values.listed(lambda catalog: catalog.models, "model preset"),
        default=DEFAULT_MODELS,
        help=f"the model picker's presets (default: {','.join(DEFAULT_MODELS)})",
    )
    pge.add_argument(
        "--gpus",
        type=values.listed(lambda catalog: catalog.cards, "card type"),
        default=DEFAULT_GPUS,
        help=f"the card picker's types (default: {','.join(DEFAULT_GPUS)})",
    )
    pge.add_argument("--cards", type=int, default=DEFAULT_CARDS, help=f"cards in the rack (default {DEFAULT_CARDS})")
    pge.add_argument(
        "--micro-batches",
        type=values.stops,
        default=MICRO_BATCHES,
        help=f"the slider's stops (default: {','.join(map(str, MICRO_BATCHES))})",
    )
    pge.add_argument("--jobs", type=values.jobs, default=os.cpu_count() or 1, help="processes drawing pictures")
    pge.add_argument("--no-film", action="store_true", help="do not render the pills' chapters (embed those rendered)")
    pge.add_argument("--quality", choices=QUALITY_NAMES, default="preview", help="of the chapters it renders")
    pge.add_argument("--out", help="renders folder (default: renders/ of the project)")
    pge.set_defaults(func=cmd_page)

    sld = sub.add_parser("slides", help="a reveal.js deck (offline) and a PowerPoint file, one slide per shot")
    sld.add_argument("chapters", nargs="*", help="chapter ids (default: every chapter of film.yaml)")
    sld.add_argument("--out", help="renders folder the chapters were rendered to (default: renders/)")
    sld.add_argument("--no-pptx", action="store_true", help="only the reveal.js deck")
    sld.add_argument(
        "--voice", action="store_true", help="keep the narration's sound (default: muted, a speaker talks over slides)"
    )
    sld.set_defaults(func=cmd_slides)


def cmd_page(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.publish.explore.page import PageOptions, build_page

    options = PageOptions(
        models=args.models,
        gpus=args.gpus,
        cards=args.cards,
        micro_batches=args.micro_batches,
        jobs=args.jobs,
        film=not args.no_film,
        quality=args.quality,
    )
    built = build_page(options, Path(args.out) if args.out else None)
    print(
        f"{built.folder / 'index.html'}: {built.states} states, {built.pictures} pictures ({built.drawn} drawn),"
        f" {built.bytes / 1e6:.1f} MB, in {built.seconds:.1f} s"
    )
    if built.missing_chapters:
        print(
            f"dtfilm: warning: the page has no film for {', '.join(built.missing_chapters)}"
            f" (not rendered{'' if args.no_film else ' or not in film.yaml'})",
            file=sys.stderr,
        )
    return 0


def cmd_slides(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.publish.slides import build_slides

    build_slides(args.chapters, Path(args.out) if args.out else None, pptx=not args.no_pptx, voice=args.voice)
    return 0
