"""Specs of the memory ledger's kinds: bytes per parameter, the precision switch, one card's ledger, the map.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import VALUE_MARKS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 7

SPECS = (
    KindSpec(
        "bytes_per_param",
        "one parameter's training state built block by block, then times P",
        {},
        marks={
            "weight": "the weights' block, highlighted, as the voice names the weight",
            "weights": "the weights' name and bytes, as the voice says them",
            "gradients": "the gradients' block",
            "share": "where the optimizer's blocks will stand, highlighted",
            "master_weights": "the master copy's",
            "adam_m": "Adam's moments",
            "optimizer": "the total; the optimizer's blocks pointed at",
            "times": "times the parameters: the model's column",
            "card": "the card's line",
            "verdict": "what passes the card's line, tinted in the bad colour (when the state does not fit)",
        },
        draw_seconds_per_second=0.18,
    ),
    KindSpec(
        "precision_switch",
        "the bytes of one parameter under each precision",
        {},
        sweep=True,
        marks={
            **VALUE_MARKS,
            "still": "the total bytes a parameter, highlighted",
            "same": "the blocks that stayed, highlighted (with `moments`: the master copy's)",
            "moments": "Adam's moments' blocks, highlighted, as they are named staying",
            "recipe": "the bytes an fp8 recipe keeps beside the fp8 weights: its copies' blocks beside the stack",
            "kept": "the recipe's copy of each weight in the mixed format, its block (else with `recipe`)",
            "transposed": "the transposed fp8 copy's block (else with `recipe`)",
            "more": "what the copies add a parameter, written beside them (else with `transposed`)",
            "speed": "the copies and the total, highlighted",
        },
        draw_seconds_per_second=0.17,
    ),
    KindSpec(
        "ledger_knobs",
        "one card's ledger bar and its compute per token as inputs change",
        {},
        sweep=True,
        marks={
            "busiest": "the activations, pointed at",
            "formula": "where the activation bytes come from",
            "hidden": "the hidden size in it, highlighted",
            "scores": "the formula, pointed at, as the voice says what it leaves out (the attention scores)",
            "squared": "the formula, highlighted again, while the voice is on how the scores grow",
            **VALUE_MARKS,
            "also": "the `also:` step (checkpointing, say): its counters (and, without `collapse`, the ledger)",
            "collapse": "the `also:` step's ledger bar and texts (its compute bar at `compute`)",
            "total": "the card's total, pointed at",
            "capacity": "the card's capacity, pointed at",
            "verdict": "the total and the capacity, highlighted, as the voice says whether it fits",
            "recompute": "after the first step: the compute bar and its FLOPs, highlighted",
            "verdict2": "after the first step: the total and the capacity, highlighted, as the verdict is said",
            "compute": "the compute bar, pointed at",
            "state": "the state's segments, pointed at",
            "stay": "the master copy's and the moments' segments, highlighted, as the voice says they stay",
            "copies": "the grey part (an fp8 recipe's copies among its buffers) and the total, highlighted",
        },
        draw_seconds_per_second=0.22,
    ),
    KindSpec(
        "chapter_map",
        "the chapters that follow, each with how it slices the loaf",
        {},
        reads=("chapters",),
        marks={
            **{c: f"the {c} chapter's tile" for c in ("dp", "tp", "pp", "fsdp", "cp", "ep", "3d")},
            **{
                f"{c}_cuts": f"the {c} tile (and those named with it), highlighted"
                for c in ("dp", "pp", "fsdp", "cp", "ep")
            },
            "caveat": "the whiteboard's caveat, written under the tiles; the tiles highlighted",
        },
        draw_seconds_per_second=0.20,
    ),
)
