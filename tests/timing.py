"""Speed claims as ratios measured in the same run, never seconds compared to a number.

A busy machine stretches every wall-clock figure, so a test about speed compares
the CPU time of the same work at two sizes (linear work grows 10x for 10x the
input, a backtracking pattern or a scan per item about 100x) or against a floor
measured beside it. The figures themselves live in bench/.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["LINEAR_GROWTH", "cpu_seconds", "growth"]

#: The most a linear piece of work may grow for ten times its input. Linear work
#: grows 10x or less (fixed costs do not grow); quadratic work about 100x.
LINEAR_GROWTH = 30.0


def cpu_seconds(action: Callable[[], object]) -> float:
    """CPU seconds of this process spent in ``action`` (other processes' load does not count)."""
    start = time.process_time()
    action()
    return time.process_time() - start


def growth(work_at: Callable[[int], Callable[[], object]], size: int, *,
           floor: Callable[[], object] | None = None, tries: int = 3) -> float:
    """How much more CPU ``work_at(size)`` costs than ``work_at(size // 10)``.

    ``floor`` (a known-linear pass over the input, say) is added to the small cost, so
    that work too quick to measure reads as flat. The least ratio of up to ``tries``
    measurements: one slowed by a page fault or a collector pause is measured again.
    """
    big, small = work_at(size), work_at(max(1, size // 10))
    best = float("inf")
    for _ in range(tries):
        base = cpu_seconds(small) + (cpu_seconds(floor) if floor is not None else 0.0)
        best = min(best, cpu_seconds(big) / max(base, 1e-9))
        if best <= LINEAR_GROWTH:
            break
    return best
