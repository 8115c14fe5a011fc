"""The Sphinx extension's public name, `extensions = ["dtfilm.sphinx"]`: dtfilm.publish.sphinx."""

from __future__ import annotations

from dtfilm.publish.sphinx import DtfilmDirective, setup

__all__ = ["DtfilmDirective", "setup"]
