"""Specs of the opening chapter's kinds: won't fit, won't finish, the six strategies, the links.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 6

SPECS = (
    KindSpec(
        "model_lineup",
        "won't fit: each model's state poured into card-sized squares",
        {},
        rows=True,
        marks={
            "state": "the state's parts (the legend)",
            "small": "the first row (the model first named)",
            "needs": "what its state needs",
            "activation": "a note: the activations are not yet counted (gone at `pour`)",
            "tensors": "the note's second line: what activations are (else with `activation`)",
            "card": "the card's capacity, pointed at",
            "pour": "its state poured into cards",
            "large": "the other rows that need more cards than the first, one after the other (one that needs"
            " no more is not drawn)",
            "largest": "the last of those rows (else spread after `large`)",
        },
        draw_seconds_per_second=0.18,
    ),
    KindSpec(
        "training_clock",
        "won't finish: one card's years of months, then the cluster's days",
        {},
        marks={
            "flops": "the FLOPs formula",
            "forward": "the forward's operations, a square each (with `backward`)",
            "backward": "the backward's operations, twice as many (with `forward`)",
            "per": "the formula, pointed at",
            "tokens": "the formula, highlighted, as the voice says the tokens it counts",
            "total": "its total",
            "one_card": "one card's calendar fills (else at its marks below)",
            "busy": "one card's calendar: its peak and utilization",
            "mfu": "one card's calendar: its heading (the MFU), pointed at",
            "years": "one card's calendar: the years it takes",
            "split": "the cluster's calendar fills",
        },
        draw_seconds_per_second=0.23,
    ),
    KindSpec(
        "strategy_table",
        "the six strategies: how each slices, what it cuts, talks by, solves",
        {},
        marks={
            mark: what
            for s in ("dp", "fsdp", "tp", "pp", "cp", "ep")
            for mark, what in (
                (s, f"the {s} row of the table: its loaf and name, and each cell whose mark is missing"),
                (f"{s}_cuts", f"what {s} cuts (and the cells after it whose marks are missing)"),
                (f"{s}_talks", f"how {s} talks (else with what it cuts)"),
                (f"{s}_solves", f"what {s} solves (else with its row)"),
            )
        },
        draw_seconds_per_second=0.25,
    ),
    KindSpec(
        "bandwidth_ladder",
        "the links as pipes as thick as their bandwidth, and what each carries",
        {},
        marks={
            mark: what
            for tier, where in (
                ("nvlink", "inside a node"),
                ("infiniband", "between nodes"),
                ("ethernet", "Ethernet"),
            )
            for mark, what in (
                (tier, f"the links {where}"),
                (f"{tier}_speed", "their bandwidth (else with the pipe)"),
                (f"{tier}_use", "what lives on them (else with the pipe)"),
            )
        },
        draw_seconds_per_second=0.19,
    ),
)
