"""Specs of the data-parallel chapter's kinds: copies of the loaf, gauges, the ring, the sweep.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import VALUE_MARKS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 2

SPECS = (
    KindSpec(
        "loaf_to_rack",
        "the model as a loaf of layers, copied onto every card",
        {},
        hands_on=("rack",),
        marks={
            "loaf": "the loaf, pointed at",
            "rack": "the cards appear",
            "copies": "a copy lands on every card",
            "batch": "the batch beside the loaf, a share of it landing on every card",
            "micro": "each card's share cut into its micro-batches, lit one after another",
            "accumulate": "the micro-batches' gradients added up into one update, pointed at",
        },
        draw_seconds_per_second=0.22,
    ),
    KindSpec(
        "memory_bars",
        "each card's stacked memory gauge against its capacity",
        {},
        takes=("rack",),
        hands_on=("rack", "gauges", "verdict", "legend"),
        marks={
            "weights": "the weights fill the gauges",
            "gradients": "the gradients fill the gauges",
            "master_weights": "the master copy",
            "adam_m": "Adam's moments",
            "static": "the state alone, pointed at",
            "activations": "the activations",
            "verdict": "the verdict: fits or not",
        },
        draw_seconds_per_second=0.19,
    ),
    KindSpec(
        "ring_allreduce",
        "gradient chunks travelling a ring of cards",
        {},
        # ZeRO-3 has no gradient all-reduce (it reduce-scatters; gather_layer draws that): the
        # shot drew its lone-copy picture there, "8 copy of the model: no ring", off the frame
        at_most={"zero": 2},
        marks={
            "ring": "the chunks start round the ring (reduce-scatter)",
            "gather": "the all-gather half",
            "averaged": "every card holds the average",
        },
        draw_seconds_per_second=0.20,
    ),
    # `set` and `values` are parsed by the loader, which knows the inputs' specs.
    KindSpec(
        "sweep",
        "one input animated over values (the slider)",
        {},
        sweep=True,
        marks={
            **VALUE_MARKS,
            "fits": "after value 2: the gauges highlighted, then what spills past the card pointed at",
            "traffic": "the traffic bar, pointed at",
            "limit": "the limit (twice the buffer), pointed at apart from the bar",
            "time": "the traffic's time, the link between nodes, then the bar, one after another",
            "nic": "the bytes a network card sends, drawn under the link between nodes and lit with it,"
            " then the traffic's time, as the voice says what each card's network link carries",
        },
        draw_seconds_per_second=0.28,
    ),
)
