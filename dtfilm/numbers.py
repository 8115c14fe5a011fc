"""Numbers: the cost model's output for one set of inputs, and the overrides that made it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dtfilm.errors import DtfilmError
from dtfilm.paths import lookup
from dtfilm.phrases import OverrideItems, Phrase, index_phrase, render_template

# The values that are one card's memory, held against the card's capacity.
PER_CARD_MEMORY = frozenset({"memory.total", "memory.static"})


@dataclass(frozen=True)
class Numbers:
    """The estimate JSON of one configuration. `overrides` are the flags on top of the
    chapter's storyboard that produce it (`dtfilm estimate CHAPTER --flag value`)."""

    data: dict[str, Any]
    overrides: OverrideItems = ()
    # The shot's other configurations a claim's condition may name (`steps`, `rows`, `pick`):
    # the loader sets them for the storyboard's own texts (dtfilm/storyboard/claims.py).
    context: dict[str, Any] | None = field(default=None, compare=False)

    def get(self, path: str) -> Any:
        return lookup(self.data, path)

    def has(self, path: str) -> bool:
        """Whether the estimate object has a group or value at `path` (a collective row, say; a
        list's item by its index, `memory.stages.0`, as `lookup` reads it)."""
        node: Any = self.data
        for part in path.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False
        return True

    def get_list(self, path: str) -> list[Any]:
        """A list value of the estimate object (lists are not shown directly, only their items)."""
        node: Any = self.data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, list):  # a kind's code reads a path the estimate lacks, or not a list
            raise DtfilmError(f"estimate path {path!r} is not a list of the estimate (docs/contract.md)")
        return node

    def __call__(self, template: str) -> Phrase:
        """A Phrase from a template such as "Per card: {memory.total:GB}". One that shows a
        card's memory past its capacity is marked `over` (a counter draws it in the bad colour)."""
        phrase = render_template(template, self.data, self.overrides, self.context)
        if any(f.kind == "cost" and f.path in PER_CARD_MEMORY and self._over(f.value) for f in phrase.facts):
            return Phrase(phrase.text, phrase.facts, over=True)
        return phrase

    def _over(self, value: Any) -> bool:
        try:
            return float(value) > float(self.get("memory.capacity"))
        except (KeyError, TypeError, ValueError):
            return False

    def index(self, template: str, index: int, bound: str, one_based: bool = False) -> Phrase:
        """A label with a position in this configuration: ("GPU {}", 3, "cluster.cards")."""
        return index_phrase(template, index, bound, one_based, self.overrides)
