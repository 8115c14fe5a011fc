"""The cost model's inputs: their names, how each is parsed, how layers of them resolve.

Layers, lowest first: built-in defaults, the film's defaults (film.yaml), the chapter's
storyboard, command-line flags. Every resolved value remembers where it came from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from dtfilm.cost.batch import GlobalBatch, derived_micro_batches, nearby_multiples, parse_global_batch
from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.memory import BYTES_PER_PARAM, RECOMPUTE_MODES
from dtfilm.cost.models import ModelShape, model_did_you_mean, param_count, shape_with
from dtfilm.cost.network import NETWORKS
from dtfilm.cost.overlap import DP_OVERLAP_MODES, OVERLAP_MODES, PP_OVERLAP_MODES, TP_OVERLAP_MODES
from dtfilm.cost.pipeline import SCHEDULES, stage_layers
from dtfilm.cost.planner import MAX_MICRO_BATCH_SIZE, MAX_MICRO_BATCHES
from dtfilm.cost.setup import Setup
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.units import format_si, parse_count, parse_sequence_length

MAX_CARDS = 131_072  # 2^17: twice the largest cluster the README promises


@dataclass(frozen=True)
class Value:
    """A resolved input: its value, its source (builtin, default, storyboard, flag, derived)."""

    value: Any
    source: str
    where: Where


def _choice(options: Iterable[str]) -> Callable[[Any], str]:
    """One of `options`."""

    def parse(raw: Any) -> str:
        if not isinstance(raw, str) or raw not in options:
            raise ValueError(f"{raw!r} is not one of{did_you_mean(raw, options)}: {', '.join(options)}")
        return raw

    return parse


def _named(options: Callable[[Catalog], Iterable[str]]) -> Callable[[Any, Catalog], str]:
    """One of `options(catalog)`: a name of the catalog the input is read with (the film's
    own, or the built-in one), whose names the error lists."""

    def parse(raw: Any, catalog: Catalog) -> str:
        return _choice(tuple(options(catalog)))(raw)

    return parse


def _model_choice(raw: Any, catalog: Catalog) -> str:
    """A model of the catalog, its did-you-mean kept to the family typed: llama3-70b suggests
    llama3.1-70b, not llama2-70b."""
    models = catalog.models
    if not isinstance(raw, str) or raw not in models:
        raise ValueError(f"{raw!r} is not one of{model_did_you_mean(raw, models)}: {', '.join(models)}")
    return raw


class NotWhole(ValueError):
    """A count that is not a whole number; `InputSpec.read` adds what would do."""


def _whole(raw: Any) -> int:
    if isinstance(raw, bool):
        raise NotWhole(f"{raw!r} is not a whole number")
    try:
        value = parse_count(raw)
    except ValueError:
        raise NotWhole(f"{raw!r} is not a whole number") from None
    if not math.isfinite(value) or value != int(value):
        raise NotWhole(f"{raw!r} is not a whole number")
    return int(value)


def _sequence_tokens(raw: Any) -> int:
    """A whole number of tokens; 8K and 128K are binary (8,192 and 131,072), as the field names them."""
    try:
        value = parse_sequence_length(raw)
    except ValueError as error:
        raise ValueError(str(error)) from None
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{raw!r} is not a whole number of tokens")
    return int(value)


def _count(raw: Any) -> float:
    value = parse_count(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number (write 7e9, 7B, 512M or 1T)")
    return value


def _zero_stage(raw: Any) -> int:
    if isinstance(raw, bool) or raw not in (0, 1, 2, 3):
        raise ValueError(f"{raw!r} is not a ZeRO stage: 0, 1, 2 or 3 (3 = FSDP)")
    return int(raw)


def _fraction(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or not 0 < raw <= 1:
        raise ValueError(f"{raw!r} is not a fraction in (0, 1], such as 0.5")
    return float(raw)


def _load(raw: Any) -> float:
    """A load over the mean: a number of at least 1 (range-checked by its InputSpec)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise ValueError(f"{raw!r} is not a number, such as 1.3")
    return float(raw)


def _boolean(raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not true or false")
    return raw


@dataclass(frozen=True)
class InputSpec:
    """One input: its section, parser, help and, for numbers, the supported range (the
    envelope the README tabulates; outside it an input is refused before any frame)."""

    name: str
    section: str
    parse: Callable[..., Any]  # (raw), or (raw, catalog) where `named`
    help: str
    low: float | None = None
    high: float | None = None
    named: bool = False  # a name of the catalog (a card, a link, a model): parsed with the catalog given

    def read(self, raw: Any, catalog: Catalog = BUILTIN_CATALOG) -> Any:
        try:
            value = self.parse(raw, catalog) if self.named else self.parse(raw)
        except NotWhole as error:  # 'eight' for cards: say what would do, as out of range does
            if self.range_text:
                raise ValueError(f"{error}; valid: {self.help}, {self.range_text}") from None
            raise
        if self.low is not None and self.high is not None and not self.low <= value <= self.high:
            raise ValueError(f"{raw!r} is outside the supported range of {self.help}: {self.range_text}")
        return value

    @property
    def range_text(self) -> str:
        if self.low is None or self.high is None:
            return ""
        return f"{_shown(self.low)} to {_shown(self.high)}"


def _shown(value: float) -> str:
    if value >= 1e6 and math.log10(value).is_integer():
        return f"1e{int(math.log10(value))}"  # 1e6, 1e14
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


SPECS: dict[str, InputSpec] = {
    spec.name: spec
    for spec in (
        InputSpec("model", "model", _model_choice, "model preset", named=True),
        InputSpec("params", "model", _count, "parameter count (7e9, 7B, 512M)", 1e6, 1e14),
        InputSpec("layers", "model", _whole, "transformer layers", 1, 1024),
        InputSpec("hidden", "model", _whole, "hidden size", 64, 262_144),
        InputSpec("heads", "model", _whole, "attention heads", 1, 1024),
        InputSpec("kv_heads", "model", _whole, "key/value heads", 1, 1024),
        InputSpec("ffn", "model", _whole, "MLP width", 1, 1_048_576),
        InputSpec("vocab", "model", _whole, "vocabulary size", 1, 4_194_304),
        InputSpec("experts", "model", _whole, "routed experts a MoE layer (0: dense)", 0, 65_536),
        InputSpec("top_k", "model", _whole, "routed experts each token goes to", 0, 1024),
        InputSpec("expert_ffn", "model", _whole, "one routed expert's MLP width", 0, 1_048_576),
        InputSpec("shared_ffn", "model", _whole, "the shared experts' MLP width, together", 0, 1_048_576),
        InputSpec("dense_layers", "model", _whole, "first layers with a dense MLP among MoE layers", 0, 1024),
        InputSpec("gpu", "cluster", _named(lambda catalog: catalog.cards), "card type", named=True),
        InputSpec("cards", "cluster", _whole, "cards in all", 1, MAX_CARDS),
        InputSpec("cards_per_node", "cluster", _whole, "cards per node", 1, 128),
        InputSpec("nodes", "cluster", _whole, "nodes", 1, MAX_CARDS),
        InputSpec(
            "inter_node", "cluster", _named(lambda catalog: catalog.inter_node_links), "link between nodes", named=True
        ),
        InputSpec(
            "network",
            "cluster",
            _choice(NETWORKS),
            "how collectives are priced: nccl (rings and trees over the node's NICs) or single-link (the seeds')",
        ),
        InputSpec("dp", "plan", _whole, "data-parallel degree", 1, MAX_CARDS),
        InputSpec("tp", "plan", _whole, "tensor-parallel degree", 1, MAX_CARDS),
        InputSpec("pp", "plan", _whole, "pipeline stages", 1, 1024),
        InputSpec("cp", "plan", _whole, "context-parallel degree", 1, MAX_CARDS),
        InputSpec("ep", "plan", _whole, "expert-parallel degree (divides dp and the experts)", 1, MAX_CARDS),
        InputSpec("zero", "plan", _zero_stage, "ZeRO stage 0..3 (3 = FSDP)"),
        InputSpec("schedule", "plan", _choice(SCHEDULES), "pipeline schedule"),
        InputSpec("virtual_stages", "plan", _whole, "virtual stages per card (interleaved 1F1B)", 1, 1024),
        InputSpec("sequence_parallel", "plan", _boolean, "sequence parallelism with tensor parallelism"),
        InputSpec("precision", "training", _choice(BYTES_PER_PARAM), "precision"),
        InputSpec("optimizer", "training", _choice(("adam",)), "optimizer"),
        InputSpec("seq_len", "training", _sequence_tokens, "tokens per sequence", 16, 2_097_152),
        InputSpec("micro_batch_size", "training", _whole, "sequences per micro-batch", 1, MAX_MICRO_BATCH_SIZE),
        InputSpec("micro_batches", "training", _whole, "micro-batches per step", 1, MAX_MICRO_BATCHES),
        # m follows from it: global_batch / (dp x micro_batch_size); give it or micro_batches
        InputSpec("global_batch", "training", parse_global_batch, "global batch: sequences, or tokens with K/M (4M)"),
        InputSpec("checkpointing", "training", _boolean, "gradient checkpointing"),
        InputSpec("recompute", "training", _choice(RECOMPUTE_MODES), "activation recomputation"),
        InputSpec("flash_attention", "training", _boolean, "FlashAttention (else unfused attention kernels)"),
        InputSpec(
            "fp8_attention",
            "training",
            _boolean,
            "under precision fp8, attention in fp8 too (else bf16: fp8 recipes run only the linear layers in fp8)",
        ),
        InputSpec("overlap", "training", _choice(OVERLAP_MODES), "overlap of communication with compute"),
        InputSpec(
            "tp_overlap",
            "training",
            _choice(TP_OVERLAP_MODES),
            "how TP's collectives hide under overlap framework: gemm (Transformer Engine) or backward",
        ),
        InputSpec(
            "dp_overlap",
            "training",
            _choice(DP_OVERLAP_MODES),
            "whether DP's gradient all-reduce hides under overlap framework: buckets (DDP) or after",
        ),
        InputSpec(
            "pp_overlap",
            "training",
            _choice(PP_OVERLAP_MODES),
            "whether the pipeline's send/receive hides under overlap framework: interleaved or blocking",
        ),
        # at least 0.01%: below it the screen wrote 1e-07% and spoke it "onee-seven percent"
        InputSpec(
            "routing_imbalance",
            "training",
            _load,
            "the busiest expert's routed tokens over the mean (1 = balanced)",
            1,
            1024,
        ),
        InputSpec("mfu", "training", _fraction, "model FLOPs utilisation", 1e-4, 1),
        InputSpec("tokens", "training", _count, "training tokens (1e12, 1T)", 1e6, 1e16),
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
                _most_specific({**merged, "cards": count_given}, ("cards", "tp", "pp", "cp")),
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


def _most_specific(values: dict[str, Value], keys: Iterable[str]) -> Where:
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
    if v["dp"] % ep:
        raise fail(f"ep = {ep} does not divide dp = {v['dp']}; valid: {_divisors(v['dp'])}", "ep")
    if shape.experts % ep:
        raise fail(
            f"ep = {ep} does not divide the {shape.experts} experts of {shape.label};"
            f" valid: {_divisors(shape.experts)}",
            "ep",
        )


def build_setup(values: dict[str, Value], catalog: Catalog = BUILTIN_CATALOG) -> tuple[Setup, list[str]]:
    """Check the plan against the model and cluster; return the Setup (its names resolved in
    `catalog`, which it keeps) and any warnings."""
    shape = model_shape(values, catalog)
    warnings: list[str] = []

    def fail(message: str, key: str) -> DtfilmError:
        # A shape dimension left to the preset is blamed on the preset's line.
        source = values[key] if key in values else values["model"]
        return DtfilmError(message, source.where, f"{SPECS[key].section}.{key}")

    v = {k: val.value for k, val in values.items()}
    most = SPECS["params"].high or 0.0  # a count the shape gives keeps to the bound a given count has
    if not v["params"] <= most:
        raise DtfilmError(
            f"this shape has {v['params']:.3g} parameters, past the supported {_shown(most)}; valid: a smaller"
            " shape (fewer layers, a smaller hidden, ffn or vocab)",
            _most_specific(values, ("params", *SHAPE_KEYS)),
            "model.params",
        )
    if shape.hidden % shape.heads:
        raise fail(f"{shape.heads} heads do not divide the hidden size {shape.hidden}", "heads")
    if shape.heads % shape.kv_heads:
        raise fail(f"{shape.kv_heads} KV heads do not divide {shape.heads} heads", "kv_heads")
    product = v["dp"] * v["tp"] * v["pp"] * v["cp"]
    if product != v["cards"]:
        where = _most_specific(values, ("dp", "tp", "pp", "cp", "cards"))
        raise DtfilmError(
            f"dp x tp x pp x cp = {v['dp']} x {v['tp']} x {v['pp']} x {v['cp']} = {product},"
            f" but the cluster has {v['cards']} cards; leave dp out to let it follow",
            where,
            "plan",
        )
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
    params = v["params"]
    setup = Setup(
        model=v["model"],
        shape=shape,
        params=float(params),
        card=card,
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
    return setup, warnings
