"""What an importer makes of another tool's file: facts, the producer as sniffed, and the
residue counted (seed 004: an import is visibly weaker, and says what it did not understand).
"""

from __future__ import annotations

import os

from ckdn.errors import UsageError
from ckdn.parsers.base import ParseContext, ParseResult, cap_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ImportRefused", "Imported", "Tally", "declared_mismatch", "place"]


class ImportRefused(UsageError):
    """The file is not one ckdn reads as that format (or is unsafe): nothing is imported."""


class Tally:
    """``import_summary``: every record the file holds is read, and either attached (it became
    an outcome or a finding with a place) or unattached for a named reason, so
    ``read == attached + sum(unattached_by_reason)`` always."""

    __slots__ = ("attached", "read", "unattached")

    def __init__(self) -> None:
        self.read = 0
        self.attached = 0
        self.unattached: dict[str, int] = {}

    def attach(self, count: int = 1) -> None:
        self.read += count
        self.attached += count

    def leave(self, reason: str, count: int = 1) -> None:
        self.read += count
        self.unattached[reason] = self.unattached.get(reason, 0) + count

    def count(self, reason: str | None) -> None:
        """Attach, or leave for ``reason`` when there is one."""
        if reason is None:
            self.attach()
        else:
            self.leave(reason)

    def summary(self) -> dict[str, Any]:
        return {"read": self.read, "attached": self.attached,
                "unattached_by_reason": dict(sorted(self.unattached.items()))}


class Imported:
    """One imported file's facts. ``cases`` counts the units the file says were checked
    (testcases, files, runs, diagnostics): zero is never green. ``mismatch`` says how the
    file's own declared totals disagree with what was read (None when they agree or the
    format declares none)."""

    __slots__ = ("cases", "format", "mismatch", "producer", "result", "tally", "variant")

    def __init__(self, *, format: str, variant: str, producer: str, result: ParseResult,
                 cases: int, tally: Tally, mismatch: str | None = None) -> None:
        self.format = format
        self.variant = variant
        self.producer = producer or "unknown"
        self.result = result
        self.cases = cases
        self.tally = tally
        self.mismatch = None if mismatch is None else cap_line(mismatch, 400)


def place(ctx: ParseContext, path: object, line: object = None,
          col: object = None) -> tuple[str | None, str | None]:
    """A finding's ``location`` from a file's path and position, and why it stays
    unattached (no path; a path outside the project) or None."""
    if not isinstance(path, str) or not path:
        return None, "no_location"
    text = path.removeprefix("file://")
    location = ctx.location(text, _int(line), _int(col))
    shown = location.split(":", 1)[0]
    if os.path.isabs(shown) or shown.startswith("../"):
        return location, "outside_project"
    return location, None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) < 10:
        return int(value)
    return None


def declared_mismatch(what: str, declared: dict[str, object], read: dict[str, int]) -> str | None:
    """The first total ``what`` declares that disagrees with what was read, worded; None
    when every declared total agrees (a total not declared is not compared)."""
    for key, count in read.items():
        if key not in declared:
            continue
        value = declared[key]
        number = _int(value) if not isinstance(value, float) else None
        if isinstance(value, float) and value.is_integer():
            number = int(value)
        if number != count:
            return f"{what} declares {key}={cap_line(str(value), 40)} but {count} were read"
    return None

