"""The argparse types of the command line: each value refused in one line that says what is valid."""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Callable, Iterable

from dtfilm.cost import BUILTIN_CATALOG, Catalog
from dtfilm.errors import DtfilmError
from dtfilm.storyboard.film import SCHEDULER_TEXT, find_root, is_scheduler_address, load_film


def whole(least: int, most: int):
    """An argparse type: a whole number from `least` to `most`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not least <= value <= most:
            raise argparse.ArgumentTypeError(
                f"{text!r} is out of range; valid: a whole number from {least:,} to {most:,}"
            )
        return value

    return parse


MAX_JOBS = 1024


jobs = whole(1, MAX_JOBS)


port = whole(0, 65535)


tiles = whole(1, 1_000)  # frames on a contact sheet, tiles a row


tile_width = whole(1, 8_000)  # pixels


def seconds(text: str) -> float:
    """An argparse type: a time into a shot, finite (the shot's own length is checked later)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds; valid: 0 or more seconds")
    return value


def still_seconds(text: str) -> float:
    """An argparse type: how long a still must last, a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a length of a still; valid: seconds above 0, such as 3")
    return value


def wait_seconds(text: str) -> float:
    """An argparse type: a wait, finite (`seconds`), more than 0 and at most a day."""
    value = seconds(text)
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 86400")
    return value


def host(text: str) -> str:
    """An argparse type: an address to listen on, named (`""` bound every interface)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} names no address; valid: a host name or address, such as 127.0.0.1 (0.0.0.0 for every interface)"
        )
    return text


def cluster(text: str) -> str:
    """An argparse type: a Dask scheduler's address, or none (checked even when nothing is stale)."""
    if not is_scheduler_address(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Dask scheduler's address; valid: {SCHEDULER_TEXT}")
    return text


def formats(text: str) -> tuple[str, ...]:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.sidecars import FORMATS

    chosen = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    if not chosen:
        raise argparse.ArgumentTypeError(f"{text!r} names no format; valid: {', '.join(FORMATS)} (comma-separated)")
    for name in chosen:
        if name not in FORMATS:
            raise argparse.ArgumentTypeError(
                f"{name!r} is not a format; valid: {', '.join(FORMATS)} (MP4 is always made)"
            )
    return chosen


def _project_catalog() -> Catalog:
    """The catalog of the project here (the built-in names and storyboard/catalog.yaml's), else
    the built-in one (no project, or one that does not load: its command says why)."""
    with contextlib.suppress(DtfilmError):
        return load_film(find_root() / "storyboard" / "film.yaml").catalog
    return BUILTIN_CATALOG


def listed(choices: Callable[[Catalog], Iterable[str]], what: str):
    """An argparse type: a comma-separated list, each item one of `choices(catalog)`: the
    built-in catalog's names, or where one is not, the project's catalog's."""

    def parse(text: str) -> tuple[str, ...]:
        items = tuple(item.strip() for item in text.split(",") if item.strip())
        catalog = BUILTIN_CATALOG
        if any(item not in choices(catalog) for item in items):
            catalog = _project_catalog()
        valid = list(choices(catalog))
        bad = [item for item in items if item not in valid]
        if not items or bad:
            raise argparse.ArgumentTypeError(
                f"{', '.join(bad) or 'nothing'} is not a {what}; valid: {', '.join(valid)} (comma-separated)"
            )
        return items

    return parse


def stops(text: str) -> tuple[int, ...]:
    try:
        stops = tuple(sorted({int(item) for item in text.split(",") if item.strip()}))
    except ValueError:
        stops = ()
    if len(stops) < 2 or stops[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give two or more whole numbers of 1 or more, as 1,2,4,8,16,32")
    return stops
