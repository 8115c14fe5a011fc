"""A shot's other configurations: a sweep's steps, comparison rows, the planner's pick and the decision tree's."""

from __future__ import annotations

import math
from typing import Any

from dtfilm.cost import Catalog, Value, parse_value, resolve
from dtfilm.cost.batch import parse_global_batch
from dtfilm.cost.inputs import CardsNotWhole, merge_overrides
from dtfilm.cost.planner import evaluate, fastest_with_room, plan
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import DtfilmError
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.storyboard import tree
from dtfilm.storyboard.fields import require_mapping
from dtfilm.storyboard.kinds import MAX_ROWS, PLAN_INPUTS, ROW_KEYS
from dtfilm.storyboard.layers import flag_layer, input_name, numbers_for, template, with_layer
from dtfilm.system.yamlsrc import KeyPath, Located, dotted


def sweep_steps(
    doc: Located,
    path: KeyPath,
    data: dict[str, Any],
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> tuple[dict[str, Any], tuple[Numbers, ...], tuple[Numbers, ...]]:
    """A sweep's steps: `set` with scalar `values`, or `values` that are mappings of inputs
    (several inputs moving together). `also` adds a second configuration to every step."""
    values = data.get("values")
    if not isinstance(values, list) or not 2 <= len(values) <= 8:
        # what was written, and the two keys a sweep takes: `values` alone was named before,
        # even when both were missing
        got = "missing key 'values'" if values is None else f"{values!r} is not a list of 2 to 8 values"
        raise DtfilmError(
            f"{got}; valid: set: an input (cluster.cards) and values: 2 to 8 of its values ([2, 4, 8]),"
            " or values alone as mappings of inputs ([{plan.zero: 1}, {plan.zero: 3}])",
            doc.where((*path, "values")),
            dotted((*path, "values")),
        )
    name = input_name(doc, (*path, "set"), data["set"]) if "set" in data else None
    also, also_layer = with_layer(doc, (*path, "also"), data["also"], catalog) if "also" in data else ({}, {})
    steps, seconds, refused = [], [], []
    for i, raw in enumerate(values):
        here = (*path, "values", i)
        change, layer = _step_inputs(doc, here, raw, name, data.get("set"), catalog)
        try:
            step_overrides = merge_overrides(overrides, change)
            _, numbers = numbers_for([*layers, layer], tuple(sorted(step_overrides.items())), catalog)
            if also:
                also_overrides = merge_overrides(step_overrides, also)
                _, second = numbers_for([*layers, layer, also_layer], tuple(sorted(also_overrides.items())), catalog)
                seconds.append(second)
        except CardsNotWhole as error:  # every step's, then one message
            refused.append((here, error))
            continue
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
        steps.append(numbers)
    if refused:
        raise _cards_for_every_step(doc, refused, steps)
    options = {"set": name, "values": [s.get(f"inputs.{name}") for s in steps] if name else list(values)}
    return options, tuple(steps), tuple(seconds)


def _step_inputs(
    doc: Located, here: KeyPath, raw: Any, name: str | None, written: Any, catalog: Catalog
) -> tuple[dict[str, Any], dict[str, Value]]:
    """One value of a sweep as flag-style overrides and a layer: a value of the input `name`
    (`set:`, as `written`), or without it a mapping of inputs."""
    if name is not None and isinstance(raw, (dict, list)):
        # a mapping (or list) is no value of one input: `set` and mappings are two ways to sweep
        got = "a mapping of inputs" if isinstance(raw, dict) else "a list"
        raise DtfilmError(
            f"{got} is not a value of {written}; valid: with `set`, each value is one of its values"
            f" ([2, 4, 8]); for mappings of inputs ({{training.micro_batches: 4}}), leave `set` out",
            doc.where(here),
            dotted(here),
        )
    if name is not None:
        try:
            return {name: raw}, {name: parse_value(name, raw, "flag", doc.where(here), catalog)}
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
    if isinstance(raw, dict):
        return with_layer(doc, here, raw, catalog)
    raise DtfilmError(
        "without `set`, each value is a mapping of inputs, such as {training.micro_batches: 4}",
        doc.where(here),
        dotted(here),
    )


def _cards_for_every_step(
    doc: Located, refused: list[tuple[KeyPath, CardsNotWhole]], taken: list[Numbers]
) -> DtfilmError:
    """One error for a sweep whose steps do not fit the card count: the first step's, and where
    more than one is refused, the card counts that every step takes."""
    here, first = refused[0]
    if len(refused) == 1:
        return DtfilmError(first.message, doc.where(here), dotted(here))
    groups = [error.group_cards for _, error in refused]
    groups += [int(n.get("plan.tp") * n.get("plan.pp") * n.get("plan.cp")) for n in taken]
    others = ", ".join(dotted(path).rsplit(".", 1)[-1] for path, _ in refused[1:])
    return DtfilmError(
        f"{first.message}; {others} too: card counts every step takes are multiples of {math.lcm(*groups)}",
        doc.where(here),
        dotted(here),
    )


def planner_pick(
    doc: Located,
    path: KeyPath,
    raw: dict[str, Any],
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> dict[str, Any]:
    """The planner's pick for the shot's inputs, as Numbers with the picked plan on top (so its
    facts name the flags that reproduce it), and where the decision tree ended."""
    setup, _ = build_setup(resolve(layers, catalog), catalog)
    here = (*path, "global_batch")
    # the shot's configuration's own global batch (training.global_batch, else dp x m x b), or the
    # shot's `global_batch:`; a --global-batch flag beats that as it beats a `with:`
    global_batch = setup.dp * setup.micro_batches * setup.micro_batch_size
    if "global_batch" in raw and "global_batch" not in layers[-1]:
        try:
            global_batch = parse_global_batch(raw["global_batch"]).whole_sequences(setup.seq_len)
        except ValueError as error:
            raise DtfilmError(str(error), doc.where(here), dotted(here)) from None
    result = plan(setup, global_batch, top=1)
    if result["pick"] is None:
        raise DtfilmError(
            "no plan fits these inputs; valid: more cards, a larger card or a shorter sequence",
            doc.where(path),
            dotted(path),
        )

    def numbers_of(row: dict[str, Any]) -> Numbers:
        chosen = _chosen(row)
        merged = merge_overrides(overrides, chosen)
        return numbers_for([*layers, flag_layer(chosen, catalog)], tuple(sorted(merged.items())), catalog)[1]

    alone = result["data_parallel_only"]
    return {
        "pick": numbers_of(result["pick"]),
        "data_parallel_only": numbers_of(alone) if alone is not None and alone != result["pick"] else None,
        "branch": result["branch"],
        "global_batch": global_batch,
    }


def _chosen(row: dict[str, Any]) -> dict[str, Any]:
    """A planned row's plan inputs, with its ep where it names one (a MoE model's rows do)."""
    return {name: row[name] for name in (*PLAN_INPUTS, "ep") if name in row}


def decision_tree(
    options: dict[str, Any], layers: list[dict[str, Value]], overrides: dict[str, Any], catalog: Catalog
) -> dict[str, Any]:
    """Seed 001's decision tree for the shot's inputs (dtfilm.storyboard.tree): the configurations
    its questions are weighed on, their answers, and the fastest plan that takes exactly the
    tree's splits (None when none fits), to set beside the planner's pick."""

    def numbers_of(chosen: dict[str, Any]) -> Numbers:
        merged = merge_overrides(overrides, chosen)
        return numbers_for([*layers, flag_layer(chosen, catalog)], tuple(sorted(merged.items())), catalog)[1]

    setup, _ = build_setup(resolve(layers, catalog), catalog)
    configs = tree.probes(numbers_of, setup.cards)
    answered = tree.answers(configs)
    splits = tree.tree_splits(answered)
    plans = evaluate(setup, options["global_batch"])
    laid_out = tree.laid_out(plans, splits)
    best = fastest_with_room(plans, plans.fits & laid_out)  # tree.follows, its mask kept
    follow = None
    if best is not None:
        row = plans.row(best)
        follow = numbers_of(_chosen(row))
    return {
        "tree_configs": configs,
        "tree_answers": answered,
        "tree_splits": splits,
        "tree_follow": follow,
        # whether any plan takes the tree's splits at this batch (a batch of 32 on 256 cards: none)
        "tree_laid_out": bool(laid_out.any()),
    }


def comparison_rows(
    doc: Located,
    path: KeyPath,
    raw: Any,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
    most: int = MAX_ROWS,
) -> list[tuple[Phrase, Numbers]]:
    """Comparison rows: each a label (a template) and the inputs that differ (`with`); at most
    `most` (the kind's)."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= most:
        raise DtfilmError(f"expected a list of 1 to {most} rows", doc.where(path), dotted(path))
    rows = []
    for i, row in enumerate(raw):
        here = (*path, i)
        require_mapping(doc, here, row, ROW_KEYS)
        if "label" not in row:
            raise DtfilmError("a row needs a label", doc.where(here), dotted(here))
        extra, layer = with_layer(doc, (*here, "with"), row["with"], catalog) if row.get("with") else ({}, {})
        row_overrides = merge_overrides(overrides, extra)
        try:
            _, numbers = numbers_for([*layers, layer], tuple(sorted(row_overrides.items())), catalog)
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
        rows.append((template(doc, (*here, "label"), row["label"], numbers), numbers))
    return rows
