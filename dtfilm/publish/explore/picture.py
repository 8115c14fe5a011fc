"""A state's picture: the rack drawn with the film's own visuals, as a still.

Each drawn card carries its piece of the loaf (PieceMap: the layers and the slice of every
matrix it holds) and its memory gauge from the cost model's ledger for its pipeline stage; under
a pipeline the timeline of the schedule sits below, its idle slots the bubble. The picture's
key hashes exactly what it draws (`picture_facts`) and the code that draws it, so a state
whose drawn facts did not change keeps its still.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dtfilm.cost.comm import rank_coordinates
from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.numbers import Numbers
from dtfilm.visuals.theme import THEMES

PIXEL_WIDTH = 1280  # the still's width; its height follows what it shows
FRAME_WIDTH = 14.2
MARGIN = 0.3
PALETTE_COLOURS = 256
PICTURE_FILES = (
    "publish/explore/picture.py",
    "shots/common/draw.py",
    "visuals/card.py",
    "visuals/grid.py",
    "visuals/rack.py",
    "visuals/text.py",
    "visuals/theme.py",
    "visuals/timeline.py",
)
PACKAGE = Path(__file__).resolve().parents[2]


@cache
def picture_code_digest() -> str:
    """The code that draws a picture, and the Manim it runs on."""
    h = hashlib.sha256(metadata.version("manim").encode())
    for name in PICTURE_FILES:
        h.update(name.encode())
        h.update((PACKAGE / name).read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class PictureFacts:
    """Everything a picture draws: the estimate's paths it reads and each stage's ledger."""

    numbers: dict[str, Any]
    stage_ledgers: tuple[tuple[float, ...], ...]  # per pipeline stage, MEMORY_PARTS in order

    @property
    def identity(self) -> str:
        """The facts as text: states whose pictures are the same have the same."""
        return json.dumps([self.numbers, self.stage_ledgers], sort_keys=True, separators=(",", ":"))

    def key(self, theme: str) -> str:
        """The still's name in the cache: the facts, the theme and the code that draws them."""
        text = json.dumps([self.identity, theme, picture_code_digest()])
        return hashlib.sha256(text.encode()).hexdigest()[:20]


RACK_PATHS = (
    "cluster.cards",
    "cluster.cards_per_node",
    "cluster.nodes",
    "cluster.intra_node_link_label",
    "cluster.inter_node_link_label",
)
TIMELINE_PATHS = ("plan.pp", "plan.schedule", "inputs.micro_batches")
DRAWN_PATHS = (
    *RACK_PATHS,
    "memory.capacity",
    "plan.dp",
    "plan.tp",
    "plan.pp",
    "plan.cp",
    "plan.schedule",
    "plan.shard_group",
    "inputs.zero",
    "inputs.micro_batches",
)

PIPELINE_ONLY = ("plan.schedule", "inputs.micro_batches")  # drawn only in a pipeline's timeline


def _nested(numbers: Numbers, paths: tuple[str, ...]) -> dict[str, Any]:
    """The values at `paths`, in the estimate's own shape (an input as its bare value)."""
    out: dict[str, Any] = {}
    for path in paths:
        node = out
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = numbers.get(path)
    return out


def picture_facts(numbers: dict[str, Any]) -> PictureFacts:
    """What the state's picture shows, from its estimate: the drawn paths (a pipeline's
    schedule and micro-batches only when there is a pipeline to draw) and the ledger of a card
    of each pipeline stage (`memory.stages`)."""
    reader = Numbers(numbers)
    pipeline = reader.get("plan.pp") > 1
    paths = tuple(p for p in DRAWN_PATHS if pipeline or p not in PIPELINE_ONLY)
    ledgers = tuple(tuple(float(stage[p]) for p in MEMORY_PARTS) for stage in numbers["memory"]["stages"])
    return PictureFacts(_nested(reader, paths), ledgers)


def _reader(drawn: dict[str, Any]) -> Numbers:
    """Drawn numbers (`_nested`) as Numbers, with the inputs' `{value: ...}` shape the
    templates expect."""
    data = json.loads(json.dumps(drawn))
    inputs = data.get("inputs", {})
    for name, value in list(inputs.items()):
        inputs[name] = {"value": value, "source": "page"}
    return Numbers(data)


# The parts many states share are built once per process, in their final place, and never
# moved (Manim builds a mobject slowly and copies one little faster): the rack, each card's
# piece of the loaf, the legend, a schedule's timeline. Only the gauges are new per picture.


@cache
def _rack(theme_name: str, rack_facts: str) -> Any:
    # (here: it loads Manim, which only drawing needs)
    from dtfilm.shots.common.draw import rack_of

    return rack_of(THEMES[theme_name], _reader_of(rack_facts), card_height=2.0, max_width=FRAME_WIDTH - 2 * MARGIN)


@cache
def _piece(theme_name: str, rack_facts: str, rank: int, pp: int, columns: int, stage: int, column: int) -> Any:
    """The card's piece of the loaf, above the card."""
    # (here: it loads Manim, which only drawing needs)
    from manim import UP

    from dtfilm.visuals.card import SPILL_CAP
    from dtfilm.visuals.grid import PieceMap

    body = _rack(theme_name, rack_facts).cards[rank].body
    width, height = body.width * 0.8, 0.7
    if pp <= MAX_PIECE_CELLS and columns <= MAX_PIECE_CELLS:
        piece = PieceMap(THEMES[theme_name], pp, columns, stage, column, width, height)
    else:
        piece = _outline_piece(THEMES[theme_name], pp, columns, stage, column, width, height)
    # above the room a gauge spills into when the card is out of memory
    return piece.next_to(body, UP, buff=SPILL_CAP * body.height + 0.2)


MAX_PIECE_CELLS = 16  # beyond this many stages or slices a card's map is the loaf's outline and its piece
MIN_PIECE = 0.03  # the smallest piece drawn (a 1/16,384 shard would be invisible to scale)


def _outline_piece(theme: Any, pp: int, columns: int, stage: int, column: int, width: float, height: float) -> Any:
    """A card's map of a loaf cut into more pieces than can be drawn one by one: the loaf's
    outline, and the card's own piece in its place, to scale or at least MIN_PIECE wide."""
    # (here: it loads Manim, which only drawing needs)
    from manim import Rectangle, VGroup

    loaf = Rectangle(width=width, height=height, stroke_color=theme.faint, stroke_width=1.2, fill_opacity=0)
    cell_w, cell_h = max(width / columns, MIN_PIECE), max(height / pp, MIN_PIECE)
    own = Rectangle(
        width=cell_w, height=cell_h, fill_color=theme.card_color(stage), fill_opacity=1, stroke_color=theme.card_edge
    ).set_stroke(width=1.2)
    left = -width / 2 + (width - cell_w) * (column / max(columns - 1, 1))
    top = height / 2 - (height - cell_h) * (stage / max(pp - 1, 1))
    own.move_to([left + cell_w / 2, top - cell_h / 2, 0])
    return VGroup(loaf, own)


@cache
def _legend(theme_name: str, rack_facts: str) -> Any:
    # (here: it loads Manim, which only drawing needs)
    from manim import DOWN

    from dtfilm.shots.common.draw import legend

    return legend(THEMES[theme_name]).next_to(_rack(theme_name, rack_facts), DOWN, buff=0.35)


@cache
def _timeline(theme_name: str, rack_facts: str, timeline_facts: str) -> Any:
    # (here: it loads Manim, which only drawing needs)
    from manim import DOWN

    from dtfilm.visuals.timeline import Timeline, TimelineWords

    numbers = _reader_of(timeline_facts)
    pp, m = int(numbers.get("plan.pp")), int(numbers.get("inputs.micro_batches"))
    # rows are stages (under 3D a stage is several cards, so not "GPU s" as in the pp chapter)
    words = TimelineWords(
        stage=lambda stage: numbers.index("Stage {}", stage, "plan.pp"),
        block=lambda kind, micro: numbers.index(kind + "{}", micro, "inputs.micro_batches", one_based=True),
    )
    schedule = str(numbers.get("plan.schedule"))
    line = Timeline(
        THEMES[theme_name], pp, m, schedule, words, width=FRAME_WIDTH - 3.2, height=0.32 * min(pp, 16) + 0.3
    )
    return line.next_to(_legend(theme_name, rack_facts), DOWN, buff=0.45)


def _reader_of(text: str) -> Numbers:
    return _reader(json.loads(text))


def _facts_text(numbers: Numbers, paths: tuple[str, ...]) -> str:
    """A part's drawn values, as the JSON text its prototype is cached under."""
    return json.dumps(_nested(numbers, paths), sort_keys=True)


def picture_mobject(facts: PictureFacts, theme_name: str) -> Any:
    """The rack with every drawn card's piece of the loaf and gauge, the memory legend, and the
    timeline under a pipeline."""
    # (here: it loads Manim, which only drawing needs)
    from manim import VGroup

    from dtfilm.shots.common.draw import SHARDED_BY_STAGE
    from dtfilm.visuals.card import gauge_for

    theme = THEMES[theme_name]
    numbers = _reader(facts.numbers)
    tp, pp, cp = (int(numbers.get(f"plan.{g}")) for g in ("tp", "pp", "cp"))
    zero = int(numbers.get("inputs.zero"))
    shards = int(numbers.get("plan.shard_group")) if zero == 3 else 1
    sharded = SHARDED_BY_STAGE[zero] if int(numbers.get("plan.shard_group")) > 1 else ()
    capacity = float(numbers.get("memory.capacity"))
    rack_facts = _facts_text(numbers, RACK_PATHS)
    rack = _rack(theme_name, rack_facts)
    pieces, gauges = VGroup(), VGroup()
    columns = max(tp, shards)
    for rank, card in rack.cards.items():
        where = rank_coordinates(rank, tp, cp, pp)
        column = where["tp"] if tp > 1 else (where["dp"] % shards if shards > 1 else 0)
        ledger = dict(zip(MEMORY_PARTS, facts.stage_ledgers[where["pp"]], strict=True))
        outline = {part: theme.card_color(rank) for part in sharded}  # a shard edged in its card's colour
        gauges.add(gauge_for(theme, card.body, ledger, capacity, card.inner_width, outline))
        pieces.add(_piece(theme_name, rack_facts, rank, pp, columns, where["pp"], column))
    drawing = VGroup(pieces, rack, gauges, _legend(theme_name, rack_facts))
    if pp > 1:
        drawing.add(_timeline(theme_name, rack_facts, _facts_text(numbers, TIMELINE_PATHS)))
    return drawing


def draw_picture(facts: PictureFacts, theme_name: str, target: Path) -> None:
    """Rasterise the picture (the film's Cairo camera, the theme's background) into a
    lossless WebP of 256 colours at `target`, written through a temporary file."""
    # (here: Manim and PyAV, which only drawing needs)
    from PIL import Image

    from dtfilm.engine.paths import FilmCamera
    from dtfilm.system.atomic import atomic_path
    from dtfilm.visuals.theme import THEMES

    mob = picture_mobject(facts, theme_name)
    frame_height = mob.height + 2 * MARGIN
    frame_width = max(FRAME_WIDTH, mob.width + 2 * MARGIN)
    pixel_height = round(PIXEL_WIDTH * frame_height / frame_width / 2) * 2
    camera = FilmCamera(
        pixel_width=PIXEL_WIDTH,
        pixel_height=pixel_height,
        frame_width=frame_width,
        frame_height=frame_height,
        background_color=THEMES[theme_name].background,
        frame_center=mob.get_center(),
    )
    camera.capture_mobjects([mob])
    # 256 colours chosen by octree keep every flat colour of the theme, even a legend swatch in
    # a picture that is mostly one colour (median cut's 64 lost them), and their anti-aliased
    # edges nearly: about half the bytes of the full-colour lossless still (13 KB against 25)
    image = camera.get_image().convert("RGB").quantize(PALETTE_COLOURS, method=Image.Quantize.FASTOCTREE)
    with atomic_path(target) as temp:
        image.save(temp, format="WEBP", lossless=True, method=4)
