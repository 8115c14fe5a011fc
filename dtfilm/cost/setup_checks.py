"""The resolved inputs checked against each other (the plan against the model and cluster) and
built into the Setup the cost model reads, with any warnings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.input_spec import shown_bound
from dtfilm.cost.inputs import SHAPE_KEYS, SPECS, Value, model_shape, most_specific
from dtfilm.cost.models import ModelShape
from dtfilm.cost.pipeline import stage_layers
from dtfilm.cost.setup import Setup
from dtfilm.errors import DtfilmError


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


def _check_experts(shape: ModelShape, values: dict[str, Value], fail: Callable[[str, str], DtfilmError]) -> None:
    """A MoE shape routes each token to 1..E experts of some width, and keeps some layer MoE
    (blamed on the key given: `--experts 8` on a dense preset is that flag's to answer for)."""
    if not shape.moe:
        return
    given: Callable[[str], str] = lambda key: key if key in values else "experts"  # noqa: E731
    if not 1 <= shape.top_k <= shape.experts:
        raise fail(
            f"top_k = {shape.top_k} routed experts of {shape.experts}; valid: 1 to {shape.experts}", given("top_k")
        )
    if shape.expert_ffn < 1:
        raise fail("expert_ffn = 0: a routed expert needs an MLP width; valid: 1 or more", given("expert_ffn"))
    if shape.dense_layers >= shape.layers:
        raise fail(
            f"dense_layers = {shape.dense_layers} leaves none of the {shape.layers} layers MoE;"
            f" valid: 0 to {shape.layers - 1}",
            "dense_layers",
        )


def _check_ep(v: dict[str, Any], shape: ModelShape, fail: Callable[[str, str], DtfilmError]) -> None:
    """EP splits a MoE model's routed experts over ep data-parallel replicas: it needs experts,
    and divides both dp and their count (Megatron-Core's rule with expert TP = TP)."""
    ep = v["ep"]
    if ep == 1:
        return
    if not shape.moe:
        raise fail(f"ep = {ep} splits experts, and {shape.label} has none (a dense model); valid: 1", "ep")
    valid = _divisors(math.gcd(v["dp"], shape.experts))  # what divides both (a new user's trial)
    if v["dp"] % ep:
        raise fail(f"ep = {ep} does not divide dp = {v['dp']}; valid: {valid}", "ep")
    if shape.experts % ep:
        raise fail(f"ep = {ep} does not divide the {shape.experts} experts of {shape.label}; valid: {valid}", "ep")


def build_setup(values: dict[str, Value], catalog: Catalog = BUILTIN_CATALOG) -> tuple[Setup, list[str]]:
    """Check the plan against the model and cluster; return the Setup (its names resolved in
    `catalog`, which it keeps) and any warnings."""
    shape = model_shape(values, catalog)

    def fail(message: str, key: str) -> DtfilmError:
        # A shape dimension left to the preset is blamed on the preset's line.
        source = values[key] if key in values else values["model"]
        return DtfilmError(message, source.where, f"{SPECS[key].section}.{key}")

    v = {k: val.value for k, val in values.items()}
    _check_shape(shape, values, fail)
    _check_cards(values)
    warnings = _check_tp(shape, v, fail)
    warnings += _check_pp(shape, v, fail)
    _check_experts(shape, values, fail)
    _check_ep(v, shape, fail)
    if v["seq_len"] % v["cp"]:
        raise fail(f"cp = {v['cp']} does not divide the sequence of {v['seq_len']} tokens", "cp")
    if v["tp"] > v["cards_per_node"]:
        warnings.append(
            f"tp = {v['tp']} spans more than one node of {v['cards_per_node']} cards:"
            " its all-reduces cross the inter-node link"
        )
    card = catalog.cards[v["gpu"]]
    _, peak_warning = card.peak_for(v["precision"])
    if peak_warning:
        warnings.append(peak_warning)
    return _setup(v, shape, catalog), warnings


def _check_shape(shape: ModelShape, values: dict[str, Value], fail: Callable[[str, str], DtfilmError]) -> None:
    """A parameter count inside the supported range, and heads that divide the hidden size."""
    params = values["params"].value
    most = SPECS["params"].high or 0.0  # a count the shape gives keeps to the bound a given count has
    if not params <= most:
        raise DtfilmError(
            f"this shape has {params:.3g} parameters, past the supported {shown_bound(most)}; valid: a smaller"
            " shape (fewer layers, a smaller hidden, ffn or vocab)",
            most_specific(values, ("params", *SHAPE_KEYS)),
            "model.params",
        )
    if shape.hidden % shape.heads:
        raise fail(f"{shape.heads} heads do not divide the hidden size {shape.hidden}", "heads")
    if shape.heads % shape.kv_heads:
        raise fail(f"{shape.kv_heads} KV heads do not divide {shape.heads} heads", "kv_heads")


def _check_cards(values: dict[str, Value]) -> None:
    """The degrees multiply to the cluster's cards."""
    dp, tp, pp, cp, cards = (values[k].value for k in ("dp", "tp", "pp", "cp", "cards"))
    if dp * tp * pp * cp != cards:
        raise DtfilmError(
            f"dp x tp x pp x cp = {dp} x {tp} x {pp} x {cp} = {dp * tp * pp * cp},"
            f" but the cluster has {cards} cards; leave dp out to let it follow",
            most_specific(values, ("dp", "tp", "pp", "cp", "cards")),
            "plan",
        )


def _check_tp(shape: ModelShape, v: dict[str, Any], fail: Callable[[str, str], DtfilmError]) -> list[str]:
    """Tensor parallelism splits the attention heads; the warning where KV heads are replicated."""
    warnings = []
    if shape.heads % v["tp"]:
        raise fail(
            f"tp = {v['tp']} does not divide the {shape.heads} attention heads of"
            f" {shape.label}; valid: {_divisors(shape.heads)}",
            "tp",
        )
    if shape.kv_heads % v["tp"]:
        if v["tp"] % shape.kv_heads:
            raise fail(
                f"tp = {v['tp']} neither divides nor is a multiple of the {shape.kv_heads} KV heads of {shape.label}",
                "tp",
            )
        warnings.append(
            f"tp = {v['tp']} exceeds the {shape.kv_heads} KV heads: each KV head is"
            f" replicated on {v['tp'] // shape.kv_heads} cards"
        )
    return warnings


def _check_pp(shape: ModelShape, v: dict[str, Any], fail: Callable[[str, str], DtfilmError]) -> list[str]:
    """A pipeline's stages each hold a layer or more (each virtual stage too, interleaved 1F1B
    only); the warning where stages hold different counts."""
    warnings = []
    if v["pp"] > shape.layers:
        raise fail(
            f"pp = {v['pp']} stages exceed the {shape.layers} layers of {shape.label}; valid: 1 to {shape.layers}",
            "pp",
        )
    if shape.layers % v["pp"]:
        counts = sorted(set(stage_layers(shape.layers, v["pp"])))
        warnings.append(
            f"pp = {v['pp']} does not divide {shape.layers} layers: stages hold"
            f" {' or '.join(map(str, counts))} layers; the most loaded stage counts"
        )
    if v["virtual_stages"] > 1:
        if v["pp"] == 1 or v["schedule"] != "1f1b":
            raise fail(
                f"virtual_stages = {v['virtual_stages']} interleaves a 1F1B pipeline: it needs pp of 2 or more and"
                f" schedule 1f1b (here pp = {v['pp']}, schedule {v['schedule']}); valid: 1",
                "virtual_stages",
            )
        fewest = min(stage_layers(shape.layers, v["pp"]))
        if v["virtual_stages"] > fewest:
            raise fail(
                f"virtual_stages = {v['virtual_stages']} exceeds the {fewest} layers of the smallest stage;"
                f" valid: 1 to {fewest}",
                "virtual_stages",
            )
    return warnings


def _setup(v: dict[str, Any], shape: ModelShape, catalog: Catalog) -> Setup:
    """The checked values as the Setup the cost model reads, its names resolved in `catalog`."""
    return Setup(
        model=v["model"],
        shape=shape,
        params=float(v["params"]),
        card=catalog.cards[v["gpu"]],
        cards=v["cards"],
        cards_per_node=v["cards_per_node"],
        inter_node=catalog.links[v["inter_node"]],
        catalog=catalog,
        dp=v["dp"],
        tp=v["tp"],
        pp=v["pp"],
        cp=v["cp"],
        ep=v["ep"],
        routing_imbalance=v["routing_imbalance"],
        zero=v["zero"],
        schedule=v["schedule"],
        precision=v["precision"],
        seq_len=v["seq_len"],
        micro_batch_size=v["micro_batch_size"],
        micro_batches=v["micro_batches"],
        recompute="full" if v["checkpointing"] else v["recompute"],
        virtual_stages=v["virtual_stages"],
        sequence_parallel=v["sequence_parallel"],
        flash_attention=v["flash_attention"],
        fp8_attention=v["fp8_attention"],
        mfu=v["mfu"],
        tokens=float(v["tokens"]),
        network=v["network"],
        overlap=v["overlap"],
        tp_overlap=v["tp_overlap"],
        dp_overlap=v["dp_overlap"],
        pp_overlap=v["pp_overlap"],
    )
