"""The diff-scoped gate: each finding placed on two axes, ``where`` it is in the change and
its ``origin`` against the base, and the scope's policy deciding which ones the change owns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ckdn.identity._baseline import BaselineIndex, Listed, decide
from ckdn.identity._fingerprint import Fingerprinted, SourceLines
from ckdn.identity.change import ADDED, OUTSIDE, WHERE, ChangeSet, content_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.documents.types import GateDoc

__all__ = ["KNOWN", "MOVED", "NEW", "ORIGINS", "POLICY_PREFIX", "SCOPES", "Listed", "Placeable",
           "Placed", "decide_scope", "gated", "place", "scope_policy"]

NEW = "new"
KNOWN = "known"
MOVED = "moved"
#: The values of a finding's ``origin``.
ORIGINS = (NEW, KNOWN, MOVED)
#: ``[run].diff_scope`` / ``--scope``; the first is the default.
SCOPES = ("touched", "added", "new-anywhere")
#: The gate's ``policy`` when the change scopes it: the prefix, then the scope
#: (``diff:touched``), so a consumer of the published, closed ``gate`` reads the scope.
POLICY_PREFIX = "diff:"


def scope_policy(scope: str) -> str:
    """The gate's ``policy`` under ``scope``."""
    return f"{POLICY_PREFIX}{scope}"

# Origin, in passes over the base's fingerprints (a base run's, or the baseline's),
# each entry taken once:
#
# 1. **same place**: the fingerprint the finding would have had under the path its
#    file had at the base (a rename the diff shows), then under its own. ``known``;
#    ``moved`` when its line is one the change added (the same flagged content was
#    there before, elsewhere in the file or under the old name);
# 2. **moved across files**: a finding on an added line whose content the change
#    deleted from another file is tried under that file's path (any occurrence up
#    to :data:`_OCCURRENCES`): ``moved``. This pairs an edited rename git scored
#    below its threshold (a delete and an add) line by line;
# 3. **same message**: rule, path and normalised message, as a baseline's last pass
#    (the flagged line itself was edited): ``known``.
#
# Everything else is ``new``. ``where`` comes from the diff alone.

_OCCURRENCES = 8
#: Bytes of a secondary hash (as the baseline index keeps it).
_SECONDARY = 6


class Placed:
    """Every finding's ``where`` and ``origin``, by position."""

    __slots__ = ("origins", "wheres")

    def __init__(self, wheres: list[str], origins: list[str]) -> None:
        self.wheres = wheres
        self.origins = origins

    def counts(self) -> dict[str, dict[str, int]]:
        """``where`` -> ``origin`` -> how many; every pair present, zeros included."""
        table = {where: dict.fromkeys(ORIGINS, 0) for where in WHERE}
        for where, origin in zip(self.wheres, self.origins, strict=True):
            table[where][origin] += 1
        return table


class Placeable(Protocol):
    """What placing reads of a run's identities: a :class:`Listed` list of
    :class:`Fingerprinted`, or the run's :class:`~ckdn.identity.IdentityTable`."""

    def __len__(self) -> int: ...
    def columns(self) -> tuple[list[bytes], list[int], list[bytes], list[str], list[int]]: ...
    def retried(self, index: int, path: str) -> bytes: ...


_OCCURRENCE_BYTES = [occurrence.to_bytes(4, "big") for occurrence in range(_OCCURRENCES)]


def place(changes: ChangeSet, findings: Sequence[Fingerprinted] | Placeable,
          source: SourceLines, base: BaselineIndex) -> Placed:
    """Place each finding (see the module); ``source`` reads the lines after the change,
    ``base`` is used up. Every field is read once, in columns: 10,000 findings cost ms."""
    found: Placeable = Listed(findings) if isinstance(findings, Sequence) else findings
    heads, occurrences, secondaries, paths, lines = found.columns()
    count = len(paths)
    files = changes.files
    wheres = [OUTSIDE if change is None else change.where(line)
              for change, line in zip(map(files.get, paths), lines, strict=True)]
    origins = [NEW] * count
    take = base.take
    renames = changes.renames
    primaries = base.primaries()  # a finding whose primary is absent tries no occurrence

    def taken(primary: bytes, occurrence: int) -> bool:
        if primary not in primaries:
            return False
        return take(primary + occurrence.to_bytes(4, "big")) or any(
            take(primary + tail) for tail in _OCCURRENCE_BYTES)

    # the findings on lines the change kept first: an added copy of a known line takes
    # no entry from the original, whatever their occurrence numbers say
    added = [p for p in range(count) if wheres[p] == ADDED]
    for position in [p for p in range(count) if wheres[p] != ADDED] + added:
        old = renames.get(paths[position]) if renames else None
        if old is not None:
            head = found.retried(position, old)
            if taken(head[:-4], occurrences[position]):
                origins[position] = MOVED if wheres[position] == ADDED else KNOWN
                continue
        if taken(heads[position], occurrences[position]):
            origins[position] = MOVED if wheres[position] == ADDED else KNOWN
    if base.entries and changes.deleted:
        by_content, raw = changes.by_content(), source.raw
        for position in added:
            if origins[position] != NEW:
                continue
            path = paths[position]
            content = raw(path, lines[position])
            if not content or content.isspace():
                continue
            olds = by_content.get(content_key(content))
            if not olds or (len(olds) == 1 and path in olds):
                continue
            for old in sorted(olds - {path}):
                if taken(found.retried(position, old)[:-4], occurrences[position]):
                    origins[position] = MOVED
                    break
    if base.entries and NEW in origins:
        _same_message(base, secondaries, origins)
    return Placed(wheres, origins)


def _same_message(base: BaselineIndex, secondaries: list[bytes], origins: list[str]) -> None:
    """The last pass: a finding still new takes an entry of the same rule, path and
    message (its flagged line was edited): ``known``."""
    entries = base.entries
    by_secondary: dict[bytes, list[bytes]] = {}
    for key, tails in entries.items():
        if len(tails) == _SECONDARY:
            by_secondary.setdefault(tails, []).append(key)
            continue
        for at in range(0, len(tails), _SECONDARY):
            by_secondary.setdefault(tails[at:at + _SECONDARY], []).append(key)
    for position in [p for p, origin in enumerate(origins) if origin == NEW]:
        secondary = secondaries[position]
        candidates = by_secondary.get(secondary)
        while candidates:
            key = candidates.pop()
            if entries.get(key) == secondary:  # the one entry under its key
                del entries[key]
                origins[position] = KNOWN
                break
            if base.drop(key, secondary):
                origins[position] = KNOWN
                break


def gated(scope: str, where: str, origin: str) -> bool:
    """Whether the change owns a finding under ``scope``: ``touched`` blocks any new finding
    and any finding on an added line that did not move there; ``added`` only the latter;
    ``new-anywhere`` only the former."""
    on_added = where == ADDED and origin != MOVED
    if scope == "added":
        return on_added
    if scope == "new-anywhere":
        return origin == NEW
    return on_added or origin == NEW


def decide_scope(scope: str, status: str, rc: int, *, total: int, classified: int,
                 owned: int, gate_failures: int, first: str = "") -> GateDoc:
    """The gate's status and reason: the baseline gate's rules (an untrusted status is
    never passed, nor a missed threshold, nor a red exit with no finding), with the
    findings the change owns standing for the new ones."""
    doc = decide(status, rc, total=total, classified=classified, new=owned,
                 gate_failures=gate_failures, first_new=first)
    out: GateDoc = {"status": doc["status"], "policy": scope_policy(scope)}
    reason = doc.get("reason", "")
    if owned and doc["status"] == "fail" and not gate_failures:
        named = f" (first: {first})" if first else ""
        reason = f"{owned} finding(s) the change owns under scope {scope}{named}"
    elif reason:
        reason = reason.replace("compare with the baseline", "compare with the base")
        reason = reason.replace("not in the baseline", "in the change")
    if reason:
        out["reason"] = reason
    return out
