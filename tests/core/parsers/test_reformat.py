"""The reformat parser on real ``black --check`` / ``ruff format --check`` logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.reformat import ReformatParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import run_parser
from ckdn.testing.strategies import mutations, truncations
from tests.timing import LINEAR_GROWTH

from .conftest import FIXTURES, CaseLoader, status
from .documented import check_documented_example
from .garbage import long_lines, parse_growth

PARSER = ReformatParser()
CASES = sorted(p.parent.name for p in (FIXTURES / "reformat").glob("*/case.json"))


# case -> (status, format_violation ids, format_error ids)
EXPECTED: dict[str, tuple[str, set[str], set[str]]] = {
    "black_violations": (FAIL, {"spacing.py", "sub/quotes.py"}, set()),
    "black_clean": (PASS, set(), set()),
    "black_syntax_error": (FAIL, {"ugly.py"}, {"broken.py:1:9:cannot-parse"}),
    "black_undecodable": (FAIL, set(), {"latin1.py:cannot-format"}),
    "black_no_files": (FAIL, set(), set()),
    "black_quiet_clean": (PARSE_MISMATCH, set(), set()),
    "ruff_violations": (FAIL, {"spacing.py", "sub/quotes.py"}, set()),
    "ruff_colored_violations": (FAIL, {"spacing.py", "sub/quotes.py"}, set()),
    "ruff_concise_violations": (FAIL, {"spacing.py", "sub/quotes.py"}, set()),
    "ruff_clean": (PASS, set(), set()),
    "ruff_syntax_error": (FAIL, {"ugly.py"}, {"broken.py:1:10:invalid-syntax"}),
    "ruff_concise_syntax_error": (FAIL, {"ugly.py"}, {"broken.py:1:10:invalid-syntax"}),
    "ruff_syntax_error_only": (FAIL, set(), {"broken.py:1:10:invalid-syntax"}),
    "ruff_undecodable": (FAIL, set(), {"latin1.py:1:1:io"}),
    "ruff_no_files": (FAIL, set(), set()),
}


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("reformat", PARSER, load_case)


def test_every_recorded_case_has_an_expectation() -> None:
    assert set(CASES) == set(EXPECTED)


@pytest.mark.parametrize("case", CASES)
def test_recorded_case_reconciles_to_its_expected_status_and_findings(
        load_case: CaseLoader, case: str) -> None:
    ctx = load_case("reformat", case)
    result = PARSER.parse(ctx)
    expected_status, violations, errors = EXPECTED[case]
    assert status(ctx, result) == expected_status, result.notes
    assert {f.id for f in result.findings if f.kind == "format_violation"} == violations
    assert {f.id for f in result.findings if f.kind == "format_error"} == errors


def test_ruff_format_exit_2_on_a_syntax_error_is_a_located_failure_not_clean(
        load_case: CaseLoader) -> None:
    # The log's only summary is "1 file already formatted"; the error line decides.
    ctx = load_case("reformat", "ruff_syntax_error_only")
    result = PARSER.parse(ctx)
    (finding,) = result.findings
    assert ctx.rc == 2
    assert finding.kind == "format_error"
    assert finding.location == "broken.py:1:10"
    assert finding.message == (
        "invalid-syntax: Expected a parameter or the end of the parameter list")
    assert "1 | def half(:" in finding.detail


def test_black_parse_error_keeps_the_source_line_and_caret(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("reformat", "black_syntax_error"))
    error = next(f for f in result.findings if f.kind == "format_error")
    assert error.detail == ("    def half(:", "            ^", "ParseError: bad input")


def test_black_absolute_paths_become_relative_locations(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("reformat", "black_violations"))
    assert {f.message for f in result.findings} == {
        "would reformat spacing.py", "would reformat sub/quotes.py"}


def test_ruff_diff_is_the_detail_of_a_violation(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("reformat", "ruff_violations"))
    quotes = next(f for f in result.findings if f.id == "sub/quotes.py")
    assert quotes.location == "sub/quotes.py:1:3"
    assert quotes.detail == ("  - y  =  2", "1 + y = 2")


def test_long_diff_detail_is_cut_to_the_snippet_limit(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("reformat", "ruff_violations", max_snippet_lines=3))
    spacing = next(f for f in result.findings if f.id == "spacing.py")
    assert spacing.detail == ("  - x=1", "  - values = [1,2,", "  -   3]")
    assert spacing.detail_omitted == 8


def test_summary_counts_come_from_the_lines_and_the_formatter(load_case: CaseLoader) -> None:
    counts = PARSER.parse(load_case("reformat", "black_syntax_error")).summary["counts"]
    assert counts == {"would_reformat": 1, "format_errors": 1, "unchanged": 1}


def test_no_files_is_a_gate_failure_unless_allowed(load_case: CaseLoader) -> None:
    ctx = load_case("reformat", "ruff_no_files")
    assert PARSER.parse(ctx).gate_failures == ["the formatter found no Python files to check"]
    allowed = load_case("reformat", "black_no_files", options={"allow_no_files": True})
    assert status(allowed, PARSER.parse(allowed)) == PASS


def test_quiet_black_cannot_confirm_a_clean_run(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("reformat", "black_quiet_clean"))
    assert not result.parser_ok
    assert "without -q" in result.notes[0]


def _rewrite_log(ctx: ParseContext, drop: str) -> None:
    lines = Path(ctx.log_path).read_text(encoding="utf-8").splitlines(keepends=True)
    Path(ctx.log_path).write_text("".join(ln for ln in lines if drop not in ln), encoding="utf-8")


def test_a_summary_disagreeing_with_the_lines_is_not_understood(load_case: CaseLoader) -> None:
    ctx = load_case("reformat", "black_violations")
    _rewrite_log(ctx, "quotes.py")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "2 file(s) would be reformatted but 1" in result.notes[0]


def test_black_failure_count_disagreeing_with_error_lines_is_not_understood(
        load_case: CaseLoader) -> None:
    ctx = load_case("reformat", "black_undecodable")
    _rewrite_log(ctx, "cannot format")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert status(ctx, result) == ERROR


def test_nonzero_exit_with_only_a_clean_summary_is_not_understood(load_case: CaseLoader) -> None:
    # ruff exits 2 on an undecodable file; without its error lines only
    # "1 file already formatted" would remain: that must not look explained.
    ctx = load_case("reformat", "ruff_undecodable")
    _rewrite_log(ctx, "latin1.py")
    _rewrite_log(ctx, "io: ")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert status(ctx, result) == ERROR


@pytest.mark.parametrize("case", ["black_clean", "ruff_clean"])
def test_a_summary_line_cut_short_is_never_a_clean_run(case: str) -> None:
    log = (FIXTURES / "reformat" / case / "full.log").read_bytes()
    start = log.rstrip().rfind(b"\n") + 1
    for cut in range(start, len(log.rstrip())):
        result = run_parser(PARSER, 0, log=log[:cut])
        assert reconcile(Exit(0), result).status != PASS, log[start:cut]


# --- a formatter's log is clean only by its summary ------------------------------------------
# (garbage, truncations, damage, other tools' logs: the conformance kit, test_conformance.py)

REAL_LOGS = [(FIXTURES / "reformat" / case / "full.log").read_bytes() for case in CASES]
CLEAN_MARKERS = ("would be left unchanged", "already formatted", "No Python files")


def _parse_log(log: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, log=log)


@given(data=st.data())
def test_a_damaged_log_without_a_clean_summary_never_passes(data: st.DataObject) -> None:
    log = data.draw(st.sampled_from(REAL_LOGS))
    damaged = data.draw(st.one_of(truncations(log), mutations(log)) if log else st.just(log))
    if not any(marker in damaged.decode("utf-8", "replace") for marker in CLEAN_MARKERS):
        assert reconcile(Exit(0), _parse_log(damaged, 0)).status != PASS


# --- only the formatter's own output is read as its run ---------------------------------------

def _log(case: str) -> bytes:
    return (FIXTURES / "reformat" / case / "full.log").read_bytes()


#: A real Python traceback (pip-audit's, when the vulnerability service is unreachable).
TRACEBACK = b"".join((FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
                     .splitlines(keepends=True)[:12])


@pytest.mark.parametrize("case", ["black_clean", "ruff_clean"])
def test_a_traceback_beside_a_clean_summary_is_never_green(case: str) -> None:
    result = _parse_log(TRACEBACK + _log(case), 0)
    assert not result.parser_ok
    assert "are not the formatter's output" in result.notes[0]
    assert "Traceback (most recent call last):" in result.notes[0]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_blacks_failure_banner_beside_a_clean_summary_is_never_green() -> None:
    banner = next(line for line in _log("black_violations").splitlines(keepends=True)
                  if line.startswith(b"Oh no!"))
    clean = _log("black_clean").replace(b"All done!", banner.rstrip(b"\n"))
    result = _parse_log(clean, 0)
    assert result.notes == ["exit code 0 but black says it failed (\"Oh no!\")"]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


@pytest.mark.parametrize(("shape", "line"), long_lines(
    "would reformat ", "Would reformat: ", "error: cannot format ", "error: cannot parse: ",
    "error: Failed to parse ", "unformatted: ", " --> ", "a.py:1:2: ", "1 file", "1 | "))
def test_a_200000_character_line_is_read_in_linear_time(shape: str, line: str) -> None:
    assert parse_growth(PARSER, line) < LINEAR_GROWTH
    assert parse_growth(PARSER, line, before="unformatted: x\n", rc=1) < LINEAR_GROWTH
