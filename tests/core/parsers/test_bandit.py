"""The bandit parser on real ``bandit -f json`` reports (tests/fixtures/bandit)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.bandit import BanditParser
from ckdn.parsers.base import ParseContext
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS
from ckdn.testing import assert_loud, run_parser
from ckdn.testing.strategies import mutations

from .conftest import FIXTURES, CaseLoader, rewrite_json, status
from .documented import check_documented_example

PARSER = BanditParser()
REAL_REPORT = (FIXTURES / "bandit" / "issues" / "bandit.json").read_bytes()


def rewrite(ctx: ParseContext, change: Callable[[Any], object]) -> None:
    rewrite_json(ctx, "bandit.json", change)


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("bandit", PARSER, load_case)


def test_every_result_is_a_security_issue_with_a_path_line_test_id(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "issues", options={"allow_skipped": True})
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert [f.id for f in result.findings] == [
        "app.py:3:B403", "app.py:4:B404", "app.py:8:B602", "app.py:12:B301", "app.py:20:B324",
        "app.py:23:B105", "app.py:27:B101"]
    assert {f.kind for f in result.findings} == {"security_issue"}
    assert status(ctx, result) == FAIL


def test_message_leads_with_the_test_id_and_detail_with_severity_and_code(
        load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("bandit", "issues"))
    shell = next(f for f in result.findings if f.id == "app.py:8:B602")
    assert shell.message == "B602 subprocess call with shell=True identified, security issue."
    assert shell.location == "app.py:8:12"  # bandit's col_offset 11, made 1-based
    assert shell.detail == ("severity HIGH, confidence HIGH, CWE-78", "7 def run(cmd):",
                            "8     return subprocess.call(cmd, shell=True)", "9 ")


def test_summary_counts_issues_by_severity_files_and_nosec_skips(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("bandit", "issues"))
    assert result.summary == {"counts": {
        "issues": 7, "high": 2, "medium": 1, "low": 4, "filtered_out": 0, "files": 1,
        "unscanned": 1, "nosec": 0, "skipped_tests": 1}}


def test_a_file_bandit_could_not_parse_is_a_gate_failure_even_with_exit_code_zero(
        load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "unparsable")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.gate_failures == ["bandit could not scan 1 file(s)"]
    assert "unscanned: broken.py: syntax error while parsing AST from file" in result.notes[0]
    assert status(ctx, result) == FAIL


def test_allow_skipped_accepts_files_bandit_could_not_scan(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "unparsable", options={"allow_skipped": True})
    result = PARSER.parse(ctx)
    assert (result.gate_failures, result.notes) == ([], [])
    assert status(ctx, result) == PASS


def test_a_run_that_scanned_no_file_is_a_gate_failure(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "no_python")
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["bandit scanned no file"]
    assert status(ctx, result) == FAIL


def test_allow_skipped_accepts_a_run_that_scanned_no_file(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "no_python", options={"allow_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_a_clean_run_passes(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "clean")
    result = PARSER.parse(ctx)
    assert (result.findings, result.notes, result.gate_failures) == ([], [], [])
    assert status(ctx, result) == PASS


def test_bandits_own_severity_filter_is_respected_and_counted(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "high_only", options={"allow_skipped": True})
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert [f.id for f in result.findings] == ["app.py:8:B602", "app.py:20:B324"]
    assert result.summary["counts"]["filtered_out"] == 5
    assert status(ctx, result) == FAIL


def test_exit_zero_with_issues_in_the_report_is_a_parse_mismatch(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "exit_zero", options={"allow_skipped": True})
    result = PARSER.parse(ctx)
    assert result.total == 7
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_config_error_leaves_an_empty_report_and_is_an_error_quoting_bandit(
        load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "config_error")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "is empty (exit code 2 (bandit's usage or config error))" in result.notes[0]
    assert "Unable to find profile (no_such_profile)" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_a_missing_report_names_the_flags(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "clean")
    Path(ctx.run_dir, "bandit.json").unlink()
    result = PARSER.parse(ctx)
    assert "-f json -o {run_dir}/bandit.json" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_results_beyond_the_metrics_totals_are_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "issues", options={"allow_skipped": True})
    rewrite(ctx, lambda d: d["metrics"]["_totals"].update({"SEVERITY.HIGH": 1}))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "SEVERITY HIGH: 2 reported > 1 found" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_exit_code_one_with_no_result_is_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "clean", rc=1)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "exited 1 but its report lists no result" in result.notes[0]


def test_a_report_without_metrics_totals_is_format_drift(load_case: CaseLoader) -> None:
    ctx = load_case("bandit", "clean")
    rewrite(ctx, lambda d: d.pop("metrics"))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "not bandit's JSON format" in result.notes[0]


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("bandit", "issues", top=2))
    assert len(result.findings) == 2
    assert result.total == 7


@pytest.mark.parametrize("report", ["../outside.json", "/etc/passwd"])
def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader, report: str) -> None:
    result = PARSER.parse(load_case("bandit", "issues", options={"report": report}))
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


# --- a damaged report that is no longer bandit's is loud ------------------------------------------
# (garbage, truncations, other tools' reports, a missing report: the conformance kit, in
# test_conformance.py)

def _is_bandits(report: bytes) -> bool:
    try:
        data = json.loads(report)
    except (ValueError, RecursionError):
        return False
    return (isinstance(data, dict) and isinstance(data.get("results"), list)
            and isinstance(data.get("metrics"), dict))


@given(report=mutations(REAL_REPORT), rc=st.sampled_from([0, 1]))
def test_a_damaged_report_that_is_no_longer_bandits_is_loud(report: bytes, rc: int) -> None:
    result = run_parser(PARSER, rc, files={"bandit.json": report})
    if not _is_bandits(report):
        assert_loud(result, rc, what="a damaged bandit.json")


# --- bandit's log beside its report -----------------------------------------------------------

@pytest.mark.parametrize("source", ["bandit/config_error", "pip_audit/osv_unreachable"],
                         ids=["bandit-error-line", "traceback"])
def test_a_clean_report_beside_an_error_in_the_log_is_never_green(load_case: CaseLoader,
                                                                  source: str) -> None:
    ctx = load_case("bandit", "clean")
    failing = (FIXTURES / source / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(Path(ctx.log_path).read_bytes() + failing)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "error(s) beside its report (first: " in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH
