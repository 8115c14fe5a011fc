"""The estimate as a table for a terminal."""

from __future__ import annotations

from typing import Any

from dtfilm.units import format_quantity

_LABELS = {
    "weights": "weights",
    "gradients": "gradients",
    "master_weights": "fp32 master",
    "adam_m": "Adam m",
    "adam_v": "Adam v",
    "activations": "activations",
}


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
    for key, label in _LABELS.items():
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
