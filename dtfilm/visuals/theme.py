"""One theme object owns every colour, size and position of the film. Each colour group means
one thing across the film (memory parts; cards, and the stages they run; a micro-batch's passes;
bad: over capacity and exposed wait); dtfilm.visuals.palette lists them and checks them apart.
Time a card spends computing and traffic on the wire wear no colour of their own: they are drawn
in the neutral inks (`compute_ink`, `traffic_ink`), so no meaning colour is borrowed for them."""

from __future__ import annotations

from dataclasses import dataclass, field

from dtfilm.cost.memory import PART_LABELS

FRAME_WIDTH = 128 / 9  # manim's default frame: 14.22 x 8 units at 16:9
FRAME_HEIGHT = 8.0


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str
    muted: str
    faint: str  # lines and outlines only: too faint for text (2.4:1 on the dark background)
    dimmed: str  # text set back (a branch not taken), still 4.5:1 on the background (WCAG AA)
    panel: str
    card_fill: str
    card_edge: str
    accent: str
    oom: str  # "bad", and only that: over capacity, time exposed (see `bad`)
    loaf: str
    loaf_crust: str
    # Memory components: one colour each in every chapter.
    memory: dict[str, str]
    # Card palette (GPU 0..7), distinct from the memory colours: shards and ring chunks.
    cards: tuple[str, ...]
    # A micro-batch's forward and backward work (its number on the block says which one).
    passes: dict[str, str] = field(default_factory=dict)
    font: str = "Inter"
    title_size: float = 30
    caption_size: float = 24
    label_size: float = 20
    stat_label_size: float = 19
    stat_value_size: float = 34
    small_size: float = 18
    least_size: float = 17  # the smallest text: 14.2 px at the 854×480 preview (issue 58's floor, 14)
    margin: float = 0.3
    caption_y: float = -3.45
    header_y: float = 3.45
    stage_top: float = 2.9
    stage_bottom: float = -2.85
    link_widths: dict[str, float] = field(default_factory=dict)

    def card_color(self, index: int) -> str:
        return self.cards[index % len(self.cards)]

    @property
    def bad(self) -> str:
        """The one colour for "bad": over capacity, time exposed; nothing else is drawn in it."""
        return self.oom

    def pass_color(self, backward: bool) -> str:
        """A micro-batch's forward (or backward) work in the pipeline's timeline."""
        return self.passes["backward" if backward else "forward"]

    def stage_color(self, stage: int) -> str:
        """A pipeline stage's colour: a stage is its card's, so the card's colour."""
        return self.card_color(stage)

    @property
    def compute_ink(self) -> str:
        """Time a card computes (a compute bar, a compute lane): the text's neutral ink, no
        meaning colour (a memory part's blue drew tensor parallelism's compute)."""
        return self.text

    @property
    def traffic_ink(self) -> str:
        """Traffic (bytes on the wire, time on the link), whatever group sends it: the muted
        neutral ink, the collective told by its fill (dtfilm.visuals.collectives) and the group by
        its name beside it. A card's colour borrowed for a group meant "card i's" elsewhere, and a
        memory part's for an all-gather meant a part of a card's memory."""
        return self.muted


MEMORY_LABELS = PART_LABELS

DARK = Theme(
    name="dark",
    background="#0E1117",
    text="#F2F4F8",
    muted="#A9B1BE",
    faint="#4A5261",
    dimmed="#7D8797",  # 5.2:1 on the background
    panel="#161B24",
    card_fill="#1B2230",
    card_edge="#7D8797",
    accent="#FFD166",
    oom="#FF4D5E",
    loaf="#E2B36B",
    loaf_crust="#9A6A2F",
    memory={
        "weights": "#4C8DF6",
        "gradients": "#F28C28",
        "master_weights": "#166A45",
        "adam_m": "#45C86E",
        "adam_v": "#B9F0C8",
        "activations": "#A970FF",
        "buffers": "#8A94A6",
    },
    cards=("#22D3EE", "#F472B6", "#FACC15", "#A3E635", "#FDA4AF", "#C4B5FD", "#0EA5E9", "#FDBA74"),
    passes={"forward": "#E2E8F0", "backward": "#475569"},
    link_widths={"nvlink": 9.0, "infiniband": 3.0, "ethernet": 1.5},
)

LIGHT = Theme(
    name="light",
    background="#FFFFFF",
    text="#111827",
    muted="#4B5563",
    faint="#C9CED6",
    dimmed="#6B7280",  # 4.8:1 on the background
    panel="#F3F4F6",
    card_fill="#F8FAFC",
    card_edge="#6B7280",
    accent="#7C5800",
    oom="#DC2626",
    loaf="#D69E4A",
    loaf_crust="#8A5A1F",
    memory={
        "weights": "#2563EB",
        "gradients": "#F59E0B",
        "master_weights": "#14532D",
        "adam_m": "#2FB35A",
        "adam_v": "#A6E3B5",
        "activations": "#7C3AED",
        "buffers": "#6B7280",
    },
    cards=("#0891B2", "#DB2777", "#A3A300", "#65A30D", "#F9A8D4", "#A78BFA", "#0D9488", "#6B4423"),
    passes={"forward": "#CBD5E1", "backward": "#334155"},
    link_widths={"nvlink": 9.0, "infiniband": 3.0, "ethernet": 1.5},
)

THEMES = {"dark": DARK, "light": LIGHT}
