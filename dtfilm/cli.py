"""The `dtfilm` command: estimate, plan, render, status."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import math
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from dtfilm import beneath
from dtfilm.check.chapters import check_chapter
from dtfilm.cost import BUILTIN_CATALOG, Catalog, builtin_layer, estimate, resolve
from dtfilm.cost.inputs import BUILTIN, SPECS, build_setup
from dtfilm.cost.planner import FIXABLE, no_layout_reason, plan
from dtfilm.cost.published import check_run, runs_named
from dtfilm.cost.rank import rank, rank_lines
from dtfilm.cost.report import compare_table, estimate_table, plan_table
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.publish.explore.states import DEFAULT_CARDS, DEFAULT_GPUS, DEFAULT_MODELS, MICRO_BATCHES
from dtfilm.publish.serve import serve
from dtfilm.render.manim_log import VERBOSE_VARIABLE
from dtfilm.render.watch import watch
from dtfilm.storyboard.claims import chapter_claims
from dtfilm.storyboard.kinds import KINDS
from dtfilm.storyboard.load import (
    SCHEDULER_TEXT,
    chapter_titles,
    film_titles,
    find_root,
    flag_layer,
    is_scheduler_address,
    load_chapter,
    load_film,
    shown_path,
)
from dtfilm.storyboard.reference import kind_text, kinds_text, paths_text, uses_of
from dtfilm.system.quality import QUALITY_NAMES
from dtfilm.system.terminal import for_terminal
from dtfilm.system.unwritable import UNWRITABLE, unwritable_cause, where_unwritable
from dtfilm.units import counted
from dtfilm.validate import STRATEGIES
from dtfilm.validate.run import REPORT, parse_strategies, table, validate
from dtfilm.voice.cues import Cue
from dtfilm.voice.engine import VOICE_VARIABLE, voice_from_flag
from dtfilm.voice.pace import pace_of, pace_problems
from dtfilm.voice.speech import narration_script

# Every input of the cost model has a flag, so any storyboard value can be reproduced.
_FLAG_TYPES: dict[str, Any] = {"zero": int, "mfu": float, "routing_imbalance": float}
# Yes/no inputs are --name / --no-name switches (`--checkpointing`, `--no-flash-attention`).
SWITCHES = tuple(name for name in SPECS if isinstance(BUILTIN.get(name), bool))
INPUT_FLAGS: dict[str, tuple[str, Any]] = {
    "--" + name.replace("_", "-"): (name, _FLAG_TYPES.get(name, str)) for name in SPECS if name not in SWITCHES
}


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `--seq-len -4K` and `--params -7B` are values (refused by their ranges in one line), not
        # flags: argparse takes only -5 and -0.5 for numbers, and said "expected one argument".
        self._negative_number_matcher = re.compile(r"^-[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[KMBGTkmbgt]?$")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"dtfilm: error: {message} (see {self.prog} --help)\n")


def _add_input_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("inputs (a flag left out takes the storyboard's value)")
    for flag, (name, kind) in INPUT_FLAGS.items():
        extra = ""
        if name == "model":
            extra = f" ({', '.join(BUILTIN_CATALOG.models)}, or any in storyboard/catalog.yaml)"
        elif name == "gpu":
            extra = f" ({', '.join(BUILTIN_CATALOG.cards)}, or any in storyboard/catalog.yaml)"
        elif name == "global_batch":
            extra = "; micro-batches per replica follow (for plan: the batch it searches within, default the inputs')"
        group.add_argument(flag, dest=f"in_{name}", type=kind, metavar=name.upper(), help=f"{SPECS[name].help}{extra}")
    for name in SWITCHES:
        flag = name.replace("_", "-")
        group.add_argument(
            f"--{flag}",
            dest=f"in_{name}",
            action=argparse.BooleanOptionalAction,
            help=f"{SPECS[name].help}, or --no-{flag}",
        )


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    out = {}
    for key, value in vars(args).items():
        if key.startswith("in_") and value is not None:
            out[key[3:]] = value
    if "zero" in out:
        out["zero"] = int(out["zero"])
    return out


def _film_values(overrides: dict[str, Any]) -> tuple[dict[str, Any], Catalog]:
    """Inputs without a chapter, and the catalog their names are read in: the film's defaults
    and catalog when inside a project, else the built-in ones."""
    try:
        root = find_root()
    except DtfilmError:
        return resolve([builtin_layer(), flag_layer(overrides)]), BUILTIN_CATALOG
    film = load_film(root / "storyboard" / "film.yaml")
    return resolve([builtin_layer(), film.defaults, flag_layer(overrides, film.catalog)], film.catalog), film.catalog


def _estimate_numbers(storyboard: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
    if storyboard:
        return load_chapter(storyboard, overrides, drawable=False).numbers.data
    return estimate(*_film_values(overrides))


def _nonfinite(value: Any, path: str = "") -> str | None:
    """The dotted path of the first number in `value` that is NaN or infinite, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path or 'the value'} = {value}"
    if isinstance(value, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((found for key, v in items if (found := _nonfinite(v, key))), None)


def _print_json(value: Any) -> None:
    """Strict JSON (RFC 8259 has no NaN or Infinity), whole or not at all."""
    found = _nonfinite(value)
    if found is not None:
        raise DtfilmError(
            f"{found}, which JSON cannot hold; valid: inputs and catalog figures inside their supported ranges",
            Where(flag="--json"),
        )
    sys.stdout.write(json.dumps(value, indent=2, allow_nan=False) + "\n")


def cmd_estimate(args: argparse.Namespace) -> int:
    numbers = _estimate_numbers(args.storyboard, _overrides(args))
    if args.json:
        _print_json(numbers)
    else:
        print(estimate_table(numbers))
    return 0


def _add_verbose_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show Manim's own log lines as well (they are kept in renders/logs/manim.log)",
    )


def _show_manim_lines(args: argparse.Namespace) -> None:
    """--verbose, for the drawing processes too (they inherit the environment)."""
    if args.verbose:
        os.environ[VERBOSE_VARIABLE] = "1"


def cmd_render(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.publish.slides import rebuild_stale_slides
    from dtfilm.render.chapters import render_chapters
    from dtfilm.render.one_shot import render_one_shot, split_target

    _show_manim_lines(args)
    shots = [split_target(name) for name in args.chapters]
    if any(shots):  # chapter:beat, one shot drawn alone (renders/one/)
        if len(shots) > 1 or args.watch:
            raise DtfilmError("draws one shot at a time (chapter:beat) and alone", Where(flag=args.chapters[0]))
        chapter, beat = shots[0]
        out = Path(args.out) if args.out else None
        render_one_shot(chapter, beat, _overrides(args), args.quality, out, args.theme)
        return 0
    if args.watch:
        return watch(args.chapters, Path(args.out) if args.out else None, _overrides(args), args.theme, jobs=args.jobs)
    render_chapters(
        args.chapters,
        quality=args.quality,
        out_dir=Path(args.out) if args.out else None,
        overrides=_overrides(args),
        theme=args.theme,
        jobs=args.jobs,
        force=args.force,
        formats=args.format,
        cluster=args.cluster,
        cluster_wait_seconds=args.cluster_wait,
    )
    # what was made from the renders before (the slide deck), made again once, at the end
    rebuild_stale_slides(Path(args.out) if args.out else None)
    return 0


def cmd_still(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.one_shot import split_target, write_still

    _show_manim_lines(args)
    target = split_target(args.shot)
    if target is None:
        raise DtfilmError(f"{args.shot!r} names no shot; valid: chapter:beat, such as dp:ring", Where(flag="still"))
    out = Path(args.out) if args.out else None
    write_still(*target, args.at, _overrides(args), args.quality, out, args.theme)
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.clean import clean

    for line in clean(Path(args.out) if args.out else None).lines():
        print(line)
    return 0


def _whole(least: int, most: int):
    """An argparse type: a whole number from `least` to `most`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not least <= value <= most:
            raise argparse.ArgumentTypeError(
                f"{text!r} is out of range; valid: a whole number from {least:,} to {most:,}"
            )
        return value

    return parse


MAX_JOBS = 1024
_jobs = _whole(1, MAX_JOBS)
_port = _whole(0, 65535)


def _seconds(text: str) -> float:
    """An argparse type: a time into a shot, finite (the shot's own length is checked later)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds; valid: 0 or more seconds")
    return value


def _still_seconds(text: str) -> float:
    """An argparse type: how long a still must last, a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a length of a still; valid: seconds above 0, such as 3")
    return value


def _host(text: str) -> str:
    """An argparse type: an address to listen on, named (`""` bound every interface)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} names no address; valid: a host name or address, such as 127.0.0.1 (0.0.0.0 for every interface)"
        )
    return text


def _cluster(text: str) -> str:
    """An argparse type: a Dask scheduler's address, or none (checked even when nothing is stale)."""
    if not is_scheduler_address(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Dask scheduler's address; valid: {SCHEDULER_TEXT}")
    return text


def _formats(text: str) -> tuple[str, ...]:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.sidecars import FORMATS

    chosen = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    if not chosen:
        raise argparse.ArgumentTypeError(f"{text!r} names no format; valid: {', '.join(FORMATS)} (comma-separated)")
    for name in chosen:
        if name not in FORMATS:
            raise argparse.ArgumentTypeError(
                f"{name!r} is not a format; valid: {', '.join(FORMATS)} (MP4 is always made)"
            )
    return chosen


def cmd_embed(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.cache import read_manifest
    from dtfilm.render.embed import EXPLORE, clip_size, copy_hint, explore_snippet, explore_title, snippet

    try:
        root: Path | None = find_root()
    except DtfilmError:
        if not args.out:
            raise
        root = None  # a renders folder alone: titles come from its manifest
    out = Path(args.out) if args.out else root / "renders"  # type: ignore[operator]
    manifest = read_manifest(out)
    if root is not None:
        film = load_film(root / "storyboard" / "film.yaml")
        titles = chapter_titles(film)
        where = Where("storyboard/film.yaml")
    else:
        titles = {c: e.get("title", c) for c, e in manifest["chapters"].items()}
        where = Where(str(out / "manifest.json"))
    if args.chapter == EXPLORE and EXPLORE not in titles:
        if not (out / EXPLORE / "index.html").is_file():
            print(f"dtfilm: warning: {out / EXPLORE}/index.html is not built yet (dtfilm page)", file=sys.stderr)
        title = explore_title(film_titles(film)[0].text) if root is not None else "Explore the rack"
        print(explore_snippet(title, args.as_, args.base))
        print(
            f"dtfilm: copy the folder {out / EXPLORE} (all of it) to the folder that '{args.base}/{EXPLORE}' names,"
            " resolved against the built page's URL",
            file=sys.stderr,
        )
        return 0
    if args.chapter not in titles:
        raise DtfilmError(f"no chapter {args.chapter!r}; valid: {', '.join(titles) or 'none rendered'}", where)
    if not (out / f"{args.chapter}.mp4").is_file():
        print(
            f"dtfilm: warning: {out / args.chapter}.mp4 is not rendered yet (dtfilm render {args.chapter})",
            file=sys.stderr,
        )
    size = clip_size(manifest["chapters"].get(args.chapter))
    print(snippet(args.chapter, titles[args.chapter], args.as_, args.base, size))
    print(copy_hint(args.chapter, out, args.as_, args.base), file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    folder = Path(args.out) if args.out else find_root() / "renders"
    if not folder.is_dir():
        raise DtfilmError("no such folder; render first (dtfilm render)", Where(str(folder)))
    return serve(folder, args.host, args.port)


def cmd_preview(args: argparse.Namespace) -> int:
    # (here: the preview draws with Manim, which `serve` does without)
    from dtfilm.publish.preview.server import preview

    _show_manim_lines(args)
    out = Path(args.out) if args.out else None
    return preview(args.shot, _overrides(args), args.theme, args.port, out)


def cmd_validate(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.system.atomic import write_text_atomic

    if args.ranks < 2:
        raise DtfilmError(f"{args.ranks} is not enough ranks; valid: 2 or more", Where(flag="--ranks"))
    report = validate(args.ranks, parse_strategies(args.strategies), gpu=args.gpu)
    if args.out:
        out = Path(args.out)
    else:
        try:
            out = find_root() / "renders"
        except DtfilmError:
            out = Path("renders")
    beneath.mark(out)  # (a folder given is checked first: _check_out)
    write_text_atomic(out / REPORT, json.dumps(report, indent=2))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(table(report))
        print(f"report: {out / REPORT}")
    return 0 if report["all_agree"] else 1


def cmd_slides(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.publish.slides import build_slides

    build_slides(args.chapters, Path(args.out) if args.out else None, pptx=not args.no_pptx, voice=args.voice)
    return 0


def _project_catalog() -> Catalog:
    """The catalog of the project here (the built-in names and storyboard/catalog.yaml's), else
    the built-in one (no project, or one that does not load: its command says why)."""
    with contextlib.suppress(DtfilmError):
        return load_film(find_root() / "storyboard" / "film.yaml").catalog
    return BUILTIN_CATALOG


def _listed(choices: Callable[[Catalog], Iterable[str]], what: str):
    """An argparse type: a comma-separated list, each item one of `choices(catalog)`: the
    built-in catalog's names, or where one is not, the project's catalog's."""

    def parse(text: str) -> tuple[str, ...]:
        items = tuple(item.strip() for item in text.split(",") if item.strip())
        catalog = BUILTIN_CATALOG
        if any(item not in choices(catalog) for item in items):
            catalog = _project_catalog()
        valid = list(choices(catalog))
        bad = [item for item in items if item not in valid]
        if not items or bad:
            raise argparse.ArgumentTypeError(
                f"{', '.join(bad) or 'nothing'} is not a {what}; valid: {', '.join(valid)} (comma-separated)"
            )
        return items

    return parse


def _stops(text: str) -> tuple[int, ...]:
    try:
        stops = tuple(sorted({int(item) for item in text.split(",") if item.strip()}))
    except ValueError:
        stops = ()
    if len(stops) < 2 or stops[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give two or more whole numbers of 1 or more, as 1,2,4,8,16,32")
    return stops


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
    print(paths_text(_estimate_numbers(args.storyboard, _overrides(args))))
    return 0


def cmd_narration(args: argparse.Namespace) -> int:
    for line in narration_script(load_chapter(args.storyboard, _overrides(args))):
        print(line)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.chapters import status_lines

    out = Path(args.out) if args.out else None
    for line in status_lines(
        args.quality, out, _overrides(args), args.theme, args.shots, verify=args.verify, chapter_ids=args.chapters
    ):
        print(for_terminal(line, keep_newlines=False))  # (a manifest's fields are read back: not trusted)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    specs = args.chapters or list(load_film(find_root() / "storyboard" / "film.yaml").chapters)
    overrides = _overrides(args)
    failed = 0
    for spec in specs:
        target = Path(spec) if spec.endswith((".yaml", ".yml")) else spec
        result = check_chapter(target, overrides, args.theme, reuse=not args.fresh)
        name = result.chapter.id
        print(f"{name}: {shown_path(result.chapter.path)} merged with {shown_path(result.film_yaml)}")
        for problem in result.problems:
            print(f"{name}: {problem}")
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
    records = chapter_claims(load_chapter(target, _overrides(args)))
    if args.json:
        json.dump([r.as_json() for r in records], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for record in records:
            print(record.line())
        false = sum(not r.holds for r in records)
        print(f"{len(records)} claim(s), {false} false" if false else f"{len(records)} claim(s), every one holds")
    return 1 if any(not r.holds for r in records) else 0


def cmd_plan(args: argparse.Namespace) -> int:
    if args.compare:
        return _compare(args)
    overrides = _overrides(args)
    # --global-batch is the batch the planner searches within, for any dp: the configuration it
    # starts from resolves without it (its own dp need not divide it)
    searched = overrides.pop("global_batch", None)
    if args.storyboard:
        chapter = load_chapter(args.storyboard, overrides, drawable=False)
        values, catalog = chapter.values, chapter.film.catalog
    else:
        values, catalog = _film_values(overrides)
    setup, _ = build_setup(values, catalog)
    where = Where(flag="--global-batch")
    # without it: the inputs' own (training.global_batch, else dp x micro_batches x micro_batch_size)
    global_batch = setup.dp * setup.micro_batches * setup.micro_batch_size
    if searched is not None:
        try:
            global_batch = flag_layer({"global_batch": searched})["global_batch"].value.whole_sequences(setup.seq_len)
        except ValueError as error:
            raise DtfilmError(str(error), where) from None
    reason = no_layout_reason(setup, global_batch)
    if reason is not None:  # nothing to evaluate: the question has no layout, not a layout that does not fit
        raise DtfilmError(reason, where if searched is not None else Where(flag="--cards"))
    # degrees (and ZeRO's stage) given as flags restrict the search; a storyboard's plan: does not
    fixed = {name: int(overrides[name]) for name in FIXABLE if name in overrides}
    if args.rank and not fixed:
        raise DtfilmError(
            "needs the plan to rank; valid: its degrees as flags, such as --rank --dp 8 --tp 8 --pp 4 --zero 1",
            Where(flag="--rank"),
        )
    # --rank: every plan is searched, and the given degrees are placed among them
    result = plan(setup, global_batch, top=args.top, fixed={} if args.rank else fixed)
    if args.rank:
        result["rank"] = rank(setup, global_batch, fixed)
    if args.json:
        _print_json(result)
    else:
        print(plan_table(setup, result))
        if args.rank:
            print("", *rank_lines(result["rank"]), sep="\n")
    return 0 if result["pick"] is not None else 1  # layouts exist, but none fits


def _compare(args: argparse.Namespace) -> int:
    if args.storyboard or _overrides(args):
        raise DtfilmError("takes a run or a runs file alone; its settings are the run's", Where(flag="--compare"))
    checks = [check_run(run) for run in runs_named(args.compare).values()]
    if args.json:
        _print_json([c.as_json() for c in checks])
    else:
        print("\n\n".join(compare_table(c) for c in checks))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dtfilm", description="Explainer films about distributed training.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_cost_commands(sub)
    _add_authoring_commands(sub)
    _add_render_command(sub)
    _add_renders_commands(sub)
    _add_sharing_commands(sub)
    _add_validate_command(sub)
    _add_publishing_commands(sub)
    _add_project_commands(sub)
    return parser


def _add_cost_commands(sub: Any) -> None:
    """`estimate` and `plan`: the cost model's numbers and its planner."""
    est = sub.add_parser("estimate", help="the cost model's numbers for a storyboard and flags")
    est.add_argument("storyboard", nargs="?", help="chapter id or path to its YAML")
    est.add_argument("--json", action="store_true", help="print the contract's JSON object")
    _add_input_flags(est)
    est.set_defaults(func=cmd_estimate)

    pln = sub.add_parser("plan", help="every plan for a model on N cards, ranked, with the reason for the pick")
    pln.add_argument("storyboard", nargs="?", help="chapter id or path to its YAML")
    pln.add_argument("--top", type=int, default=10, help="plans to list (default 10)")
    pln.add_argument(
        "--rank",
        action="store_true",
        help="search every plan and say where the one given by --dp/--tp/--pp/--cp/--zero ranks, what the"
        " faster plans change and why the pick is faster (without it those flags restrict the search)",
    )
    pln.add_argument("--json", action="store_true")
    pln.add_argument(
        "--compare",
        metavar="RUN|FILE|all",
        help="a published run (dtfilm/data/published_runs.yaml) or a file of runs beside the planner's pick",
    )
    _add_input_flags(pln)
    pln.set_defaults(func=cmd_plan)


def _add_authoring_commands(sub: Any) -> None:
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
    _add_input_flags(pth)
    pth.set_defaults(func=cmd_paths)

    nar = sub.add_parser("narration", help="each shot's narration as written and as the voice is given it")
    nar.add_argument("storyboard", help="chapter id or path to its YAML")
    _add_voice_flag(nar)
    _add_input_flags(nar)
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
    _add_voice_flag(chk)
    _add_input_flags(chk)
    chk.set_defaults(func=cmd_check)

    clm = sub.add_parser(
        "claims", help="every conclusion a chapter draws: its condition, values, whether it holds (exit 1: one fails)"
    )
    clm.add_argument("storyboard", help="chapter id or path to its YAML")
    clm.add_argument("--json", action="store_true", help="a list of objects (docs/contract.md)")
    _add_input_flags(clm)
    clm.set_defaults(func=cmd_claims)


def _add_render_command(sub: Any) -> None:
    """`render`."""
    ren = sub.add_parser("render", help="render chapters to renders/<chapter>.mp4")
    ren.add_argument(
        "chapters", nargs="*", help="chapter ids (default: every chapter of film.yaml), or chapter:beat for one shot"
    )
    ren.add_argument("--quality", choices=QUALITY_NAMES, default="preview")
    ren.add_argument("--out", help="output folder (default: renders/ of the project)")
    ren.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    _add_voice_flag(ren)
    ren.add_argument(
        "--jobs", type=_jobs, default=os.cpu_count() or 1, help="shots drawn at once, here (default: the cores)"
    )
    ren.add_argument("--force", action="store_true", help="render even the chapters that are fresh")
    ren.add_argument(
        "--cluster",
        type=_cluster,
        metavar="ADDRESS",
        help="draw the stale shots on this Dask scheduler (tcp:// or tls://; none: here); default:"
        " $DTFILM_CLUSTER, else film.yaml's scheduler:, else here. Trust it: Dask runs pickled code",
    )
    ren.add_argument(
        "--cluster-wait",
        type=_wait_seconds,
        default=None,
        metavar="SECONDS",
        help="how long to wait for a first worker on a scheduler that has none yet (an adaptive cluster scales up"
        " when work arrives; default 120)",
    )
    ren.add_argument("--watch", action="store_true", help="re-render stale chapters at preview on every save")
    ren.add_argument(
        "--format", type=_formats, default=(), help="also write these copies of each clip: gif, webm or gif,webm"
    )
    _add_input_flags(ren)
    _add_verbose_flag(ren)
    ren.set_defaults(func=cmd_render)


def _add_renders_commands(sub: Any) -> None:
    """`still`, `clean` and `status`: one frame, and what renders/ holds."""
    stl = sub.add_parser("still", help="one frame of one shot as a PNG (renders/one/), like manim -s")
    stl.add_argument("shot", help="chapter:beat, as `dtfilm kinds` and the storyboard name them (dp:ring)")
    stl.add_argument("--at", type=_seconds, required=True, help="seconds into the shot")
    stl.add_argument("--quality", choices=QUALITY_NAMES, default="preview")
    stl.add_argument("--out", help="output folder (default: renders/ of the project)")
    stl.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    _add_voice_flag(stl)
    _add_input_flags(stl)
    _add_verbose_flag(stl)
    stl.set_defaults(func=cmd_still)

    cln = sub.add_parser("clean", help="evict cached audio and renders no current storyboard uses")
    cln.add_argument("--out", help="renders folder (default: renders/ of the project)")
    _add_voice_flag(cln)
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
    _add_voice_flag(sta)
    _add_input_flags(sta)
    sta.set_defaults(func=cmd_status)


def _add_sharing_commands(sub: Any) -> None:
    """`embed`, `serve` and `preview`: the clips in a page, and a shot drawn as it is edited."""
    emb = sub.add_parser("embed", help="print the snippet that embeds a chapter's clip in a docs page")
    emb.add_argument("chapter", help="chapter id, or explore for the explorer page (dtfilm page)")
    emb.add_argument("--as", dest="as_", choices=("html", "markdown", "rst"), default="html")
    emb.add_argument(
        "--base", default="renders", help="URL of the renders folder, resolved against the built page's URL"
    )
    emb.add_argument("--out", help="the renders folder (default: renders/ of the project; alone, it is enough)")
    emb.set_defaults(func=cmd_embed)

    srv = sub.add_parser("serve", help="serve renders/ over HTTP (browsers refuse subtitles from file://)")
    srv.add_argument("--out", help="folder to serve (default: renders/ of the project)")
    srv.add_argument("--host", type=_host, default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    srv.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0 picks a free one)")
    srv.set_defaults(func=cmd_serve)

    pvw = sub.add_parser(
        "preview",
        help="a page on 127.0.0.1 showing one shot, drawn again at preview quality on every save, with its numbers,"
        " claims and errors",
        description="Serves a page on 127.0.0.1 showing the shot at the moment it shows everything (before its"
        " caption leaves), drawn again at preview quality whenever a storyboard or storyboard/catalog.yaml is saved;"
        " beside it the texts, the estimate values they show and the claims they draw; a save that does not load"
        " shows its one-line error and keeps the last frame. The frame is written under renders/one/.",
    )
    pvw.add_argument("shot", help="CHAPTER:SHOT (dp:ring), or CHAPTER for its first shot")
    pvw.add_argument("--port", type=_port, default=8001, help="port (default 8001; 0 picks a free one)")
    pvw.add_argument("--out", help="renders folder the frame is written to (default: renders/ of the project)")
    pvw.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    _add_voice_flag(pvw)
    _add_input_flags(pvw)
    _add_verbose_flag(pvw)
    pvw.set_defaults(func=cmd_preview)


def _add_validate_command(sub: Any) -> None:
    """`validate`: the cost model against PyTorch distributed."""
    val = sub.add_parser("validate", help="check the cost model against PyTorch distributed on CPU ranks")
    val.add_argument("--ranks", type=int, default=4, help="processes (default 4)")

    every = ",".join(STRATEGIES)
    val.add_argument("--strategies", default=every, help=f"default: {every}")
    val.add_argument("--json", action="store_true", help="print the report as JSON")
    val.add_argument(
        "--gpu",
        action="store_true",
        help="also measure one bf16 step of a ~1B model on a CUDA card, and the overlap check on NCCL (2+ cards)",
    )
    val.add_argument("--out", help="folder for validation.json (default: renders/ of the project)")
    val.set_defaults(func=cmd_validate)


def _add_publishing_commands(sub: Any) -> None:
    """`page` and `slides`."""
    pge = sub.add_parser("page", help="the explorer page (renders/explore/): the rack, pills, slider, stats, film")

    pge.add_argument(
        "--models",
        type=_listed(lambda catalog: catalog.models, "model preset"),
        default=DEFAULT_MODELS,
        help=f"the model picker's presets (default: {','.join(DEFAULT_MODELS)})",
    )
    pge.add_argument(
        "--gpus",
        type=_listed(lambda catalog: catalog.cards, "card type"),
        default=DEFAULT_GPUS,
        help=f"the card picker's types (default: {','.join(DEFAULT_GPUS)})",
    )
    pge.add_argument("--cards", type=int, default=DEFAULT_CARDS, help=f"cards in the rack (default {DEFAULT_CARDS})")
    pge.add_argument(
        "--micro-batches",
        type=_stops,
        default=MICRO_BATCHES,
        help=f"the slider's stops (default: {','.join(map(str, MICRO_BATCHES))})",
    )
    pge.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1, help="processes drawing pictures")
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


def _version() -> str:
    return f"dtfilm {metadata.version('dtfilm')} (Manim {metadata.version('manim')})"


def _add_project_commands(sub: Any) -> None:
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
            look.add_argument("-n", "--frames", type=_tiles, default=12, help="frames on the sheet (default 12)")
            look.add_argument("--columns", type=_tiles, default=4, help="tiles a row (default 4)")
            look.add_argument("--width", type=_tile_width, default=427, help="a tile's width in pixels (default 427)")
            look.add_argument("-o", "--output", help="the PNG (default: beside the clip, CLIP.sheet.png)")
            look.set_defaults(func=cmd_sheet)
        else:
            look.add_argument("--list", action="store_true", help="every still of --min-still seconds or more")
            look.add_argument(
                "--min-still", type=_still_seconds, default=3.0, help="seconds a still must last to count"
            )
            look.add_argument("--json", action="store_true")
            look.add_argument(
                "--strict",
                action="store_true",
                help="exit 1 when the speech is past a bound (dtfilm check's, and"
                " under 5%% of it over stills of 2.5 s or more)",
            )
            look.set_defaults(func=cmd_pacing)


def _wait_seconds(text: str) -> float:
    """An argparse type: a wait, finite (`_seconds`), more than 0 and at most a day."""
    value = _seconds(text)
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 86400")
    return value


_tiles = _whole(1, 1_000)  # frames on a contact sheet, tiles a row
_tile_width = _whole(1, 8_000)  # pixels


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
        return clip, []
    return out / f"{chapter}.mp4", shots


def cmd_sheet(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.look import clip_seconds, contact_sheet

    clip, _ = _clip(args)
    target = Path(args.output) if args.output else clip.with_suffix(".sheet.png")
    tiled = contact_sheet(clip, target, args.frames, args.columns, args.width)
    if not tiled:
        raise DtfilmError("no frames could be decoded", Where(str(clip)))
    print(f"{target}: {tiled} frames of {clip_seconds(clip):.1f} s")
    return 0


def cmd_pacing(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.film_subtitles import chapter_cues
    from dtfilm.render.look import MAX_SPEECH_OVER_STILLS, SPEECH_STILL_SECONDS, pacing, speech_over_stills

    clip, shots = _clip(args)
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


def _add_voice_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--voice",
        help="the narrator instead of film.yaml's: joe, a Piper .onnx model, or none for silent clips",
    )


# Commands that write into their --out folder (renders/ of the project by default).
WRITING = frozenset({"render", "still", "clean", "page", "slides", "validate", "preview"})
NAME_TEXT = "names of at most 255 bytes, paths of at most 4,096"


def _shown_name(name: object) -> str:
    """A path an error names, shortened past 120 characters (a 300-byte name is the error)."""
    text = str(name) if name else "a path"
    return text if len(text) <= 120 else f"{text[:60]}…{text[-40:]} ({len(text.encode()):,} bytes)"


# Those that may make their --out folder, or take an empty one, and mark it a renders folder;
# every other command refuses a folder without the mark or a manifest (dtfilm.beneath).
MAKING = frozenset({"render", "still", "validate", "preview"})


def _check_out(args: argparse.Namespace) -> None:
    """The folder a command reads or writes: a folder if it is there (not /etc/passwd), and one
    it can write in for a command that writes; refused in one line before any work starts."""
    given = getattr(args, "out", None)
    if given:
        folder, where = Path(given), Where(flag="--out")
    elif args.command in WRITING or hasattr(args, "out"):  # (every command with a renders folder)
        try:
            folder = find_root() / "renders"
        except DtfilmError:
            return  # (the command says so itself)
        where = Where(str(folder))
    else:
        return
    if folder.exists() and not folder.is_dir():
        raise DtfilmError(f"{folder} is not a folder; valid: a folder (made if missing)", where)
    # (a folder given that is not a renders folder is refused here, before anything is made in it)
    beneath.check_renders_folder(
        folder, given=bool(given), may_make=args.command in MAKING, writes=args.command in WRITING, where=where
    )
    if args.command in WRITING and folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise DtfilmError("cannot write here (read-only); valid: a folder you can write", Where(str(folder)))


def _unwritable(error: OSError) -> int:
    """A folder made read-only, or a disk that filled, under a command that had begun: one line
    naming it (a full disk's folder, as every file in it fails alike), exit status 2."""
    print(
        f"dtfilm: error: {where_unwritable(error)}: {error.strerror or error}; valid: a folder you can write,"
        " with room",
        file=sys.stderr,
    )
    return 2


def _note_caches() -> None:
    """The project's cache (.dtfilm-cache/: spoken sentences, typeset labels) is read and
    written beneath itself, no link followed, as renders/ is (dtfilm.beneath)."""
    with contextlib.suppress(DtfilmError):
        beneath.register(find_root() / ".dtfilm-cache", scratch=False)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if isinstance(getattr(args, "voice", None), str):  # (`slides --voice` is a switch, not a voice)
        # read where the command loads its film (drawing processes are handed the voice read
        # then: ShotJob.voice); a model's path as from here, wherever they run
        voice = os.path.abspath(os.path.expanduser(args.voice)) if args.voice.endswith(".onnx") else args.voice
        os.environ[VOICE_VARIABLE] = voice
        voice_from_flag(voice)
    else:
        voice_from_flag(None)
    try:
        _check_out(args)
        _note_caches()
        return int(args.func(args))
    except DtfilmError as error:
        print(f"dtfilm: error: {error.line()}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dtfilm paths | head`: the reader has what it wanted
        # (before OSError, which it is: there it was re-raised as a traceback)
        sys.stderr.close()
        return 0
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:  # a name given (--out, a chapter, a sheet) longer than a folder takes
            print(
                f"dtfilm: error: {_shown_name(error.filename)}: {error.strerror}; valid: {NAME_TEXT}", file=sys.stderr
            )
            return 2
        if error.errno not in UNWRITABLE:
            raise
        return _unwritable(error)
    except Exception as error:  # a library's wrapper of one (Manim's encoder: "Failed to finish video segment")
        cause = unwritable_cause(error)
        if cause is None:
            raise
        return _unwritable(cause)
    except KeyboardInterrupt:
        print("dtfilm: interrupted; earlier renders are untouched", file=sys.stderr)
        return 130


def run() -> None:
    """The command line (`dtfilm`, `python -m dtfilm`): `main`, then out at once. A render that
    drew leaves Manim, PyAV and numpy loaded, and tearing the interpreter down took 0.2 to 0.4 s
    after it; by now every file dtfilm writes is closed (atomic renames), every lock released
    and every worker process gone. A command that fails unexpectedly exits as Python does."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # (stderr is closed after a broken pipe)
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
