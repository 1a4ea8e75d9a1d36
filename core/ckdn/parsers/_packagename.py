"""Package names in parser options (pip_audit's ``allow_skipped = ["name", ...]``).

A config names packages as a person types them (``Foo_Bar``, ``zope.interface``);
a report names them as the tool found them. The option is checked against the
name pattern PEP 508 allows, so a typo like ``"requests>=2"`` is refused when the
config loads instead of never matching, and compared as PEP 503 normalises names.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ckdn.documents.textcap import cut

__all__ = ["first_bad_name", "normalise"]

#: A distribution name as PEP 508 allows it (the pattern pip and packaging use).
_NAME: Final = re.compile(r"(?i:[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])")
_RUNS: Final = re.compile(r"[-_.]+")


def first_bad_name(value: Any) -> str | None:
    """``None`` for a list of package names; else why not (``""`` for a non-list)."""
    if not isinstance(value, list):
        return ""
    for item in value:
        if not isinstance(item, str) or _NAME.fullmatch(item) is None:
            return f" ({cut(repr(item), 60)} is not a package name)"
    return None


def normalise(name: str) -> str:
    """A package name as PEP 503 compares it: runs of ``-_.`` are one ``-``, lower case."""
    return _RUNS.sub("-", name).lower()
