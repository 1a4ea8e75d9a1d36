"""Two runs compared: which finding of the later run is which of the earlier, and how
each test's outcome changed (:func:`compare_tests`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["TEST_CLASSES", "compare_tests", "pair"]

# The same passes as :func:`~ckdn.identity.match`, on two stored runs'
# fingerprint strings: exact on ``PRIMARY:OCCURRENCE`` (the flagged line's
# content: lines inserted above, reindentation, a reworded message), then a
# finding of a file git says was renamed under its old path (the later run's
# ``line_hash`` hashed with that path), then what is left by ``SECONDARY``
# (rule, path and normalised message, as many as the earlier run had: the
# flagged line itself was edited). A second copy of a
# finding finds nothing left to pair with: it is new. Each pass takes entries
# in the order ``match`` takes them, so the two agree on what is known.


def pair(before: Sequence[str], after: Sequence[str],
         retry: Callable[[int], Iterable[str]] | None = None) -> list[int]:
    """For each fingerprint of ``after``, the index in ``before`` of the same finding, or -1.

    No index of ``before`` is given twice; those given to none are the fixed findings.
    ``retry(i)``: the ``PRIMARY:OCCURRENCE`` heads ``after[i]`` would have had under the
    old paths of its file (git's renames), tried between the two passes for a finding
    the exact pass left; asked only when both sides have some left.
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
    if retry is not None and by_head and -1 in paired:
        for index, found_index in enumerate(paired):
            if found_index != -1:
                continue
            for head in retry(index):
                found = by_head.get(head)
                if found:
                    paired[index] = found.pop()
                    if not found:
                        del by_head[head]
                    break
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


#: Test outcomes that make a test red.
_RED = frozenset(("failed", "error"))
TEST_CLASSES = ("newly_failing", "fixed", "still_failing", "flaky")


def compare_tests(before: Mapping[str, str], after: Mapping[str, str], *, same_source: bool,
                  top: int) -> tuple[dict[str, int], dict[str, list[dict[str, str]]]]:
    """Two runs' test outcomes by node id: the count of each class and its first ``top``
    tests (by id), each ``{id, a, b}`` (``a`` absent for a test the earlier run lacked).

    ``newly_failing``: red in B, not red in A (or new). ``fixed``: red in A, passed (or
    skipped) in B. ``still_failing``: red in both. ``flaky``: red in one and not the
    other **on the same source tree** (``same_source``): nothing changed but the
    outcome, so it is neither a regression nor a fix. A test only A ran (removed,
    deselected) is in no class.
    """
    counts = dict.fromkeys(TEST_CLASSES, 0)
    lists: dict[str, list[dict[str, str]]] = {name: [] for name in TEST_CLASSES}
    for ident in sorted(after):
        now = after[ident]
        was = before.get(ident)
        red_now, red_was = now in _RED, was in _RED
        if red_now and red_was:
            name = "still_failing"
        elif red_now == red_was or (was is None and not red_now):
            continue
        elif was is not None and same_source:
            name = "flaky"
        else:
            name = "newly_failing" if red_now else "fixed"
        counts[name] += 1
        if len(lists[name]) < top:
            shown = {"id": ident[:300], "b": now}
            if was is not None:
                shown["a"] = was
            lists[name].append(shown)
    return counts, lists
