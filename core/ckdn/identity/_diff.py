"""Two runs' fingerprints paired: which finding of the later run is which of the earlier.

The same passes as :func:`~ckdn.identity.match` has when both sides are only
fingerprint strings (two stored runs; there is no source line left to retry
under a renamed path): exact on ``PRIMARY:OCCURRENCE`` (the flagged line's
content: lines inserted above, reindentation, a reworded message), then what
is left by ``SECONDARY`` (rule, path and normalised message, as many as the
earlier run had: the flagged line itself was edited). A second copy of a
finding finds nothing left to pair with: it is new. Each pass takes entries
in the order ``match`` takes them, so the two agree on what is known.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["pair"]


def pair(before: Sequence[str], after: Sequence[str]) -> list[int]:
    """For each fingerprint of ``after``, the index in ``before`` of the same finding, or -1.

    No index of ``before`` is given twice; those given to none are the fixed findings.
    """
    by_head: dict[str, list[int]] = {}
    for index, entry in enumerate(before):
        head, sep, _secondary = entry.rpartition(":")
        if sep and head:
            by_head.setdefault(head, []).append(index)
    paired = [-1] * len(after)
    heads = [entry.rpartition(":") for entry in after]
    for index, (head, _sep, _secondary) in enumerate(heads):
        found = by_head.get(head)
        if found:
            paired[index] = found.pop()
            if not found:
                del by_head[head]
    if by_head and -1 in paired:
        by_secondary: dict[str, list[int]] = {}
        for group in by_head.values():
            for entry_index in group:
                by_secondary.setdefault(before[entry_index].rpartition(":")[2],
                                        []).append(entry_index)
        for index, (_head, _sep, secondary) in enumerate(heads):
            if paired[index] == -1:
                candidates = by_secondary.get(secondary)
                if candidates:
                    paired[index] = candidates.pop()
    return paired
