"""Each chapter's design figures from a dry run (printed, not asserted): its smallest text (font
size in px at the 854×480 preview), its lowest contrast against what lies behind a text, and the
most layers of text a frame holds besides the title (dtfilm.onscreen.design; issue 58's bounds:
at least 14 px, at least 4.5:1, at most 3), and the texts a cross-fade draws over each other
halfway through an animation (dtfilm.onscreen.crossfades.crossfade_stacks; issue 58: a text that
changes never stacks), counted once per pair of words and beat.

Usage: python benchmarks/design_figures.py [CHAPTER ...]   (default: every chapter of the film)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

from dtfilm.check.inspect import dry_run
from dtfilm.onscreen.design import TITLE, measured_texts
from dtfilm.onscreen.layout import crossfade_stacks, texts_on_screen
from dtfilm.storyboard import find_root, load_chapter, load_film


@dataclass
class Figures:
    """The extremes seen after every animation."""

    px: tuple[float, str] = (1e9, "")
    contrast: tuple[float, str] = (1e9, "")
    layers: tuple[int, str] = (0, "")
    seen: set[str] = field(default_factory=set)

    def __call__(self, scene: Any, beat: str) -> None:
        measured = measured_texts(scene, texts_on_screen(scene))
        for m in measured:
            where = f"{beat}: {m.text.original_text[:40]!r}"
            self.px = min(self.px, (m.px, where))
            if m.contrast is not None:
                self.contrast = min(self.contrast, (m.contrast, where))
        layers = sorted({m.layer for m in measured} - {TITLE})
        self.layers = max(self.layers, (len(layers), f"{beat}: {', '.join(layers)}"))


@dataclass
class Stacks:
    """The pairs of texts cross-fades drew over each other, at each animation's moments."""

    pairs: dict[tuple[str, str, str], None] = field(default_factory=dict)

    def __call__(self, scene: Any, beat: str) -> None:
        for a, b in crossfade_stacks(scene):
            self.pairs.setdefault((beat, a.original_text[:30], b.original_text[:30]), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*")
    args = parser.parse_args()
    root = find_root()
    chapters = args.chapters or list(load_film(root / "storyboard" / "film.yaml").chapters)
    for chapter in chapters:
        figures, stacks = Figures(), Stacks()
        dry_run(load_chapter(chapter, None, root), None, [figures], moments=[stacks])
        first = next(iter(stacks.pairs), None)
        print(
            f"{chapter}: smallest text {figures.px[0]:.1f} px ({figures.px[1]}),"
            f" lowest contrast {figures.contrast[0]:.2f}:1 ({figures.contrast[1]}),"
            f" most layers {figures.layers[0]} ({figures.layers[1]}),"
            f" texts stacked by cross-fades {len(stacks.pairs)}"
            + (f" (first: {first[0]}: {first[1]!r} over {first[2]!r})" if first else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
