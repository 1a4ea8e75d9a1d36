"""Every finding's identity as the parser reports it, packed: 42 bytes a finding."""

from __future__ import annotations

import struct

from ckdn.identity._fingerprint import _PRIMARY_BYTES, _SECONDARY_AT, Hasher, _primary

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.identity._fingerprint import FindingLike, SourceLines

__all__ = ["IdentityTable"]

# A report of 100,000 findings must not be held whole to be matched against a
# baseline or written to ``findings.jsonl``: a :class:`Finding` is about 200 bytes
# and its :class:`~ckdn.identity.Fingerprinted` 160 more. The table takes each
# finding as the parser reports it (:meth:`IdentityTable.add`, the parse's tap),
# keeps only its hashes, line and path number in one ``bytearray``, and numbers
# the occurrences once every finding is in (:meth:`IdentityTable.number`:
# occurrences are counted in location order, so the last finding of a file can
# change the first one's index). Rows are read back by position; the hex forms
# are made only when a fingerprint is written.

#: inner (16), primary (12), secondary (6), line (4), path number (4)
ROW = 42
_PRIMARY_END = _SECONDARY_AT
_SECONDARY_END = 34
_MAX_LINE = (1 << 32) - 1
_PACK = struct.Struct(">II").pack


class IdentityTable:
    """The identities of a run's findings, in the order they were added."""

    __slots__ = ("_hasher", "_occurrences", "_path_numbers", "_paths", "_rows")

    def __init__(self, source: SourceLines) -> None:
        self._hasher = Hasher(source)
        self._rows = bytearray()
        self._paths: list[str] = []
        self._path_numbers: dict[str, int] = {}
        self._occurrences: list[int] | None = None

    def __len__(self) -> int:
        return len(self._rows) // ROW

    def add(self, finding: FindingLike) -> None:
        key, path, line = self._hasher.hashes(finding)
        number = self._path_numbers.get(path)
        if number is None:
            number = self._path_numbers[path] = len(self._paths)
            self._paths.append(path)
        self._rows += key + _PACK(min(line, _MAX_LINE), number)
        self._occurrences = None

    def number(self) -> None:
        """Give each finding its occurrence among those sharing its primary hash, in line
        order (the tool's order for equal lines), as :func:`fingerprints` does."""
        rows = self._rows
        count = len(self)
        # primary, line, position: sorting these orders each group by line, stably
        keys = sorted(rows[at + 16:at + _PRIMARY_END] + rows[at + 34:at + 38]
                      + index.to_bytes(4, "big")
                      for index, at in enumerate(range(0, count * ROW, ROW)))
        occurrences = [0] * count
        previous: bytes | bytearray = b""
        run = 0
        for key in keys:
            primary = key[:_PRIMARY_BYTES]
            run = run + 1 if primary == previous else 0
            previous = primary
            occurrences[int.from_bytes(key[-4:], "big")] = run
        self._occurrences = occurrences

    def _occurrence(self, index: int) -> int:
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        return self._occurrences[index]

    def key(self, index: int) -> bytes:
        """Primary hash and occurrence: what the exact matching pass looks up."""
        at = index * ROW
        return bytes(self._rows[at + 16:at + _PRIMARY_END]) + self._occurrence(index).to_bytes(
            4, "big")

    def key_at_zero(self, index: int) -> bytes:
        """The key of the first occurrence of this finding's primary hash (known before
        the occurrences are numbered: whether a baseline has any entry like it)."""
        at = index * ROW
        return bytes(self._rows[at + 16:at + _PRIMARY_END]) + bytes(4)

    def secondary(self, index: int) -> bytes:
        at = index * ROW
        return bytes(self._rows[at + _PRIMARY_END:at + _SECONDARY_END])

    def path(self, index: int) -> str:
        at = index * ROW + 38
        return self._paths[int.from_bytes(self._rows[at:at + 4], "big")]

    def line(self, index: int) -> int:
        at = index * ROW + 34
        return int.from_bytes(self._rows[at:at + 4], "big")

    def retried(self, index: int, path: str) -> bytes:
        """The key this finding would have had at ``path`` (a renamed file)."""
        at = index * ROW
        return _primary(bytes(self._rows[at:at + 16]), path) + self._occurrence(index).to_bytes(
            4, "big")

    def line_hash(self, index: int) -> str:
        """The hash of rule and content without the path (:attr:`FindingRow.line_hash`)."""
        at = index * ROW
        return self._rows[at:at + 16].hex()

    def fingerprint(self, index: int) -> str:
        """``PRIMARY:OCCURRENCE:SECONDARY``, as :attr:`Fingerprinted.fingerprint`."""
        at = index * ROW
        rows = self._rows
        return (f"{rows[at + 16:at + _PRIMARY_END].hex()}:{self._occurrence(index)}:"
                f"{rows[at + _PRIMARY_END:at + _SECONDARY_END].hex()}")
