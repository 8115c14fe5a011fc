"""The decision_tree kind's spec: seed 001's tree, each answer a claim, the planner's pick beside.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 9

SPECS = (
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
            " tree.tp, tree.pp, tree.cp, tree.moe, tree.departs, tree.follow_fits, tree.laid_out (a plan takes"
            " the tree's splits at this batch) and tree.branch (ddp, fsdp, 3d; expert parallelism beside any of them),"
            " and the configurations one_card, sharded, follow, pick and alone. Under the tree, on one line,"
            " the question every path asks: mixture of experts? (yes: expert parallel too, where the model's"
            " experts are above 0; weighed on its total and active parameters), lit for a MoE model, dimmed"
            " for a dense one."
        ),
        draw_seconds_per_second=0.19,  # measured beside another kind on a loaded machine, scaled by its rate
    ),
)
