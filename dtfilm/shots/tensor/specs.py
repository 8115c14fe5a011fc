"""Specs of the tensor-parallel chapter's kinds: the loaf cut down the middle, the split matrices, a layer's stalls.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import VALUE_MARKS, KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 5

SPECS = (
    KindSpec(
        "loaf_split",
        "every layer cut down the middle, t pieces onto t cards",
        {},
        sweep=True,
        takes=("loaf",),
        needs={"tp": 2},
        marks={
            **VALUE_MARKS,
            "fall": "the gauges, pointed at",
            "gradients": "the gradients' segments, highlighted",
            "optimizer": "the optimizer state's segments (master copy, Adam's moments), highlighted",
            "activations": "the activations' segments, highlighted",
            "tokens": "the activations' segments again, as sequence parallelism splits them along the tokens",
        },
        draw_seconds_per_second=0.26,
    ),
    KindSpec(
        "split_matrices",
        "X·A split by columns, Y·B by rows, partial sums all-reduced",
        {},
        needs={"tp": 2},
        marks={
            "x": "the MLP drawn as it runs (X, A, the nonlinearity, B, Z): X and A, highlighted",
            "gelu": "the products in symbols, Y = GeLU(X·A), Z = Y·B, and the nonlinearity highlighted",
            "b": "B and Z, pointed at; then X and A become the matrices drawn to scale",
            "columns": "A splits by columns",
            "slice": "each card's slice of Y",
            "none": "each card's slice of Y, pointed at",
            "rows": "B, split by rows",
            "partial": "the partial sums",
            "allreduce": "the all-reduce joins them",
            "same": "the joined output, pointed at",
            "nonlinear": "Y's title becomes Y = GeLU(X·A) and its slices are pointed at (with it, A's columns"
            " pointed at once split, and the note of no exchange highlighted at [none])",
            "next": "the all-reduce's words under Z, highlighted",
        },
        draw_seconds_per_second=0.13,
    ),
    KindSpec(
        "layer_timeline",
        "one layer's compute stalling for each all-reduce, per link",
        {},
        rows=True,
        needs={"tp": 2},
        marks={
            "exchanges": "the first row, highlighted (with [backward]: its forward stalls, highlighted)",
            "backward": "the first row's backward stalls, highlighted",
            "layers": "under the first row, the count begun: a layer's all-reduces × layers × micro-batches",
            "count": "the count's rest (the embedding's and the head's, if the narration adds them) and the"
            " step's total, highlighted; with it, the other rows' figures are highlighted before [why]",
            "split": "the first row's stalls, highlighted, as the voice says each is a reduce-scatter"
            " and an all-gather",
            "stall": "the first row's stalls, pointed at",
            "small": "the first row's figures, highlighted",
            "latency": "one stall, highlighted",
            "inside": "the first row (the link inside a node), then its figures lit again on the way to [kept]",
            "kept": "the first row's figures, highlighted",
            "across": "the other rows, one after the other",
            "why": "the first row again",
        },
        draw_seconds_per_second=0.13,
    ),
)
