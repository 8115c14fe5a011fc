"""Every plan the planner evaluates, as parallel arrays (`Plans`): the grid's rows priced by the
cost model's one body (dtfilm.cost.model.evaluate, the estimate's own), with a row read back as
a plan (`Plans.row`) and as a Setup (`setup_for`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from dtfilm.cost import ledger as terms
from dtfilm.cost import memory, model
from dtfilm.cost.layouts import FULL, LAYOUT_FIELDS, SCHEDULE_NAMES, Layouts
from dtfilm.cost.plan_grid import VIRTUAL_STAGE_CHOICES, grid
from dtfilm.cost.setup import Setup


@dataclass(frozen=True)
class Plans:
    """Every evaluated plan as parallel arrays (one entry per plan)."""

    dp: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    zero: np.ndarray
    micro_batches: np.ndarray
    micro_batch_size: np.ndarray
    recompute: np.ndarray  # index into memory.RECOMPUTE_MODES
    schedule: np.ndarray
    virtual_stages: np.ndarray
    memory_total: np.ndarray
    comm_bytes: np.ndarray
    comm_seconds: np.ndarray
    compute_seconds: np.ndarray
    bubble_seconds: np.ndarray
    step_seconds: np.ndarray
    exposed_seconds: np.ndarray  # the traffic the step waits for (all of it under overlap none)
    tokens_per_step: np.ndarray

    @property
    def count(self) -> int:
        return int(self.dp.size)

    @property
    def fits(self) -> np.ndarray:
        return self.memory_total <= self._capacity

    @property
    def roomy(self) -> np.ndarray:
        """Fits with at least `fit_margin` to spare: room for the allocator's fragmentation,
        which `memory_total` does not count (dtfilm.cost.ledger.FIT_MARGIN_SHARE)."""
        return self.memory_total <= (1 - terms.FIT_MARGIN_SHARE) * self._capacity

    _capacity: float = 0.0
    # a MoE model's expert-parallel degrees (None for a dense model: its rows name no ep)
    ep: np.ndarray | None = None

    def degree(self, name: str) -> np.ndarray:
        """A degree by name; a dense model's plans all have ep 1."""
        if name == "ep" and self.ep is None:
            return np.ones_like(self.dp)
        return getattr(self, name)

    def row(self, i: int) -> dict[str, Any]:
        moe = {} if self.ep is None else {"ep": int(self.ep[i])}
        return {
            "dp": int(self.dp[i]),
            "tp": int(self.tp[i]),
            "pp": int(self.pp[i]),
            "cp": int(self.cp[i]),
            **moe,
            "zero": int(self.zero[i]),
            "micro_batches": int(self.micro_batches[i]),
            "micro_batch_size": int(self.micro_batch_size[i]),
            "checkpointing": bool(self.recompute[i] == FULL),
            "recompute": memory.RECOMPUTE_MODES[int(self.recompute[i])],
            "schedule": SCHEDULE_NAMES[int(self.schedule[i])],
            "virtual_stages": int(self.virtual_stages[i]),
            "memory_total": float(self.memory_total[i]),
            "comm_bytes": float(self.comm_bytes[i]),
            "comm_seconds": float(self.comm_seconds[i]),
            "compute_seconds": float(self.compute_seconds[i]),
            "bubble_seconds": float(self.bubble_seconds[i]),
            "exposed_seconds": float(self.exposed_seconds[i]),
            "step_seconds": float(self.step_seconds[i]),
            "tokens_per_step": int(self.tokens_per_step[i]),
            "seconds_per_token": float(self.step_seconds[i] / self.tokens_per_step[i]),
        }


Degrees = Callable[[str], np.ndarray]  # a sweep's degree by name ("ep" 1 where it has none)


def _grid_degree(g: dict[str, np.ndarray], name: str) -> np.ndarray:
    """A degree of the grid's plans by name: a MoE model's plans each with its ep; a dense
    model's (no "ep" in the grid) all ep 1."""
    if name != "ep":
        return g[name]
    return g["ep"] if "ep" in g else np.ones_like(g["dp"])


def evaluate(
    setup: Setup,
    global_batch: int,
    layouts: list[tuple[int, int, int, int]] | None = None,
    virtual_stages: tuple[int, ...] = VIRTUAL_STAGE_CHOICES,
    search_ep: bool = True,
    where: Callable[[Degrees], np.ndarray] | None = None,
) -> Plans:
    """Memory, traffic and time of every plan (dtfilm.cost.model, the estimate's own body); with
    `layouts`, of the plans with those (dp, tp, pp, cp) only, each plan priced as in the full sweep.
    `virtual_stages`: the interleaving depths tried (a published run may state one outside
    VIRTUAL_STAGE_CHOICES, as Megatron's 3 layers a stage in one virtual stage each).
    `search_ep` off: a MoE model's plans all with ep 1 (benchmarks/planner_speed.py).
    `where`: only the plans it selects, given each degree by name, in the sweep's order (a plan's
    price never depends on the others': a published run's own plans cost a tenth of the sweep)."""
    g = grid(setup, global_batch, layouts, virtual_stages, search_ep)
    if g and where is not None:
        keep = where(lambda name: _grid_degree(g, name))
        g = {name: values[keep] for name, values in g.items()}
        g = g if g["dp"].size else {}
    if not g:
        empty = np.zeros(0)
        arrays = {f.name: empty for f in fields(Plans) if f.name not in ("_capacity", "ep")}
        return Plans(**arrays, _capacity=setup.card.memory_bytes)
    plans = Layouts(**{name: g[name] for name in LAYOUT_FIELDS}, ep=_grid_degree(g, "ep"))
    result = model.evaluate(setup, plans)
    return Plans(
        **{name: g[name] for name in LAYOUT_FIELDS},
        memory_total=result.memory_total_bytes,
        comm_bytes=result.comm_total_bytes,
        comm_seconds=result.comm_seconds,
        compute_seconds=result.compute_seconds,
        bubble_seconds=result.bubble_seconds,
        step_seconds=result.step_seconds,
        exposed_seconds=result.exposed_seconds,
        tokens_per_step=result.tokens_per_step,
        _capacity=setup.card.memory_bytes,
        ep=g.get("ep"),
    )


def setup_for(setup: Setup, plan: dict[str, Any]) -> Setup:
    """The Setup of one planned row (to estimate a plan the planner ranked, as `published` does)."""
    keys = (
        "dp",
        "tp",
        "pp",
        "cp",
        "zero",
        "micro_batches",
        "micro_batch_size",
        "recompute",
        "schedule",
        "virtual_stages",
    )
    return replace(setup, **{k: plan[k] for k in keys}, ep=plan.get("ep", 1))
