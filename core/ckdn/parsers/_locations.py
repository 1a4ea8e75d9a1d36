"""A report's file names as locations show them: relative to the check's cwd.

A report names each file many times (40 diagnostics a file is common), and
``os.path.relpath`` per finding was a third of re-reading 100,000 ruff
diagnostics, so each (cwd, path) is worked out once (a bounded table).
"""

from __future__ import annotations

import os

__all__ = ["shown_path"]

#: (cwd, path) -> the path as locations show it (a report names each file many times).
_SHOWN: dict[tuple[str, str], str] = {}


def shown_path(text: str, cwd: str) -> str:
    """``text`` relative to ``cwd`` with forward slashes (absolute when outside it)."""
    if (cwd, text) in _SHOWN:
        return _SHOWN[cwd, text]
    shown = text
    if os.path.isabs(text):
        absolute = os.path.normpath(text)
        try:
            shown = os.path.relpath(absolute, cwd)
        except ValueError:  # another drive on Windows
            shown = absolute
        if shown.startswith(".." + os.sep) and not os.path.exists(os.path.join(cwd, shown)):
            shown = absolute
    shown = shown.replace(os.sep, "/").removeprefix("./")
    if len(_SHOWN) >= 4096:  # bounded: a report naming a new file per finding
        _SHOWN.clear()
    _SHOWN[cwd, text] = shown
    return shown
