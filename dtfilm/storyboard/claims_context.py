"""The configurations of one shot a claim's condition may name besides its own numbers: a
sweep's `steps` (and their `also`), a comparison's `rows`, the planner's `pick` and `alone`
(the fastest plan that splits only the batch) and `tree` (where seed 001's decision tree ends:
`tree.branch` is ddp, fsdp, cp or 3d; `tree.pick_plain`: the pick splits only the batch). The
decision_tree kind adds its own answers (`tree.one_card`, `tree.sharded`, `tree.tp`, `tree.pp`,
`tree.cp`, `tree.moe`, `tree.departs`, `tree.follow_fits`, `tree.laid_out`; its `branch` is ddp,
fsdp or 3d), the configurations they are weighed on (`one_card`, `sharded`) and `follow`, the
fastest plan that takes exactly the tree's splits (the pick itself when none fits)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dtfilm.numbers import Numbers
from dtfilm.storyboard.tree import end, pick_splits


def claim_numbers(
    numbers: Numbers, steps: tuple[Numbers, ...], also: tuple[Numbers, ...], options: dict[str, Any]
) -> Numbers:
    """`numbers` with the shot's other configurations as its claims' context."""
    context: dict[str, Any] = {}
    if steps:
        context["steps"] = list(steps)
    if also:
        context["also"] = list(also)
    if options.get("rows"):
        context["rows"] = [row for _, row in options["rows"]]
    if options.get("pick") is not None:
        pick, alone = options["pick"], options.get("data_parallel_only")
        context["pick"] = pick
        # The fastest plan that splits only the batch; the pick itself when it is that plan or
        # none fits, so that a claim naming it always reads a value.
        context["alone"] = alone if alone is not None else pick
        plain = all(pick.get(f"plan.{g}") == 1 for g in ("tp", "pp", "cp"))
        context["tree"] = {"branch": options["branch"], "pick_plain": plain, "alone_fits": alone is not None or plain}
    if options.get("tree_answers") is not None:  # the decision_tree kind: its own answers
        answered, splits = options["tree_answers"], options["tree_splits"]
        context.update(options["tree_configs"])
        context["follow"] = options["tree_follow"] if options["tree_follow"] is not None else options["pick"]
        context["tree"] = {
            **context["tree"],
            **answered,
            "branch": end(answered),
            "departs": pick_splits(options["pick"]) != splits,
            "follow_fits": options["tree_follow"] is not None,
            "laid_out": options.get("tree_laid_out", True),  # any plan takes its splits at this batch
        }
    return replace(numbers, context=context)
