"""Shot kinds: one function per `kind:` a storyboard may name."""

from __future__ import annotations

from collections.abc import Callable

from dtfilm.scene import ShotContext
from dtfilm.shots.common import play_title
from dtfilm.shots.compare import play_traffic_compare
from dtfilm.shots.data_parallel import (
    play_loaf_to_rack,
    play_memory_bars,
    play_ring_allreduce,
    play_sweep,
)
from dtfilm.shots.fsdp import play_gather_layer, play_shard_steps
from dtfilm.shots.pipeline import play_loaf_to_stages, play_pipeline_slider, play_timeline
from dtfilm.shots.tensor import play_layer_timeline, play_loaf_split, play_split_matrices
from dtfilm.storyboard import Shot

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
}
