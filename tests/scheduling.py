"""The suite's order on xdist workers: each worker's share starts with its heavy tests.

Worksteal hands each worker one contiguous share of the (shuffled) collection and a
worker that runs dry steals the end of a busy one's queue. A heavy test (a real pytest
session, a real nox or tox env) left at the end of a share leaves the other worker idle
while it runs; put first in its share, it runs while there is still work to steal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

#: Fixtures of the tests that start real sessions, tools or virtualenvs.
HEAVY_FIXTURES = frozenset({"pytester", "nox_project", "wheelhouse"})

#: Where the tests run real hosts (nox, tox), the documented pipelines, or a parser over
#: a 32 MiB input in a fresh interpreter (the memory tests: up to half a minute under load).
HEAVY_PATHS = ("tests/nox_ckdn/", "tests/tox_ckdn/", "tests/docs/",
               "tests/core/parsers/test_reading_memory.py")


class Scheduled(Protocol):
    """What the order needs of a test: its id (its fixtures too, where it has them: a
    pytest Function does, another kind of Item may not)."""

    @property
    def nodeid(self) -> str: ...


T = TypeVar("T", bound=Scheduled)


def is_heavy(item: Scheduled) -> bool:
    """A test that starts real sessions, tools or virtualenvs (seconds, not milliseconds)."""
    return (item.nodeid.startswith(HEAVY_PATHS)
            or not HEAVY_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())))


def share_sizes(total: int, workers: int) -> list[int]:
    """The sizes of the shares worksteal first sends: each idle worker gets the pending
    tests divided by the workers still to serve (xdist's ``check_schedule``)."""
    sizes = []
    left = total
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    return sizes


def heavy_first_per_share(items: Sequence[T], workers: int) -> list[T]:
    """``items`` with the heavy tests spread over the worker shares, first in each.

    The heavy and the light tests each keep their (shuffled) order, and each share gets
    its part of both; with fewer than two workers the order is unchanged.
    """
    if workers < 2:
        return list(items)
    heavy = [item for item in items if is_heavy(item)]
    light = [item for item in items if not is_heavy(item)]
    ordered: list[T] = []
    sizes = share_sizes(len(items), workers)
    heavy_sizes = share_sizes(len(heavy), workers)
    for size, heavy_size in zip(sizes, heavy_sizes, strict=True):
        taken = min(heavy_size, size)
        ordered += heavy[:taken]
        del heavy[:taken]
        ordered += light[:size - taken]
        del light[:size - taken]
    return ordered + heavy + light
