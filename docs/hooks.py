"""MkDocs hook: the reference pages' generated parts, written from the code at build time.

A page holds `<!-- generated: NAME -->` where a generated part goes: `kinds` (what `dtfilm
kinds` prints), `kind-details` (what `dtfilm kinds KIND` prints, for every kind), `paths` (what
`dtfilm paths` prints at the film's defaults), `units` (dtfilm/units.py's UNITS) and `glossary`
(storyboard/glossary.yaml, the film's terms). Nothing
here is copied by hand, so the pages cannot drift from the code; an unknown NAME fails the build.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def _fence(text: str) -> str:
    return f"```text\n{text}\n```"


def kinds() -> str:
    from dtfilm.storyboard.reference import kinds_text

    return _fence(kinds_text())


def kind_details() -> str:
    from dtfilm.storyboard.kinds import KINDS
    from dtfilm.storyboard.load import find_root, load_film
    from dtfilm.storyboard.reference import kind_text, uses_of

    film_yaml = find_root() / "storyboard" / "film.yaml"
    chapters = list(load_film(film_yaml).chapters)
    parts = []
    for name in KINDS:
        uses = list(uses_of(name, film_yaml.parent, chapters))
        parts.append(f"### `{name}`\n\n{_fence(kind_text(name, uses))}\n")
    return "\n".join(parts)


def paths() -> str:
    from dtfilm.cli import _estimate_numbers
    from dtfilm.storyboard.reference import paths_text

    return _fence(paths_text(_estimate_numbers(None, {})))


# a value each unit is meant for, to show it on (else its kind of quantity's example below)
_EXAMPLE_FOR = {
    "us": "links.nvlink4.latency",
    "min": "compute.training_seconds",
    "h": "compute.training_seconds",
    "days": "compute.training_seconds",
    "years": "compute.training_seconds",
    "%": "compute.predicted_mfu",
    "sci": "compute.training_flops",
    "si": "params",
    "num": "params",
    "K": "inputs.seq_len",
    "times": "comm.tp_exchanges.forward",
    "part": "compute.recompute_overhead",
}
# an example path for each kind of quantity
_EXAMPLE = {
    "bytes": "memory.total",
    "seconds": "compute.step_seconds",
    "fraction": "pipeline.bubble_fraction",
    "ratio": "memory.over_capacity",
    "count": "bytes_per_param.total",
    "bytes_per_second": "cluster.intra_node_bandwidth",
    "flops_per_second": "cluster.peak_flops",
}


def units() -> str:
    from dtfilm.cli import _estimate_numbers
    from dtfilm.phrases import render_template
    from dtfilm.units import UNITS

    data = _estimate_numbers(None, {})
    rows = ["| unit | formats | example at the film's defaults |", "|---|---|---|"]
    for unit, (quantity, _) in UNITS.items():
        template = f"{{{_EXAMPLE_FOR.get(unit, _EXAMPLE[quantity])}:{unit}}}"
        shown = render_template(template, data, ()).text
        rows.append(f"| `{unit}` | {quantity.replace('_', ' ')} | `{template}` shows {shown} |")
    return "\n".join(rows)


def glossary() -> str:
    """The film's glossary (storyboard/glossary.yaml): each term, what it means, and the chapter
    and beat whose narration or screen text defines it."""
    from pathlib import Path

    from dtfilm.storyboard.glossary import load_glossary

    root = Path(__file__).resolve().parent.parent
    rows = [
        f"| {t.term} | {t.means} | {t.chapter}:{t.beat} |" for t in load_glossary(root / "storyboard" / "glossary.yaml")
    ]
    return "\n".join(["| term | means | defined in |", "|---|---|---|", *rows])


PARTS: dict[str, Callable[[], str]] = {
    "kinds": kinds,
    "kind-details": kind_details,
    "paths": paths,
    "units": units,
    "glossary": glossary,
}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PARTS:
            raise PluginError(f"{page.file.src_uri}: no generated part {name!r}; valid: {', '.join(PARTS)}")
        return PARTS[name]()

    return MARKER.sub(generated, markdown)
