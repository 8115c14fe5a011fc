"""A row of the comparison (the cost model's value, PyTorch's measured value, their verdict), and
what every strategy's rows share: the optimizer state, Adam's step counters, the collectives issued."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

EXPERTS, TOP_K = 8, 2  # dtfilm.validate.experts' (kept here: this module imports no torch)


TRAFFIC_TOLERANCE = 0.01


STATE_PARTS = ("weights", "gradients", "adam_m", "adam_v")


@dataclass
class Row:
    strategy: str
    quantity: str
    model: float
    measured: float
    unit: str  # "B", "count" or "value"
    tolerance: float = 0.0
    accounted: float = 0.0  # the named difference, when there is one
    note: str = ""
    at_most: bool = False  # `accounted` is a bound on the difference, not its exact size

    @property
    def verdict(self) -> str:
        if _close(self.measured, self.model, self.tolerance):
            return "agrees"
        if self.note and self.at_most and 0 <= self.measured - self.model <= self.accounted:
            return "explained"
        if self.note and not self.at_most and _close(self.measured, self.model + self.accounted, self.tolerance):
            return "explained"
        return "DIFFERS"

    @property
    def ratio(self) -> float:
        return self.measured / self.model if self.model else (1.0 if self.measured == 0 else float("inf"))

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict, "ratio": self.ratio}


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def collective_totals(collectives: list[dict[str, Any]], kind: str, elements: int | None = None) -> tuple[int, int]:
    """(count, bytes of their first inputs) of one kind of collective, optionally of one size."""
    chosen = [c for c in collectives if c["kind"] == kind and (elements is None or c["elements"] == elements)]
    return len(chosen), sum(c["bytes"] for c in chosen)


def state_rows(
    strategy: str, cost: dict[str, Any], ranks: list[dict[str, Any]], skip: tuple[str, ...] = ()
) -> list[Row]:
    """Every rank holds the same state: the cost model's card, part by part (rank 0 shown;
    a rank that holds other bytes makes the row differ)."""
    rows = []
    for part in STATE_PARTS:
        if part in skip:
            continue
        values = {r["state"][part] for r in ranks}
        measured = ranks[0]["state"][part] if len(values) == 1 else float("nan")
        rows.append(Row(strategy, f"{part} per rank", cost["memory"][part], measured, "B"))
    return rows


STEP_NOTE = "torch's Adam keeps a 4-byte step tensor per parameter tensor it updates (not per parameter)"


def step_counter_row(strategy: str, ranks: list[dict[str, Any]]) -> Row:
    """Adam's step counters: one 4-byte tensor for each parameter tensor the rank holds."""
    largest = max(ranks, key=lambda r: r["state"]["steps"])
    return Row(
        strategy,
        "Adam step counters (largest rank)",
        0,
        largest["state"]["steps"],
        "B",
        accounted=4 * largest["parameter_tensors"],
        note=STEP_NOTE,
    )


def same_size(sizes: set[float]) -> float:
    """The one size every such message had; NaN (the row differs) where none or several."""
    return next(iter(sizes)) if len(sizes) == 1 else float("nan")


def same_value(values: list[float]) -> float:
    """A figure every rank agrees on; NaN (the row differs) where they do not."""
    return values[0] if len(set(values)) == 1 else float("nan")
