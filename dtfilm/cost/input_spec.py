"""How one input of the cost model is read: its parser (a count, a whole number, a name of the
catalog ...) and the range it is supported in."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.models import model_did_you_mean
from dtfilm.errors import did_you_mean
from dtfilm.units import parse_count, parse_sequence_length


def one_of(options: Iterable[str]) -> Callable[[Any], str]:
    """One of `options`."""

    def parse(raw: Any) -> str:
        if not isinstance(raw, str) or raw not in options:
            raise ValueError(f"{raw!r} is not one of{did_you_mean(raw, options)}: {', '.join(options)}")
        return raw

    return parse


def catalog_name(options: Callable[[Catalog], Iterable[str]]) -> Callable[[Any, Catalog], str]:
    """One of `options(catalog)`: a name of the catalog the input is read with (the film's
    own, or the built-in one), whose names the error lists."""

    def parse(raw: Any, catalog: Catalog) -> str:
        return one_of(tuple(options(catalog)))(raw)

    return parse


def model_name(raw: Any, catalog: Catalog) -> str:
    """A model of the catalog, its did-you-mean kept to the family typed: llama3-70b suggests
    llama3.1-70b, not llama2-70b."""
    models = catalog.models
    if not isinstance(raw, str) or raw not in models:
        raise ValueError(f"{raw!r} is not one of{model_did_you_mean(raw, models)}: {', '.join(models)}")
    return raw


class NotWhole(ValueError):
    """A count that is not a whole number; `InputSpec.read` adds what would do."""


def whole_number(raw: Any) -> int:
    if isinstance(raw, bool):
        raise NotWhole(f"{raw!r} is not a whole number")
    try:
        value = parse_count(raw)
    except ValueError:
        raise NotWhole(f"{raw!r} is not a whole number") from None
    if not math.isfinite(value) or value != int(value):
        raise NotWhole(f"{raw!r} is not a whole number")
    return int(value)


def token_count(raw: Any) -> int:
    """A whole number of tokens; 8K and 128K are binary (8,192 and 131,072), as the field names them."""
    try:
        value = parse_sequence_length(raw)
    except ValueError as error:
        raise ValueError(str(error)) from None
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{raw!r} is not a whole number of tokens")
    return int(value)


def finite_count(raw: Any) -> float:
    value = parse_count(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number (write 7e9, 7B, 512M or 1T)")
    return value


def zero_stage(raw: Any) -> int:
    if isinstance(raw, bool) or raw not in (0, 1, 2, 3):
        raise ValueError(f"{raw!r} is not a ZeRO stage: 0, 1, 2 or 3 (3 = FSDP)")
    return int(raw)


def fraction(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or not 0 < raw <= 1:
        raise ValueError(f"{raw!r} is not a fraction in (0, 1], such as 0.5")
    return float(raw)


def load_factor(raw: Any) -> float:
    """A load over the mean: a number of at least 1 (range-checked by its InputSpec)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise ValueError(f"{raw!r} is not a number, such as 1.3")
    return float(raw)


def yes_no(raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not true or false")
    return raw


@dataclass(frozen=True)
class InputSpec:
    """One input: its section, parser, help and, for numbers, the supported range (the
    envelope the README tabulates; outside it an input is refused before any frame)."""

    name: str
    section: str
    parse: Callable[..., Any]  # (raw), or (raw, catalog) where `named`
    help: str
    low: float | None = None
    high: float | None = None
    named: bool = False  # a name of the catalog (a card, a link, a model): parsed with the catalog given

    def read(self, raw: Any, catalog: Catalog = BUILTIN_CATALOG) -> Any:
        try:
            value = self.parse(raw, catalog) if self.named else self.parse(raw)
        except NotWhole as error:  # 'eight' for cards: say what would do, as out of range does
            if self.range_text:
                raise ValueError(f"{error}; valid: {self.help}, {self.range_text}") from None
            raise
        if self.low is not None and self.high is not None and not self.low <= value <= self.high:
            raise ValueError(f"{raw!r} is outside the supported range of {self.help}: {self.range_text}")
        return value

    @property
    def range_text(self) -> str:
        if self.low is None or self.high is None:
            return ""
        return f"{shown_bound(self.low)} to {shown_bound(self.high)}"


def shown_bound(value: float) -> str:
    if value >= 1e6 and math.log10(value).is_integer():
        return f"1e{int(math.log10(value))}"  # 1e6, 1e14
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"
