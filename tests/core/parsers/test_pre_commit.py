"""The pre_commit parser on real ``pre-commit run --all-files`` logs (tests/fixtures/pre_commit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseResult
from ckdn.parsers.pre_commit import PreCommitParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import run_parser
from tests.timing import LINEAR_GROWTH

from .conftest import FIXTURES, CaseLoader, status
from .documented import check_documented_example
from .garbage import long_lines, parse_growth

PARSER = PreCommitParser()
REAL_LOG = (FIXTURES / "pre_commit" / "show_diff" / "full.log").read_bytes()
FAILED_IDS = ["no-trailing-space", "append-marker", "exit-three", "long-output"]


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("pre_commit", PARSER, load_case)


def test_every_failed_hook_is_a_hook_failure_named_by_its_hook_id(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "mixed")
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert [f.id for f in result.findings] == FAILED_IDS
    assert {f.kind for f in result.findings} == {"hook_failure"}
    assert status(ctx, result) == FAIL


def test_the_message_carries_the_exit_code_and_the_modified_files_lines(
        load_case: CaseLoader) -> None:
    by_id = {f.id: f for f in PARSER.parse(load_case("pre_commit", "mixed")).findings}
    assert by_id["exit-three"].message == "exits 3 with a message Failed - exit code: 3"
    assert by_id["append-marker"].message == (
        "appends a marker (modifies files) Failed - files were modified by this hook")


def test_the_hooks_output_is_the_detail_without_its_framing_blank_lines(
        load_case: CaseLoader) -> None:
    by_id = {f.id: f for f in PARSER.parse(load_case("pre_commit", "mixed")).findings}
    assert by_id["no-trailing-space"].detail == ("app.py:2:    x = 1",)
    assert by_id["exit-three"].detail == ("found 1 problem in app.py",)
    assert by_id["append-marker"].detail == ()


def test_long_hook_output_is_bounded_with_a_counted_marker(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pre_commit", "mixed", max_snippet_lines=5))
    long = next(f for f in result.findings if f.id == "long-output")
    assert long.detail == tuple(f"problem {i} - something is wrong" for i in range(5))
    assert long.detail_omitted == 35


def test_verbose_output_of_a_passing_hook_is_not_evidence(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pre_commit", "mixed"))
    assert all("all good" not in line for f in result.findings for line in f.detail)
    assert result.summary == {"counts": {"hooks": 7, "passed": 2, "failed": 4, "skipped": 1}}


def test_the_diff_shown_on_failure_is_not_part_of_the_last_hooks_output(
        load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pre_commit", "show_diff"))
    assert [f.id for f in result.findings] == FAILED_IDS
    assert all(not line.startswith(("diff --git", "+# checked"))
               for f in result.findings for line in f.detail)


def test_forced_colour_reads_the_same_as_plain_text(load_case: CaseLoader) -> None:
    plain = PARSER.parse(load_case("pre_commit", "mixed"))
    colour = PARSER.parse(load_case("pre_commit", "color"))
    assert [(f.id, f.message, f.detail) for f in colour.findings] == [
        (f.id, f.message, f.detail) for f in plain.findings]


def test_a_passing_run_passes(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "passing")
    result = PARSER.parse(ctx)
    assert result.summary == {"counts": {"hooks": 3, "passed": 2, "failed": 0, "skipped": 1}}
    assert status(ctx, result) == PASS


def test_a_hook_that_only_modified_files_fails(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "modified_only")
    result = PARSER.parse(ctx)
    assert [f.id for f in result.findings] == ["append-marker"]
    assert status(ctx, result) == FAIL


@pytest.mark.parametrize("case", ["all_skipped", "skip_env"])
def test_a_run_where_every_hook_was_skipped_fails_its_gate(load_case: CaseLoader,
                                                           case: str) -> None:
    ctx = load_case("pre_commit", case)
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.gate_failures[0].startswith("every pre-commit hook was skipped")
    assert status(ctx, result) == FAIL


def test_allow_all_skipped_accepts_a_run_that_checked_nothing(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "all_skipped", options={"allow_all_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_a_config_with_no_hook_prints_nothing_and_cannot_be_read_as_green(
        load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "no_hooks")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "no pre-commit hook result line" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_pre_commits_own_error_is_an_error_quoting_its_reason(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "invalid_config")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "An error has occurred: InvalidConfigError:" in result.notes[0]
    assert "but got: 'no-such-language'" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_a_red_exit_without_a_failed_hook_is_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "passing", rc=1)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "exit code 1 but no hook Failed" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_failed_hooks_with_exit_code_zero_are_a_parse_mismatch(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "mixed", rc=0)
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_the_same_hook_id_twice_gets_distinct_ids(load_case: CaseLoader) -> None:
    ctx = load_case("pre_commit", "modified_only")
    log = Path(ctx.log_path).read_bytes()
    Path(ctx.log_path).write_bytes(log + log)
    assert [f.id for f in PARSER.parse(ctx).findings] == ["append-marker", "append-marker#2"]


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pre_commit", "mixed", top=2))
    assert [f.id for f in result.findings] == FAILED_IDS[:2]
    assert result.total == 4


# --- hook-shaped logs ---------------------------------------------------------------------
# (garbage, truncations, damage, other tools' logs: the conformance kit, test_conformance.py)

def _parse_log(log: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, log=log)


_lines = st.lists(st.sampled_from([
    "hook.....................Passed", "hook.....................Failed",
    "hook.......(no files to check)Skipped", "- hook id: x", "- exit code: 1", "",
    "output", "- files were modified by this hook", "An error has occurred: X",
    "pre-commit hook(s) made changes.", "\x1b[41mFailed\x1b[m"]), max_size=20)


@given(lines=_lines, rc=st.sampled_from([0, 1]))
def test_hook_shaped_logs_pass_only_when_green_hooks_ran_and_none_failed(
        lines: list[str], rc: int) -> None:
    result = _parse_log("\n".join(lines).encode(), rc)
    if reconcile(Exit(rc), result).status == PASS:
        assert rc == 0
        assert result.summary["counts"]["failed"] == 0
        assert result.summary["counts"]["passed"] >= 1


# --- only a complete pre-commit run is read as one -----------------------------------------

PASSING_LOG = (FIXTURES / "pre_commit" / "passing" / "full.log").read_bytes()
ERROR_LOG = (FIXTURES / "pre_commit" / "invalid_config" / "full.log").read_bytes()
#: A real Python traceback (pip-audit's, when the vulnerability service is unreachable).
TRACEBACK = b"".join(
    line for line in (FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
    .splitlines(keepends=True)[:12])
LINE_ENDS = {i + 1 for i, byte in enumerate(PASSING_LOG) if byte == ord("\n")}


@given(cut=st.integers(min_value=1, max_value=len(PASSING_LOG) - 1).filter(
    lambda cut: cut not in LINE_ENDS))
def test_a_passing_log_cut_anywhere_but_a_line_end_never_passes(cut: int) -> None:
    result = _parse_log(PASSING_LOG[:cut], 0)
    assert not result.parser_ok
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


#: The verbose hook of mixed's log: its hook line, meta lines and framed output block.
VERBOSE = REAL_LOG[REAL_LOG.index(b"passes with verbose output"):REAL_LOG.index(b"checks markdown")]


def test_a_passing_run_with_a_verbose_hook_passes() -> None:
    assert reconcile(Exit(0), _parse_log(PASSING_LOG + VERBOSE, 0)).status == PASS


@pytest.mark.parametrize("kept", [b"all good\n", b"all good\nreally\n"])
def test_a_verbose_hooks_output_cut_before_its_closing_blank_line_never_passes(
        kept: bytes) -> None:
    log = PASSING_LOG + VERBOSE[:VERBOSE.index(kept) + len(kept)]
    result = _parse_log(log, 0)
    assert "1 hook output block(s) without their closing blank line" in result.notes[0]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_pre_commits_own_error_after_passing_hooks_is_never_green() -> None:
    for rc in (0, 1):
        result = _parse_log(PASSING_LOG + ERROR_LOG, rc)
        assert not result.parser_ok
        assert "An error has occurred: InvalidConfigError" in result.notes[0]
        assert reconcile(Exit(rc), result).status != PASS


def test_a_traceback_beside_passing_hooks_is_not_pre_commits_output() -> None:
    result = _parse_log(PASSING_LOG + TRACEBACK, 0)
    assert not result.parser_ok
    assert "Traceback (most recent call last):" in result.notes[0]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


@pytest.mark.parametrize("line", ["x....Passed", "tests" + "." * 40 + "Passed",
                                  "build" + "." * 74 + "(3 warnings)Passed"])
def test_one_foreign_passed_line_is_never_a_pre_commit_run(line: str) -> None:
    result = _parse_log(line.encode() + b"\n", 0)
    assert not result.parser_ok
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_hook_lines_of_two_widths_are_not_one_pre_commit_run() -> None:
    wider = PASSING_LOG.replace(b"Passed\n", b".Passed\n", 1)
    result = _parse_log(wider, 0)
    assert not result.parser_ok
    assert "hook lines of widths 79, 80" in result.notes[0]


@pytest.mark.parametrize(("shape", "line"), long_lines(
    "x", "- hook id: ", "[INFO] ", "An error has occurred: "))
def test_a_200000_character_line_is_read_in_linear_time(shape: str, line: str) -> None:
    assert parse_growth(PARSER, line) < LINEAR_GROWTH
    assert parse_growth(PARSER, line[1:], before="x", after="Passed\n") < LINEAR_GROWTH
