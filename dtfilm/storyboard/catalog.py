"""A film's own cards, links and model shapes: `storyboard/catalog.yaml`, beside film.yaml.

```yaml
cards:
  a100-40gb:
    label: A100 40GB
    memory: 40e9                       # bytes, marketed (decimal GB)
    peak_flops: {bf16: 312e12, fp32: 156e12}   # dense (no sparsity), per precision; bf16 at least
    intra_node_link: nvlink3           # a link of the catalog or a built-in one
    memory_bandwidth: 1.555e12         # optional: HBM bytes a second (default: the H100's FLOP per byte)
    matmul_efficiency: {bf16: 0.869}   # optional: the share of peak its best matmuls reach, measured
                                       #   (a share for every precision, or one per precision)
    attention_efficiency: 0.6          # optional: the share of peak its attention kernels reach
    power: 400                         # optional: the board's power limit, watts (reported, not timed)
    source: NVIDIA A100 datasheet; ml-engineering's maximum achievable matmul FLOPS table
links:
  roce-200g:
    label: RoCE 200G
    bandwidth: 25e9                    # bytes a second, each way, per card (per node if shared)
    latency: 10e-6                     # seconds per ring step
    between_nodes: true
    shared_by_node: false
    source: the cluster's network spec
  my-fabric:
    label: My Fabric 2
    fabric: My Fabric                  # optional: the family the words name ("the My Fabric domain"); default: label
    bandwidth: 400e9
    latency: 3e-6
    between_nodes: false
    source: the node's spec
models:
  my-13b: {label: My 13B, layers: 40, hidden: 5120, heads: 40, kv_heads: 40, ffn: 13824, vocab: 32000, source: ...}
```

A model must give layers, hidden, heads, kv_heads, ffn and vocab (a missing kv_heads made a
grouped-query model multi-head, 14% larger, under its own label); `mlp` (swiglu) and
`tied_embeddings` (false) may be left to their defaults, which `dtfilm estimate` says.

Every entry names its source. An incomplete or wrong entry is a one-line error naming the
file, line and field, and what would be valid. `load_catalog` returns the film's Catalog
(dtfilm.cost.catalog): the built-in entries and the file's, which the film carries
(`Film.catalog`) and every name its inputs give is resolved in (`--gpu a100-40gb` then works
like `--gpu a100-80gb` for this film, and for no other); a built-in name cannot be redefined.
Nothing is registered anywhere: a second film in the process, or this one loaded again after an
entry was deleted (`render --watch`), sees only its own file's entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.hardware import BUILTIN_CARDS, BUILTIN_LINKS, DEFAULT_ATTENTION_EFFICIENCY, Card, Link
from dtfilm.cost.inputs import SPECS
from dtfilm.cost.memory import BYTES_PER_PARAM
from dtfilm.cost.models import ModelShape
from dtfilm.errors import DtfilmError
from dtfilm.system.fonts import missing_glyph
from dtfilm.system.yamlsrc import KeyPath, Located, dotted, load_yaml
from dtfilm.textcheck import character_name, hidden_character
from dtfilm.units import parse_count

CATALOG_FILE = "catalog.yaml"
BUILTIN_MODELS = frozenset(BUILTIN_CATALOG.models)


def _text(raw: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError("text")
    return raw


def _shown_text(raw: Any) -> str:
    """A name the film draws (a card's label): visible text its fonts have, as a caption is."""
    text = _text(raw)
    if (hidden := hidden_character(text)) is not None:
        raise ValueError(f"visible text, without {character_name(hidden)}")
    if (missing := missing_glyph(text)) is not None:
        raise ValueError(f"characters the film's fonts have, not {missing!r} ({character_name(missing)})")
    return text


def _within(least: float, most: float, shown: str) -> Callable[[Any], float]:
    """A figure between `least` and `most`: far around every real card and link, and close
    enough that no estimate built on it overflows (a bandwidth of 1e-300 made a step of
    Infinity seconds, which is not JSON)."""

    def parse(raw: Any) -> float:
        try:
            value = parse_count(raw)
        except ValueError:
            value = float("nan")
        if not least <= value <= most:  # (NaN fails too)
            raise ValueError(shown)
        return value

    return parse


_memory = _within(1e9, 1e13, "1e9 to 1e13 bytes (1 GB to 10 TB)")
_flops = _within(1e12, 1e18, "1e12 to 1e18 FLOP/s (1 TFLOP/s to 1 EFLOP/s)")
_bandwidth = _within(1e8, 1e13, "1e8 to 1e13 bytes a second (0.1 GB/s to 10 TB/s)")
_latency = _within(1e-8, 0.1, "1e-8 to 0.1 seconds (10 ns to 100 ms)")
_power = _within(10, 1e5, "10 to 1e5 watts")
# An entry's name becomes a flag's value and part of file names (the explorer page's pictures).
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
NAME_TEXT = "letters, digits, '.', '-' and '_', starting with a letter or digit, at most 64 characters"


def _flag(raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise ValueError("true or false")
    return raw


def _link_name(links: dict[str, Link]) -> Callable[[Any], str]:
    """A link of `links` (the built-in ones and the file's own, read before its cards)."""

    def parse(raw: Any) -> str:
        if not isinstance(raw, str) or raw not in links:
            raise ValueError(f"one of {', '.join(links)}")
        return raw

    return parse


def _mlp(raw: Any) -> str:
    if raw not in ("swiglu", "gelu"):
        raise ValueError("swiglu or gelu")
    return str(raw)


def _shape_value(name: str) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        spec = SPECS[name]
        try:
            return int(spec.read(raw))
        except ValueError:
            raise ValueError(f"a whole number, {spec.range_text}") from None

    return parse


def _per_precision(raw: dict[Any, Any], parse: Callable[[Any], float], verb: str) -> dict[str, float]:
    """Each precision's value parsed; an unknown precision, or a value `parse` refuses, is an
    error naming it ("fp8: 2 is not a share of peak ...")."""
    out = {}
    for precision, value in raw.items():
        if precision not in BYTES_PER_PARAM:
            raise ValueError(f"precisions {', '.join(BYTES_PER_PARAM)}, not {precision!r}")
        try:
            out[precision] = parse(value)
        except ValueError as error:
            raise ValueError(f"{precision}: {value!r} {verb} {error}") from None
    return out


def _peaks(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict) or "bf16" not in raw:
        raise ValueError(f"a mapping of precision to FLOP/s with bf16 at least, such as {{bf16: 312e12}}; "
                         f"precisions: {', '.join(BYTES_PER_PARAM)}")  # fmt: skip
    return _per_precision(raw, _flops, "is outside")


def _share(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= 1:
        raise ValueError("a share of peak in (0, 1], such as 0.8")
    return float(raw)


def _shares(raw: Any) -> dict[str, float]:
    """One measured share for every precision (0.8), or one per precision ({bf16: 0.8, fp8: 0.7})."""
    if not isinstance(raw, dict):
        share = _share(raw)
        return {precision: share for precision in BYTES_PER_PARAM}
    return _per_precision(raw, _share, "is not")


Field = tuple[Callable[[Any], Any], bool, str]  # parser, required, what it is (for errors)
LABEL: Field = (_shown_text, True, "the name shown on screen")
SOURCE: Field = (_text, True, "where the figures come from")
CARD_FIELDS: dict[str, Field] = {
    "label": LABEL,
    "memory": (_memory, True, "bytes, such as 40e9"),
    "peak_flops": (_peaks, True, "dense FLOP/s per precision"),
    "intra_node_link": (_link_name(dict(BUILTIN_CATALOG.links)), True, "the link between a node's cards"),
    "memory_bandwidth": (_bandwidth, False, "HBM bytes a second, such as 3.35e12"),
    "matmul_efficiency": (_shares, False, "the measured share of peak of its best matmuls, such as {bf16: 0.8}"),
    "attention_efficiency": (_share, False, "the share of peak its attention kernels reach, such as 0.35"),
    "power": (_power, False, "the board's power limit in watts, such as 700"),
    "source": SOURCE,
}
LINK_FIELDS: dict[str, Field] = {
    "label": LABEL,
    "bandwidth": (_bandwidth, True, "bytes a second each way, such as 25e9"),
    "latency": (_latency, True, "seconds per ring step, such as 8e-6"),
    "between_nodes": (_flag, True, "true for a link between nodes"),
    "shared_by_node": (_flag, False, "true when the node's cards share the bandwidth"),
    "fabric": (_shown_text, False, "the family the words name it by, such as NVLink (default: its label)"),
    "source": SOURCE,
}
MODEL_FIELDS: dict[str, Field] = {
    "label": LABEL,
    # every dimension is required: a missing kv_heads silently made a grouped-query model multi-head
    **{k: (_shape_value(k), True, SPECS[k].help) for k in ("layers", "hidden", "heads", "kv_heads")},
    "ffn": (_shape_value("ffn"), True, SPECS["ffn"].help),
    "vocab": (_shape_value("vocab"), True, SPECS["vocab"].help),
    "mlp": (_mlp, False, "swiglu or gelu"),
    "tied_embeddings": (_flag, False, "true when the output head reuses the embedding"),
    "source": (_text, True, "where the shape comes from"),
}
MODEL_DEFAULTED = ("mlp", "tied_embeddings")  # optional, with the defaults ModelShape states
SECTIONS: dict[str, tuple[dict[str, Field], frozenset[str]]] = {
    "links": (LINK_FIELDS, BUILTIN_LINKS),
    "cards": (CARD_FIELDS, BUILTIN_CARDS),
    "models": (MODEL_FIELDS, BUILTIN_MODELS),
}


def _entry(doc: Located, path: KeyPath, raw: Any, fields: dict[str, Field]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise DtfilmError(f"expected a mapping with keys {', '.join(fields)}", doc.where(path), dotted(path))
    for key in raw:
        if key not in fields:
            raise DtfilmError(
                f"unknown field {key!r}; valid: {', '.join(fields)}", doc.where((*path, key)), dotted((*path, key))
            )
    values = {}
    for key, (parse, required, what) in fields.items():
        if key not in raw:
            if required:
                raise DtfilmError(f"missing {key!r} ({what})", doc.where(path), dotted(path))
            continue
        try:
            values[key] = parse(raw[key])
        except ValueError as error:
            raise DtfilmError(
                f"{raw[key]!r} is not {what}; valid: {error}", doc.where((*path, key)), dotted((*path, key))
            ) from None
    return values


def load_catalog(path: Path, shown_as: str) -> Catalog:
    """A film's catalog.yaml: the built-in catalog with the file's links, cards and models."""
    doc = load_yaml(path, shown_as, "a catalog")
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        raise DtfilmError(f"expected a mapping with keys {', '.join(SECTIONS)}", doc.where(()))
    for key in data:
        if key not in SECTIONS:
            raise DtfilmError(f"unknown section {key!r}; valid: {', '.join(SECTIONS)}", doc.where((key,)), key)
    read: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    for section, (fields, builtin) in SECTIONS.items():  # links first: cards name them
        if section == "cards":  # a card's link: a built-in one or one of the file's
            known = {**BUILTIN_CATALOG.links, **read["links"]}
            fields = {**fields, "intra_node_link": (_link_name(known), *fields["intra_node_link"][1:])}
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise DtfilmError("expected a mapping of names to entries", doc.where((section,)), section)
        for name, raw in entries.items():
            key_path = (section, name)
            if not NAME.match(name):
                raise DtfilmError(f"{name!r} is not a name; valid: {NAME_TEXT}", doc.where(key_path), dotted(key_path))
            if name in builtin:
                raise DtfilmError(
                    f"{name!r} is built in and cannot be redefined; valid: a new name",
                    doc.where(key_path),
                    dotted(key_path),
                )
            v = _entry(doc, key_path, raw, fields)
            if section == "models":
                _check_heads(doc, key_path, v)
            read[section][name] = _entry_value(section, name, v)
    return BUILTIN_CATALOG.joined(read["cards"], read["links"], read["models"])


def _check_heads(doc: Located, path: KeyPath, v: dict[str, Any]) -> None:
    """A model's heads split its hidden size, and its KV heads its heads: refused here, at the
    catalog's own line, not later at whichever flag or storyboard named the model."""
    for key, whole, of in (("heads", v["hidden"], "the hidden size"), ("kv_heads", v["heads"], "the heads")):
        part = v.get(key)
        if part is None or whole % part == 0:
            continue
        near = sorted(sorted((d for d in range(1, whole + 1) if whole % d == 0), key=lambda d: abs(d - part))[:3])
        raise DtfilmError(
            f"{part} does not divide {of}, {whole}; valid: a divisor of {whole}, such as {', '.join(map(str, near))}",
            doc.where((*path, key)),
            dotted((*path, key)),
        )


def _entry_value(section: str, name: str, v: dict[str, Any]) -> Any:
    """A parsed entry as the cost model's Link, Card or ModelShape."""
    if section == "links":
        return Link(
            name, v["label"], v["bandwidth"], v["latency"], v.get("shared_by_node", False), v["between_nodes"],
            v["source"], v.get("fabric", ""),
        )  # fmt: skip
    if section == "cards":
        optional = {
            "memory_bandwidth": v.get("memory_bandwidth", 0.0),
            "matmul_efficiency": v.get("matmul_efficiency"),
            "attention_efficiency": v.get("attention_efficiency", DEFAULT_ATTENTION_EFFICIENCY),
            "power_watts": v.get("power", 0.0),
        }
        return Card(
            name, v["label"], v["memory"], v["peak_flops"], v["intra_node_link"], v["source"], **optional
        )  # fmt: skip
    return ModelShape(
        v["label"], v["layers"], v["hidden"], v["heads"], v["kv_heads"], v["ffn"], v["vocab"],
        mlp=v.get("mlp", "swiglu"), tied_embeddings=v.get("tied_embeddings", False),
        defaulted=tuple(k for k in MODEL_DEFAULTED if k not in v),
    )  # fmt: skip
