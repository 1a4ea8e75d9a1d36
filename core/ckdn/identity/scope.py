"""The diff-scoped gate: each finding placed on two axes, ``where`` it is in the change and
its ``origin`` against the base, and the scope's policy deciding which ones the change owns.
"""

from __future__ import annotations

from collections.abc import Sequence

from ckdn.identity._baseline import decide
from ckdn.identity._fingerprint import Fingerprinted, SourceLines
from ckdn.identity._match import BaselineIndex
from ckdn.identity.change import ADDED, WHERE, ChangeSet

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.documents.types import GateDoc

__all__ = ["KNOWN", "MOVED", "NEW", "ORIGINS", "POLICY", "SCOPES", "Placed", "decide_scope",
           "gated", "place"]

NEW = "new"
KNOWN = "known"
MOVED = "moved"
#: The values of a finding's ``origin``.
ORIGINS = (NEW, KNOWN, MOVED)
#: ``[run].diff_scope`` / ``--scope``; the first is the default.
SCOPES = ("touched", "added", "new-anywhere")
#: The gate's ``policy`` when the change scopes it.
POLICY = "diff_scope"

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


def _key(item: Fingerprinted, path: str | None = None, occurrence: int | None = None) -> bytes:
    primary = item.primary if path is None else item.retried(path)
    return bytes.fromhex(primary) + (item.occurrence if occurrence is None
                                     else occurrence).to_bytes(4, "big")


def place(changes: ChangeSet, findings: Sequence[Fingerprinted], source: SourceLines,
          base: BaselineIndex) -> Placed:
    """Place each finding (see the module); ``source`` reads the lines after the change,
    ``base`` is used up."""
    wheres = [changes.where(item.path, item.line) for item in findings]
    origins = [NEW] * len(findings)
    take = base.take
    renames = changes.renames
    # the findings on lines the change kept first: an added copy of a known line takes
    # no entry from the original, whatever their occurrence numbers say
    for position in sorted(range(len(findings)), key=lambda p: wheres[p] == ADDED):
        item = findings[position]
        old = renames.get(item.path)
        tried = (old, None) if old is not None else (None,)
        if any(take(_key(item, path)) for path in tried) or any(
                take(_key(item, path, occurrence)) for path in tried
                for occurrence in range(_OCCURRENCES)):
            origins[position] = MOVED if wheres[position] == ADDED else KNOWN
    for position, item in enumerate(findings):
        if origins[position] != NEW or wheres[position] != ADDED or not base.entries:
            continue
        content = source.line(item.path, item.line)
        if content is None or not content.strip():
            continue
        for old in sorted(changes.deleted_from(content) - {item.path}):
            if any(take(_key(item, old, occurrence)) for occurrence in
                   (item.occurrence, *range(_OCCURRENCES))):
                origins[position] = MOVED
                break
    if base.entries and NEW in origins:
        by_secondary: dict[bytes, list[bytes]] = {}
        for key, tails in base.entries.items():
            for at in range(0, len(tails), 6):
                by_secondary.setdefault(tails[at:at + 6], []).append(key)
        for position, item in enumerate(findings):
            if origins[position] != NEW:
                continue
            secondary = bytes.fromhex(item.secondary)
            candidates = by_secondary.get(secondary)
            while candidates:
                key = candidates.pop()
                if _take_secondary(base, key, secondary):
                    origins[position] = KNOWN
                    break
    return Placed(wheres, origins)


def _take_secondary(base: BaselineIndex, key: bytes, secondary: bytes) -> bool:
    tails = base.entries.get(key)
    if not tails:
        return False
    for at in range(0, len(tails), 6):
        if tails[at:at + 6] == secondary:
            rest = tails[:at] + tails[at + 6:]
            if rest:
                base.entries[key] = rest
            else:
                del base.entries[key]
            return True
    return False


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
    out: GateDoc = {"status": doc["status"], "policy": POLICY}
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
