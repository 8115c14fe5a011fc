"""The shot-kind gallery's stills, kept from a render: the still a render keeps of each shot
(the manifest's `still` of the shot: its frame just before its caption leaves), copied into the
built site for the kind's first use in the film. Only from a chapter whose clip is fresh (a
stale one would show what the storyboard no longer draws); a kind without one shows none.

The manifest and the stills are read back as untrusted (dtfilm.beneath: no link followed, a
regular file of bounded size, beneath the renders folder)."""

from __future__ import annotations

from pathlib import Path

from dtfilm import beneath
from dtfilm.errors import DtfilmError
from dtfilm.publish.docs_embed import BUILD_FOLDER, COPY_LIMITS_BYTES
from dtfilm.render.cache import clip_stale_reasons, read_manifest

STILLS_FOLDER = "kinds"  # under the site's BUILD_FOLDER


def kept_stills(root: Path, renders: Path, uses: dict[str, list[tuple[str, str]]]) -> dict[str, tuple[str, str]]:
    """Each kind's still, as (its path under `renders`, the shot chapter:beat it shows): from
    the first of its uses (chapter, beat) in a fresh render that kept one."""
    manifest = read_manifest(renders)
    fresh: dict[str, bool] = {}
    found = {}
    for kind, shots in uses.items():
        for chapter, beat in shots:
            if chapter not in fresh:
                try:
                    fresh[chapter] = not clip_stale_reasons(root, renders, chapter)
                except DtfilmError:
                    fresh[chapter] = False
            entry = manifest["chapters"].get(chapter)
            if not fresh[chapter] or not isinstance(entry, dict):
                continue
            shot = next((s for s in entry.get("shots", []) if isinstance(s, dict) and s.get("beat") == beat), None)
            still = shot.get("still") if shot else None
            if isinstance(still, str) and still.endswith(".png"):
                found[kind] = (still, f"{chapter}:{beat}")
                break
    return found


def still_url(kind: str) -> str:
    """Where a kind's still is in the built site, from the site's root."""
    return f"{BUILD_FOLDER}/{STILLS_FOLDER}/{kind}.png"


def copy_stills(renders: Path, stills: dict[str, tuple[str, str]], site: Path) -> list[str]:
    """The stills into the site; a link, a FIFO, a file too large or a path out of the renders
    folder is not copied: returned as a warning line."""
    (site / BUILD_FOLDER / STILLS_FOLDER).mkdir(parents=True, exist_ok=True)
    warnings = []
    for kind, (rel, _) in stills.items():
        try:
            beneath.copy_out(renders, rel, site / still_url(kind), COPY_LIMITS_BYTES["png"])
        except beneath.Refused as refused:
            warnings.append(f"{refused.shown}: {refused.what}; not copied into the site")
        except FileNotFoundError:
            warnings.append(f"{renders / rel}: the render's still is missing (dtfilm render --force)")
    return warnings
