"""Matching this run's findings to a baseline's fingerprints, in passes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ckdn.identity._fingerprint import Fingerprinted, retried_head, split_location

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Protocol

    from ckdn.identity._findings_file import FindingRow

__all__ = ["RECORD", "BaselineIndex", "Listed", "Matched", "Rowed", "match"]

# 1. **exact**: the same primary hash and occurrence (rule, path, flagged line's
#    content): lines inserted above, reindentation, a reworded message;
# 2. **renamed**: a finding in a file git says was renamed (``git mv``, or a rename
#    in recent history) is tried under the old path;
# 3. **same message**: what is left, by rule, path and normalised message, as
#    many as the baseline had (PHPStan's count): the flagged line itself was
#    edited. A second copy of a known finding finds no entry left here.
#
# Whatever baseline entry is left over is stale: a fixed finding.


if TYPE_CHECKING:  # a type checker's alone: the two shapes are never told apart at run time
    class Identities(Protocol):
        """What matching reads of a run's identities, by position: a list of
        :class:`Fingerprinted` or an :class:`~ckdn.identity.IdentityTable`."""

        def __len__(self) -> int: ...
        def key(self, index: int) -> bytes: ...
        def secondary(self, index: int) -> bytes: ...
        def path(self, index: int) -> str: ...
        def retried(self, index: int, path: str) -> bytes: ...


class Listed:
    """A list of :class:`Fingerprinted` read as :class:`Identities` (and, with ``line``, as
    the diff gate's ``Placeable``)."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Fingerprinted]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def key(self, index: int) -> bytes:
        item = self.items[index]
        return bytes.fromhex(item.primary) + item.occurrence.to_bytes(4, "big")

    def secondary(self, index: int) -> bytes:
        return bytes.fromhex(self.items[index].secondary)

    def path(self, index: int) -> str:
        return self.items[index].path

    def line(self, index: int) -> int:
        return self.items[index].line

    def columns(self) -> tuple[list[bytes], list[int], list[bytes], list[str], list[int]]:
        """Primary hashes, occurrences, secondary hashes, paths and lines, as
        :meth:`~ckdn.identity.IdentityTable.columns` gives them."""
        items = self.items
        packed = [item.packed for item in items]
        return ([key[16:28] for key in packed], [item.occurrence for item in items],
                [key[28:] for key in packed], [item.path for item in items],
                [item.line for item in items])

    def retried(self, index: int, path: str) -> bytes:
        item = self.items[index]
        return bytes.fromhex(item.retried(path)) + item.occurrence.to_bytes(4, "big")


class Rowed:
    """Rows of a stored ``findings.jsonl`` read as :class:`Identities` (``ckdn baseline
    --prune`` of a run it just sealed): a row without a line hash is not retried."""

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[FindingRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def key(self, index: int) -> bytes:
        primary, occurrence, _ = self.rows[index].fingerprint.split(":")
        return bytes.fromhex(primary) + int(occurrence).to_bytes(4, "big")

    def secondary(self, index: int) -> bytes:
        return bytes.fromhex(self.rows[index].fingerprint.rpartition(":")[2])

    def path(self, index: int) -> str:
        return split_location(self.rows[index].location)[0]

    def retried(self, index: int, path: str) -> bytes:
        row = self.rows[index]
        if not row.line_hash:
            return b""
        primary, occurrence = retried_head(row.line_hash, path, row.fingerprint).split(":")
        return bytes.fromhex(primary) + int(occurrence).to_bytes(4, "big")


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


_SECONDARY = 6
#: A packed fingerprint: primary (12 bytes), occurrence (4), secondary (6).
RECORD = 16 + _SECONDARY


class BaselineIndex:
    """A check's baseline entries by primary hash and occurrence (16 bytes), each with
    the secondary hashes of the entries under it (6 bytes each: a hand-merged file
    may hold one twice). About 100 bytes an entry, a third of the entry strings."""

    __slots__ = ("entries",)

    def __init__(self, entries: Iterable[str] = ()) -> None:
        index: dict[bytes, bytes] = {}
        for entry in entries:
            head, sep, secondary = entry.rpartition(":")
            primary, sep2, occurrence = head.partition(":")
            try:
                key = bytes.fromhex(primary) + int(occurrence).to_bytes(4, "big")
                tail = bytes.fromhex(secondary)
            except (ValueError, OverflowError):
                continue  # not a fingerprint (read_baseline refuses a file holding one)
            if not (sep and sep2) or len(tail) != _SECONDARY:
                continue
            index[key] = index.get(key, b"") + tail
        self.entries = index

    @classmethod
    def from_records(cls, data: bytes) -> BaselineIndex:
        """The index of packed fingerprints (:data:`RECORD` bytes each: primary, occurrence,
        secondary, as :meth:`~ckdn.identity.IdentityTable.records` packs them)."""
        if len(data) % RECORD:
            raise ValueError("not a whole number of fingerprint records")
        index: dict[bytes, bytes] = {}
        get = index.get
        for at in range(0, len(data), RECORD):
            key = data[at:at + 16]
            index[key] = get(key, b"") + data[at + 16:at + RECORD]
        made = cls()
        made.entries = index
        return made

    def primaries(self) -> set[bytes]:
        """The primary hashes the baseline holds (a finding without one is new unless a
        rename or its message explains it)."""
        return {key[:-4] for key in self.entries}

    def take(self, key: bytes) -> bool:
        found = self.entries.get(key)
        if not found:
            return False
        if len(found) > _SECONDARY:  # the last one, as ``ckdn diff``'s pairing does
            self.entries[key] = found[:-_SECONDARY]
        else:
            del self.entries[key]
        return True

    def left(self) -> list[str]:
        """What nothing took, as fingerprints, sorted: the stale entries."""
        return sorted(f"{key[:-4].hex()}:{int.from_bytes(key[-4:], 'big')}:"
                      f"{tails[at:at + _SECONDARY].hex()}"
                      for key, tails in self.entries.items()
                      for at in range(0, len(tails), _SECONDARY))


def match(entries: Iterable[str] | BaselineIndex,
          current: Sequence[Fingerprinted] | Identities,
          renames: Mapping[str, Sequence[str]] | Callable[[], Mapping[str, Sequence[str]]]
          | None = None) -> Matched:
    """Match ``current`` against the baseline ``entries`` (see the module); an index given
    is used up. ``renames`` may be a function, asked only when the exact pass leaves
    both findings and entries over (only then can a rename explain one: git is not
    started for a run the baseline knows whole)."""
    index = entries if isinstance(entries, BaselineIndex) else BaselineIndex(entries)
    found: Identities = Listed(current) if isinstance(current, Sequence) else current
    count = len(found)
    known = [False] * count
    by_pass = {"exact": 0, "renamed": 0, "message": 0}
    take = index.take
    for position in range(count):
        if take(found.key(position)):
            known[position] = True
            by_pass["exact"] += 1
    if callable(renames):
        renames = renames() if index.entries and not all(known) else None
    if renames and index.entries:
        for position in range(count):
            if known[position]:
                continue
            for old in renames.get(found.path(position), ()):
                if take(found.retried(position, old)):
                    known[position] = True
                    by_pass["renamed"] += 1
                    break
    if index.entries and not all(known):
        by_secondary: dict[bytes, list[bytes]] = {}
        for key, tails in index.entries.items():
            for at in range(0, len(tails), _SECONDARY):
                by_secondary.setdefault(tails[at:at + _SECONDARY], []).append(key)
        for position in range(count):
            if known[position]:
                continue
            candidates = by_secondary.get(found.secondary(position))
            if candidates:
                _drop(index, candidates.pop(), found.secondary(position))
                known[position] = True
                by_pass["message"] += 1
    return Matched(known, index.left(), by_pass)


def _drop(index: BaselineIndex, key: bytes, secondary: bytes) -> None:
    """Take the entry ``key`` whose secondary hash is ``secondary``."""
    tails = index.entries[key]
    for at in range(0, len(tails), _SECONDARY):
        if tails[at:at + _SECONDARY] == secondary:
            rest = tails[:at] + tails[at + _SECONDARY:]
            if rest:
                index.entries[key] = rest
            else:
                del index.entries[key]
            return
