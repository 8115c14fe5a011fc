"""The frame's named regions: where the header, the stats, the stage, the side panel and the
caption live. Shots place things into a region instead of at raw coordinates.

    header  ┌──────────────┐            ┌──────────────────┐ stats
            └──────────────┘            └──────────────────┘
    side    ┌────────┐┌────────────────────────────────────┐ stage (the whole width; side is
            │        ││                                    │ its left column, for the phase
            └────────┘└────────────────────────────────────┘ of what is happening now)
    caption          └─────────── two lines ─────────────┘
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from manim import ORIGIN, Mobject

from dtfilm.visuals.theme import FRAME_HEIGHT, FRAME_WIDTH, Theme

CAPTION_WIDTH = FRAME_WIDTH - 1.6
SIDE_WIDTH = 3.6  # the side panel: phase titles and counters at the stage's left
SIDE_TOP = 2.45  # below the header, so a phase column never meets the chapter title


@dataclass(frozen=True)
class Region:
    """A rectangle of the frame, in manim units."""

    name: str
    left: float
    right: float
    bottom: float
    top: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.top - self.bottom

    def point(self, where: np.ndarray = ORIGIN) -> np.ndarray:
        """A point of the region: ORIGIN its centre, UP + LEFT its top left corner, and so on."""
        x = (self.left + self.right) / 2 + where[0] * self.width / 2
        y = (self.bottom + self.top) / 2 + where[1] * self.height / 2
        return np.array([x, y, 0.0])

    def place(self, mobject: Mobject, where: np.ndarray = ORIGIN) -> Mobject:
        """Put `mobject` at the region's `where` (its centre by default), the matching edge of
        the mobject on that point: UP + LEFT puts its top left corner in the region's."""
        mobject.move_to(self.point(where), aligned_edge=where)
        return mobject

    def fit(self, mobject: Mobject) -> Mobject:
        """Shrink `mobject` (never grow it) until it fits the region's width and height."""
        scale = min(1.0, self.width / max(mobject.width, 1e-9), self.height / max(mobject.height, 1e-9))
        if scale < 1.0:
            mobject.scale(scale)
        return mobject

    def holds(self, mobject: Mobject, tolerance: float = 0.01) -> bool:
        return (
            mobject.get_left()[0] >= self.left - tolerance
            and mobject.get_right()[0] <= self.right + tolerance
            and mobject.get_bottom()[1] >= self.bottom - tolerance
            and mobject.get_top()[1] <= self.top + tolerance
        )

    def part(
        self,
        left: float | None = None,
        right: float | None = None,
        bottom: float | None = None,
        top: float | None = None,
    ) -> Region:
        """A smaller region inside this one: any edge moved, in frame coordinates."""
        return replace(
            self,
            left=self.left if left is None else max(self.left, left),
            right=self.right if right is None else min(self.right, right),
            bottom=self.bottom if bottom is None else max(self.bottom, bottom),
            top=self.top if top is None else min(self.top, top),
        )


@dataclass(frozen=True)
class Regions:
    header: Region
    stats: Region
    stage: Region
    side: Region
    caption: Region

    @property
    def stage_right_of_side(self) -> Region:
        return self.stage.part(left=self.side.right + 0.3)


def regions(theme: Theme) -> Regions:
    """The regions of a theme's frame (its margin, header line, stage band and caption line)."""
    left, right = -FRAME_WIDTH / 2 + theme.margin, FRAME_WIDTH / 2 - theme.margin
    top = FRAME_HEIGHT / 2 - theme.margin
    header_bottom = theme.header_y - (top - theme.header_y)
    return Regions(
        header=Region("header", left + 0.05, -1.0, header_bottom, top - 0.05),
        stats=Region("stats", -1.0, right, theme.stage_top + 0.05, top),
        stage=Region("stage", left, right, theme.stage_bottom, theme.stage_top),
        side=Region("side", left + 0.1, left + 0.1 + SIDE_WIDTH, theme.stage_bottom, SIDE_TOP),
        caption=Region(
            "caption", -CAPTION_WIDTH / 2, CAPTION_WIDTH / 2, -FRAME_HEIGHT / 2 + 0.05, theme.stage_bottom - 0.1
        ),
    )
