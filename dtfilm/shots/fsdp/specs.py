"""Specs of the FSDP chapter's kinds: ZeRO stages one by one, a layer gathered from its shards.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py and
gather.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import VALUE_MARKS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 3

SPECS = (
    KindSpec(
        "shard_steps",
        "ZeRO stages one by one: gauge slices moving off into shards",
        {},
        sweep=True,
        needs={"dp": 2},
        takes=("rack", "gauges", "verdict", "legend"),
        marks={
            **VALUE_MARKS,
            "share": "the identical copies on every card, pointed at before the first stage",
            "fsdp": "the sharded gauges, pointed at",
            "per_card": "the state per card, pointed at",
        },
        draw_seconds_per_second=0.44,
    ),
    KindSpec(
        "gather_layer",
        "FSDP's pass: each layer gathered from its shards, used, freed",
        {},
        needs={"dp": 2, "zero": 3},
        marks={
            "gather": "the forward layers, gathered one after the other",
            "backward": "the backward pass",
            "scatter": "the reduce-scatter",
        },
        draw_seconds_per_second=0.26,
    ),
)
