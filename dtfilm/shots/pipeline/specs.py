"""Specs of the pipeline chapter's kinds: stages on cards, the timeline, the micro-batch slider.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import VALUE_MARKS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 4

SPECS = (
    KindSpec(
        "loaf_to_stages",
        "the loaf sliced across its layers, each stage onto its card",
        {},
        needs={"pp": 2},
        marks={
            "first": "the stages land on their cards",
            "flow": "a micro-batch flows forward",
            "back": "its gradients flow back",
            "between": "the links between cards, pointed at",
            "holds": "each card's own gauge, and the busiest card's total",
        },
        draw_seconds_per_second=0.19,
    ),
    KindSpec(
        "timeline",
        "the pipeline schedule: stages by rows, time by columns, the bubble",
        {},
        needs={"pp": 2},
        at_most={"virtual_stages": 1},
        marks={
            "wait": "the forward work, and the last card that waits for it",
            "backward": "the backward work, and the first card that waits for it",
            "rows": "each card's row named and lit across in turn",
            "last": "the last card's forward work, pointed at",
            "bubble": "the bubble, pointed at",
            "sizes": "the stages (rows' names) and the first card's micro-batches, pointed at",
            "fraction": "the bubble's share, highlighted",
            "count": "the first card's row packed into slots of a micro-batch's forward and backward, numbered",
            "idle": "that row's empty slots outlined in the bad colour: p-1 of m+p-1",
        },
        draw_seconds_per_second=0.15,
    ),
    KindSpec(
        "pipeline_slider",
        "micro-batches on a slider: the timeline and the first stage follow",
        {},
        sweep=True,
        needs={"pp": 2},
        at_most={"virtual_stages": 1},
        marks={
            **VALUE_MARKS,
            "finer": "the slider moves through its values (or to each value at its [valueN])",
            "shrink": "the bubble's blocks and its share, pointed at",
            "value1": "the first value's bubble, highlighted",
            "work": "the work's blocks the fill and drain shrink against, pointed at",
            "price": "the smaller blocks, pointed at",
            "interleave": "each card's row, lit; then drawn again with v thinner stages a card, its bubble shorter",
            "again": "the bubble's formula with v stages a card, in place of its share, highlighted",
            "memory": "both schedules' gauges, pointed at: memory is not the price",
            "gauges": "GPipe's first-stage gauge, pointed at; the knob sweeps the values again",
            "grown": "the sweep under [gauges] ends: GPipe's gauge at the last value as the voice gives it",
            "onef": "1F1B's first-stage gauge, pointed at; the knob sweeps the values again",
            "fallen": "the sweep under [onef] ends: 1F1B's gauge at the last value as the voice gives it",
        },
        draw_seconds_per_second=0.28,
    ),
)
