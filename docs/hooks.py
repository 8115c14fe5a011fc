"""MkDocs hook: the reference pages' generated parts, written from the code at build time.

A page holds `<!-- generated: NAME -->` where a generated part goes: `kinds` (what `dtfilm
kinds` prints), `kind-details` (the gallery: every kind's keys, marks and needs as tables and a
minimal storyboard, dtfilm.storyboard.gallery), `paths` (what `dtfilm paths` prints at the film's
defaults), `units` (dtfilm/units.py's UNITS) and `glossary` (storyboard/glossary.yaml, the film's
terms). Nothing
here is copied by hand, so the pages cannot drift from the code; an unknown NAME fails the build.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks")
MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def _fence(text: str) -> str:
    return f"```text\n{text}\n```"


def kinds() -> str:
    from dtfilm.storyboard.reference import kinds_text

    return _fence(kinds_text())


# The stills each site's gallery shows, by site folder: found when the page is written, copied
# into the site after the build (on_post_build), from the dtfilm plugin's renders folder.
_STILLS: dict[str, tuple[Path, dict[str, tuple[str, str]]]] = {}


def kind_details(page: Any = None, config: Any = None) -> str:
    from dtfilm.publish.docs_embed import BUILD_FOLDER
    from dtfilm.publish.kind_stills import kept_stills, still_url
    from dtfilm.publish.mkdocs import page_base
    from dtfilm.storyboard.film import find_root, load_film
    from dtfilm.storyboard.gallery import all_uses, gallery_markdown

    root = find_root()
    film_yaml = root / "storyboard" / "film.yaml"
    chapters = list(load_film(film_yaml).chapters)
    plugin = config.plugins.get("dtfilm") if config is not None else None
    stills: dict[str, tuple[str, str]] = {}
    if plugin is not None and getattr(plugin, "renders", None) is not None:
        stills = kept_stills(root, plugin.renders, all_uses(film_yaml.parent, chapters))
        _STILLS[config.site_dir] = (plugin.renders, stills)
    base = page_base(page.url).removesuffix(BUILD_FOLDER) if page is not None else ""
    urls = {kind: (base + still_url(kind), shot) for kind, (_, shot) in stills.items()}
    return gallery_markdown(film_yaml.parent, chapters, urls)


def paths() -> str:
    from dtfilm.cli.flags import estimate_numbers
    from dtfilm.storyboard.reference import paths_text

    return _fence(paths_text(estimate_numbers(None, {})))


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
    from dtfilm.cli.flags import estimate_numbers
    from dtfilm.phrases import render_template
    from dtfilm.units import UNITS

    data = estimate_numbers(None, {})
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
        f"| {t.term} | {t.means} | {t.chapter}:{t.beat}"
        + "".join(f"; {t.chapter}:{b} where the flags move it" for b in t.moved)
        + (" (where the flags name it)" if t.droppable else "")
        + " |"
        for t in load_glossary(root / "storyboard" / "glossary.yaml")
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
        return kind_details(page, config) if name == "kind-details" else PARTS[name]()

    return MARKER.sub(generated, markdown)


def on_post_build(config: Any) -> None:
    from dtfilm.publish.kind_stills import copy_stills

    if config.site_dir in _STILLS:
        renders, stills = _STILLS.pop(config.site_dir)
        for warning in copy_stills(renders, stills, Path(config.site_dir)):
            log.warning("dtfilm: %s", warning)
