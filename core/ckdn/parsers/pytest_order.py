"""The order of a pytest run's findings, the same whoever read the run: JUnit or the plugin."""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ckdn.parsers.base import Finding

__all__ = ["INTERNAL", "OUTSIDE", "PHASES", "TEST", "Smallest", "numbered", "order_key"]

# Reports arrive in execution order, which pytest-randomly shuffles and
# pytest-xdist races, so a digest ordered by arrival changes from run to run with
# the same failures. Findings are ordered by what names them instead:
#
# 1. problems outside any test (collection errors, a JUnit ``<failure>`` outside a
#    ``<testcase>``), by id;
# 2. tests, by node id (runs of digits compared as numbers, so ``test_p[2]``
#    comes before ``test_p[10]``), setup before call before teardown;
# 3. pytest's own crash (``INTERNALERROR``) and anything else last.
#
# Only the first ``keep`` of that order are built and kept (:class:`Smallest`);
# the rest are counted, so a million failures cost constant memory.

#: The groups, in the order they are shown.
OUTSIDE = 0
TEST = 1
INTERNAL = 2
#: A test's phases, in the order they run (pytest-xdist's crashed-worker ``???`` last).
PHASES = {"setup": 0, "call": 1, "teardown": 2, "???": 3}

_DIGITS = re.compile(r"(\d+)")

T = TypeVar("T")


def order_key(group: int, name: str, phase: int = 1) -> tuple[Any, ...]:
    """The sort key of one finding: its group, its id read naturally, its phase.

    The raw id closes the key, so ids that read alike (``x[01]``, ``x[1]``) still
    have one fixed order.
    """
    parts: list[Any] = _DIGITS.split(name)
    for index in range(1, len(parts), 2):  # split() puts the digit runs at odd positions
        parts[index] = int(parts[index])
    return (group, tuple(parts), phase, name)


class _Reversed:
    """Inverts the order so ``heapq`` (a min-heap) keeps the largest key on top."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return self.key > other.key


class Smallest(Generic[T]):
    """The ``keep`` smallest items by key, each built only when it will be kept.

    Equal keys keep the order they were offered in. ``total`` counts every offer
    (and every :meth:`skip`).
    """

    __slots__ = ("_heap", "_seq", "keep", "total")

    def __init__(self, keep: int) -> None:
        self.keep = max(keep, 0)
        self.total = 0
        self._seq = 0
        self._heap: list[tuple[_Reversed, T]] = []

    def wants(self, key: tuple[Any, ...]) -> bool:
        """Whether an item offered now with ``key`` would be kept (so it is worth building)."""
        heap = self._heap
        if len(heap) < self.keep:
            return True
        return bool(heap) and (*key, self._seq + 1) < heap[0][0].key

    def offer(self, key: tuple[Any, ...], build: Callable[[], T]) -> None:
        wanted = self.wants(key)
        self.total += 1
        self._seq += 1
        if not wanted:
            return
        entry = (_Reversed((*key, self._seq)), build())
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, entry)
        else:
            heapq.heapreplace(self._heap, entry)

    def skip(self) -> None:
        """Count an item the caller already knows is not wanted (it was never built)."""
        self.total += 1
        self._seq += 1

    def items(self) -> list[T]:
        """The kept items, smallest first."""
        return [item for _, item in sorted(self._heap, key=lambda kept: kept[0].key)]


def numbered(findings: list[Finding]) -> list[Finding]:
    """``findings`` in order, an id seen again suffixed ``#2``, ``#3``: pytest reports
    one test twice (a subtest's failure and "contains 1 failed subtest", a failing
    call and its teardown error), and both readers (JUnit, the plugin) give the
    second the same id, so a baseline or a reader can tell them apart."""
    seen: dict[str, int] = {}
    out: list[Finding] = []
    for finding in findings:
        count = seen.get(finding.id, 0) + 1
        seen[finding.id] = count
        if count > 1:
            finding = Finding(f"{finding.id}#{count}", finding.kind, finding.message,
                              finding.location, finding.detail, finding.detail_omitted)
        out.append(finding)
    return out
