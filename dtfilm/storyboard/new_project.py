"""`dtfilm init [DIR]`: a minimal film project that renders, for a folder of your own.

It writes storyboard/film.yaml (what dtfilm looks for), one chapter, an empty catalog with a
commented example, a .gitignore for renders/ and the caches, and a README with the next three
commands. The files come from the package (dtfilm/data/init/), so a wheel installed anywhere
makes the same project.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from dtfilm.errors import DtfilmError, Where
from dtfilm.system.atomic import write_text_atomic

# each file of the project, and where it lies in the package's template
PROJECT_FILES: dict[str, str] = {
    "storyboard/film.yaml": "storyboard/film.yaml",
    "storyboard/memory.yaml": "storyboard/memory.yaml",
    "storyboard/catalog.yaml": "storyboard/catalog.yaml",
    ".gitignore": "gitignore",
    "README.md": "README.md",
}


def template_text(name: str) -> str:
    return resources.files("dtfilm").joinpath("data", "init", *name.split("/")).read_text(encoding="utf-8")


def init_project(folder: Path, force: bool = False) -> list[Path]:
    """Write a new project into `folder` (made if missing); the files written. A folder that
    holds anything is refused unless `force`, and then only the project's own files are
    written over."""
    if folder.exists() and not folder.is_dir():
        raise DtfilmError("is not a folder; dtfilm init writes a project into a folder", Where(str(folder)))
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise DtfilmError(
            "is not empty; dtfilm init writes into an empty or new folder (--force writes its files over"
            " what is there, leaving everything else)",
            Where(str(folder)),
        )
    title = _title(folder)
    written = []
    for target, source in PROJECT_FILES.items():
        text = template_text(source)
        if target == "README.md":
            text = text.replace("{title}", title)
        path = folder / target
        try:
            write_text_atomic(path, text)
        except OSError as error:
            raise DtfilmError(f"cannot be written ({error.strerror or error})", Where(str(path))) from None
        written.append(path)
    return written


def _title(folder: Path) -> str:
    name = folder.resolve().name.replace("-", " ").replace("_", " ").strip()
    return name[:1].upper() + name[1:] if name else "My film"
