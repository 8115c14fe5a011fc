"""Shot kinds a storyboard may name, with the extra keys each takes (no manim here).

`dtfilm.shots` registers one play function per kind; a test checks the two lists agree.
"""

# Over 400 lines: the one table of every kind's keys and needs; entries move beside their shots/ (STYLE 15)

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _text(raw: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"{raw!r} is not text")
    return raw


# A title card's first picture (`picture:`), drawn as the voice names what the chapter is about
# (dtfilm.shots.common.TITLE_PICTURES draws each): the loaf of layers that tensor parallelism cuts,
# the single card that the model does not fit, the sequence that context parallelism cuts.
TITLE_PICTURES = ("loaf", "card", "sequence")


def _picture(raw: Any) -> str:
    if raw not in TITLE_PICTURES:
        raise ValueError(f"{raw!r} is no title picture; one of: {', '.join(TITLE_PICTURES)}")
    return str(raw)


@dataclass(frozen=True)
class KindSpec:
    """A shot kind: what it shows, and its extra keys (name -> parser, True when required)."""

    name: str
    summary: str
    keys: dict[str, tuple[Callable[[Any], Any], bool]]
    sweep: bool = False  # takes `set` and `values` (one input over values)
    rows: bool = False  # takes `rows`: [{label, with}], one configuration each
    most_rows: int = 5  # the most `rows` it draws (MAX_ROWS)
    pick: bool = False  # runs the planner; takes `global_batch` (default: the configuration's)
    tree: bool = False  # answers seed 001's decision tree (dtfilm.storyboard.tree); with `pick`
    # What `dtfilm kinds NAME` prints besides the summary: how the kind decides what it draws.
    doc: str = ""
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
    # The narration's `[mark]`s its steps wait for (ctx.until), in the order it shows them, each
    # with what shows then; a narration without one spreads that step over its length instead.
    marks: dict[str, str] = field(default_factory=dict)


MAX_ROWS = 5

# A sweep's steps: `[value2]` where the voice moves to its second value, and so on; a value
# without a mark is spread evenly over the narration.
GROUP_MARKS = ("tp", "cp", "pp", "dp")  # group_links' groups, each with its figures' marks
VALUE_MARKS = {f"value{i}": f"the sweep moves to its value {i}" for i in range(2, 9)}

KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec(
            "title",
            "the chapter's title card",
            {"subtitle": (_text, False), "picture": (_picture, False)},
            doc="With `picture`, the card carries what the chapter is about as the voice names it. `loaf`:"
            " at [picture] the title shrinks into the header and the model's loaf of layers is built on the"
            " stage (loaf_split then takes it and cuts it). `card`: one card stands under the title, its"
            " gauge filled with the training state as the voice says the subtitle's first clause."
            " `sequence`: the loaf cut down the middle and across, then at [subtitle] a row of tokens cut"
            " into plan.cp pieces.",
            hands_on=("loaf",),
            marks={
                "subtitle": "the subtitle appears under the title (with `subtitle2`: its first clause)",
                "subtitle2": "the subtitle's second clause, after its first comma",
                "picture": "with `picture: loaf`: the title shrinks into the header, the loaf built in its place",
                "again": "the subtitle, pointed at again (with `picture: loaf`: a line down the loaf's middle)",
            },
        ),
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
                "nic": "the link between nodes, then the traffic's bytes, as the voice says what each card's"
                " network link carries",
            },
        ),
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
        ),
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
                "count": "the timeline cut into slots of a micro-batch's work, numbered",
                "idle": "one row's idle slots counted: p-1 of m+p-1",
            },
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
                "interleave": "each card's row, lit: interleaving puts several thinner stages in each",
                "again": "the bubble's formula with v stages a card, in place of its share, highlighted",
                "memory": "both schedules' gauges, pointed at: memory is not the price",
                "gauges": "GPipe's first-stage gauge, pointed at; the knob sweeps the values again",
                "grown": "the sweep under [gauges] ends: GPipe's gauge at the last value as the voice gives it",
                "onef": "1F1B's first-stage gauge, pointed at; the knob sweeps the values again",
                "fallen": "the sweep under [onef] ends: 1F1B's gauge at the last value as the voice gives it",
            },
        ),
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
        ),
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
        ),
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
        ),
        KindSpec(
            "chapter_map",
            "the chapters that follow, each with how it slices the loaf",
            {},
            marks={
                **{c: f"the {c} chapter's tile" for c in ("dp", "tp", "pp", "fsdp", "cp", "ep", "3d")},
                **{
                    f"{c}_cuts": f"the {c} tile (and those named with it), highlighted"
                    for c in ("dp", "pp", "fsdp", "cp", "ep")
                },
                "caveat": "the whiteboard's caveat, written under the tiles; the tiles highlighted",
            },
        ),
        KindSpec(
            "loaf_to_grid",
            "the loaf cut by stage and by tensor slice, each piece onto its card",
            {},
            hands_on=("grid",),
            doc=(
                "Up to four nodes are drawn whole; more collapse to one whole pipeline replica (its first and"
                " last node, the nodes between said with the stages they hold) and the data-parallel group of"
                " its last node's cards (the last replica's node, the nodes and replicas between said), so a"
                " pipeline hop and a data-parallel link across nodes are always drawn, up to 131,072 cards."
            ),
            marks={
                "across": "the cuts between the pipeline stages (lines across the loaf), each stage lit",
                "down": "the cuts between the tensor slices (lines down the loaf), each slice lit",
                "pieces": "every card gets its piece",
                "replica": "the pieces have landed",
            },
        ),
        KindSpec(
            "group_links",
            "each group's cards joined over its link, with bytes and time per step",
            {},
            takes=("grid",),
            hands_on=("grid",),
            marks={
                **{g: f"the {g} group's links" for g in ("tp", "cp", "pp", "dp")},
                **{f"{g}_often": f"the {g} group's wires again, as how often they talk is said" for g in GROUP_MARKS},
                **{f"{g}_bytes": f"the {g} group's bytes and seconds a step, highlighted" for g in GROUP_MARKS},
                **{f"{g}_vs_bytes": f"the {g} group's pipe against the first group's (bytes)" for g in GROUP_MARKS},
                **{f"{g}_seconds": f"the {g} group's seconds a step, highlighted" for g in GROUP_MARKS},
                **{f"{g}_vs_seconds": f"the {g} and the first group's seconds, highlighted" for g in GROUP_MARKS},
                "outermost": "the last group again: why it is the outermost",
                "hidden": "the last group's seconds, as the voice says they hide under the backward",
                "alternative": "the pipeline's group pointed at, then the last group lit, as the voice names the"
                " other common layout (the pipeline outermost)",
            },
        ),
        KindSpec(
            "planner_pick",
            "the decision tree walked, and the plan the planner picks, drawn",
            {},
            pick=True,
            marks={
                "tries": "the model and its cards, pointed at",
                "tree": "the tree walked, row by row",
                "pick": "the plan it picks, and why",
                "grid": "the plan drawn on its cluster",
            },
        ),
        KindSpec(
            "decision_tree",
            "seed 001's decision tree drawn, each answer from the cost model, the path lit, the planner's pick beside",
            {},
            pick=True,
            tree=True,
            marks={
                "one_card": "the first question: does one card hold it all?",
                "sharded": "the second: does it fit sharded (FSDP / ZeRO-3)?",
                "bottleneck": "where is the bottleneck: the three questions",
                "cards": "the model and its card count, pointed at",
                "answer": "the second question, highlighted, as its answer is said",
                "end": "where the tree ends",
                "pick": "the planner's pick, and where it departs from the tree",
                "departs": "where the tree ends, highlighted, as the pick departs from it",
                "step": "the pick's step time, highlighted",
                "against": "the tree plan's line (its step time), highlighted",
                "traffic": "the tree plan's line, pointed at as its traffic is said",
                "spare": "the pick's memory on its busiest card, highlighted",
                "thin": "the pick's memory, pointed at as its margin is said to be too thin",
                "questions": "the tree's questions (the first, and the dimmed ones below it), highlighted",
                "one_card_answer": "the first question and its answer, highlighted",
                "sharded_answer": "the second question and its answer, highlighted",
                "leaf": "the lit leaf (the bottleneck's answer), highlighted; the leaves come in before it",
                "pick_path": "the pick's last line (whether it takes the tree's splits), highlighted",
                "pick_figures": "the pick's plan and step time, highlighted",
                "moe": "the mixture of experts' question and its answer, highlighted",
            },
            doc=(
                "Draws seed 001's tree (section 4.2) top to bottom: fits on one card? (yes: DDP); fits sharded,"
                " FSDP / ZeRO-3 over every card? (yes: FSDP / ZeRO); else where is the bottleneck: single layer"
                " too big (tensor parallel), too many layers (pipeline), sequence too long (context parallel),"
                " all ending in 3D. Every answer is a claim on the cost model, with its figures under the"
                " question, each weighed at the least memory plain data parallelism can have (one sequence a"
                " micro-batch, gradient checkpointing): one card: ZeRO 0, the busiest card against its"
                " capacity; sharded: ZeRO-3 over every card, the same; single layer too big: one layer's training"
                " state (bytes a parameter times its parameters) and its activations exceed the card (a"
                " pipeline cannot cut below a layer); too many layers: the whole state exceeds a node's"
                " cards together, so stages must cross nodes; sequence too long: one micro-batch's"
                " activations do not fit beside the sharded state. The path the answers take is lit, the"
                " rest faint. Beside it, the planner's pick (the fastest plan that fits, for `global_batch`"
                " sequences a step) in the contract's order dp x tp x pp x cp (then ep above 1); where its"
                " splits differ from"
                " the tree's, the shot says so with both plans' step times and the tree plan's traffic (its plan: the"
                " fastest that takes exactly the tree's splits). Claims may name tree.one_card, tree.sharded,"
                " tree.tp, tree.pp, tree.cp, tree.moe, tree.departs, tree.follow_fits and tree.branch (ddp, fsdp,"
                " 3d; expert parallelism beside any of them),"
                " and the configurations one_card, sharded, follow, pick and alone. Under the tree, on one line,"
                " the question every path asks: mixture of experts? (yes: expert parallel too, where the model's"
                " experts are above 0; weighed on its total and active parameters), lit for a MoE model, dimmed"
                " for a dense one."
            ),
        ),
        KindSpec(
            "traffic_compare",
            "bytes and seconds per step for several configurations",
            {},
            rows=True,
            doc=(
                "Each bar as long as its bytes, on one scale that keeps every bar and its figures in the frame;"
                " its pieces in their parallel group's colour (a collective's halves within it: an all-gather"
                " solid, a reduce-scatter hollow), each group's bytes under it, and beside it the bytes, the"
                " seconds on the link and how many of them are exposed."
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
        ),
        KindSpec(
            "step_breakdown",
            "each plan's step in seconds: compute, bubble, each group's exposed traffic; memory a card",
            {},
            rows=True,
            most_rows=4,
            doc=(
                "One bar a row, on one scale of seconds for all rows: the terms of compute.step_seconds"
                " (the busiest stage's compute, the bubble, compute slowed beside hidden traffic, each"
                " group's exposed traffic), each part from the row's own estimate; beside it the step"
                " and memory.total against the card's capacity, under it each part but compute with its seconds."
            ),
            marks={
                **{f"row{i}": f"row {i}, its bar and figures" for i in range(1, 5)},
                **{f"row{i}_again": f"row {i}, highlighted again" for i in range(1, 5)},
                **{f"row{i}_parts": f"row {i}'s parts, pointed at one by one up to the next mark" for i in range(1, 5)},
                "key": "the key naming the parts, highlighted",
            },
        ),
        KindSpec(
            "memory_columns",
            "memory per card as a column for each value, against the card's capacity",
            {"label": (_text, True), "note": (_text, False)},
            sweep=True,
            per_step=("label", "note"),
            paced=True,
            marks={
                "static": "the first column's state, highlighted",
                "grow": "the columns after the first, spread to the end",
                "last": "the last column's note, highlighted, as the voice gives its figures",
            },
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
            marks={
                "dealt": "dealt zig-zag",
                "mirror": "each card's two chunks in turn",
                "same": "the work bars even out",
                "falls": "the slowest card's time falls",
            },
        ),
        KindSpec(
            "expert_all_to_all",
            "tokens routed to experts on other cards: dispatched by an all-to-all, worked, combined home",
            {},
            needs={"ep": 2},
            doc=(
                "The expert-parallel group's cards (up to 8 drawn: the first seven and the last), each with"
                " its tokens in its colour and its share of the experts; a router's k copies of each token"
                " travel to the experts' cards and back. The figures: one all-to-all's bytes a card"
                " (comm.collectives.ep_all_to_all.bytes_each) and the all-to-all's seconds a step."
            ),
            marks={
                "route": "each token's k copies appear; one token's go to the experts its router chose",
                "dispatch": "every copy travels to its expert's card (the dispatch all-to-all)",
                "compute": "the experts' work, a bar a card",
                "combine": "the copies travel home (the combine all-to-all)",
                "backward": "the same two journeys again, for the gradients; the seconds a step pointed at",
            },
        ),
        KindSpec(
            "expert_imbalance",
            "skewed routing: the busiest expert's card works longest and every card waits for it",
            {},
            sweep=True,
            needs={"ep": 2},
            doc=(
                "A sweep over plan.routing_imbalance (its first value the reference, its last drawn): the"
                " busiest card receives that many times the mean of the drawn copies, its work bar the"
                " longest, the others' wait in red; the step's compute counts from the first value's to the last's."
            ),
            marks={
                "dispatch": "the skewed copies travel to their experts",
                "busiest": "the work bars, the busiest expert's pointed at",
                "wait": "every other card's wait, in red",
                "step": "the step's compute counts to the skewed value's",
            },
        ),
        KindSpec(
            "overlap_timeline",
            "one card's step as a compute lane over a traffic lane, to scale, the exposed part in red",
            {"note": (_text, False)},
            marks={
                "compute": "the compute lane: the last backward pass (dp), or each layer forward and backward (fsdp)",
                "traffic": "the traffic lane beside it: DDP's gradient buckets, or FSDP's gathers and reduce-scatters",
                "zoom": "fsdp: the first layers enlarged, each gather under the layer before",
                "exposed": "what the step waits for, in red, with its bracket and the key",
                "verdict": "the `note` (whether the traffic hides), under the key, highlighted",
            },
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
