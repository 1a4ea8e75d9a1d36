"""The status model: the contract's table, and its invariants as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import Finding, ParseResult
from ckdn.reconcile import (
    ERROR,
    FAIL,
    PARSE_MISMATCH,
    PASS,
    STATUSES,
    Exit,
    exit_code,
    reconcile,
)

FINDING = Finding(id="a.py:1:1:E1", kind="lint_violation", message="E1 bad")

exits = st.builds(
    Exit,
    rc=st.integers(min_value=-64, max_value=300),
    started=st.booleans(),
    timed_out=st.booleans(),
    interrupted=st.booleans(),
)
results = st.builds(
    ParseResult,
    findings=st.lists(st.just(FINDING), max_size=3),
    parser_ok=st.booleans(),
    gate_failures=st.lists(st.text(min_size=1, max_size=10), max_size=2),
    findings_total=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)),
    evidence_expected=st.booleans(),
)


@pytest.mark.parametrize(
    ("exit", "result", "status"),
    [
        (Exit(0), ParseResult(), PASS),
        (Exit(0), ParseResult(gate_failures=["coverage 79.9 < 80"]), FAIL),
        (Exit(1), ParseResult(findings=[FINDING]), FAIL),
        (Exit(1), ParseResult(), ERROR),
        (Exit(1), ParseResult(parser_ok=False), ERROR),
        (Exit(0), ParseResult(findings=[FINDING]), PARSE_MISMATCH),
        (Exit(0), ParseResult(parser_ok=False), PARSE_MISMATCH),
        (Exit(1), ParseResult(evidence_expected=False), FAIL),
        (Exit(1), ParseResult(gate_failures=["coverage below"]), FAIL),
        (Exit(124, timed_out=True), ParseResult(evidence_expected=False), ERROR),
        (Exit(130, interrupted=True), ParseResult(evidence_expected=False), ERROR),
        (Exit(127, started=False), ParseResult(evidence_expected=False), ERROR),
        (Exit(0, started=False), ParseResult(), ERROR),
    ],
)
def test_each_row_of_the_contract_table(exit: Exit, result: ParseResult, status: str) -> None:
    verdict = reconcile(exit, result)
    assert verdict.status == status
    assert (verdict.reason is None) == (status == PASS)


@given(exits, results)
def test_text_never_upgrades_a_nonzero_exit_code(exit: Exit, result: ParseResult) -> None:
    if exit.rc != 0:
        assert reconcile(exit, result).status != PASS


@given(exits, results)
def test_a_zero_exit_code_never_survives_contradicting_evidence(
        exit: Exit, result: ParseResult) -> None:
    if result.total or result.gate_failures or not result.parser_ok:
        assert reconcile(exit, result).status != PASS


@given(exits, results)
def test_a_confused_parser_is_never_pass(exit: Exit, result: ParseResult) -> None:
    if not result.parser_ok:
        assert reconcile(exit, result).status in (ERROR, PARSE_MISMATCH)


@given(exits, results)
def test_a_command_that_never_started_is_always_error(exit: Exit, result: ParseResult) -> None:
    if not exit.started:
        assert reconcile(exit, result).status == ERROR


@given(exits, results)
def test_timed_out_or_interrupted_runs_are_error(exit: Exit, result: ParseResult) -> None:
    if exit.timed_out or exit.interrupted:
        assert reconcile(exit, result).status == ERROR


@given(exits, results)
def test_the_status_is_one_of_the_four_and_deterministic(exit: Exit, result: ParseResult) -> None:
    first = reconcile(exit, result)
    assert first.status in STATUSES
    assert reconcile(exit, result) == first


@given(st.sampled_from(STATUSES), st.integers(min_value=-300, max_value=600))
def test_the_exit_code_contract(status: str, rc: int) -> None:
    code = exit_code(status, rc)
    if 1 <= rc <= 255:
        assert code == rc
    elif rc == 0 and status == PASS:
        assert code == 0
    else:
        assert code == 1
    assert 0 <= code <= 255
    assert (code == 0) == (status == PASS and rc == 0)


@pytest.mark.parametrize(("rc", "status"), [(2, "error"), (0, "parse_mismatch")])
def test_a_confused_parsers_reason_carries_its_first_note(rc: int, status: str) -> None:
    """Not "could not interpret the output" beside a correct finding: the reason names
    what the parser found missing or unrecognised."""
    result = ParseResult(parser_ok=False, notes=["junit report not found: junit.xml", "other"])
    verdict = reconcile(Exit(rc), result)
    assert (verdict.status, verdict.reason) == (
        status, f"exit code {rc} {'and' if rc else 'but'} the parser's evidence is incomplete:"
                " junit report not found: junit.xml")
    bare = reconcile(Exit(rc), ParseResult(parser_ok=False))
    assert bare.reason is not None
    assert bare.reason.endswith("evidence is incomplete")


def test_a_run_with_a_part_that_never_ran_is_an_error_even_at_exit_code_0() -> None:
    """A shard merge missing a shard or a planned test: nothing contradicts, something is
    absent, so ``error`` (a contradiction at exit code 0 stays ``parse_mismatch``)."""
    absent = ParseResult(parser_ok=False, notes=["no shard ran shard(s) 2/2"], unrun=True)
    contradicted = ParseResult(parser_ok=False, notes=["a test run by two shards"])
    assert reconcile(Exit(0), absent).status == ERROR
    assert "never ran: no shard ran shard(s) 2/2" in (reconcile(Exit(0), absent).reason or "")
    assert reconcile(Exit(0), contradicted).status == PARSE_MISMATCH
    assert reconcile(Exit(1), absent).status == ERROR


@pytest.mark.parametrize(("rc", "words"), [(-9, "killed by SIGKILL"), (-11, "killed by SIGSEGV"),
                                           (-64, "killed by signal 64")])
def test_a_negative_exit_code_is_named_as_the_signal_that_ended_the_tool(
        rc: int, words: str) -> None:
    """A check that crashed read "exit code -9": Python's way to say a signal killed it."""
    assert reconcile(Exit(rc), ParseResult(evidence_expected=False)).reason == (
        f"exit code {rc} ({words})")
    found = ParseResult(findings=[FINDING])
    assert reconcile(Exit(rc), found).reason == f"exit code {rc} ({words}) with 1 finding(s)"
    assert reconcile(Exit(3), ParseResult(evidence_expected=False)).reason == "exit code 3"
