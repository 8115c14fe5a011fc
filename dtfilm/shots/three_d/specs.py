"""Specs of the 3D chapter's kinds: the loaf cut onto a grid, each group's links, the planner's pick.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 8

GROUP_MARKS = ("tp", "cp", "pp", "dp")  # group_links' groups, each with its figures' marks

SPECS = (
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
        draw_seconds_per_second=0.22,
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
        draw_seconds_per_second=0.17,
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
        draw_seconds_per_second=0.39,
    ),
)
