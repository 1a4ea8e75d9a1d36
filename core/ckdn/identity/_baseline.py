"""Known findings: the baseline file (``ckdn.baseline/1``), the index it is read into, and
matching a run's findings against known ones (a baseline's, or an earlier run's for diff).
"""

from __future__ import annotations

import json
import os
import re
import struct
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

from ckdn.errors import ConfigError
from ckdn.evidence_files import NotRegular, open_regular, read_regular
from ckdn.identity._fingerprint import Fingerprinted, retried_head, split_location
from ckdn.store import write_atomic

__all__ = ["POLICY", "RECORD", "SCHEMA_BASELINE", "BaselineFile", "BaselineIndex", "Listed",
           "Matched", "Rowed", "decide", "match", "read_baseline", "read_index", "worst_gate",
           "write_baseline"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import BinaryIO, Protocol

    from ckdn.documents.types import GateDoc
    from ckdn.identity._findings_file import FindingRow

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
        def keys(self) -> Iterable[bytes]: ...
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

    def keys(self) -> Iterable[bytes]:
        return map(self.key, range(len(self.items)))

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

    def keys(self) -> Iterable[bytes]:
        return map(self.key, range(len(self.rows)))

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
    """Which findings the baseline knows (by position: ``flags``, one byte each, 1 for
    known), and the entries nothing matched."""

    __slots__ = ("by_pass", "flags", "stale")

    def __init__(self, flags: bytearray, stale: list[str], by_pass: dict[str, int]) -> None:
        self.flags = flags
        self.stale = stale
        self.by_pass = by_pass

    @property
    def known(self) -> list[bool]:
        """The flags as a list (a million findings: 8 MB; :attr:`flags` is 1 MB)."""
        return [bool(flag) for flag in self.flags]

    @property
    def new(self) -> int:
        return self.flags.count(0)


_SECONDARY = 6
#: A packed fingerprint: primary (12 bytes), occurrence (4), secondary (6).
RECORD = 16 + _SECONDARY
_KEY = 16
#: Up to this many entries the index is a dict (the fastest look-up); past it, packed
#: (a million entries in a dict were 100 MB).
DICT_UP_TO = 1 << 17
_RECORD_SPLIT = struct.Struct("16s6s")
_BUCKET_OF = struct.Struct(">I12x")


class BaselineIndex:
    """A check's baseline entries, packed: their keys (primary hash and occurrence, 16
    bytes) in one buffer ordered by the key's first bits, their secondary hashes (6
    bytes) in another, a taken flag each, and where each bucket of first bits starts
    (one entry a bucket on average), so a million entries are about 30 MB, not 200.

    Entries under one key (a hand-merged file may hold one twice) keep the file's order,
    and each pass takes them as ``ckdn diff``'s pairing does (:func:`~ckdn.identity.pair`).
    :attr:`entries` (the diff gate's placing edits them) turns the index into a dict.
    """

    __slots__ = ("_dict", "_keys", "_left", "_origins", "_shift", "_starts", "_tails",
                 "_taken")

    def __init__(self, entries: Iterable[str] = ()) -> None:
        keys = bytearray()
        tails = bytearray()
        for entry in entries:
            head, sep, secondary = entry.rpartition(":")
            primary, sep2, occurrence = head.partition(":")
            try:
                key = bytes.fromhex(primary) + int(occurrence).to_bytes(4, "big")
                tail = bytes.fromhex(secondary)
            except (ValueError, OverflowError):
                continue  # not a fingerprint (read_baseline refuses a file holding one)
            if not (sep and sep2) or len(tail) != _SECONDARY or len(key) != _KEY:
                continue
            keys += key
            tails += tail
        self._pack(keys, tails)

    @classmethod
    def packed(cls, keys: bytes | bytearray, tails: bytes | bytearray) -> BaselineIndex:
        """The index of ``keys`` (16 bytes each) and their ``tails`` (6 bytes each), in the
        file's order (what :func:`~ckdn.identity.read_index` streams)."""
        made = cls.__new__(cls)
        made._pack(keys, tails)
        return made

    @classmethod
    def from_records(cls, data: bytes) -> BaselineIndex:
        """The index of packed fingerprints (:data:`RECORD` bytes each: primary, occurrence,
        secondary, as :meth:`~ckdn.identity.IdentityTable.records` packs them)."""
        if len(data) % RECORD:
            raise ValueError("not a whole number of fingerprint records")
        split = _RECORD_SPLIT.iter_unpack
        return cls.packed(b"".join(key for key, _ in split(data)),
                          b"".join(tail for _, tail in split(data)))

    def _pack(self, keys: bytes | bytearray, tails: bytes | bytearray) -> None:
        count = len(keys) // _KEY
        if count <= DICT_UP_TO:  # a dict looks up in C, at 100 bytes an entry
            self._as_dict(keys, tails)
            return
        bits = max(4, (count - 1).bit_length())
        self._shift = 32 - bits
        shift = self._shift
        buckets = array("I", (value >> shift for (value,) in _BUCKET_OF.iter_unpack(keys)))
        origins: array[int] | None = None
        if any(a > b for a, b in pairwise(buckets)):  # a file sorted by hand is not
            order = sorted(range(count), key=buckets.__getitem__)  # stable: the file's order
            keys = b"".join(keys[at * _KEY:at * _KEY + _KEY] for at in order)
            tails = b"".join(tails[at * _SECONDARY:at * _SECONDARY + _SECONDARY]
                             for at in order)
            buckets = array("I", (buckets[at] for at in order))
            origins = array("I", order)
            del order
        starts = array("I", bytes(4 * ((1 << bits) + 1)))
        for bucket in buckets:
            starts[bucket + 1] += 1
        total = 0
        for at, size in enumerate(starts):
            total += size
            starts[at] = total
        self._keys = bytes(keys)
        self._tails = bytes(tails)
        self._taken = bytearray(count)
        self._starts = starts
        self._origins = origins
        self._left = count
        self._dict: dict[bytes, bytes] | None = None

    def _as_dict(self, keys: bytes | bytearray, tails: bytes | bytearray) -> None:
        keys, tails = bytes(keys), bytes(tails)
        count = len(keys) // _KEY
        # each key once (a file made by ckdn): the dict is made in C
        made = dict(zip(map(keys.__getitem__, map(slice, range(0, count * _KEY, _KEY),
                                                  range(_KEY, count * _KEY + 1, _KEY))),
                        map(tails.__getitem__,
                            map(slice, range(0, count * _SECONDARY, _SECONDARY),
                                range(_SECONDARY, count * _SECONDARY + 1, _SECONDARY))),
                        strict=True))
        if len(made) != count:  # a key twice (a hand-merged file): its tails in order
            made = {}
            get = made.get
            for at in range(count):
                key = keys[at * _KEY:at * _KEY + _KEY]
                made[key] = get(key, b"") + tails[at * _SECONDARY:at * _SECONDARY + _SECONDARY]
        self._keys = self._tails = b""
        self._taken = bytearray()
        self._starts = array("I")
        self._origins = None
        self._left = 0
        self._shift = 32
        self._dict = made

    @property
    def entries(self) -> dict[bytes, bytes]:
        """What is left, as key -> secondary hashes (6 bytes each) in the file's order of
        first appearance; from then on the index is that dict (the diff gate edits it)."""
        if self._dict is None:
            made: dict[bytes, bytes] = {}
            for at in self._in_file_order():
                key = self._keys[at * _KEY:at * _KEY + _KEY]
                if not self._taken[at]:
                    made[key] = made.get(key, b"") + self._tail(at)
                elif key not in made:
                    made[key] = b""  # holds the key's place in the file's order
            self._dict = {key: tails for key, tails in made.items() if tails}
        return self._dict

    def __len__(self) -> int:
        """The entries not taken."""
        if self._dict is not None:
            return sum(len(tails) // _SECONDARY for tails in self._dict.values())
        return self._left

    def __contains__(self, key: object) -> bool:
        """Whether an entry not taken has this key."""
        if self._dict is not None:
            return key in self._dict
        if not isinstance(key, bytes) or len(key) != _KEY:
            return False
        return self._find(key, last=True) >= 0

    def _in_file_order(self) -> Iterable[int]:
        count = len(self._taken)
        if self._origins is None:
            return range(count)
        where = array("I", bytes(4 * count))
        for at, origin in enumerate(self._origins):
            where[origin] = at
        return where

    def _tail(self, at: int) -> bytes:
        return self._tails[at * _SECONDARY:at * _SECONDARY + _SECONDARY]

    def _find(self, key: bytes, *, last: bool, secondary: bytes = b"") -> int:
        """The position of the last (or first) entry not taken with ``key`` (and
        ``secondary``), or -1: a search of the key's bucket in C (one entry on average)."""
        bucket = int.from_bytes(key[:4], "big") >> self._shift
        low, high = self._starts[bucket] * _KEY, self._starts[bucket + 1] * _KEY
        keys, taken = self._keys, self._taken
        at = keys.rfind(key, low, high) if last else keys.find(key, low, high)
        while at >= 0:
            if not at % _KEY and not taken[at // _KEY] \
                    and (not secondary or self._tail(at // _KEY) == secondary):
                return at // _KEY
            at = keys.rfind(key, low, at + _KEY - 1) if last else keys.find(key, at + 1, high)
        return -1

    def primaries(self) -> set[bytes]:
        """The primary hashes the baseline holds (a finding without one is new unless a
        rename or its message explains it)."""
        if self._dict is not None:
            return {key[:-4] for key in self._dict}
        keys = self._keys
        return {keys[at * _KEY:at * _KEY + 12] for at in range(len(self._taken))
                if not self._taken[at]}

    def take(self, key: bytes) -> bool:
        """Take the last entry with ``key``, as ``ckdn diff``'s pairing does."""
        if self._dict is not None:
            found = self._dict.get(key)
            if not found:
                return False
            if len(found) > _SECONDARY:
                self._dict[key] = found[:-_SECONDARY]
            else:
                del self._dict[key]
            return True
        if len(key) != _KEY:
            return False
        at = self._find(key, last=True)
        if at < 0:
            return False
        self._taken[at] = 1
        self._left -= 1
        return True

    def take_all(self, keys: Iterable[bytes], flags: bytearray) -> int:
        """:meth:`take` of each key in turn, its flag set to 1 when taken; how many were."""
        taken = 0
        if self._dict is None:
            take = self.take
            for position, key in enumerate(keys):
                if take(key):
                    flags[position] = 1
                    taken += 1
            return taken
        entries = self._dict
        get = entries.get
        for position, key in enumerate(keys):
            found = get(key)
            if found:
                flags[position] = 1
                taken += 1
                if len(found) > _SECONDARY:  # the last one taken, the others left in order
                    entries[key] = found[:-_SECONDARY]
                else:
                    del entries[key]
        return taken

    def by_secondary(self) -> dict[bytes, list[bytes]]:
        """Secondary hash -> the keys of the entries left with it, the last to be taken
        last in the list (by the key's first appearance, then the file's order)."""
        if self._dict is not None:
            out: dict[bytes, list[bytes]] = {}
            for key, tails in self._dict.items():
                for at in range(0, len(tails), _SECONDARY):
                    out.setdefault(tails[at:at + _SECONDARY], []).append(key)
            return out
        keys, taken, origins, starts = self._keys, self._taken, self._origins, self._starts
        ranked: dict[bytes, list[tuple[int, int, bytes]]] = {}
        for bucket in range(len(starts) - 1):
            start, end = starts[bucket], starts[bucket + 1]
            if start == end:
                continue
            first: dict[bytes, int] = {}
            for at in range(start, end):
                key = keys[at * _KEY:at * _KEY + _KEY]
                origin = at if origins is None else origins[at]
                seen = first.setdefault(key, origin)
                if not taken[at]:
                    ranked.setdefault(self._tail(at), []).append((seen, origin, key))
        return {tail: [key for _, _, key in sorted(group)] for tail, group in ranked.items()}

    def drop(self, key: bytes, secondary: bytes) -> bool:
        """Take the first entry with ``key`` whose secondary hash is ``secondary``; whether
        there was one."""
        if self._dict is not None:
            tails = self._dict.get(key, b"")
            for at in range(0, len(tails), _SECONDARY):
                if tails[at:at + _SECONDARY] == secondary:
                    rest = tails[:at] + tails[at + _SECONDARY:]
                    if rest:
                        self._dict[key] = rest
                    else:
                        del self._dict[key]
                    return True
            return False
        at = self._find(key, last=False, secondary=secondary)
        if at >= 0:
            self._taken[at] = 1
            self._left -= 1
        return at >= 0

    def left(self) -> list[str]:
        """What nothing took, as fingerprints, sorted: the stale entries."""
        if self._dict is not None:
            return sorted(f"{key[:-4].hex()}:{int.from_bytes(key[-4:], 'big')}:"
                          f"{tails[at:at + _SECONDARY].hex()}"
                          for key, tails in self._dict.items()
                          for at in range(0, len(tails), _SECONDARY))
        keys = self._keys
        return sorted(f"{keys[at * _KEY:at * _KEY + 12].hex()}:"
                      f"{int.from_bytes(keys[at * _KEY + 12:at * _KEY + _KEY], 'big')}:"
                      f"{self._tail(at).hex()}"
                      for at in range(len(self._taken)) if not self._taken[at])


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
    known = bytearray(count)  # one byte a finding: a million are 1 MB, not 8
    by_pass = {"exact": 0, "renamed": 0, "message": 0}
    exact = index.take_all(found.keys(), known)
    by_pass["exact"] = exact
    if callable(renames):
        renames = renames() if len(index) and exact < count else None
    take = index.take
    if renames and len(index):
        for position in range(count):
            if known[position]:
                continue
            for old in renames.get(found.path(position), ()):
                if take(found.retried(position, old)):
                    known[position] = 1
                    by_pass["renamed"] += 1
                    break
    if len(index) and known.count(0):
        by_secondary = index.by_secondary()
        for position in range(count):
            if known[position]:
                continue
            candidates = by_secondary.get(found.secondary(position))
            if candidates:
                index.drop(candidates.pop(), found.secondary(position))
                known[position] = 1
                by_pass["message"] += 1
    return Matched(known, index.left(), by_pass)


# ``{"schema": "ckdn.baseline/1", "checks": {NAME: [fingerprint, ...]}}``: fingerprints
# sorted, keys sorted, indent 2, no timestamps, no paths, no counts, so a baseline
# regenerated on two branches merges without conflicts (git merges the sorted
# lines). ckdn's own state, with no packaged schema (seed 001): it is read
# strictly here, and a file that is not one is refused in one line naming it.
# Written atomically; a symlinked baseline has its target rewritten.

SCHEMA_BASELINE = "ckdn.baseline/1"
#: A baseline larger than this is not read (a million fingerprints is about 50 MB).
MAX_BYTES = 256 << 20
_FINGERPRINT = re.compile(r"[0-9a-f]{24}:\d{1,9}:[0-9a-f]{12}")


class BaselineFile:
    """A read baseline: the fingerprints of each check, as lists (duplicates kept)."""

    __slots__ = ("checks", "path")

    def __init__(self, path: str, checks: dict[str, list[str]]) -> None:
        self.path = path
        self.checks = checks


def read_baseline(path: str, shown: str | None = None) -> BaselineFile:
    """The baseline at ``path``; :class:`ConfigError` naming ``shown`` if it is not one."""

    name = shown or path
    try:
        data = read_regular(path, MAX_BYTES, follow=True)  # never blocks on a FIFO
    except FileNotFoundError:
        raise ConfigError(f"[run] baseline: {name} not found; record it with "
                          "`ckdn baseline CHECK` (or remove the key)") from None
    except NotRegular:
        raise ConfigError(f"[run] baseline: {name} is not a regular file; not read") from None
    except OSError as exc:
        raise ConfigError(f"[run] baseline: cannot read {name}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"[run] baseline: {name} is larger than {MAX_BYTES >> 20} MiB; "
                          "not read")
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise ConfigError(f"[run] baseline: {name} is not JSON ({exc}); regenerate it with "
                          "`ckdn baseline CHECK`") from None
    problem = _problem(doc)
    if problem:
        raise ConfigError(f"[run] baseline: {name} is not a {SCHEMA_BASELINE} file: {problem}; "
                          "regenerate it with `ckdn baseline CHECK`")
    return BaselineFile(path, {name: list(prints) for name, prints in doc["checks"].items()})


def _problem(doc: object) -> str:
    if not isinstance(doc, dict):
        return "not an object"
    if doc.get("schema") != SCHEMA_BASELINE:
        return f"schema is {doc.get('schema')!r}"
    if set(doc) != {"schema", "checks"}:
        return f"unexpected keys {sorted(set(doc) - {'schema', 'checks'})}"
    checks = doc["checks"]
    if not isinstance(checks, dict):
        return "checks is not an object"
    for name, prints in checks.items():
        if not isinstance(prints, list):
            return f"checks[{name!r}] is not a list"
        for entry in prints:
            if not isinstance(entry, str) or not _FINGERPRINT.fullmatch(entry):
                return f"checks[{name!r}] holds {str(entry)[:60]!r}, not a fingerprint"
    return ""


def encode_baseline(checks: Mapping[str, Sequence[str]]) -> bytes:
    """The file's bytes: sorted everywhere, one fingerprint per line, newline at the end."""

    doc = {"schema": SCHEMA_BASELINE,
           "checks": {name: sorted(checks[name]) for name in sorted(checks)}}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_baseline(path: str, checks: Mapping[str, Sequence[str]]) -> None:
    """Write the baseline atomically; through a symlink, its target. Raises ``OSError``."""

    write_atomic(os.path.realpath(path), encode_baseline(checks))


# -- the gate: the CI decision beside the status, never in place of it (seed 001) ------------

# Policy ``no_new_findings``: a run passes the gate when everything that made it
# red is known to the baseline. So the gate is
#
# * ``unavailable`` when the status is ``error`` or ``parse_mismatch`` (its
#   findings cannot be trusted to be complete), or when not every finding could
#   be classified;
# * ``fail`` on any policy gate failure (coverage ``fail_under``, pylint's score:
#   those are not findings a baseline can accept), on any new finding, and on a
#   red run with nothing to classify (an exit code alone: the gate cannot account
#   for it, so it never passes it);
# * ``pass`` otherwise: a green run, or a red one whose findings are all known.

POLICY = "no_new_findings"
_UNTRUSTED = ("error", "parse_mismatch")


def decide(status: str, rc: int, *, total: int, classified: int, new: int,
           gate_failures: int, first_new: str = "") -> GateDoc:
    """The digest's ``gate`` object."""
    if status in _UNTRUSTED:
        return _gate("unavailable", f"status is {status}: the run's evidence is not complete "
                                    "enough to compare with the baseline")
    if classified < total:
        return _gate("unavailable", f"{total - classified} of {total} finding(s) could not be "
                                    "classified")
    if gate_failures:
        return _gate("fail", f"{gate_failures} policy gate(s) failed (gate_failures): a "
                             "baseline accepts findings, not a missed threshold")
    if new:
        named = f" (first: {first_new})" if first_new else ""
        return _gate("fail", f"{new} new finding(s) not in the baseline{named}")
    if status != "pass" and total == 0:
        return _gate("fail", f"exit code {rc} with no finding to compare with the baseline")
    return {"status": "pass", "policy": POLICY}


def _gate(status: str, reason: str, policy: str = POLICY) -> GateDoc:
    return {"status": status, "policy": policy, "reason": reason}


_RANK = {"pass": 0, "unavailable": 1, "fail": 2}


def worst_gate(members: list[tuple[str, GateDoc | None]]) -> GateDoc:
    """An alias's gate: its worst member's (fail, then unavailable, then pass), the
    reason naming that member; a member that did not run (``None``: fail-fast skipped
    it) leaves at least ``unavailable``: the gate never passes what was not checked (a
    member that ran unjudged is named first: fail-fast stopped there). The
    policy is the members' (``diff:SCOPE`` for a diff-scoped run)."""
    skipped = [name for name, gate in members if gate is None]
    ran = [(name, gate) for name, gate in members if gate is not None]
    policy = ran[0][1]["policy"] if ran else POLICY
    worst = max(ran, key=lambda pair: _RANK.get(pair[1]["status"], 2), default=None)
    if worst is not None and worst[1]["status"] == "fail":
        return _gate(worst[1]["status"], f"{worst[0]}: {worst[1].get('reason', 'gate failed')}",
                     policy)
    if worst is not None and worst[1]["status"] != "pass":
        # a member that ran and could not be judged is why fail-fast skipped the rest
        return _gate(worst[1]["status"], f"{worst[0]}: {worst[1].get('reason', '')}", policy)
    if skipped:
        return _gate("unavailable", f"{len(skipped)} member(s) did not run "
                                    f"(first: {skipped[0]})", policy)
    return {"status": "pass", "policy": policy}


# -- one check's entries streamed into a packed index (a run's gate) --------------------------

#: The blocks a baseline is streamed in: a million entries never sit in memory as text.
BLOCK = 256 << 10
_TOKEN = re.compile(rb'[ \t\n\r]*("[^"\\\x00-\x1f]*"|[{}\[\]:,])')
_ENTRY = re.compile(rb'[ \t\n\r]*"([0-9a-f]{24}):(\d{1,9}):([0-9a-f]{12})"[ \t\n\r]*([,\]])')
_SPACE = re.compile(rb"[ \t\n\r]*")
_RUN = re.compile(rb'(?:[ \t\n\r]*"[0-9a-f]{24}:\d{1,9}:[0-9a-f]{12}"[ \t\n\r]*,)*')
_PARTS = re.compile(r'"([0-9a-f]{24}):(\d{1,9}):([0-9a-f]{12})"')


class _OccurrenceHex(dict[str, str]):
    """An occurrence's decimal -> the hex of its 4 bytes (the first 64 made at once, any
    other when first met, a bounded number kept)."""

    def __missing__(self, occurrence: str) -> str:
        made = f"{int(occurrence):08x}"
        if len(self) < 4096:
            self[occurrence] = made
        return made


_OCCURRENCE = _OccurrenceHex({str(number): f"{number:08x}" for number in range(64)})


class _Unusual(Exception):
    """The file is not in the plain shape the stream reads: :func:`read_baseline` decides."""


def read_index(path: str, shown: str | None, check: str) -> BaselineIndex:
    """The entries of ``check`` in the baseline at ``path``, packed; the same refusals as
    :func:`read_baseline` (a file it would refuse, or one in a shape the stream does not
    read, such as escapes in a name, is read whole by it)."""
    try:
        with open(open_regular(path, follow=True), "rb") as handle:
            keys, tails = _Stream(handle).entries(check)
    except (OSError, _Unusual):
        entries = read_baseline(path, shown).checks.get(check, [])
        return BaselineIndex(entries)
    return BaselineIndex.packed(keys, tails)


class _Stream:
    """The baseline's tokens, read in :data:`BLOCK`-sized blocks (a token never longer)."""

    __slots__ = ("buffer", "done", "handle", "pos", "size")

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.buffer = b""
        self.pos = 0
        self.size = 0
        self.done = False

    def _more(self) -> None:
        """Another block after what is left; past the end, or with a token longer than a
        block, the file is not one the stream reads."""
        if self.done or len(self.buffer) - self.pos > BLOCK:
            raise _Unusual  # a torn file, or a giant token: read_baseline says which
        block = self.handle.read(BLOCK)
        self.size += len(block)
        if self.size > MAX_BYTES:
            raise _Unusual
        self.done = not block
        self.buffer = self.buffer[self.pos:] + block
        self.pos = 0

    def _next(self) -> re.Match[bytes]:
        while True:
            found = _TOKEN.match(self.buffer, self.pos)
            if found and (found.end() < len(self.buffer) or self.done):
                return found
            self._more()

    def token(self) -> bytes:
        found = self._next()
        self.pos = found.end()
        return found.group(1)

    def token_if(self, wanted: bytes) -> bool:
        """Take the next token if it is ``wanted``."""
        found = self._next()
        if found.group(1) != wanted:
            return False
        self.pos = found.end()
        return True

    def end(self) -> None:
        """Nothing but white space left."""
        while True:
            rest = _SPACE.match(self.buffer, self.pos)
            if rest is None or rest.end() != len(self.buffer):
                raise _Unusual
            self.pos = len(self.buffer)
            if self.done:
                return
            self._more()

    def entries(self, check: str) -> tuple[bytearray, bytearray]:
        """Every entry of the file checked as :func:`read_baseline` checks it; those of
        ``check`` packed (keys, secondaries)."""
        keys, tails = bytearray(), bytearray()
        if self.token() != b"{":
            raise _Unusual
        seen: set[bytes] = set()
        while True:
            name = self.token()
            if name in seen or self.token() != b":":
                raise _Unusual
            seen.add(name)
            if name == b'"schema"':
                if self.token() != b'"' + SCHEMA_BASELINE.encode() + b'"':
                    raise _Unusual
            elif name == b'"checks"':
                self._checks(check, keys, tails)
            else:
                raise _Unusual
            after = self.token()
            if after == b"}":
                break
            if after != b",":
                raise _Unusual
        if seen != {b'"schema"', b'"checks"'}:
            raise _Unusual
        self.end()
        return keys, tails

    def _checks(self, check: str, keys: bytearray, tails: bytearray) -> None:
        if self.token() != b"{":
            raise _Unusual
        names: set[str] = set()
        if self.token_if(b"}"):
            return
        while True:
            token = self.token()
            try:
                name = token[1:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise _Unusual from None
            if not token.startswith(b'"') or name in names or self.token() != b":" \
                    or self.token() != b"[":
                raise _Unusual
            names.add(name)
            self._list(keys if name == check else None, tails)
            token = self.token()
            if token == b"}":
                return
            if token != b",":
                raise _Unusual

    def _list(self, keys: bytearray | None, tails: bytearray) -> None:
        """One check's list, after its ``[``: fingerprints only, packed into ``keys`` and
        ``tails`` when they are the run's check (a block's entries matched and split in C)."""
        if self.token_if(b"]"):
            return
        while True:
            buffer, pos = self.buffer, self.pos
            ran = _RUN.match(buffer, pos)  # entries each followed by a comma (or none)
            run = ran.end() if ran is not None else pos
            last = _ENTRY.match(buffer, run)
            end = last.end() if last is not None and last.group(4) == b"]" else run
            if keys is not None and end > pos:
                found = _PARTS.findall(buffer[pos:end].decode("ascii"))
                if found:  # split and joined in C, an occurrence's hex looked up
                    primaries, occurrences, secondaries = zip(*found, strict=True)
                    keys += bytes.fromhex("".join(map(str.__add__, primaries, map(
                        _OCCURRENCE.__getitem__, occurrences))))
                    tails += bytes.fromhex("".join(secondaries))
            self.pos = end
            if end > run:  # the list's last entry, and its ``]``
                return
            self._more()
