"""The cost model: memory, traffic, bubble and time for a model, cluster and plan.

Imports numpy and the standard library only, never manim (CONTRACT.md).
"""

from __future__ import annotations

from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.estimate import estimate, estimate_setup
from dtfilm.cost.inputs import Value, builtin_layer, parse_value, resolve
from dtfilm.cost.setup_checks import build_setup

__all__ = [
    "BUILTIN_CATALOG",
    "Catalog",
    "Value",
    "build_setup",
    "builtin_layer",
    "estimate",
    "estimate_setup",
    "parse_value",
    "resolve",
]
