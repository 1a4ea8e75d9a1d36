"""The never-raise guard's first home, kept for plugins that import it from here."""

from __future__ import annotations

from ckdn.parsers.base import crash_result, guarded

__all__ = ["crash_result", "guarded"]
