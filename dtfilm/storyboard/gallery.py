"""The shot-kind gallery of the docs (docs/reference/kinds.md): for each kind, its keys, marks
and needs as tables, generated from its spec (its folder's specs.py: dtfilm.shots.registry), and
a minimal storyboard to copy: the kind's first shot in the film, alone in a chapter with that
chapter's inputs.

The docs tests check every one of those storyboards (tests/test_kind_gallery.py), so an example
cannot stop loading while the film moves on."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import yaml

from dtfilm.shots import registry  # (the module, not its KINDS: the registry imports this package)
from dtfilm.storyboard.kinds import PICK_KEYS, ROW_KEYS, SHOT_KEYS, SWEEP_KEYS, KindSpec
from dtfilm.storyboard.reference import RESOLVE, kind_flavour, uses_of
from dtfilm.system.yamlsrc import load_yaml

# What a key every shot takes is for (a kind's own keys say it in their kind's doc)
SHOT_KEY_WHAT = {
    "kind": "this kind's name",
    "beat": "the shot's name, unique in its chapter (dp:ring); default: its position and kind",
    "caption": "the words at the bottom of the frame: a template",
    "narration": "what the voice says, with [marks] the drawing waits for: a template",
    "duration": "seconds at the least (the narration may make it longer)",
    "with": "inputs for this shot only, over the chapter's ({cluster.nodes: 2})",
}
SWEEP_KEY_WHAT = {
    "set": "the input the sweep moves (cluster.cards)",
    "values": "2 to 8 values of it, or mappings of inputs moving together",
    "also": "inputs played after the last value",
}
PICK_KEY_WHAT = {"global_batch": "the batch the planner searches within (sequences, or tokens with K/M)"}


def _cell(text: str) -> str:
    """Text for a Markdown table's cell: its bars escaped, on one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def keys_table(spec: KindSpec) -> list[str]:
    rows = ["| key | required | what |", "|---|---|---|"]
    rows += [f"| `{k}` | {'yes' if k == 'kind' else 'no'} | {_cell(SHOT_KEY_WHAT[k])} |" for k in SHOT_KEYS]
    rows += [
        f"| `{k}` | {'yes' if required else 'no'} | this kind's own (see above) |"
        for k, (_, required) in spec.keys.items()
    ]
    if spec.sweep:
        rows += [f"| `{k}` | {'no' if k == 'also' else 'yes'} | {_cell(SWEEP_KEY_WHAT[k])} |" for k in SWEEP_KEYS]
    if spec.rows:
        rows.append(f"| `rows` | yes | a list of {{{', '.join(ROW_KEYS)}}}: one configuration a row |")
    if spec.pick:
        rows += [f"| `{k}` | no | {_cell(PICK_KEY_WHAT[k])} |" for k in PICK_KEYS]
    return rows


def marks_table(spec: KindSpec) -> list[str]:
    if not spec.marks:
        return []
    rows = ["| mark | what shows then |", "|---|---|"]
    return rows + [f"| `[{mark}]` | {_cell(what)} |" for mark, what in spec.marks.items()]


def needs_table(spec: KindSpec) -> list[str]:
    if not (spec.needs or spec.at_most):
        return []
    rows = ["| setting | needs |", "|---|---|"]
    rows += [f"| `{k}` | {v} or more |" if v > 1 else f"| `{k}` | {v} |" for k, v in spec.needs.items()]
    return rows + [f"| `{k}` | {v} at most |" for k, v in spec.at_most.items()]


def kind_example(name: str, film_dir: Path, chapters: list[str]) -> dict[str, Any] | None:
    """A chapter of one shot: the kind's first shot in the film, with its chapter's inputs (the
    keys besides its id, titles, poster and shots); None for a kind the film does not use."""
    for chapter, _, beat in uses_of(name, film_dir, chapters):
        data = load_yaml(film_dir / f"{chapter}.yaml").data
        shot = next(s for s in data["shots"] if isinstance(s, dict) and str(s.get("beat")) == beat)
        inputs = {k: v for k, v in data.items() if k not in ("id", "title", "subtitle", "poster", "shots")}
        title = f"{name.replace('_', ' ').capitalize()}, alone"
        return {"id": f"kind-{name.replace('_', '-')}", "title": title, **inputs, "shots": [shot]}
    return None


def example_yaml(example: dict[str, Any]) -> str:
    return yaml.safe_dump(example, sort_keys=False, allow_unicode=True, width=100)


def all_uses(film_dir: Path, chapters: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each kind the film uses: (chapter, beat) of each of its shots, in the film's order."""
    found: dict[str, list[tuple[str, str]]] = {}
    for name in registry.KINDS:
        shots = [(chapter, beat) for chapter, _, beat in uses_of(name, film_dir, chapters)]
        if shots:
            found[name] = shots
    return found


def kind_section(name: str, film_dir: Path, chapters: list[str], still: tuple[str, str] | None = None) -> str:
    """One kind's part of the gallery, in Markdown; `still`: the URL of its still and the shot it
    shows (chapter:beat), if there is one."""
    spec = registry.KINDS[name]
    uses = list(uses_of(name, film_dir, chapters))
    parts = [f"### `{name}`", "", _cell(spec.summary) + ".", ""]
    if still is not None:
        url, shot = still
        alt = html.escape(f"{name}: the shot {shot} of this film, kept from its render", quote=True)
        parts += [
            f'<img class="dtfilm-kind" src="{html.escape(url, quote=True)}" alt="{alt}"'
            ' width="854" height="480" loading="lazy">',
            "",
        ]
    if spec.doc:
        parts += [_cell(spec.doc), ""]
    parts += ["**Keys**", "", *keys_table(spec), "", f"Templates: {RESOLVE[kind_flavour(spec)]}.", ""]
    if spec.per_step:
        parts += [
            f"Per value: {', '.join(f'`{k}`' for k in spec.per_step)} resolve against each value's configuration.",
            "",
        ]
    if spec.marks:
        parts += ["**Marks** the narration may place, in the order it shows them ([The voice](../voice.md))", ""]
        parts += [*marks_table(spec), ""]
    if spec.needs or spec.at_most:
        parts += ["**Needs** (checked when the chapter loads)", "", *needs_table(spec), ""]
    if spec.takes or spec.hands_on:
        kept = f"keeps {', '.join(spec.takes)} from the shot before when drawn for its values" if spec.takes else ""
        handed = f"hands on {', '.join(spec.hands_on)} to the next shot" if spec.hands_on else ""
        parts += [f"Between shots: {'; '.join(p for p in (kept, handed) if p)}.", ""]
    example = kind_example(name, film_dir, chapters)
    if example is None:
        parts += ["No chapter of this film uses it yet.", ""]
    else:
        where = ", ".join(f"`{c}:{beat}` (storyboard/{c}.yaml:{line})" for c, line, beat in uses)
        parts += [
            f"Used in {where}. The first, alone in a chapter of its own (`dtfilm check` passes it; save it"
            f" as `storyboard/{example['id']}.yaml`):",
            "",
            "```yaml",
            example_yaml(example).rstrip(),
            "```",
            "",
        ]
    return "\n".join(parts)


def gallery_markdown(film_dir: Path, chapters: list[str], stills: dict[str, tuple[str, str]] | None = None) -> str:
    """Every kind's part; `stills`: each kind's still's URL and the shot it shows
    (dtfilm.publish.kind_stills)."""
    stills = stills or {}
    return "\n".join(kind_section(name, film_dir, chapters, stills.get(name)) for name in registry.KINDS)
