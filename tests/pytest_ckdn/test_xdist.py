"""pytest-xdist: the controller records, every report counts once, a dead worker is a finding."""

from __future__ import annotations

import pytest

from tests.pytest_ckdn.sessions import Runner

MIXED = """
import pytest

@pytest.mark.parametrize("n", range(10))
def test_passes(n):
    pass

@pytest.mark.parametrize("n", range(3))
def test_fails(n):
    assert n < 0

@pytest.mark.skip(reason="no")
def test_skipped():
    pass
"""


def test_only_the_controller_records_and_counts_every_report_once(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_dist=MIXED)
    rec = session("-n", "2")
    assert rec.counts == {"tests": 14, "passed": 10, "failures": 3, "skipped": 1}
    outcomes = rec.result.parseoutcomes()
    assert (outcomes["passed"], outcomes["failed"], outcomes["skipped"]) == (10, 3, 1)
    assert rec.digest["findings_total"] == 3
    assert [f["id"] for f in rec.digest["findings"]] == [
        f"test_sample_dist.py::test_fails[{n}]" for n in range(3)]


def test_a_collection_error_every_worker_repeats_is_one_finding(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_ok=MIXED, test_sample_broken="import no_such_module_ckdn\n")
    rec = session("-n", "2")
    kinds = [f["kind"] for f in rec.digest["findings"]]
    assert kinds == ["collection_error", "test_failure", "test_failure", "test_failure"]
    finding = rec.finding("test_sample_broken.py")
    assert finding["kind"] == "collection_error"
    assert rec.counts["collection_errors"] == 1
    assert rec.counts["errors"] == rec.result.parseoutcomes()["errors"] == 1


def test_a_crashed_worker_is_a_finding_for_the_test_it_was_running(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_crash="""
        import os

        def test_fine():
            pass

        def test_kills_its_worker():
            os._exit(3)
        """)
    rec = session("-n", "2")
    finding = rec.finding("test_sample_crash.py::test_kills_its_worker")
    assert finding["kind"] == "worker_crash"
    assert "crashed while running" in finding["message"]
    assert finding["location"] == "test_sample_crash.py"
    assert rec.digest["status"] == "fail"
    assert rec.digest["rc"] == 1


def test_stopping_at_the_first_failure_under_xdist_is_not_an_interruption(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_dist=MIXED)
    rec = session("-n", "2", "-x")
    assert "interrupted" not in rec.digest
    assert rec.digest["status"] == "fail"
    assert rec.digest["findings"][0]["kind"] == "test_failure"
