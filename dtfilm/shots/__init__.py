"""Shot kinds: one function per `kind:` a storyboard may name."""

from __future__ import annotations

from collections.abc import Callable

from dtfilm.scene import ShotContext
from dtfilm.shots.common import play_title
from dtfilm.shots.compare import play_traffic_compare
from dtfilm.shots.context import play_memory_columns, play_ring_attention, play_zigzag_balance
from dtfilm.shots.data_parallel import (
    play_loaf_to_rack,
    play_memory_bars,
    play_ring_allreduce,
    play_sweep,
)
from dtfilm.shots.decision_tree import play_decision_tree
from dtfilm.shots.fsdp import play_gather_layer, play_shard_steps
from dtfilm.shots.ledger import play_bytes_per_param, play_chapter_map, play_ledger_knobs, play_precision_switch
from dtfilm.shots.overlap import play_overlap_timeline
from dtfilm.shots.pipeline import play_loaf_to_stages, play_pipeline_slider, play_timeline
from dtfilm.shots.tensor import play_layer_timeline, play_loaf_split, play_split_matrices
from dtfilm.shots.three_d import play_group_links, play_loaf_to_grid, play_planner_pick
from dtfilm.shots.why import play_bandwidth_ladder, play_model_lineup, play_strategy_table, play_training_clock
from dtfilm.storyboard import Shot
from dtfilm.storyboard.kinds import KINDS, KindSpec

ShotFunction = Callable[[ShotContext, Shot], None]

SHOTS: dict[str, ShotFunction] = {
    "title": play_title,
    "loaf_to_rack": play_loaf_to_rack,
    "memory_bars": play_memory_bars,
    "ring_allreduce": play_ring_allreduce,
    "sweep": play_sweep,
    "shard_steps": play_shard_steps,
    "gather_layer": play_gather_layer,
    "traffic_compare": play_traffic_compare,
    "loaf_to_stages": play_loaf_to_stages,
    "timeline": play_timeline,
    "pipeline_slider": play_pipeline_slider,
    "loaf_split": play_loaf_split,
    "split_matrices": play_split_matrices,
    "layer_timeline": play_layer_timeline,
    "model_lineup": play_model_lineup,
    "training_clock": play_training_clock,
    "strategy_table": play_strategy_table,
    "bandwidth_ladder": play_bandwidth_ladder,
    "bytes_per_param": play_bytes_per_param,
    "precision_switch": play_precision_switch,
    "ledger_knobs": play_ledger_knobs,
    "chapter_map": play_chapter_map,
    "loaf_to_grid": play_loaf_to_grid,
    "group_links": play_group_links,
    "planner_pick": play_planner_pick,
    "decision_tree": play_decision_tree,
    "memory_columns": play_memory_columns,
    "ring_attention": play_ring_attention,
    "zigzag_balance": play_zigzag_balance,
    "overlap_timeline": play_overlap_timeline,
}


def register(spec: KindSpec, play: ShotFunction) -> None:
    """Add a shot kind from outside the package (a scratch kind, a notebook, a test): its spec,
    which the loader checks storyboards against, and the function that draws it. The film's own
    kinds are listed in KINDS (dtfilm/storyboard/kinds.py) and SHOTS above instead."""
    if spec.name in KINDS or spec.name in SHOTS:
        raise ValueError(f"shot kind {spec.name!r} exists already")
    KINDS[spec.name] = spec
    SHOTS[spec.name] = play
