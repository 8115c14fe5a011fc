"""Specs of the sequence chapter's kinds: memory columns, ring attention, zig-zag.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec, text

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 12

SPECS = (
    KindSpec(
        "memory_columns",
        "memory per card as a column for each value, against the card's capacity",
        {"label": (text, True), "note": (text, False)},
        sweep=True,
        per_step=("label", "note"),
        paced=True,
        marks={
            "static": "the first column's state, highlighted",
            "grow": "the columns after the first, spread to the end",
            "last": "the last column's note, highlighted, as the voice gives its figures",
        },
        draw_seconds_per_second=0.24,
    ),
    KindSpec(
        "ring_attention",
        "queries stay while key/value blocks travel a ring; the attention blocks fill in",
        {},
        needs={"cp": 2},
        at_most={"cp": 8},
        paced=True,
        draw_seconds_per_second=0.20,
    ),
    KindSpec(
        "zigzag_balance",
        "the causal mask's work per card, dealt in order and then zig-zag",
        {},
        needs={"cp": 2},
        at_most={"cp": 8},
        paced=True,
        marks={
            "dealt": "dealt zig-zag",
            "mirror": "each card's two chunks in turn",
            "same": "the work bars even out",
            "falls": "the slowest card's time falls",
        },
        draw_seconds_per_second=0.18,
    ),
)
