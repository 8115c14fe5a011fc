"""Specs of the expert-parallel chapter's kinds: the all-to-all, the routing imbalance.

Read with no Manim (dtfilm.shots.registry finds it); the kinds' play functions are in draw.py."""

from __future__ import annotations

from dtfilm.storyboard.kinds import KindSpec

# Where the kinds of this folder stand in `dtfilm kinds`, the gallery and the reference.
PLACE = 13

SPECS = (
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
        draw_seconds_per_second=0.26,  # measured beside memory_columns (ep's render), scaled by it
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
        # measured beside memory_columns (ep's render), scaled by it; drawn alone, the fsdp shots
        # before it played without frames counted in
        draw_seconds_per_second=0.32,
    ),
)
