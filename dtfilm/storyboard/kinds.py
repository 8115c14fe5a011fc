"""Shot kinds a storyboard may name, with the extra keys each takes (no manim here).

`dtfilm.shots` registers one play function per kind; a test checks the two lists agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _text(raw: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"{raw!r} is not text")
    return raw


@dataclass(frozen=True)
class KindSpec:
    """A shot kind: what it shows, and its extra keys (name -> parser, True when required)."""

    name: str
    summary: str
    keys: dict[str, tuple[Callable[[Any], Any], bool]]
    sweep: bool = False  # takes `set` and `values` (one input over values)
    rows: bool = False  # takes `rows`: [{label, with}], one configuration each
    pick: bool = False  # runs the planner; takes `global_batch` (default: the configuration's)
    # Degrees the shot draws and cannot do without ({"tp": 2}: tensor parallelism, at least 2).
    needs: dict[str, int] = field(default_factory=dict)
    # Plan settings the drawing cannot show beyond a value ({"virtual_stages": 1}: the timeline
    # draws the 1F1B schedule without interleaving).
    at_most: dict[str, int] = field(default_factory=dict)
    # The hand-off: pieces the shot keeps on screen from the shot before when they were drawn
    # for its own values (else it draws its own), and the pieces it hands on to the next.
    takes: tuple[str, ...] = ()
    hands_on: tuple[str, ...] = ()
    # Keys (of a sweep) whose template resolves against each value's configuration in turn.
    per_step: tuple[str, ...] = ()
    # Its steps stretch to fill its narration (scene_timing.beat_seconds), within limits.
    paced: bool = False


KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("title", "the chapter's title card", {"subtitle": (_text, False)}),
        KindSpec("loaf_to_rack", "the model as a loaf of layers, copied onto every card", {}, hands_on=("rack",)),
        KindSpec(
            "memory_bars",
            "each card's stacked memory gauge against its capacity",
            {},
            takes=("rack",),
            hands_on=("rack", "gauges", "verdict", "legend"),
        ),
        KindSpec("ring_allreduce", "gradient chunks travelling a ring of cards", {}),
        # `set` and `values` are parsed by the loader, which knows the inputs' specs.
        KindSpec("sweep", "one input animated over values (the slider)", {}, sweep=True),
        KindSpec(
            "shard_steps",
            "ZeRO stages one by one: gauge slices moving off into shards",
            {},
            sweep=True,
            needs={"dp": 2},
            takes=("rack", "gauges", "verdict", "legend"),
        ),
        KindSpec(
            "gather_layer",
            "FSDP's pass: each layer gathered from its shards, used, freed",
            {},
            needs={"dp": 2, "zero": 3},
        ),
        KindSpec("loaf_to_stages", "the loaf sliced across its layers, each stage onto its card", {}, needs={"pp": 2}),
        KindSpec(
            "timeline",
            "the pipeline schedule: stages by rows, time by columns, the bubble",
            {},
            needs={"pp": 2},
            at_most={"virtual_stages": 1},
        ),
        KindSpec(
            "pipeline_slider",
            "micro-batches on a slider: the timeline and the first stage follow",
            {},
            sweep=True,
            needs={"pp": 2},
            at_most={"virtual_stages": 1},
        ),
        KindSpec(
            "loaf_split", "every layer cut down the middle, t pieces onto t cards", {}, sweep=True, needs={"tp": 2}
        ),
        KindSpec("split_matrices", "X·A split by columns, Y·B by rows, partial sums all-reduced", {}, needs={"tp": 2}),
        KindSpec(
            "layer_timeline",
            "one layer's compute stalling for each all-reduce, per link",
            {},
            rows=True,
            needs={"tp": 2},
        ),
        KindSpec("model_lineup", "won't fit: each model's state poured into card-sized squares", {}, rows=True),
        KindSpec("training_clock", "won't finish: one card's years of months, then the cluster's days", {}),
        KindSpec("strategy_table", "the five strategies: how each slices, what it cuts, talks by, solves", {}),
        KindSpec("bandwidth_ladder", "the links as pipes as thick as their bandwidth, and what each carries", {}),
        KindSpec("bytes_per_param", "one parameter's training state built block by block, then times P", {}),
        KindSpec("precision_switch", "the bytes of one parameter under each precision", {}, sweep=True),
        KindSpec("ledger_knobs", "one card's ledger bar and its compute per token as inputs change", {}, sweep=True),
        KindSpec("chapter_map", "the chapters that follow, each with how it slices the loaf", {}),
        KindSpec(
            "loaf_to_grid",
            "the loaf cut by stage and by tensor slice, each piece onto its card",
            {},
            hands_on=("grid",),
        ),
        KindSpec(
            "group_links",
            "each group's cards joined over its link, with bytes and time per step",
            {},
            takes=("grid",),
            hands_on=("grid",),
        ),
        KindSpec(
            "planner_pick",
            "the decision tree walked, and the plan the planner picks, drawn",
            {},
            pick=True,
        ),
        KindSpec("traffic_compare", "bytes and seconds per step for several configurations", {}, rows=True),
        KindSpec(
            "memory_columns",
            "memory per card as a column for each value, against the card's capacity",
            {"label": (_text, True), "note": (_text, False)},
            sweep=True,
            per_step=("label", "note"),
            paced=True,
        ),
        KindSpec(
            "ring_attention",
            "queries stay while key/value blocks travel a ring; the attention blocks fill in",
            {},
            needs={"cp": 2},
            at_most={"cp": 8},
            paced=True,
        ),
        KindSpec(
            "zigzag_balance",
            "the causal mask's work per card, dealt in order and then zig-zag",
            {},
            needs={"cp": 2},
            at_most={"cp": 8},
            paced=True,
        ),
    )
}
SHOT_KEYS = ("kind", "beat", "caption", "narration", "duration", "with")
SWEEP_KEYS = ("set", "values", "also")
PICK_KEYS = ("global_batch",)
# The plan inputs the planner chooses; a pick is shown with these on top of the shot's inputs.
PLAN_INPUTS = (
    "dp", "tp", "pp", "cp", "zero", "micro_batches", "micro_batch_size", "checkpointing", "recompute", "schedule",
    "virtual_stages",
)  # fmt: skip
ROW_KEYS = ("label", "with")
MAX_ROWS = 5
