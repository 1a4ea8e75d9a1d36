"""The suite's xdist order: heavy tests first in each worker's share, none lost or added."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.scheduling import heavy_first_per_share, is_heavy, share_sizes


@dataclass(frozen=True)
class Case:
    nodeid: str
    fixturenames: tuple[str, ...] = ()


def suite(pattern: str) -> list[Case]:
    """A test per letter: ``H`` a heavy one (a pytester session), ``l`` a light one."""
    return [Case(f"tests/core/test_x.py::test_{i}", ("pytester",) if kind == "H" else ())
            for i, kind in enumerate(pattern)]


def kinds(items: list[Case]) -> str:
    return "".join("H" if is_heavy(item) else "l" for item in items)


@pytest.mark.parametrize(("total", "workers", "sizes"), [
    (10, 2, [5, 5]), (11, 2, [5, 6]), (10, 3, [3, 3, 4]), (1, 2, [0, 1]), (0, 2, [0, 0]),
])
def test_the_shares_are_the_ones_worksteal_first_sends(total: int, workers: int,
                                                       sizes: list[int]) -> None:
    assert share_sizes(total, workers) == sizes


def test_each_share_starts_with_its_heavy_tests_and_ends_light() -> None:
    items = suite("llllllHlllHlllllHHll")  # the heavy ones late, where a share ends
    ordered = heavy_first_per_share(items, 2)
    assert kinds(ordered) == "HHllllllll" + "HHllllllll"
    assert sorted(t.nodeid for t in ordered) == sorted(t.nodeid for t in items)


def test_heavy_and_light_tests_keep_their_shuffled_order() -> None:
    items = suite("lHlHllHl")[::-1]
    ordered = heavy_first_per_share(items, 2)
    heavy = [t for t in items if is_heavy(t)]
    light = [t for t in items if not is_heavy(t)]
    assert [t for t in ordered if is_heavy(t)] == heavy
    assert [t for t in ordered if not is_heavy(t)] == light


def test_more_heavy_tests_than_a_share_holds_lose_none() -> None:
    items = suite("HHHHHHHl")
    ordered = heavy_first_per_share(items, 2)
    assert sorted(t.nodeid for t in ordered) == sorted(t.nodeid for t in items)
    assert kinds(ordered) == "HHHl" + "HHHH"  # the light one still in the first share


def test_without_workers_the_order_is_unchanged() -> None:
    items = suite("llHlH")
    assert heavy_first_per_share(items, 0) == items
    assert heavy_first_per_share(items, 1) == items


def test_host_and_docs_tests_are_heavy_without_a_heavy_fixture() -> None:
    assert is_heavy(Case("tests/nox_ckdn/test_project.py::test_a"))
    assert is_heavy(Case("tests/docs/test_readme.py::test_b"))
    assert is_heavy(Case("tests/core/parsers/test_reading_memory.py::test_e[pyright]"))
    assert not is_heavy(Case("tests/core/test_reconcile.py::test_c"))
    assert is_heavy(Case("tests/core/test_cli.py::test_d", ("tmp_path", "nox_project")))
