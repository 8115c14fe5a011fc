"""The step_breakdown kind's spec: each plan's step cut into what it waits for.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 11

SPECS = (
    KindSpec(
        "step_breakdown",
        "each plan's step in seconds: compute, bubble, each group's exposed traffic; memory a card",
        {},
        rows=True,
        most_rows=4,
        doc=(
            "One bar a row, on one scale of seconds for all rows: the terms of compute.step_seconds"
            " (the busiest stage's compute, the bubble, compute slowed beside hidden traffic, each"
            " group's exposed traffic, in the bad colour as the bubble), each part from the row's own"
            " estimate; beside it the step"
            " and memory.total against the card's capacity, under it each part but compute with its seconds."
        ),
        marks={
            **{f"row{i}": f"row {i}, its bar and figures" for i in range(1, 5)},
            **{f"row{i}_again": f"row {i}, highlighted again" for i in range(1, 5)},
            **{f"row{i}_parts": f"row {i}'s parts, pointed at one by one up to the next mark" for i in range(1, 5)},
            "key": "the key naming the parts, highlighted",
        },
        draw_seconds_per_second=0.06,  # measured beside another kind on a loaded machine, scaled by its rate
    ),
)
