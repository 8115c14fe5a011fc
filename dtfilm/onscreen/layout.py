"""The layout check: after every animation no two texts overlap or run together on a row, no
box's outline runs through a text or a drawn block, and nothing leaves the frame; and the design
check's (dtfilm.onscreen.design): no text too small or too faint, at most three layers of text.
Where pieces are is dtfilm.onscreen.boxes; texts stacked inside an animation, dtfilm.onscreen.crossfades
(their names are also importable from here, as before the split)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations

from manim import Mobject, Scene, Text

from dtfilm.onscreen.boxes import NUMBERS_AND_TEXTS as NUMBERS_AND_TEXTS
from dtfilm.onscreen.boxes import ROW_GAP_HEIGHTS as ROW_GAP_HEIGHTS
from dtfilm.onscreen.boxes import TEXT_GAP as TEXT_GAP
from dtfilm.onscreen.boxes import Box as Box
from dtfilm.onscreen.boxes import any_seen, drawn_members, has_width
from dtfilm.onscreen.boxes import pieces_on_screen as pieces_on_screen
from dtfilm.onscreen.boxes import shapes_on_screen as shapes_on_screen
from dtfilm.onscreen.boxes import texts_on_screen as texts_on_screen
from dtfilm.onscreen.boxes import visible as visible
from dtfilm.onscreen.crossfades import AT_END as AT_END
from dtfilm.onscreen.crossfades import crossfade_stacks as crossfade_stacks
from dtfilm.onscreen.crossfades import crossings as crossings
from dtfilm.onscreen.crossfades import keep_texts_at_end
from dtfilm.onscreen.design import design_findings


@dataclass
class LayoutCheck:
    """An observer for ChapterScene: records every overlap and every escape from the frame."""

    problems: list[str] = field(default_factory=list)
    # The design check's findings (dtfilm.onscreen.design), said apart from the problems as
    # `design:` lines; `check` fails on either (dtfilm.check.chapters.ChapterCheck.failed).
    design: list[str] = field(default_factory=list)
    checks: int = 0
    _seen: dict[str, int] = field(default_factory=dict)  # a problem without its coordinates -> index

    def __call__(self, scene: Scene, beat: str) -> None:
        self.checks += 1
        texts = texts_on_screen(scene)
        boxes = {id(t): Box.of(t) for t in texts}
        for a, b in combinations(texts, 2):
            if boxes[id(a)].overlaps(boxes[id(b)], TEXT_GAP):
                self._report(f"{beat}: text {_name(a)} overlaps {_name(b)}")
            elif boxes[id(a)].runs_into(boxes[id(b)]):
                self._report(f"{beat}: text {_name(a)} runs into {_name(b)} (one row, no word space between)")
        self._check_outlines(scene, texts, boxes, beat)
        for finding in design_findings(scene, texts, _name, boxes):
            self._report(f"{beat}: {finding}", self.design)
        for mob in scene.mobjects:
            drawn = drawn_members(mob)  # (listed once: whether it is drawn, and its box)
            if any_seen(drawn) and not Box.of_drawn(drawn, mob).inside_frame():
                self._report(f"{beat}: {_name(mob)} leaves the frame ({_edges(mob)})")
        keep_texts_at_end(scene, texts, boxes)

    def moment(self, scene: Scene, beat: str) -> None:
        """At a moment inside an animation (the dry run's `moments`): the texts a cross-fade draws
        over each other there, half-faded, as design findings (issue 58: a text that changes is
        swapped or morphed in place, never stacked)."""
        for a, b in crossfade_stacks(scene):
            self._report(
                f"{beat}: text {_name(a)} is drawn over {_name(b)}, both part-faded (a cross-fade's stack);"
                " a text that changes goes before its next words come (dtfilm.visuals.fade.swap)",
                self.design,
            )
        for mover, other in crossings(scene):
            self._report(
                f"{beat}: text {_name(mover)} moves across {_name(other)}, drawn whole over it while it"
                " fades (a cross-fade's stack); a text that moves fades with the others or goes round"
                " them (dtfilm.visuals.fade.Reshape)",
                self.design,
            )

    def _check_outlines(self, scene: Scene, texts: list[Text], boxes: dict[int, Box], beat: str) -> None:
        """A box's outline that runs through a text, or through a block another piece draws
        (a rack's node box under the loaf): the two are drawn on top of one another."""
        outlines, blocks = shapes_on_screen(scene)
        if not outlines:
            return
        block_boxes = [Box.of(block) for block, _ in blocks]
        for frame, owner in outlines:
            edge = Box.of(frame)
            for text in texts:
                if edge.cuts(boxes[id(text)]):
                    self._report(f"{beat}: the outline of {_piece(frame, owner)} runs through text {_name(text)}")
            for (block, other), box in zip(blocks, block_boxes, strict=True):
                if other is not owner and edge.cuts(box):
                    self._report(f"{beat}: the outline of {_piece(frame, owner)} runs through {_piece(block, other)}")

    def _report(self, problem: str, into: list[str] | None = None) -> None:
        """Record a problem once (in `into`, the problems by default): the same kind of piece
        leaving the frame in the same beat (180 blocks of a timeline, say) is one problem with a count."""
        found = self.problems if into is None else into
        key = re.sub(r" \(x .*\)$", "", problem)
        if key not in self._seen:
            self._seen[key] = len(found)
            found.append(problem)
            return
        at = self._seen[key]
        count = re.search(r" \(×(\d+)\)$", found[at])
        first = found[at][: count.start()] if count else found[at]
        found[at] = f"{first} (×{int(count.group(1)) + 1 if count else 2})"


def texts_meet(these: list[Mobject], those: list[Mobject]) -> bool:
    """Whether a text among `these` pieces and a different text among `those` stand in one place
    (their boxes overlap): faded out and in together, they would be drawn over each other."""

    def texts(pieces: list[Mobject]) -> list[tuple[str, Box]]:
        found = [m for piece in pieces for m in piece.get_family() if isinstance(m, Text)]
        return [(text.original_text, Box.of(text)) for text in found if has_width(text)]

    theirs = texts(those)
    return any(a != b and box.overlaps(other) for a, box in texts(these) for b, other in theirs)


def _name(mob: Mobject) -> str:
    if isinstance(mob, Text):
        return repr(getattr(mob, "phrase", None).text if hasattr(mob, "phrase") else mob.original_text)
    texts = [t for t in mob.get_family() if isinstance(t, Text)]
    inner = f" holding {_name(texts[0])}" if texts else ""
    return f"{type(mob).__name__}{inner}"


def _piece(mob: Mobject, owner: Mobject) -> str:
    """A drawn shape by its kind and the top-level piece it is part of."""
    kind = type(mob).__name__
    return kind if owner is mob else f"a {kind} of {_name(owner)}"


def _edges(mob: Mobject) -> str:
    box = Box.of(mob)
    return f"x {box.left:.2f}..{box.right:.2f}, y {box.bottom:.2f}..{box.top:.2f}"
