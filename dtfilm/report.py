"""The estimate as a table for a terminal."""

from __future__ import annotations

from typing import Any

from dtfilm.cost.memory import PART_LABELS
from dtfilm.units import format_quantity


def estimate_table(numbers: dict[str, Any]) -> str:
    mem, comm, comp, plan = numbers["memory"], numbers["comm"], numbers["compute"], numbers["plan"]
    cluster, model = numbers["cluster"], numbers["model"]
    card = mem["card"]
    lines = [
        f"{model['label']} ({format_quantity(numbers['params'], 'si')} params) on"
        f" {cluster['cards']} x {cluster['gpu_label']}, {cluster['nodes']} node(s)",
        f"plan: dp {plan['dp']}  tp {plan['tp']}  pp {plan['pp']}  cp {plan['cp']}"
        f"  zero {plan['zero']}  schedule {plan['schedule']}",
        "",
        f"memory of the most loaded card (dp {card['dp']}, pp {card['pp']}, tp {card['tp']}):",
    ]
    for key, label in PART_LABELS.items():
        lines.append(f"  {label:<14}{format_quantity(mem[key], 'GB'):>12}")
    verdict = "fits" if mem["fits"] else f"does NOT fit ({format_quantity(mem['over_capacity'], 'x')})"
    lines += [
        f"  {'total':<14}{format_quantity(mem['total'], 'GB'):>12}   of"
        f" {format_quantity(mem['capacity'], 'GB')}: {verdict}",
        "",
        "communication per card per step:",
    ]
    for row in comm["breakdown"]:
        lines.append(
            f"  {row['group']:<3} {row['collective']:<15} x{row['count']:<6}"
            f"{format_quantity(row['bytes'], 'GB'):>12}  {row['link']:<15}"
            f"{format_quantity(row['seconds'], 's'):>10}"
        )
    if not comm["breakdown"]:
        lines.append("  none (one card)")
    lines += [
        "",
        f"bubble: {format_quantity(numbers['pipeline']['bubble_fraction'], '%')} of the timeline",
        f"step: {format_quantity(comp['step_seconds'], 's')} (compute"
        f" {format_quantity(comp['compute_seconds'], 's')}, bubble"
        f" {format_quantity(comp['bubble_seconds'], 's')}, comm"
        f" {format_quantity(comp['comm_seconds'], 's')})",
        f"training on {format_quantity(numbers['inputs']['tokens']['value'], 'si')} tokens:"
        f" {format_quantity(comp['training_seconds'], 'days')} on {cluster['cards']} cards,"
        f" {format_quantity(comp['training_seconds_one_card'], 'years')} on one",
    ]
    lines += [f"warning: {w}" for w in numbers.get("warnings", [])]
    return "\n".join(lines)


def plan_table(setup: Any, result: dict[str, Any]) -> str:
    """The planner's ranking and its reasoning."""
    lines = [
        f"{setup.shape.label} ({format_quantity(setup.params, 'si')} params) on {setup.cards} x {setup.card.label},"
        f" global batch {result['global_batch']} sequences of {setup.seq_len} tokens",
        f"evaluated {result['evaluated']:,} plans in {result['seconds'] * 1000:.0f} ms;"
        f" {result['fitting']:,} fit in {format_quantity(setup.card.memory_bytes, 'GB')}",
        "",
        f"{'dp':>5} {'tp':>3} {'pp':>3} {'cp':>3} {'zero':>4} {'m':>5} {'b':>3} {'ckpt':>4} {'sched':>6}"
        f" {'per card':>10} {'comm/step':>10} {'step':>9} {'tokens/s':>11}",
    ]
    for row in result["plans"]:
        tokens_per_second = row["tokens_per_step"] / row["step_seconds"]
        lines.append(
            f"{row['dp']:>5} {row['tp']:>3} {row['pp']:>3} {row['cp']:>3} {row['zero']:>4}"
            f" {row['micro_batches']:>5} {row['micro_batch_size']:>3} {'on' if row['checkpointing'] else 'off':>4}"
            f" {row['schedule']:>6} {format_quantity(row['memory_total'], 'GB'):>10}"
            f" {format_quantity(row['comm_bytes'], 'GB'):>10} {format_quantity(row['step_seconds'], 's'):>9}"
            f" {tokens_per_second:>11,.0f}"
        )
    lines += ["", *result["reason"]]
    return "\n".join(lines)
