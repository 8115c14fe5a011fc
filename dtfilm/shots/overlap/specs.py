"""The overlap_timeline kind's spec: one card's step as a compute lane over a traffic lane.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec, text

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 14

SPECS = (
    KindSpec(
        "overlap_timeline",
        "one card's step as a compute lane over a traffic lane, to scale, the exposed part in red",
        {"note": (text, False)},
        marks={
            "compute": "the compute lane: the last backward pass (dp), or each layer forward and backward (fsdp)",
            "traffic": "the traffic lane beside it: DDP's gradient buckets, or FSDP's gathers and reduce-scatters",
            "zoom": "fsdp: the first layers enlarged, each gather under the layer before",
            "exposed": "what the step waits for, in red, with its bracket and the key",
            "verdict": "the `note` (whether the traffic hides), under the key, highlighted",
        },
        draw_seconds_per_second=0.4,  # measured beside another kind on a loaded machine, scaled by its rate
    ),
)
