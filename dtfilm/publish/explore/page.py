"""`dtfilm page`: renders/explore/, seed 000's interactive page.

Every state's numbers are computed here, ahead, by the cost model and written into states.js
(a script, not JSON fetched at run time, so the page works from file://); the page's script
only looks a state up and shows it. Every state's picture is a still drawn with the film's
visuals (dtfilm.publish.explore.picture), cached under renders/cache/explore/ by a key of what it draws,
so a rebuild draws only the pictures whose drawn numbers changed. The page is written into a
staging folder and renamed into place whole.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from dtfilm.cost import builtin_layer, estimate, resolve
from dtfilm.cost.inputs import Value
from dtfilm.errors import DtfilmError, Where
from dtfilm.phrases import render_template
from dtfilm.publish.explore import words
from dtfilm.publish.explore.picture import PictureFacts, picture_facts
from dtfilm.publish.explore.states import (
    DEFAULT_CARDS,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    EXPERT_PILLS,
    MICRO_BATCHES,
    PILL_CHAPTERS,
    PILL_NAMES,
    PILLS,
    PRECISIONS,
    STATS,
    Grid,
    State,
    experts_of,
    offered,
    stat_rows,
    state_values,
)
from dtfilm.publish.explore.stills import STILLS_CACHE, THEME_NAMES, draw_missing, stills
from dtfilm.render.cache import read_manifest
from dtfilm.render.embed import EXPLORE, explore_title, write_gallery
from dtfilm.storyboard.film import film_titles, find_root, load_film
from dtfilm.storyboard.load import chapter_titles
from dtfilm.visuals.theme import THEMES

PAGE_FOLDER = EXPLORE  # renders/explore/
ASSETS = Path(__file__).resolve().parent / "assets"
CHAPTER_FILES = ("mp4", "png")

PLAN_LINE = (
    "dp {plan.dp:int} · tp {plan.tp:int} · pp {plan.pp:int} · {cuts}ZeRO {plan.zero:int} ·"
    " {inputs.micro_batches:int} micro-batches of {inputs.micro_batch_size:int} × {inputs.seq_len:K} tokens"
)
CUTS = ("cp", "ep")  # in the plan line only where split (the contract's order: dp x tp x pp x cp, then ep)
VERDICT_FITS = "of {memory.capacity:GB} · fits, {memory.headroom:bytes} spare"  # (132 MB, not 0.13 GB)
VERDICT_OOM = "{memory.over_capacity:x} the {memory.capacity:GB} card · out of memory"


@dataclass(frozen=True)
class PageOptions:
    models: tuple[str, ...] = DEFAULT_MODELS
    gpus: tuple[str, ...] = DEFAULT_GPUS
    cards: int = DEFAULT_CARDS
    micro_batches: tuple[int, ...] = MICRO_BATCHES
    jobs: int = 1
    film: bool = True  # render the pills' chapters first (stale ones only) and embed them
    quality: str = "preview"


@dataclass
class Built:
    states: int
    pictures: int
    drawn: int
    seconds: float
    bytes: int
    folder: Path
    missing_chapters: list[str] = field(default_factory=list)


def _text(template: str, numbers: dict[str, Any]) -> str:
    return render_template(template, numbers, ()).text


def default_state(grid: Grid, defaults: dict[str, Value], pill: str = "DP") -> State:
    """The state the page opens on: the film's model, card and micro-batches where the page
    offers them, bf16, no checkpointing."""
    base = resolve([builtin_layer(), defaults], grid.catalog)
    model = str(base["model"].value) if str(base["model"].value) in grid.models else grid.models[0]
    gpu = str(base["gpu"].value) if str(base["gpu"].value) in grid.gpus else grid.gpus[0]
    m = int(base["micro_batches"].value)
    m = m if m in grid.micro_batches else grid.micro_batches[len(grid.micro_batches) // 2]
    precision = str(base["precision"].value)
    return State(model, gpu, pill, m, precision if precision in grid.precisions else "bf16", False)


def _state_entry(state: State, numbers: dict[str, Any], picture: int) -> dict[str, Any]:
    fits = bool(numbers["memory"]["fits"])
    alt = _text(
        "{cluster.cards:int} {cluster.gpu_label} cards, " + PILL_NAMES[state.pill] + ": the most loaded card holds"
        " {memory.total:GB} of {memory.capacity:GB}",
        numbers,
    )
    if not fits:
        alt += ", out of memory"
    if numbers["plan"]["pp"] > 1:
        alt += _text("; the pipeline's bubble is {pipeline.bubble_fraction:%} of the step", numbers)
    if numbers["plan"]["ep"] > 1:
        alt += _text("; each token's experts reached by an all-to-all of {comm.ep:bytes} a card a step", numbers)
    cuts = "".join(f"{g} {{plan.{g}:int}} · " for g in CUTS if numbers["plan"][g] > 1)
    return {
        "stats": [[row["text"], row["value"]] for row in stat_rows(numbers)],
        "verdict": _text(VERDICT_FITS if fits else VERDICT_OOM, numbers),
        "fits": fits,
        "plan": _text(PLAN_LINE.replace("{cuts}", cuts), numbers),
        "alt": alt,
        "picture": picture,
    }


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _publish(staging: Path, folder: Path) -> None:
    """Rename the staged page over the old one: the old page stays whole until the rename."""
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=".explore-old-", dir=folder.parent))
        os.rename(folder, old / "page")
    os.rename(staging, folder)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _chapters(root: Path, out_dir: Path, options: PageOptions, film: Any) -> dict[str, Any]:
    """Each pill's film chapter (clip, poster, subtitles inline), rendering stale ones first."""
    wanted = [PILL_CHAPTERS[p] for p in PILLS if PILL_CHAPTERS[p] in film.chapters]
    if options.film and wanted:
        # (here: Pillow, only where a picture is written)
        from dtfilm.render.chapters import render_chapters
        from dtfilm.render.job import RenderRequest

        render_chapters(wanted, RenderRequest(quality=options.quality, out_dir=out_dir), jobs=options.jobs)
    titles = chapter_titles(film)
    out: dict[str, Any] = {}
    for pill in PILLS:
        chapter = PILL_CHAPTERS[pill]
        if chapter in wanted and all((out_dir / f"{chapter}.{ext}").is_file() for ext in CHAPTER_FILES):
            vtt = out_dir / f"{chapter}.vtt"
            out[pill] = {
                "id": chapter,
                "title": titles[chapter],
                "src": f"film/{chapter}.mp4",
                "poster": f"film/{chapter}.png",
                # inline, so that subtitles show from file:// too (browsers refuse a track file there)
                "vtt": "data:text/vtt;base64," + base64.b64encode(vtt.read_bytes()).decode() if vtt.is_file() else "",
            }
    return out


def _maths(reference: dict[str, Any]) -> dict[str, Any]:
    per = reference["bytes_per_param"]
    return {
        "parts": [per[p] for p in ("weights", "gradients", "master_weights", "adam_m", "adam_v")],
        "total": per["total"],
    }


def _expert_model(grid: Grid) -> str | None:
    """The first mixture-of-experts model the picker offers (None: the page has none)."""
    return next((m for m in grid.models if offered(EXPERT_PILLS[0], m, grid.catalog)), None)


def dense_reasons(grid: Grid) -> dict[str, str]:
    """Why the EP pill is disabled for each model it is ("" where it is offered): a dense
    model's experts, 0 in the cost model's shape."""
    moe, models = _expert_model(grid), grid.catalog.models
    such = "" if moe is None else f", such as {models[moe].label}"
    why = "{label} is dense ({experts} experts): expert parallelism needs a mixture of experts{such}."
    return {
        m: ""
        if offered(EXPERT_PILLS[0], m, grid.catalog)
        else why.format(label=models[m].label, experts=experts_of(m, grid.catalog), such=such)
        for m in grid.models
    }


def _prose(grid: Grid, defaults: dict[str, Value], cards: int) -> dict[str, str]:
    """Seed 000's paragraphs with the numbers of their reference states (the EP pill's on the
    picker's first mixture-of-experts model; a page without one says the pill needs one)."""
    references: dict[str, dict[str, Any]] = {}
    moe = _expert_model(grid)
    for name, (pill, changes) in words.REFERENCES.items():
        base = default_state(grid, defaults, pill)
        if pill in EXPERT_PILLS:
            if moe is None:
                continue
            base = State(**{**base.__dict__, "model": moe})
        state = State(**{**base.__dict__, **changes})
        references[name] = estimate(state_values(state, cards, defaults, grid.catalog), grid.catalog)
    out = {"intro": _text(words.INTRO[1], references[words.INTRO[0]])}
    for pill, (name, template) in words.PILL_TEXT.items():
        out[pill] = _text(template, references[name]) if name in references else words.NO_EXPERTS
    out["switches"] = _text(words.SWITCHES_TEXT[1], references[words.SWITCHES_TEXT[0]])
    out["small_print"] = _text(words.SMALL_PRINT[1], references[words.SMALL_PRINT[0]])
    for name, (reference, template) in words.MATHS_TEXT.items():
        out[f"maths_{name}"] = _text(template, references[reference])
    out["maths"] = _maths(references["DP"])  # type: ignore[assignment]
    return out


def page_states(grid: Grid, defaults: dict[str, Value]) -> tuple[dict[str, Any], list[PictureFacts]]:
    """Every state's entry for states.js, and the distinct pictures they use."""
    states: dict[str, Any] = {}
    pictures: dict[str, int] = {}  # by identity
    drawn: list[PictureFacts] = []
    for state in grid.states():
        values = state_values(state, grid.cards, defaults, grid.catalog)
        try:
            numbers = estimate(values, grid.catalog)
        except DtfilmError as error:
            raise DtfilmError(
                f"the page's {state.pill} pill on {grid.cards} cards is not a plan the cost model accepts:"
                f" {error.message}",
                Where(flag="--cards"),
            ) from None
        facts = picture_facts(numbers)
        if facts.identity not in pictures:
            pictures[facts.identity] = len(drawn)
            drawn.append(facts)
        states[state.key] = _state_entry(state, numbers, pictures[facts.identity])
    return states, drawn


def build_page(options: PageOptions, out_dir: Path | None = None) -> Built:
    started = time.perf_counter()
    root = find_root()
    out_dir = out_dir or root / "renders"
    film = load_film(root / "storyboard" / "film.yaml")

    _check_cards(options.cards, film)
    grid = Grid(options.models, options.gpus, options.cards, options.micro_batches, catalog=film.catalog)
    states, distinct = page_states(grid, film.defaults)
    prose = _prose(grid, film.defaults, options.cards)
    chapters = _chapters(root, out_dir, options, film)

    cache = out_dir / STILLS_CACHE
    names, todo = stills(distinct, cache)
    used = {name for row in names for name in row}
    cache.mkdir(parents=True, exist_ok=True)
    draw_missing(root, todo, options.jobs)

    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".explore-", dir=out_dir))
    try:
        for name in used:
            _link_or_copy(cache / name, staging / "stills" / name)
        for chapter in chapters.values():
            for ext in CHAPTER_FILES:
                _link_or_copy(out_dir / f"{chapter['id']}.{ext}", staging / "film" / f"{chapter['id']}.{ext}")
        sizes = {}
        # (here: Pillow, only where a picture is written)
        from PIL import Image

        for row in names:
            with Image.open(cache / row[0]) as image:
                sizes[row[0]] = image.size
        opening = default_state(grid, film.defaults)
        reasons = dense_reasons(grid)
        (staging / "states.js").write_text(
            _states_js(grid, states, names, sizes, chapters, opening, reasons), encoding="utf-8"
        )
        for asset in ("explore.css", "explore.js"):
            shutil.copy2(ASSETS / asset, staging / asset)
        html = render_page(grid, film, states, names, sizes, chapters, prose, opening, reasons)
        (staging / "index.html").write_text(html, encoding="utf-8")
        _publish(staging, out_dir / PAGE_FOLDER)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    write_gallery(out_dir, film, read_manifest(out_dir))  # its link to the page
    for stale in cache.glob("*.webp"):
        if stale.name not in used:
            stale.unlink()
    folder = out_dir / PAGE_FOLDER
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    missing = [PILL_CHAPTERS[p] for p in PILLS if p not in chapters]
    pictures = len(names) * len(THEME_NAMES)
    return Built(len(states), pictures, len(todo), time.perf_counter() - started, size, folder, missing)


def _check_cards(cards: int, film: Any) -> None:
    """A rack the pills can split: tensor and pipeline groups kept inside a node."""
    per_node = int(resolve([builtin_layer(), film.defaults], film.catalog)["cards_per_node"].value)
    if cards < 1 or (cards > per_node and cards % per_node):
        raise DtfilmError(
            f"{cards} cards: the pills keep tensor and pipeline groups inside a node of {per_node};"
            f" valid: 1 to {per_node} cards, or a whole number of nodes ({per_node * 2}, {per_node * 4}, ...)",
            Where(flag="--cards"),
        )


def _states_js(
    grid: Grid,
    states: dict[str, Any],
    names: list[list[str]],
    sizes: dict[str, tuple[int, int]],
    chapters: dict[str, Any],
    opening: State,
    reasons: dict[str, str],
) -> str:
    """states.js: every state's numbers and picture, the chapters, the opening state, and the
    pills a model is not offered, each with why (the EP pill for a dense model)."""
    data = {
        "states": states,
        "pictures": [[*row, *sizes[row[0]]] for row in names],
        "chapters": chapters,
        "opening": opening.key,
        "micro_batches": list(grid.micro_batches),
        "disabled": {m: {p: reasons[m] for p in EXPERT_PILLS if reasons[m]} for m in grid.models},
    }
    return "window.DTFILM_EXPLORE = " + json.dumps(data, separators=(",", ":")) + ";\n"


def _theme_variables(theme: Any) -> dict[str, str]:
    return {
        "bg": theme.background,
        "text": theme.text,
        "muted": theme.muted,
        "faint": theme.faint,
        "panel": theme.panel,
        "accent": theme.accent,
        "oom": theme.oom,
        "edge": theme.card_edge,
    }


def render_page(
    grid: Grid,
    film: Any,
    states: dict[str, Any],
    names: list[list[str]],
    sizes: dict[str, tuple[int, int]],
    chapters: dict[str, Any],
    prose: dict[str, Any],
    opening: State,
    reasons: dict[str, str] | None = None,
) -> str:
    """index.html, with the opening state already shown (the page reads without its script)."""
    env = Environment(
        loader=FileSystemLoader(ASSETS), autoescape=select_autoescape(["html", "j2"]), keep_trailing_newline=True
    )
    first = states[opening.key]
    dark, light = names[first["picture"]]
    return env.get_template("index.html.j2").render(
        title=explore_title(film_titles(film)[0].text),
        cards=grid.cards,
        models=[(m, grid.catalog.models[m].label) for m in grid.models],
        gpus=[(g, grid.catalog.cards[g].label) for g in grid.gpus],
        pills=[(p, PILL_NAMES[p]) for p in PILLS],
        # the opening model's disabled pills and why (the script updates them as the model changes)
        disabled={
            p: (reasons or {}).get(opening.model, "") for p in EXPERT_PILLS if (reasons or {}).get(opening.model)
        },
        micro_batches=list(grid.micro_batches),
        precisions=[p for p in PRECISIONS if p in grid.precisions],
        stats=[name for name, _, _ in STATS],
        opening=opening,
        first=first,
        picture={"dark": dark, "light": light, "size": sizes[dark]},
        chapter=chapters.get(opening.pill),
        prose=prose,
        film_small_print=film.small_print,
        themes={name: _theme_variables(THEMES[name]) for name in THEME_NAMES},
    )
