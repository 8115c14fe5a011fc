"""One theme object owns every colour, size and position of the film."""

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
    faint: str
    panel: str
    card_fill: str
    card_edge: str
    accent: str
    oom: str
    loaf: str
    loaf_crust: str
    # Memory components: one colour each in every chapter.
    memory: dict[str, str]
    # Card palette (GPU 0..7), distinct from the memory colours: shards and ring chunks.
    cards: tuple[str, ...]
    font: str = "Inter"
    title_size: float = 30
    caption_size: float = 24
    label_size: float = 20
    stat_label_size: float = 19
    stat_value_size: float = 34
    small_size: float = 18
    margin: float = 0.3
    caption_y: float = -3.45
    header_y: float = 3.45
    stage_top: float = 2.9
    stage_bottom: float = -2.85
    link_widths: dict[str, float] = field(default_factory=dict)

    def card_color(self, index: int) -> str:
        return self.cards[index % len(self.cards)]

    def stage_color(self, stage: int) -> str:
        """A pipeline stage's colour: a stage is its card's, so the card's colour."""
        return self.card_color(stage)


MEMORY_LABELS = PART_LABELS

DARK = Theme(
    name="dark",
    background="#0E1117",
    text="#F2F4F8",
    muted="#A9B1BE",
    faint="#4A5261",
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
        "master_weights": "#1E8F5A",
        "adam_m": "#3FBF7F",
        "adam_v": "#9BE3B9",
        "activations": "#A970FF",
        "buffers": "#8A94A6",
    },
    cards=("#22D3EE", "#F472B6", "#FACC15", "#A3E635", "#FB7185", "#C4B5FD", "#2DD4BF", "#FDBA74"),
    link_widths={"nvlink": 9.0, "infiniband": 3.0, "ethernet": 1.5},
)

LIGHT = Theme(
    name="light",
    background="#FFFFFF",
    text="#111827",
    muted="#4B5563",
    faint="#C9CED6",
    panel="#F3F4F6",
    card_fill="#F8FAFC",
    card_edge="#6B7280",
    accent="#B45309",
    oom="#DC2626",
    loaf="#D69E4A",
    loaf_crust="#8A5A1F",
    memory={
        "weights": "#2563EB",
        "gradients": "#EA7317",
        "master_weights": "#166534",
        "adam_m": "#22A060",
        "adam_v": "#7CCF9E",
        "activations": "#7C3AED",
        "buffers": "#6B7280",
    },
    cards=("#0891B2", "#DB2777", "#CA8A04", "#65A30D", "#E11D48", "#7C3AED", "#0D9488", "#EA580C"),
    link_widths={"nvlink": 9.0, "infiniband": 3.0, "ethernet": 1.5},
)

THEMES = {"dark": DARK, "light": LIGHT}
