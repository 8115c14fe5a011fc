"""Plans as the cost model takes them: parallel int arrays, one entry per plan (`Layouts`), the
planner's whole grid or the estimate's one row (`Layouts.of(setup)`)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from dtfilm.cost import memory, pipeline
from dtfilm.cost.setup import Setup

SCHEDULE_NAMES = pipeline.SCHEDULES  # index 0: 1f1b, 1: gpipe
FULL = memory.RECOMPUTE_MODES.index("full")
LAYOUT_FIELDS = (
    "dp", "tp", "pp", "cp", "zero", "micro_batches", "micro_batch_size", "recompute", "schedule", "virtual_stages",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Layouts:
    """Plans as parallel int arrays, one entry per plan: the degrees, the batch split, and
    `recompute` and `schedule` as indices into memory.RECOMPUTE_MODES and pipeline.SCHEDULES."""

    dp: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    zero: np.ndarray
    micro_batches: np.ndarray
    micro_batch_size: np.ndarray
    recompute: np.ndarray
    schedule: np.ndarray
    virtual_stages: np.ndarray
    ep: np.ndarray  # expert parallelism: the routed experts split over ep of the dp replicas

    @classmethod
    def of(cls, setup: Setup) -> Layouts:
        """The one plan a Setup names, as a one-row Layouts (the estimate's call)."""
        values = {name: getattr(setup, name) for name in (*LAYOUT_FIELDS, "ep")}
        values["recompute"] = memory.RECOMPUTE_MODES.index(setup.recompute)
        values["schedule"] = SCHEDULE_NAMES.index(setup.schedule)
        return cls(**{name: np.array([value], dtype=np.int64) for name, value in values.items()})

    def take(self, rows: np.ndarray) -> Layouts:
        return Layouts(*(getattr(self, f.name)[rows] for f in fields(self)))

    @property
    def count(self) -> int:
        return int(self.dp.size)

    @property
    def shard_group(self) -> np.ndarray:
        """The dp x cp cards that share weights (Setup.shard_group)."""
        return self.dp * self.cp

    @property
    def expert_data_parallel(self) -> np.ndarray:
        """The cards holding the same experts, over which ZeRO shards their state (Setup's)."""
        return self.shard_group // self.ep

    @property
    def full_recompute(self) -> np.ndarray:
        return self.recompute == FULL
