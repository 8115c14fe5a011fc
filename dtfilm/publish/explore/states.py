"""Every state of the explorer page and its numbers, computed ahead by the cost model.

A state is a model preset, a card type, a strategy pill, a number of micro-batches, a
precision and checkpointing on or off. Each pill is a plan on the page's cards (8 by
default); everything else comes from the film's defaults (storyboard/film.yaml), so the
page's numbers are `dtfilm estimate --json` with the state's flags (`State.flags`). The EP
pill exists only for a mixture-of-experts model (a dense model has no experts to spread: the
page shows the pill disabled, with that reason), so it adds states for those models alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dtfilm.cost import BUILTIN_CATALOG, Catalog, builtin_layer, resolve
from dtfilm.cost.inputs import Value
from dtfilm.phrases import lookup, render_template
from dtfilm.storyboard.layers import flag_layer

PILLS = ("DP", "TP", "PP", "FSDP", "CP", "EP", "3D")  # the film's order of chapters
EXPERT_PILLS = ("EP",)  # offered only for a mixture-of-experts model
PILL_NAMES = {
    "DP": "Data parallel",
    "TP": "Tensor parallel",
    "PP": "Pipeline parallel",
    "FSDP": "FSDP (ZeRO-3)",
    "CP": "Context parallel",
    "EP": "Expert parallel",
    "3D": "3D: data × tensor × pipeline",  # the contract's order: dp x tp x pp x cp
}
PILL_CHAPTERS = {  # the film's chapter of each
    "DP": "dp",
    "TP": "tp",
    "PP": "pp",
    "FSDP": "fsdp",
    "CP": "cp",
    "EP": "ep",
    "3D": "3d",
}
MICRO_BATCHES = (1, 2, 4, 8, 16, 32)  # the slider's stops
PRECISIONS = ("bf16", "fp32", "fp8")
DEFAULT_MODELS = ("llama-7b", "llama-13b", "llama2-70b", "mixtral-8x7b")  # Mixtral: the EP pill's
DEFAULT_GPUS = ("a100-80gb", "h100-sxm-80gb", "h200-141gb")  # --gpus adds the others
DEFAULT_CARDS = 8

# The four stats: label, the template that formats the value as the film does, the value's path.
STATS = (
    ("Per card", "{memory.total:GB}", "memory.total"),
    ("Comm / step", "{comm.total:bytes}", "comm.total"),
    ("Bubble", "{pipeline.bubble_fraction:%}", "pipeline.bubble_fraction"),
    ("Step time", "{compute.step_seconds:time}", "compute.step_seconds"),
)


@dataclass(frozen=True)
class State:
    model: str
    gpu: str
    pill: str
    micro_batches: int
    precision: str
    checkpointing: bool

    @property
    def key(self) -> str:
        """The page's name for the state (the controls' values joined, as the page's script
        joins them)."""
        ckpt = "ckpt" if self.checkpointing else "nockpt"
        return f"{self.model}|{self.gpu}|{self.pill}|{self.micro_batches}|{self.precision}|{ckpt}"


def experts_of(model: str, catalog: Catalog = BUILTIN_CATALOG) -> int:
    """A model's routed experts (0: a dense model), `catalog`'s shape of it."""
    return catalog.models[model].experts


def offered(pill: str, model: str, catalog: Catalog = BUILTIN_CATALOG) -> bool:
    """Whether the page offers `pill` for `model`: EP only for a mixture of experts."""
    return pill not in EXPERT_PILLS or experts_of(model, catalog) > 0


def pill_plan(pill: str, cards: int, cards_per_node: int, experts: int = 0) -> dict[str, int]:
    """The plan each pill stands for on `cards` cards. TP, PP and CP stay inside a node (seed 000:
    tensor parallelism lives inside a node's fabric, NVLink or Infinity Fabric; the context ring
    exchanges every layer's keys and values) with data-parallel replicas across nodes; EP is data
    parallelism with the `experts` spread over as many cards as divide both; 3D is seed 000's
    shape: tensor parallel across pairs, pipeline stages across the rest of a node, replicas
    across nodes."""
    inside = min(cards, cards_per_node)
    if pill == "DP":
        return {"dp": cards, "tp": 1, "pp": 1, "cp": 1, "zero": 0}
    if pill == "TP":
        return {"dp": cards // inside, "tp": inside, "pp": 1, "cp": 1, "zero": 0}
    if pill == "PP":
        return {"dp": cards // inside, "tp": 1, "pp": inside, "cp": 1, "zero": 0}
    if pill == "FSDP":
        return {"dp": cards, "tp": 1, "pp": 1, "cp": 1, "zero": 3}
    if pill == "CP":
        return {"dp": cards // inside, "tp": 1, "pp": 1, "cp": inside, "zero": 0}
    if pill == "EP":
        if experts < 1:
            raise ValueError("EP spreads a mixture-of-experts model's experts; valid: a model with experts")
        return {"dp": cards, "tp": 1, "pp": 1, "cp": 1, "ep": math.gcd(cards, experts), "zero": 0}
    if pill == "3D":
        tp = 2 if inside % 2 == 0 else 1
        return {"dp": cards // inside, "tp": tp, "pp": inside // tp, "cp": 1, "zero": 0}
    raise ValueError(f"{pill!r} is not a pill; valid: {', '.join(PILLS)}")


@dataclass(frozen=True)
class Grid:
    """The states the page offers: every combination of the pickers' and switches' values, the
    EP pill's for the mixture-of-experts models only."""

    models: tuple[str, ...]
    gpus: tuple[str, ...]
    cards: int
    micro_batches: tuple[int, ...] = MICRO_BATCHES
    precisions: tuple[str, ...] = PRECISIONS
    catalog: Catalog = BUILTIN_CATALOG  # the film's: what its model and card names are

    def states(self) -> Iterator[State]:
        for model, gpu, pill, m, precision, ckpt in itertools.product(
            self.models, self.gpus, PILLS, self.micro_batches, self.precisions, (False, True)
        ):
            if offered(pill, model, self.catalog):
                yield State(model, gpu, pill, m, precision, ckpt)


def state_flags(
    state: State, cards: int, cards_per_node: int, film_model: str = "", catalog: Catalog = BUILTIN_CATALOG
) -> dict[str, Any]:
    """The cost model's inputs that make the state: `dtfilm estimate --json` with these flags
    prints the state's numbers. The film's own model is left to the film's defaults (its
    `params` too, so the page and the film show the same model: `--model` would clear them)."""
    model = {} if state.model == film_model else {"model": state.model}
    return {
        **model,
        "gpu": state.gpu,
        "cards": cards,
        **pill_plan(state.pill, cards, cards_per_node, experts_of(state.model, catalog)),
        "micro_batches": state.micro_batches,
        "precision": state.precision,
        "checkpointing": state.checkpointing,
    }


def state_values(
    state: State, cards: int, defaults: dict[str, Value], catalog: Catalog = BUILTIN_CATALOG
) -> dict[str, Value]:
    """The cost model's resolved inputs of one state: the film's defaults, then its flags (names
    of the film's `catalog`)."""
    base = resolve([builtin_layer(), defaults], catalog)
    flags = state_flags(state, cards, int(base["cards_per_node"].value), str(base["model"].value), catalog)
    return resolve([builtin_layer(), defaults, flag_layer(flags, catalog)], catalog)


def stat_rows(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """The four stats as the page shows them: the label, the text (formatted as the film
    formats it) and the raw value (bytes, a fraction, seconds)."""
    return [
        {"label": name, "text": render_template(template, numbers, ()).text, "value": float(lookup(numbers, path))}
        for name, template, path in STATS
    ]
