"""The estimate as a table for a terminal."""

from __future__ import annotations

from typing import Any

from dtfilm.cost.memory import PART_LABELS
from dtfilm.cost.published import TECHNIQUE_KEYS
from dtfilm.units import counted, format_quantity

RECOMPUTE_SHORT = {"none": "none", "selective": "select", "full": "full"}


def estimate_table(numbers: dict[str, Any]) -> str:
    """The estimate for a terminal: the configuration, the most loaded card's memory, the
    communication per card, and the step and training time."""
    lines = [*_setup_lines(numbers), "", *_memory_lines(numbers["memory"]), "", *_comm_lines(numbers["comm"])]
    lines += ["", *_time_lines(numbers)]
    lines += [f"warning: {w}" for w in numbers.get("warnings", [])]
    return "\n".join(lines)


def _setup_lines(numbers: dict[str, Any]) -> list[str]:
    """The model, the cluster, the batch and the plan."""
    plan, cluster, model = numbers["plan"], numbers["cluster"], numbers["model"]
    training = numbers["training"]
    m = training["micro_batches"]
    return [
        f"{model['label']} ({format_quantity(numbers['params'], 'si')} params) on"
        f" {cluster['cards']:,} x {cluster['gpu_label']}, {counted(cluster['nodes'], 'node')}",
        f"model: {_shape_text(model)}",
        f"batch: {counted(training['global_batch'], 'sequence')} a step ({counted(plan['dp'], 'replica')} x"
        f" {m:,} micro-batch{'' if m == 1 else 'es'} x {numbers['inputs']['micro_batch_size']['value']}),"
        f" {format_quantity(training['tokens_per_step'], 'si')} tokens",
        f"plan: dp {plan['dp']}  tp {plan['tp']}  pp {plan['pp']}  cp {plan['cp']}"
        + (f"  ep {plan['ep']}" if plan.get("ep", 1) > 1 else "")
        + f"  zero {plan['zero']}  schedule {plan['schedule']}"
        + (f" x{plan['virtual_stages']} virtual stages" if plan["virtual_stages"] > 1 else "")
        + f"  recompute {plan['recompute']}"
        + ("" if plan["flash_attention"] else "  (unfused attention)"),
    ]


def _memory_lines(mem: dict[str, Any]) -> list[str]:
    """The most loaded card's memory, part by part, and whether it fits."""
    card = mem["card"]
    lines = [f"memory of the most loaded card (dp {card['dp']}, pp {card['pp']}, tp {card['tp']}):"]
    for key, label in PART_LABELS.items():
        lines.append(f"  {label:<14}{format_quantity(mem[key], 'GB'):>12}")
    verdict = "fits" if mem["fits"] else f"does NOT fit ({format_quantity(mem['over_capacity'], 'x')})"
    lines += [
        f"  {'total':<14}{format_quantity(mem['total'], 'GB'):>12}   of"
        f" {format_quantity(mem['capacity'], 'GB')}: {verdict}",
    ]
    return lines


def _comm_lines(comm: dict[str, Any]) -> list[str]:
    """Each collective a card joins in a step."""
    lines = ["communication per card per step:"]
    for row in comm["breakdown"]:
        lines.append(
            f"  {row['group']:<3} {row['collective']:<15} x{row['count']:<6}"
            f"{format_quantity(row['bytes'], 'GB'):>12}  {row['link']:<15}"
            f"{format_quantity(row['seconds'], 's'):>10}"
        )
    if not comm["breakdown"]:
        lines.append("  none (one card)")
    return lines


def _time_lines(numbers: dict[str, Any]) -> list[str]:
    """The bubble, the step and its parts, MFU, and the training time."""
    comp, cluster = numbers["compute"], numbers["cluster"]
    return [
        f"bubble: {format_quantity(numbers['pipeline']['bubble_fraction'], '%')} of the timeline",
        f"step: {format_quantity(comp['step_seconds'], 's')} (compute"
        f" {format_quantity(comp['compute_seconds'], 's')}, bubble"
        f" {format_quantity(comp['bubble_seconds'], 's')}, comm"
        f" {format_quantity(comp['comm_seconds'], 's')}{_overlap_text(numbers)})",
        f"  a micro-batch on the busiest stage: matmuls {format_quantity(comp['stage_seconds']['matmul'], 's')},"
        f" attention {format_quantity(comp['stage_seconds']['attention'], 's')}, memory-bound"
        f" {format_quantity(comp['stage_seconds']['memory'], 's')}, fixed costs"
        f" {format_quantity(comp['stage_seconds']['overhead'], 's')}",
        f"predicted MFU: {format_quantity(comp['predicted_mfu'], '%')} (the card computes at"
        f" {format_quantity(comp['compute_efficiency'], '%')} of peak while it computes)",
        f"training on {format_quantity(numbers['inputs']['tokens']['value'], 'si')} tokens at an assumed"
        f" {format_quantity(numbers['inputs']['mfu']['value'], '%')} MFU (the seeds' arithmetic):"
        f" {format_quantity(comp['training_seconds'], 'days')} on {cluster['cards']}"
        f" {'card' if cluster['cards'] == 1 else 'cards'}"
        # (on one card that is the same time again: '946 days on 1 card, 2.59 years on one')
        + (f", {format_quantity(comp['training_seconds_one_card'], 'years')} on one" if cluster["cards"] != 1 else "")
        + ";"
        f" {format_quantity(comp['training_seconds_from_steps'], 'days')} from the step above",
    ]


def _shape_text(model: dict[str, Any]) -> str:
    """The shape behind the derived parameter count, with the defaults a catalog entry left."""
    said = {
        "mlp": f"{model['mlp']} MLP",
        "tied_embeddings": "tied embeddings" if model["tied_embeddings"] else "untied embeddings",
    }
    said = {k: v + (" (default)" if k in model["defaulted"] else "") for k, v in said.items()}
    return (
        f"{model['layers']} layers, hidden {model['hidden']:,}, {model['heads']} heads ({model['kv_heads']} KV),"
        f" MLP width {model['ffn']:,}, vocabulary {model['vocab']:,}, {said['mlp']}, {said['tied_embeddings']}:"
        f" {format_quantity(model['architecture_params'], 'si')} parameters derived" + _experts_text(model)
    )


def _experts_text(model: dict[str, Any]) -> str:
    """A MoE model's experts and its active parameters (nothing for a dense model)."""
    if not model.get("experts"):
        return ""
    dense = f", the first {model['dense_layers']} layers dense" if model["dense_layers"] else ""
    shared = f", shared experts {model['shared_ffn']:,} wide" if model["shared_ffn"] else ""
    latent = ", latent attention priced by its parameters" if model["attention"] == "mla" else ""
    return (
        f"; {model['experts']} experts of width {model['expert_ffn']:,}, top-{model['top_k']}{shared}{dense}{latent}:"
        f" {format_quantity(model['architecture_active_params'], 'si')} active"
    )


def _overlap_text(numbers: dict[str, Any]) -> str:
    """Under overlap framework: how much of the traffic the step waits for, and the slowdown."""
    if numbers["overlap"]["mode"] == "none":
        return ", no overlap"
    comp = numbers["compute"]
    return (
        f", of which {format_quantity(comp['exposed_comm_seconds'], 's')} exposed under the frameworks' overlap,"
        f" + {format_quantity(comp['overlap_slowdown_seconds'], 's')} of compute slowed beside it"
    )


def plan_table(setup: Any, result: dict[str, Any]) -> str:
    """The planner's ranking and its reasoning."""
    lines = [
        f"{setup.shape.label} ({format_quantity(setup.params, 'si')} params) on {setup.cards:,} x {setup.card.label},"
        f" global batch {counted(result['global_batch'], 'sequence')} of {setup.seq_len:,} tokens"
        f" ({format_quantity(result['tokens_per_step'], 'si')} tokens a step)"
        + (", communication overlapped as the frameworks do" if setup.overlap == "framework" else ""),
        f"evaluated {result['evaluated']:,} plans in {result['seconds'] * 1000:.0f} ms;"
        f" {result['fitting']:,} fit in {format_quantity(setup.card.memory_bytes, 'GB')}",
        "",
        f"{'dp':>5} {'tp':>3} {'pp':>3} {'cp':>3}"
        + (f" {'ep':>3}" if setup.shape.moe else "")
        + f" {'zero':>4} {'m':>5} {'b':>3} {'recomp':>6} {'sched':>6} {'v':>2}"
        f" {'per card':>10} {'comm/step':>10} {'step':>9} {'tokens/s':>11}",
    ]
    for row in result["plans"]:
        tokens_per_second = row["tokens_per_step"] / row["step_seconds"]
        lines.append(
            f"{row['dp']:>5} {row['tp']:>3} {row['pp']:>3} {row['cp']:>3}"
            + (f" {row['ep']:>3}" if "ep" in row else "")
            + f" {row['zero']:>4}"
            f" {row['micro_batches']:>5} {row['micro_batch_size']:>3} {RECOMPUTE_SHORT[row['recompute']]:>6}"
            f" {row['schedule']:>6} {row['virtual_stages']:>2} {format_quantity(row['memory_total'], 'GB'):>10}"
            f" {format_quantity(row['comm_bytes'], 'GB'):>10} {format_quantity(row['step_seconds'], 's'):>9}"
            f" {tokens_per_second:>11,.0f}"
        )
    lines += ["", *result["reason"]]
    if result["batch_note"]:
        lines.append(f"Note: {result['batch_note']}.")
    return "\n".join(lines)


def compare_table(check: Any) -> str:
    """A published run beside the planner's pick (dtfilm.cost.published.RunCheck)."""
    run = check.run
    lines = [f"{run.label}  ({run.source})"]
    if check.estimate is None or check.pick_estimate is None:
        return "\n".join([*lines, "no plan with the published settings fits these inputs"])
    a, b = check.estimate, check.pick_estimate
    ra, rb = check.published, check.pick

    def plan_of(p: dict[str, Any]) -> str:
        return f"dp {p['dp']} x tp {p['tp']} x pp {p['pp']} x cp {p['cp']}"

    def filled(key: str, value: Any) -> str:
        return f"{value} (not given)" if key in run.not_given else str(value)

    rows = [
        ("plan", plan_of(ra), plan_of(rb)),
        ("ZeRO stage", ra["zero"], rb["zero"]),
        ("micro-batch size", filled("micro_batch_size", ra["micro_batch_size"]), rb["micro_batch_size"]),
        ("micro-batches", ra["micro_batches"], rb["micro_batches"]),
        ("schedule", filled("schedule", ra["schedule"]), rb["schedule"]),
        ("virtual stages", filled("virtual_stages", ra["virtual_stages"]), rb["virtual_stages"]),
        ("recompute", filled("recompute", ra["recompute"]), rb["recompute"]),
        ("per card", format_quantity(a["memory"]["total"], "GB"), format_quantity(b["memory"]["total"], "GB")),
        ("bubble", format_quantity(a["pipeline"]["bubble_fraction"], "%"),
         format_quantity(b["pipeline"]["bubble_fraction"], "%")),
        ("step", format_quantity(a["compute"]["step_seconds"], "s"),
         format_quantity(b["compute"]["step_seconds"], "s")),
        ("tokens/s per card", f"{a['compute']['tokens_per_second_per_card']:,.0f}",
         f"{b['compute']['tokens_per_second_per_card']:,.0f}"),
        ("predicted MFU", format_quantity(a["compute"]["predicted_mfu"], "%"),
         format_quantity(b["compute"]["predicted_mfu"], "%")),
    ]  # fmt: skip
    lines += ["", f"{'':<20}{'published':<32}planner's pick"]
    lines += [f"{name:<20}{x!s:<32}{y}" for name, x, y in rows]
    lines += [
        "",
        f"reported: {run.stated}; on the model's 6P basis {format_quantity(check.reported_mfu, '%')} MFU;"
        f" predicted {format_quantity(check.predicted_mfu, '%')}"
        f" ({100 * check.mfu_error:+.0f}%); {'fits' if check.fits else 'does NOT fit'}",
        f"step: published {format_quantity(check.reported_step_seconds, 's')}, predicted"
        f" {format_quantity(check.predicted_step_seconds, 's')} ({100 * check.step_error:+.0f}%);"
        f" {check.run.run_set} set",
        f"the planner's pick is {100 * (check.planner_speedup - 1):+.0f}% in tokens per second by the model"
        + (": within 10%, a tie at this model's precision" if abs(check.planner_speedup - 1) <= 0.1 else ""),
    ]
    if check.same_techniques is not None:
        same = check.same_techniques
        kept = ", ".join(k for k in TECHNIQUE_KEYS if k in run.settings) or "none stated"
        lines.append(
            f"with the run's own techniques ({kept}) the planner picks {plan_of(same)},"
            f" {100 * (check.same_techniques_speedup - 1):+.0f}%"
        )
    if run.error_reason:
        lines.append(f"why the predicted step is off: {run.error_reason}")
    if run.disagreement:
        lines.append(f"where the model and practice disagree: {run.disagreement}")
    if check.reasons:
        lines += ["", "where the pick differs, in the decision tree's words:", *(f"  {r}" for r in check.reasons)]
    return "\n".join(lines)
