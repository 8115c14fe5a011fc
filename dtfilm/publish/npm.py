"""Files from npm packages, fetched once from the npm registry with `npm pack` and cached
(~/.cache/dtfilm/NAME-VERSION/): reveal.js for the slides, axe-core for the page's checks.
Nothing is fetched at view time: the pages that use them bundle a copy."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from dtfilm.errors import DtfilmError, Where
from dtfilm.system.machine import machine_cache


def package_cache(name: str, version: str) -> Path:
    return machine_cache() / f"{name}-{version}"


def is_whole(folder: Path, files: tuple[str, ...]) -> bool:
    """Whether the cache holds every file asked for."""
    return all((folder / name).is_file() for name in files)


def publish_folder(staging: Path, folder: Path, files: tuple[str, ...]) -> None:
    """`staging` copied to `folder` whole or not at all: two builds at once on a cold cache each
    fetch the package; the first renamed into place stays, and neither ever reads the other's
    half-copied folder (a copy then a rename; an incomplete folder from before is moved aside)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    shutil.copytree(staging, fresh, dirs_exist_ok=True)
    if folder.exists() and not is_whole(folder, files):
        aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
        with contextlib.suppress(OSError):
            os.replace(folder, aside / folder.name)
        shutil.rmtree(aside, ignore_errors=True)
    try:
        os.rename(fresh, folder)
    except OSError:  # another process put its whole copy there first
        shutil.rmtree(fresh, ignore_errors=True)


def npm_package(name: str, version: str, files: tuple[str, ...], purpose: str) -> Path:
    """The folder holding `files` of the package, fetched with npm the first time. `purpose`
    says in an error what needs it ("the deck bundles")."""
    folder = package_cache(name, version)
    if is_whole(folder, files):
        return folder
    npm = shutil.which("npm")
    if npm is None:
        raise DtfilmError(
            f"{purpose} {name} {version} from the npm registry, and npm is not installed; install it (apt install npm)",
            Where(flag=name),
        )
    with tempfile.TemporaryDirectory() as temp:
        done = subprocess.run(
            [npm, "pack", f"{name}@{version}", "--silent", "--pack-destination", temp],
            capture_output=True,
            text=True,
            timeout=300,
        )
        tarballs = list(Path(temp).glob(f"{name}-*.tgz"))
        if done.returncode != 0 or not tarballs:
            raise DtfilmError(f"npm could not fetch {name} {version}: {done.stderr.strip()[-300:]}", Where(npm))
        with tarfile.open(tarballs[0]) as archive:
            archive.extractall(temp, filter="data")
        staging = Path(temp) / "bundle"
        for file in files:
            (staging / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(temp) / "package" / file, staging / file)
        publish_folder(staging, folder, files)
    return folder
