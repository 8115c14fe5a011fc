"""The title card's spec (read with no Manim; its drawing: draw.py)."""

from __future__ import annotations

from typing import Any

from dtfilm.storyboard.kinds import KindSpec, text

# A title card's first picture (`picture:`), drawn as the voice names what the chapter is about
# (draw.TITLE_PICTURES draws each): the loaf of layers that tensor parallelism cuts, the single
# card that the model does not fit, the sequence that context parallelism cuts.
TITLE_PICTURES = ("loaf", "card", "sequence")

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 1


def _picture(raw: Any) -> str:
    if raw not in TITLE_PICTURES:
        raise ValueError(f"{raw!r} is no title picture; one of: {', '.join(TITLE_PICTURES)}")
    return str(raw)


SPECS = (
    KindSpec(
        "title",
        "the chapter's title card",
        {"subtitle": (text, False), "picture": (_picture, False)},
        doc="With `picture`, the card carries what the chapter is about as the voice names it. `loaf`:"
        " at [picture] the title shrinks into the header and the model's loaf of layers is built on the"
        " stage (loaf_split then takes it and cuts it). `card`: one card stands under the title, its"
        " gauge filled with the training state as the voice says the subtitle's first clause."
        " `sequence`: the loaf cut down the middle and across, then at [subtitle] a row of tokens cut"
        " into plan.cp pieces.",
        hands_on=("loaf",),
        marks={
            "subtitle": "the subtitle appears under the title (with `subtitle2`: its first clause)",
            "subtitle2": "the subtitle's second clause, after its first comma",
            "picture": "with `picture: loaf`: the title shrinks into the header, the loaf built in its place",
            "again": "the subtitle, pointed at again (with `picture: loaf`: a line down the loaf's middle)",
        },
        # the card holds still while the voice goes on: its narration is one sentence
        most_sentences=1,
        draw_seconds_per_second=0.11,
    ),
)
