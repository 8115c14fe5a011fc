"""Template paths: `memory.total` read from the estimate object, the error a template naming an
unknown one raises, and the unit a path is shown in."""

from __future__ import annotations

from typing import Any

from dtfilm.errors import did_you_mean


class TemplateError(ValueError):
    """A template names an unknown path or unit; the message says what is valid."""


def lookup(data: dict[str, Any], path: str) -> Any:
    """A value of the estimate object by dotted path; `inputs.X` gives the input's value."""
    node: Any = data
    parts = path.split(".")
    for depth, part in enumerate(parts):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise TemplateError(_unknown_value(path, parts[:depth], part, node))
    if isinstance(node, dict) and "value" in node and "source" in node:
        node = node["value"]
    if isinstance(node, (dict, list)):
        raise TemplateError(f"{{{path}}} is a group, not a value; name one of its keys")
    return node


def _unknown_value(path: str, before: list[str], part: str, node: Any) -> str:
    """Which key of which group is unknown, the key most likely meant, and where to look."""
    keys = sorted(node) if isinstance(node, dict) else []
    where = f"{part!r} is not a key of {'.'.join(before)!r}" if before else f"{part!r} is not a top-level key"
    hint = did_you_mean(part, keys)
    valid = ", ".join(keys) if keys else "nothing (a value, not a group)"
    inputs = "; every input is inputs.NAME (inputs.seq_len)" if not before else ""
    return f"unknown value {{{path}}}: {where}{hint}; valid: {valid}{inputs}; `dtfilm paths` lists them all"


_PERCENT = (
    "bubble_fraction",
    "bubble_overhead",
    "predicted_mfu",
    "compute_efficiency",
    "mfu",
    "recompute_overhead",
    "overlap_slowdown_share",
    "slowdown_share",
    "matmul_efficiency",
    "attention_efficiency",
)
_RATIO = ("over_capacity", "fsdp_vs_dp", "dp_allreduce_limit_factor")
_BYTE_LEAVES = (
    "weights", "gradients", "master_weights", "adam_m", "adam_v", "activations", "static", "total", "capacity",
    "headroom", "fit_margin", "gathered_layer", "layer_weights", "peak_with_gathered", "activations_per_layer",
    "gradient_buffer", "dp_allreduce_limit", "bytes", "bytes_each", "buffer_bytes", "dp", "tp", "pp", "cp", "ep",
    "buffers", "recompute_working_set", "logits", "fp8_weight_copies", "reserve", "cuda_context", "nccl_buffers",
)  # fmt: skip
_COUNTS = (
    "params", "architecture_params", "params_on_card", "tokens", "tokens_per_step", "training_steps",
    "published_batch_tokens", "params_active", "architecture_active_params",
)  # fmt: skip


def suggested_unit(path: str, value: Any) -> str | None:
    """The unit a template would show `path` in: {path:unit}. None for text and yes/no values."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    parts = path.split(".")
    leaf, section = parts[-1], parts[0]
    if ("seconds" in path and leaf != "stage") or leaf == "latency":
        return "time"
    if "bandwidth" in leaf:
        return "GB/s"
    if leaf == "peak_flops":
        return "TFLOP/s"
    if leaf in _PERCENT:
        return "%"
    if leaf in _RATIO:
        return "x"
    if "flops" in leaf and "per_token" not in leaf:
        return "sci"
    if leaf in _COUNTS:
        return "si"
    if ".tp_exchanges." in path:
        return "int"
    bytes_here = section in ("memory", "comm", "state") or leaf == "capacity"
    if bytes_here and leaf in _BYTE_LEAVES and ".card." not in path:
        return "bytes"
    return "int" if float(value).is_integer() else "num"
