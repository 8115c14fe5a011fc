"""The rows of the strategies that split the model or its sequence: tensor, pipeline, context and
expert parallelism, measured against the cost model."""

from __future__ import annotations

from typing import Any

from dtfilm.validate.model import Shape
from dtfilm.validate.rows import (
    EXPERTS,
    TRAFFIC_TOLERANCE,
    Row,
    collective_totals,
    same_value,
    state_rows,
    step_counter_row,
)

PARALLEL_LOSS_EXCHANGES = 3  # loss_parallel's cross-entropy: max, sum of exponentials, target logit


def tp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int, shape: Shape) -> list[Row]:
    issued = ranks[0]["collectives"]
    exchange = cost["comm"]["breakdown"][0]
    elements = int(exchange["buffer_bytes"] // 4)
    count, payload = collective_totals(issued, "all_reduce", elements)
    tokens = shape.micro_batch_size * shape.seq_len
    loss_count, loss_bytes = collective_totals(issued, "all_reduce", tokens)
    unexpected = len(issued) - count - loss_count
    gradient_extra = 4 * shape.vocab * shape.hidden * (1 - 1 / n)
    return [
        *state_rows("tp", cost, ranks, skip=("gradients",)),
        Row(
            "tp",
            "gradients per rank",
            cost["memory"]["gradients"],
            ranks[0]["state"]["gradients"],
            "B",
            accounted=gradient_extra,
            note="PyTorch's row-parallel embedding returns its gradient whole on every rank (Megatron's stays split)",
        ),
        step_counter_row("tp", ranks),
        Row("tp", "all-reduces of b·s·h (4 a layer, + embedding, + head)", exchange["count"], count, "count"),
        Row("tp", "all-reduce payload", exchange["count"] * exchange["buffer_bytes"], payload, "B", TRAFFIC_TOLERANCE),
        Row(
            "tp",
            f"all-reduces of b·s = {tokens} floats",
            0,
            loss_count,
            "count",
            accounted=PARALLEL_LOSS_EXCHANGES,
            note=f"the parallel cross-entropy over the split vocabulary all-reduces the logits' maximum, the sum of"
            f" exponentials and the target logit, b·s floats each ({loss_bytes} bytes); the cost model leaves them out",
        ),
        Row("tp", "other collectives", 0, unexpected, "count"),
    ]


def pp_rows(cost: dict[str, Any], ledgers: list[dict[str, float]], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    rows = []
    for rank in ranks:
        stage = rank["rank"]
        params = ledgers[stage]["params_on_card"]
        rows.append(Row("pp", f"weights, stage {stage}", 4 * params, rank["state"]["weights"], "B"))
        rows.append(
            Row("pp", f"Adam m + v, stage {stage}", 8 * params, rank["state"]["adam_m"] + rank["state"]["adam_v"], "B")
        )
    sends = [collective_totals(r["collectives"], "send") for r in ranks]
    middle = cost["comm"]["breakdown"][0]
    rows += [
        step_counter_row("pp", ranks),
        Row("pp", "sends, all stages (boundaries × 2m)", (n - 1) * middle["count"], sum(c for c, _ in sends), "count"),
        Row(
            "pp",
            "bytes sent, all stages",
            (n - 1) * cost["comm"]["pp"],
            sum(b for _, b in sends),
            "B",
            TRAFFIC_TOLERANCE,
        ),
    ]
    return rows


ONE_CARD_TOLERANCE = 1e-4  # fp32 sums taken in another order


def cp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    """Context parallelism by ring attention (dtfilm.validate.ring): the ring's sends against
    the cost model's two cp rows, the gradients' all-reduce over the cards that share weights,
    and the result against one card."""
    issued = ranks[0]["collectives"]
    blocks, grads = cost["comm"]["collectives"]["cp_ring_send_recv"], cost["comm"]["collectives"]["cp_gradient_ring"]
    hops = blocks["count"] * blocks["steps_each"] + grads["count"] * grads["steps_each"]
    sends, sent = collective_totals(issued, "send")
    reduce = cost["comm"]["collectives"]["dp_all_reduce"]
    reduces, reduced = collective_totals(issued, "all_reduce")
    loss = sum(r["checks"]["loss"] for r in ranks)
    gap = max(r["checks"]["gradient_gap"] for r in ranks)
    return [
        *state_rows("cp", cost, ranks),
        step_counter_row("cp", ranks),
        Row("cp", "ring sends: K/V c-1 hops forward and backward, gradients c", hops, sends, "count"),
        Row("cp", "ring bytes sent", blocks["bytes"] + grads["bytes"], sent, "B", TRAFFIC_TOLERANCE),
        Row("cp", "gradient all-reduces over the dp x cp cards", reduce["count"], reduces, "count"),
        Row("cp", "gradient all-reduce payload", reduce["buffer_bytes"], reduced, "B", TRAFFIC_TOLERANCE),
        Row("cp", "loss, the ranks' shares against one card", ranks[0]["checks"]["one_card_loss"], loss, "value",
            ONE_CARD_TOLERANCE),
        Row("cp", "largest gradient difference from one card", 0, gap, "value", accounted=ONE_CARD_TOLERANCE,
            at_most=True, note="fp32 sums taken in another order"),
    ]  # fmt: skip


def ep_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int, shape: Shape) -> list[Row]:
    """Expert parallelism: each rank's experts (state), the all-to-alls a step and each one's
    buffer, and the bytes that leave the rank; the shared weights' gradient all-reduce."""
    row = cost["comm"]["collectives"]["ep_all_to_all"]
    issued = ranks[0]["collectives"]
    count, _ = collective_totals(issued, "all_to_all")
    sizes = {c["bytes"] for c in issued if c["kind"] == "all_to_all"}
    each = sizes.pop() if len(sizes) == 1 else float("nan")
    left = same_value([r["checks"]["all_to_all_bytes_sent"] for r in ranks])
    reduces, reduced = collective_totals(issued, "all_reduce")
    expert_grads = shape.layers * EXPERTS // n * 3 * shape.hidden * shape.ffn * 4  # fp32, this rank's experts
    return [
        *state_rows("ep", cost, ranks),
        step_counter_row("ep", ranks),
        Row("ep", "all-to-alls: dispatch and combine, forward and backward, a layer", row["calls"], count, "count"),
        Row("ep", "all-to-all buffer (tokens x k x hidden)", row["buffer_bytes"], each, "B"),
        Row("ep", "all-to-all bytes a rank sends to the others", row["bytes"], left, "B", TRAFFIC_TOLERANCE),
        Row("ep", "gradient all-reduces over the dp cards", 1, reduces, "count"),
        Row("ep", "all-reduce payload", cost["comm"]["gradient_buffer"], reduced, "B", TRAFFIC_TOLERANCE,
            accounted=-expert_grads, note="the experts' gradients reduce over dp / ep cards (here 1: none);"
            " the cost model prices them in the dp all-reduce"),
        Row("ep", "other collectives", 0, len(issued) - count - reduces, "count"),
    ]  # fmt: skip
