"""The cost model's inputs: their names, how each is parsed, how layers of them resolve.

Layers, lowest first: built-in defaults, the film's defaults (film.yaml), the chapter's
storyboard, command-line flags. Every resolved value remembers where it came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from dtfilm.cost.batch import GlobalBatch, derived_micro_batches, nearby_multiples, parse_global_batch
from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.input_spec import (
    InputSpec,
    catalog_name,
    finite_count,
    fraction,
    load_factor,
    model_name,
    one_of,
    token_count,
    whole_number,
    yes_no,
    zero_stage,
)
from dtfilm.cost.memory import BYTES_PER_PARAM, RECOMPUTE_MODES
from dtfilm.cost.models import ModelShape, param_count, shape_with
from dtfilm.cost.network import NETWORKS
from dtfilm.cost.overlap import DP_OVERLAP_MODES, OVERLAP_MODES, PP_OVERLAP_MODES, TP_OVERLAP_MODES
from dtfilm.cost.pipeline import SCHEDULES
from dtfilm.cost.planner import MAX_MICRO_BATCH_SIZE, MAX_MICRO_BATCHES
from dtfilm.errors import DtfilmError, Where
from dtfilm.units import format_si

MAX_CARDS = 131_072  # 2^17: twice the largest cluster the README promises


@dataclass(frozen=True)
class Value:
    """A resolved input: its value, its source (builtin, default, storyboard, flag, derived)."""

    value: Any
    source: str
    where: Where


SPECS: dict[str, InputSpec] = {
    spec.name: spec
    for spec in (
        InputSpec("model", "model", model_name, "model preset", named=True),
        InputSpec("params", "model", finite_count, "parameter count (7e9, 7B, 512M)", 1e6, 1e14),
        InputSpec("layers", "model", whole_number, "transformer layers", 1, 1024),
        InputSpec("hidden", "model", whole_number, "hidden size", 64, 262_144),
        InputSpec("heads", "model", whole_number, "attention heads", 1, 1024),
        InputSpec("kv_heads", "model", whole_number, "key/value heads", 1, 1024),
        InputSpec("ffn", "model", whole_number, "MLP width", 1, 1_048_576),
        InputSpec("vocab", "model", whole_number, "vocabulary size", 1, 4_194_304),
        InputSpec("experts", "model", whole_number, "routed experts a MoE layer (0: dense)", 0, 65_536),
        InputSpec("top_k", "model", whole_number, "routed experts each token goes to", 0, 1024),
        InputSpec("expert_ffn", "model", whole_number, "one routed expert's MLP width", 0, 1_048_576),
        InputSpec("shared_ffn", "model", whole_number, "the shared experts' MLP width, together", 0, 1_048_576),
        InputSpec("dense_layers", "model", whole_number, "first layers with a dense MLP among MoE layers", 0, 1024),
        InputSpec("gpu", "cluster", catalog_name(lambda catalog: catalog.cards), "card type", named=True),
        InputSpec("cards", "cluster", whole_number, "cards in all", 1, MAX_CARDS),
        InputSpec("cards_per_node", "cluster", whole_number, "cards per node", 1, 128),
        InputSpec("nodes", "cluster", whole_number, "nodes", 1, MAX_CARDS),
        InputSpec(
            "inter_node",
            "cluster",
            catalog_name(lambda catalog: catalog.inter_node_links),
            "link between nodes",
            named=True,
        ),
        InputSpec(
            "network",
            "cluster",
            one_of(NETWORKS),
            "how collectives are priced: nccl (rings and trees over the node's NICs) or single-link (the seeds')",
        ),
        InputSpec("dp", "plan", whole_number, "data-parallel degree", 1, MAX_CARDS),
        InputSpec("tp", "plan", whole_number, "tensor-parallel degree", 1, MAX_CARDS),
        InputSpec("pp", "plan", whole_number, "pipeline stages", 1, 1024),
        InputSpec("cp", "plan", whole_number, "context-parallel degree", 1, MAX_CARDS),
        InputSpec("ep", "plan", whole_number, "expert-parallel degree (divides dp and the experts)", 1, MAX_CARDS),
        InputSpec("zero", "plan", zero_stage, "ZeRO stage 0..3 (3 = FSDP)"),
        InputSpec("schedule", "plan", one_of(SCHEDULES), "pipeline schedule"),
        InputSpec("virtual_stages", "plan", whole_number, "virtual stages per card (interleaved 1F1B)", 1, 1024),
        InputSpec("sequence_parallel", "plan", yes_no, "sequence parallelism with tensor parallelism"),
        InputSpec("precision", "training", one_of(BYTES_PER_PARAM), "precision"),
        InputSpec("optimizer", "training", one_of(("adam",)), "optimizer"),
        InputSpec("seq_len", "training", token_count, "tokens per sequence", 16, 2_097_152),
        InputSpec("micro_batch_size", "training", whole_number, "sequences per micro-batch", 1, MAX_MICRO_BATCH_SIZE),
        InputSpec("micro_batches", "training", whole_number, "micro-batches per step", 1, MAX_MICRO_BATCHES),
        # m follows from it: global_batch / (dp x micro_batch_size); give it or micro_batches
        InputSpec("global_batch", "training", parse_global_batch, "global batch: sequences, or tokens with K/M (4M)"),
        InputSpec("checkpointing", "training", yes_no, "gradient checkpointing"),
        InputSpec("recompute", "training", one_of(RECOMPUTE_MODES), "activation recomputation"),
        InputSpec("flash_attention", "training", yes_no, "FlashAttention (else unfused attention kernels)"),
        InputSpec(
            "fp8_attention",
            "training",
            yes_no,
            "under precision fp8, attention in fp8 too (else bf16: fp8 recipes run only the linear layers in fp8)",
        ),
        InputSpec("overlap", "training", one_of(OVERLAP_MODES), "overlap of communication with compute"),
        InputSpec(
            "tp_overlap",
            "training",
            one_of(TP_OVERLAP_MODES),
            "how TP's collectives hide under overlap framework: gemm (Transformer Engine) or backward",
        ),
        InputSpec(
            "dp_overlap",
            "training",
            one_of(DP_OVERLAP_MODES),
            "whether DP's gradient all-reduce hides under overlap framework: buckets (DDP) or after",
        ),
        InputSpec(
            "pp_overlap",
            "training",
            one_of(PP_OVERLAP_MODES),
            "whether the pipeline's send/receive hides under overlap framework: interleaved or blocking",
        ),
        # at least 0.01%: below it the screen wrote 1e-07% and spoke it "onee-seven percent"
        InputSpec(
            "routing_imbalance",
            "training",
            load_factor,
            "the busiest expert's routed tokens over the mean (1 = balanced)",
            1,
            1024,
        ),
        InputSpec("mfu", "training", fraction, "model FLOPs utilisation", 1e-4, 1),
        InputSpec("tokens", "training", finite_count, "training tokens (1e12, 1T)", 1e6, 1e16),
    )
}


SHAPE_KEYS = (
    "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "experts", "top_k", "expert_ffn", "shared_ffn",
    "dense_layers",
)  # fmt: skip


SECTIONS = ("model", "cluster", "plan", "training")


BUILTIN: dict[str, Any] = {
    "model": "llama-7b",
    "gpu": "h100-sxm-80gb",
    "cards_per_node": 8,
    "nodes": 1,
    "inter_node": "infiniband-ndr",
    # Collectives as NCCL runs them on the node's fabric and NICs (dtfilm.cost.network);
    # `single-link` with `overlap: none` is the seeds' whiteboard, today's numbers to the digit.
    "network": "nccl",
    "tp": 1,
    "pp": 1,
    "cp": 1,
    # Expert parallelism (issue 60): the routed experts split over ep of the data-parallel replicas.
    "ep": 1,
    "zero": 0,
    "schedule": "1f1b",
    "virtual_stages": 1,
    # Megatron-LM's sequence parallelism (Korthikanti et al. 2022): with TP, the norms' and
    # dropouts' activations split t ways too.
    "sequence_parallel": True,
    "precision": "bf16",
    "optimizer": "adam",
    "seq_len": 4096,
    "micro_batch_size": 1,
    "micro_batches": 1,
    "checkpointing": False,
    # FlashAttention recomputes the attention scores instead of keeping them: Korthikanti's
    # selective recomputation, 34 bytes per token per hidden unit (the seeds' figure).
    "recompute": "selective",
    "flash_attention": True,
    # fp8 recipes (Transformer Engine, torchao float8) run the linear layers' GEMMs in fp8 and
    # attention in bf16; FlashAttention-3's fp8 attention is a separate choice (dtfilm.cost.efficiency).
    "fp8_attention": False,
    # What the frameworks hide (dtfilm.cost.overlap): the physical model's default (CONTRACT.md,
    # "Time"); `none` is the seeds' whiteboard, every byte on the critical path.
    "overlap": "framework",
    # Under `framework`: Transformer Engine's TP overlap where sequence parallelism allows it (the
    # H100 recipes); `backward` is Megatron-LM's of 2021-23 (dtfilm.cost.overlap). Unused under `none`.
    "tp_overlap": "gemm",
    # Under `framework`: DDP's buckets under the backward; `after` is Megatron-LM's local DDP and
    # DeepSpeed's pipeline engine, which reduce once the backward is done (dtfilm.cost.overlap).
    "dp_overlap": "buckets",
    # Under `framework`: the interleaved schedule's send/receive under other micro-batches;
    # `blocking` is Megatron-LM's before May 2023, every hop waited for (dtfilm.cost.overlap).
    "pp_overlap": "interleaved",
    # Routing as balanced as DeepSeek-V3's auxiliary-loss-free balancing aims for: every expert its
    # mean share (1.0); above it the busiest expert's card sets the expert layers' pace.
    "routing_imbalance": 1.0,
    "mfu": 0.5,
    "tokens": 1e12,
}


def parse_value(name: str, raw: Any, source: str, where: Where, catalog: Catalog = BUILTIN_CATALOG) -> Value:
    """Parse one raw input (a card's, a link's or a model's name: one of `catalog`'s); a bad
    value is a DtfilmError naming where it came from."""
    spec = SPECS[name]
    try:
        return Value(spec.read(raw, catalog), source, where)
    except ValueError as error:
        raise DtfilmError(str(error), where, f"{spec.section}.{name}") from None


def builtin_layer() -> dict[str, Value]:
    return {k: Value(v, "builtin", Where("built-in default")) for k, v in BUILTIN.items()}


def cleared_by(keys: Iterable[str]) -> set[str]:
    """Inputs a layer setting `keys` clears from the layers below it: a model preset clears
    the inherited parameter count and shape, and a shape dimension the inherited count (then
    derived from the shape, unless the same layer gives one); cards or nodes clear each other, and dp follows;
    so does dp when a layer sets tp, pp or cp without it (a sweep of tp on a cluster whose dp a
    flag fixed: the degree the sweep compares wins, and dp takes up the cards left)."""
    keys = set(keys)
    cleared: set[str] = set()
    if "model" in keys:
        cleared |= {"params", *SHAPE_KEYS}
    if keys & set(SHAPE_KEYS):  # a new shape without a count: the count is the shape's
        cleared |= {"params"}
    if keys & {"cards", "nodes"}:
        cleared |= {"cards", "nodes", "dp"}
    if keys & {"tp", "pp", "cp"}:
        cleared |= {"dp"}
    cleared |= {other for one, other in BATCH_INPUTS if one in keys}  # m or the global batch, not both
    return cleared - keys


# The two ways to say the batch: either clears the other from the layers below; one layer giving
# both is refused (`resolve`), since m = global_batch / (dp x micro_batch_size) says the one.
BATCH_INPUTS = (("global_batch", "micro_batches"), ("micro_batches", "global_batch"))


def merge_overrides(lower: dict[str, Any], upper: dict[str, Any]) -> dict[str, Any]:
    """Flag-style overrides with `upper` on top, by the same rules as `resolve`."""
    drop = cleared_by(upper)
    return {**{k: v for k, v in lower.items() if k not in drop}, **upper}


class CardsNotWhole(DtfilmError):
    """The card count is not a whole number of model-parallel groups of `group_cards` cards (a
    sweep that meets several names the card count that every step takes, in one message)."""

    def __init__(self, message: str, where: Where, key: str, group_cards: int) -> None:
        super().__init__(message, where, key)
        self.group_cards = group_cards


def _keep_cards_counted_in_nodes(merged: dict[str, Value], layer: dict[str, Value]) -> None:
    """A storyboard layer that changes only the cards a node holds (a comparison's row "across
    nodes", a node a card) keeps the card count a flag gave in nodes: --nodes 2 is turned into
    its cards at the node size below, so the row spreads the same cards over more nodes (tp's
    across-nodes row at --nodes 2 read 2 cards where the chapter had 16, and was refused). A
    node count the storyboard gives ("2 nodes") stays a node count under --cards-per-node."""
    # (a row's `with:` joins the flags' layer, so it is told from a flag typed by where it was written)
    if "cards_per_node" not in layer or layer.keys() & {"cards", "nodes"} or layer["cards_per_node"].where.flag:
        return
    if "nodes" in merged and merged["nodes"].where.flag and "cards" not in merged and "cards_per_node" in merged:
        nodes = merged.pop("nodes")
        merged["cards"] = Value(nodes.value * merged["cards_per_node"].value, nodes.source, nodes.where)


def resolve(layers: Iterable[dict[str, Value]], catalog: Catalog = BUILTIN_CATALOG) -> dict[str, Value]:
    """Merge layers of inputs, lowest first (see `cleared_by`); the model's shape is `catalog`'s."""
    merged: dict[str, Value] = {}
    for layer in layers:
        if "cards" in layer and "nodes" in layer and layer["cards"].source == layer["nodes"].source == "flag":
            raise DtfilmError("give the card count or the node count, not both", layer["nodes"].where, "cluster")
        _one_batch_input(layer)
        _keep_cards_counted_in_nodes(merged, layer)
        for key in cleared_by(layer):
            merged.pop(key, None)
        merged.update(layer)
    derived = Where("derived")
    if "params" not in merged:
        merged["params"] = Value(
            float(param_count(model_shape(merged, catalog))), "derived", Where("derived from the architecture")
        )
    # the count as given: a card count derived from --nodes 31 is that flag's to answer for
    count_given = merged["cards"] if "cards" in merged else merged["nodes"]
    if "cards" not in merged:
        merged["cards"] = Value(merged["nodes"].value * merged["cards_per_node"].value, "derived", derived)
    merged["nodes"] = Value(-(-merged["cards"].value // merged["cards_per_node"].value), "derived", derived)
    if "dp" not in merged:
        inner = merged["tp"].value * merged["pp"].value * merged["cp"].value
        cards = merged["cards"]
        if cards.value % inner:
            raise CardsNotWhole(
                f"{cards.value} {'card is' if cards.value == 1 else 'cards are'} not a whole number of"
                f" tp x pp x cp = {inner} groups;"
                f" valid card counts are multiples of {inner}",
                most_specific({**merged, "cards": count_given}, ("cards", "tp", "pp", "cp")),
                "plan",
                group_cards=inner,
            )
        merged["dp"] = Value(cards.value // inner, "derived", derived)
    _batch(merged)
    return merged


def _written_name(name: str, value: Value) -> str:
    """An input as its layer writes it: --global-batch for a flag, training.global_batch in a file."""
    return "--" + name.replace("_", "-") if value.where.flag else f"{SPECS[name].section}.{name}"


def _one_batch_input(layer: dict[str, Value]) -> None:
    """A layer that gives both the global batch and the micro-batches is refused: m follows from
    the global batch, so one of them would silently lose."""
    if "global_batch" not in layer or "micro_batches" not in layer:
        return
    batch, micro = layer["global_batch"], layer["micro_batches"]
    if {batch.source, micro.source} & {"builtin", "derived"}:
        return
    raise DtfilmError(
        f"give {_written_name('global_batch', batch)} or {_written_name('micro_batches', micro)}, not both:"
        " micro-batches per replica follow from the global batch, global_batch / (dp x micro_batch_size)",
        batch.where,
        None if batch.where.flag else "training.global_batch",
    )


def _batch(merged: dict[str, Value]) -> None:
    """The global batch and the micro-batches per replica, each from the other: m = global_batch
    / (dp x micro_batch_size) when the global batch is given (refused when not whole), else the
    global batch is dp x m x micro_batch_size."""
    dp, size, seq_len = merged["dp"].value, merged["micro_batch_size"].value, merged["seq_len"].value
    given = merged.get("global_batch")
    if given is None or given.source == "derived":
        sequences = dp * merged["micro_batches"].value * size
        merged["global_batch"] = Value(
            GlobalBatch(sequences, "sequences"), "derived", Where("derived: dp x micro_batches x micro_batch_size")
        )
        return
    key = None if given.where.flag else "training.global_batch"
    try:
        sequences = given.value.whole_sequences(seq_len)
    except ValueError as error:
        raise DtfilmError(str(error), given.where, key) from None
    per_step = dp * size
    written = f"{given.value} = {sequences:,} sequences" if given.value.unit == "tokens" else f"{sequences:,} sequences"
    micro = derived_micro_batches(sequences, dp, size)
    if micro is None:
        raise DtfilmError(
            f"a global batch of {written} does not split into whole micro-batches:"
            f" micro_batches = global_batch / (dp x micro_batch_size) = {sequences:,} / ({dp:,} x {size:,});"
            f" valid: a multiple of {per_step:,} sequences, such as {nearby_multiples(per_step, sequences)},"
            " or micro_batches instead",
            given.where,
            key,
        )
    if micro > MAX_MICRO_BATCHES:
        raise DtfilmError(
            f"a global batch of {written} needs micro_batches = {sequences:,} / ({dp:,} x {size:,})"
            f" = {micro:,}, past the supported {MAX_MICRO_BATCHES:,}; valid: a larger micro_batch_size,"
            f" more cards, or at most {MAX_MICRO_BATCHES * per_step:,} sequences",
            given.where,
            key,
        )
    merged["micro_batches"] = Value(micro, "derived", Where("derived: global_batch / (dp x micro_batch_size)"))


def most_specific(values: dict[str, Value], keys: Iterable[str]) -> Where:
    """The location of the highest-priority value among `keys` (a flag beats a file)."""
    rank = {"flag": 4, "storyboard": 3, "default": 2, "builtin": 1, "derived": 0}
    best = max((values[k] for k in keys if k in values), key=lambda v: rank[v.source])
    return best.where


PRESET_COUNT_TOLERANCE = 0.1  # a count given within 10% of the preset's own is the preset's (7e9 for 6.74B)


def model_shape(values: dict[str, Value], catalog: Catalog = BUILTIN_CATALOG) -> ModelShape:
    """The preset's shape with the dimensions given; a shape that is no longer the preset's, or
    a parameter count given far from the preset's own (`--params 1e12` on LLaMA 7B), is labelled
    by its parameter count ("29.6B model", "1T model"), not by the preset's name."""
    preset = catalog.models[values["model"].value]
    shape = shape_with(preset, **{k: values[k].value for k in SHAPE_KEYS if k in values})
    given = values.get("params")
    given_count = given.value if given is not None and given.source != "derived" else None
    own_count = param_count(shape)
    if shape == preset and (given_count is None or abs(given_count / own_count - 1) <= PRESET_COUNT_TOLERANCE):
        return shape
    return replace(shape, label=f"{format_si(given_count or own_count)} model")
