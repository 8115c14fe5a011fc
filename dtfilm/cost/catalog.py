"""A film's catalog: the cards, links and model shapes its names resolve to.

A value, not a registry: `BUILTIN_CATALOG` holds the built-in ones (read-only), a film's
storyboard/catalog.yaml makes another (dtfilm.storyboard.catalog.load_catalog, the built-ins and
its own entries), and whatever resolves a name (`--gpu`, `cluster.inter_node`, `model.preset`,
the planner, the explorer page) takes the catalog it is given. Two films loaded in one process,
or one film loaded again after an entry was deleted (`render --watch`), each see their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from dtfilm.cost.hardware import CARDS, LINKS, Card, Link
from dtfilm.cost.models import PRESETS, ModelShape


@dataclass(frozen=True)
class Catalog:
    """Names to cards, links and model shapes; each a read-only mapping (a copy is taken, so no
    one holding the dict it was made from can change it)."""

    cards: Mapping[str, Card]
    links: Mapping[str, Link]
    models: Mapping[str, ModelShape]

    def __post_init__(self) -> None:
        for name in ("cards", "links", "models"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def __reduce__(self) -> tuple[Any, ...]:
        # (a mappingproxy does not pickle; a film's catalog travels to the processes drawing its shots)
        return (Catalog, (dict(self.cards), dict(self.links), dict(self.models)))

    @property
    def inter_node_links(self) -> tuple[str, ...]:
        """The names of the links between nodes (what `cluster.inter_node` may name)."""
        return tuple(name for name, link in self.links.items() if link.between_nodes)

    def joined(self, cards: Mapping[str, Card], links: Mapping[str, Link], models: Mapping[str, ModelShape]) -> Catalog:
        """This catalog with more entries (a film's own, after the built-ins)."""
        return Catalog({**self.cards, **cards}, {**self.links, **links}, {**self.models, **models})


BUILTIN_CATALOG = Catalog(CARDS, LINKS, PRESETS)
