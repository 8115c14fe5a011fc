"""The traffic_compare kind's spec: bytes and seconds a step for several configurations.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import MAX_ROWS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 10

SPECS = (
    KindSpec(
        "traffic_compare",
        "bytes and seconds per step for several configurations",
        {},
        rows=True,
        doc=(
            "Each bar as long as its bytes, on one scale that keeps every bar and its figures in the frame;"
            " its pieces in the traffic ink, each drawn as its collective (an all-gather solid, a"
            " reduce-scatter hollow, anything else half filled), each group's bytes under its pieces (a"
            " pole rising into them), and beside it the bytes, the seconds on the link and how many of"
            " them are exposed."
        ),
        marks={
            **{f"row{i}": f"row {i} and its bar" for i in range(1, MAX_ROWS + 1)},
            **{f"row{i}_again": f"row {i}, pointed at again" for i in range(1, MAX_ROWS + 1)},
            **{
                f"row{i}_pieces": f"row {i}'s pieces, pointed at one by one up to the next mark"
                for i in range(1, MAX_ROWS + 1)
            },
            **{
                f"row{i}_compute": f"row {i}'s time a step: its link's and its compute's bars under its traffic,"
                " on an axis of seconds of their own, the row highlighted"
                for i in range(1, MAX_ROWS + 1)
            },
            **{
                f"row{i}_verdict": f"row {i}'s traffic and compute pointed at, then the row highlighted"
                " half-way to the next mark"
                for i in range(1, MAX_ROWS + 1)
            },
            "key": "the key naming the bars' pieces (the collectives), highlighted",
        },
        draw_seconds_per_second=0.11,
    ),
)
