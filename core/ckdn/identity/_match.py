"""Matching this run's findings to a baseline's fingerprints, in passes.

1. **exact**: the same primary hash and occurrence (rule, path, flagged line's
   content): lines inserted above, reindentation, a reworded message;
2. **renamed**: a finding in a file git says was renamed (``git mv``, or a rename
   in recent history) is tried under the old path;
3. **same message**: what is left, by rule, path and normalised message, as
   many as the baseline had (PHPStan's count): the flagged line itself was
   edited. A second copy of a known finding finds no entry left here.

Whatever baseline entry is left over is stale: a fixed finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ckdn.identity._fingerprint import Fingerprinted

__all__ = ["Matched", "match"]


class Matched:
    """Which findings the baseline knows (by position), and the entries nothing matched."""

    __slots__ = ("by_pass", "known", "stale")

    def __init__(self, known: list[bool], stale: list[str], by_pass: dict[str, int]) -> None:
        self.known = known
        self.stale = stale
        self.by_pass = by_pass

    @property
    def new(self) -> int:
        return self.known.count(False)


def _split(entry: str) -> tuple[str, str] | None:
    """``(primary:occurrence, secondary)`` of a fingerprint; None when it is not one."""
    head, sep, secondary = entry.rpartition(":")
    return (head, secondary) if sep and head else None


def match(entries: Iterable[str], current: Sequence[Fingerprinted],
          renames: Mapping[str, Sequence[str]] | None = None) -> Matched:
    """Match ``current`` against the baseline ``entries`` (see the module)."""
    remaining: dict[str, list[str]] = {}  # primary:occurrence -> entries
    for entry in entries:
        split = _split(entry)
        if split is not None:
            remaining.setdefault(split[0], []).append(entry)
    known = [False] * len(current)
    by_pass = {"exact": 0, "renamed": 0, "message": 0}

    def take(key: str) -> bool:
        found = remaining.get(key)
        if not found:
            return False
        found.pop()
        if not found:
            del remaining[key]
        return True

    for index, item in enumerate(current):
        if take(f"{item.primary}:{item.occurrence}"):
            known[index] = True
            by_pass["exact"] += 1
    if renames:
        for index, item in enumerate(current):
            if known[index]:
                continue
            for old in renames.get(item.path, ()):
                if take(f"{item.retried(old)}:{item.occurrence}"):
                    known[index] = True
                    by_pass["renamed"] += 1
                    break
    if any(not k for k in known) and remaining:
        by_secondary: dict[str, list[tuple[str, str]]] = {}
        for key, group in remaining.items():
            for entry in group:
                by_secondary.setdefault(entry.rpartition(":")[2], []).append((key, entry))
        for index, item in enumerate(current):
            if known[index]:
                continue
            candidates = by_secondary.get(item.secondary)
            if candidates:
                key, entry = candidates.pop()
                group = remaining[key]
                group.remove(entry)
                if not group:
                    del remaining[key]
                known[index] = True
                by_pass["message"] += 1
    stale = sorted(entry for group in remaining.values() for entry in group)
    return Matched(known, stale, by_pass)
