"""The MkDocs plugin's public name (`plugins: [dtfilm]`, the entry point in pyproject.toml):
dtfilm.publish.mkdocs."""

from __future__ import annotations

from dtfilm.publish.mkdocs import DtfilmConfig, DtfilmPlugin

__all__ = ["DtfilmConfig", "DtfilmPlugin"]
