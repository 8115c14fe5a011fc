"""`kinds`, `paths`, `narration`, `check` and `claims`: what an author asks while writing a chapter."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dtfilm.check.chapters import check_chapter
from dtfilm.cli.flags import add_input_flags, add_voice_flag, estimate_numbers, input_overrides
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard.claims import chapter_claims
from dtfilm.storyboard.film import find_root, load_film, shown_path
from dtfilm.storyboard.load import load_chapter
from dtfilm.storyboard.reference import kind_text, kinds_text, paths_text, uses_of
from dtfilm.units import counted
from dtfilm.voice.speech import narration_script


def add_authoring_commands(sub: Any) -> None:
    """`kinds`, `paths`, `narration`, `check` and `claims`: what an author asks while writing a chapter."""
    knd = sub.add_parser("kinds", help="every shot kind a storyboard may name; one in full with its keys")
    knd.add_argument("kind", nargs="?", help="a kind to describe in full: its keys, needs and where the film uses it")
    knd.add_argument(
        "--measure", action="store_true", help="also its shortest length where the film uses it (a dry run: seconds)"
    )
    knd.add_argument("--no-measure", action="store_true", help=argparse.SUPPRESS)  # (the default now)
    knd.set_defaults(func=cmd_kinds)

    pth = sub.add_parser("paths", help="every template path a caption may name, with its value and a unit")
    pth.add_argument("storyboard", nargs="?", help="chapter id or path to its YAML (default: the film's defaults)")
    add_input_flags(pth)
    pth.set_defaults(func=cmd_paths)

    nar = sub.add_parser("narration", help="each shot's narration as written and as the voice is given it")
    nar.add_argument("storyboard", help="chapter id or path to its YAML")
    add_voice_flag(nar)
    add_input_flags(nar)
    nar.set_defaults(func=cmd_narration)

    chk = sub.add_parser(
        "check", help="dry-run chapters (no frames): layout, numbers and words checks, one line per problem"
    )
    chk.add_argument("chapters", nargs="*", help="chapter ids or storyboard files (default: every chapter)")
    chk.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    chk.add_argument(
        "--fresh",
        action="store_true",
        help="play every shot's dry run (default: reuse those kept in .dtfilm-cache/check)",
    )
    add_voice_flag(chk)
    add_input_flags(chk)
    chk.set_defaults(func=cmd_check)

    clm = sub.add_parser(
        "claims", help="every conclusion a chapter draws: its condition, values, whether it holds (exit 1: one fails)"
    )
    clm.add_argument("storyboard", help="chapter id or path to its YAML")
    clm.add_argument("--json", action="store_true", help="a list of objects (docs/contract.md)")
    add_input_flags(clm)
    clm.set_defaults(func=cmd_claims)


def cmd_kinds(args: argparse.Namespace) -> int:
    if not args.kind:
        print(kinds_text())
        return 0
    if args.kind not in KINDS:
        raise DtfilmError(
            f"no shot kind {args.kind!r}{did_you_mean(args.kind, KINDS)}; valid: {', '.join(KINDS)}",
            Where(flag="dtfilm kinds"),
        )
    film_yaml = find_root() / "storyboard" / "film.yaml"
    film = load_film(film_yaml)
    uses = list(uses_of(args.kind, film_yaml.parent, list(film.chapters)))

    def measured(chapter: str) -> dict[str, float]:
        # (here: it loads Manim, which only drawing needs)
        from dtfilm.check.inspect import inspect_chapter

        drawn = inspect_chapter(chapter, find_root()).drawn_times
        return {beat: seconds for beat, _, seconds in drawn}

    print(kind_text(args.kind, uses, measured if args.measure else None))
    return 0


def cmd_paths(args: argparse.Namespace) -> int:
    print(paths_text(estimate_numbers(args.storyboard, input_overrides(args))))
    return 0


def cmd_narration(args: argparse.Namespace) -> int:
    for line in narration_script(load_chapter(args.storyboard, input_overrides(args))):
        print(line)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    specs = args.chapters or list(load_film(find_root() / "storyboard" / "film.yaml").chapters)
    overrides = input_overrides(args)
    failed = 0
    for spec in specs:
        target = Path(spec) if spec.endswith((".yaml", ".yml")) else spec
        result = check_chapter(target, overrides, args.theme, reuse=not args.fresh)
        name = result.chapter.id
        print(f"{name}: {shown_path(result.chapter.path)} merged with {shown_path(result.film_yaml)}")
        for warning in result.chapter.warnings:  # the cost model's, as render prints them (not problems)
            print(f"{name}: warning: {warning}")
        where = {shot.beat: shot.where for shot in result.chapter.shots}
        for problem in dict.fromkeys(result.problems):  # (each once: two checks may find the same)
            beat = problem.split(": ", 1)[0]
            print(f"{name}: {problem}" + (f" ({where[beat]})" if beat in where else ""))
        for finding in result.design:
            print(f"{name}: design: {finding}")
        design = counted(len(result.design), "design finding")
        problems = f"{len(result.problems)} problem(s)"
        verdict = problems if result.problems else design if result.design else "clean"
        findings = f"; {design}" if result.problems and result.design else ""
        if result.pace is not None:
            print(
                f"{name}: speech {result.pace.words_a_minute:.0f} words a minute,"
                f" at most {result.pace.most_quantities} quantities a sentence"
            )
        print(
            f"{name}: {verdict}; {result.duration:.1f} s of film, {result.texts} texts and {result.facts} facts"
            f" checked in {result.seconds:.1f} s ({result.played} of {len(result.chapter.shots)} shots played,"
            f" the rest unchanged){findings}"
        )
        failed += result.failed
    return 1 if failed else 0


def cmd_claims(args: argparse.Namespace) -> int:
    target = Path(args.storyboard) if args.storyboard.endswith((".yaml", ".yml")) else args.storyboard
    records = chapter_claims(load_chapter(target, input_overrides(args)))
    if args.json:
        json.dump([r.as_json() for r in records], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for record in records:
            print(record.line())
        false = sum(not r.holds for r in records)
        print(f"{len(records)} claim(s), {false} false" if false else f"{len(records)} claim(s), every one holds")
    return 1 if any(not r.holds for r in records) else 0
