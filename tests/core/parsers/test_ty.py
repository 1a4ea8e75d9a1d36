"""The ty parser on real ``ty check`` logs, full and concise layouts (tests/fixtures/ty)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseResult
from ckdn.parsers.ty_text import TyParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import run_parser
from tests.timing import LINEAR_GROWTH

from .conftest import FIXTURES, CaseLoader, case_meta, status
from .documented import check_documented_example
from .garbage import long_lines, parse_growth

PARSER = TyParser()
CASES = sorted(p.parent.name for p in (FIXTURES / "ty").glob("*/case.json"))

ERROR_IDS = [
    "shapes.py:7:12:invalid-explicit-return",
    "shapes.py:11:18:invalid-assignment",
    "shapes.py:13:5:unresolved-reference",
    "use.py:3:6:invalid-argument-type",
]


# case -> (status, findings, counts)
EXPECTED: dict[str, tuple[str, int, dict[str, int] | None]] = {
    "full_errors": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "full_errors_colored": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "concise_errors": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "full_clean": (PASS, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "concise_clean": (PASS, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "full_syntax_error": (FAIL, 2, {"errors": 2, "warnings": 0, "info": 0}),
    "concise_syntax_error": (FAIL, 2, {"errors": 2, "warnings": 0, "info": 0}),
    "full_warning_only": (FAIL, 1, {"errors": 0, "warnings": 1, "info": 1}),
    "concise_warning_only": (FAIL, 1, {"errors": 0, "warnings": 1, "info": 1}),
    "full_warning_exit_zero": (PASS, 0, {"errors": 0, "warnings": 1, "info": 1}),
    "full_info_only": (PASS, 0, {"errors": 0, "warnings": 0, "info": 1}),
    "full_no_files": (FAIL, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "full_missing_file": (FAIL, 1, {"errors": 1, "warnings": 0, "info": 0}),
    "bad_config": (ERROR, 0, None),
    "verbose_clean": (PASS, 0, {"errors": 0, "warnings": 0, "info": 0}),
}


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("ty", PARSER, load_case)


def test_every_recorded_case_has_an_expectation() -> None:
    assert set(CASES) == set(EXPECTED)


def test_fixtures_record_the_ty_version_they_came_from() -> None:
    assert {case_meta("ty", case)["version"] for case in CASES} == {"ty 0.0.108"}


@pytest.mark.parametrize("case", CASES)
def test_recorded_case_reconciles_to_its_expected_status_and_counts(
        load_case: CaseLoader, case: str) -> None:
    ctx = load_case("ty", case)
    result = PARSER.parse(ctx)
    expected_status, findings, counts = EXPECTED[case]
    assert status(ctx, result) == expected_status, result.notes
    assert result.total == findings
    assert result.summary.get("counts") == counts


@pytest.mark.parametrize("case", ["full_errors", "concise_errors", "full_errors_colored"])
def test_both_layouts_give_the_same_error_ids(load_case: CaseLoader, case: str) -> None:
    assert [f.id for f in PARSER.parse(load_case("ty", case)).findings] == ERROR_IDS


def test_full_layout_keeps_the_frame_and_sub_diagnostics_as_detail(load_case: CaseLoader) -> None:
    findings = PARSER.parse(load_case("ty", "full_errors")).findings
    argument = findings[3]
    assert argument.message == "Argument to function `area` is incorrect [invalid-argument-type]"
    assert argument.location == "use.py:3:6"
    assert argument.detail[:3] == ('3 | area("3", 4)',
                                   '  |      ^^^ Expected `int`, found `Literal["3"]`',
                                   "info: Function defined here")


def test_concise_layout_keeps_the_annotation_in_the_message(load_case: CaseLoader) -> None:
    finding = PARSER.parse(load_case("ty", "concise_errors")).findings[0]
    assert finding.message == ("Return type does not match returned value: expected `str`, "
                               "found `int` [invalid-explicit-return]")
    assert finding.detail == ()


@pytest.mark.parametrize("case", ["full_warning_only", "concise_warning_only"])
def test_warnings_ty_exits_1_on_are_type_warning_findings(load_case: CaseLoader,
                                                          case: str) -> None:
    ctx = load_case("ty", case)
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    assert result.parser_ok
    (warning,) = result.findings
    assert (warning.id, warning.kind, warning.location) == (
        "debug.py:2:1:undefined-reveal", "type_warning", "debug.py:2:1")
    assert result.notes == ["ty exits 1 on warnings (unless run with --exit-zero-on-warning): "
                            "its 1 warning(s) are findings (type_warning)"]
    assert status(ctx, result) == FAIL


def test_warnings_beside_errors_are_findings_too_when_ty_exits_1(load_case: CaseLoader) -> None:
    ctx = load_case("ty", "concise_errors")
    warning = (FIXTURES / "ty" / "concise_warning_only" / "full.log").read_text().splitlines()[0]
    lines = Path(ctx.log_path).read_text().splitlines()
    Path(ctx.log_path).write_text("\n".join([warning, *lines[:-1], "Found 6 diagnostics", ""]))
    result = PARSER.parse(ctx)
    assert [f.kind for f in result.findings] == ["type_warning"] + ["type_error"] * 4
    assert status(ctx, result) == FAIL


def test_warnings_ty_accepted_with_exit_code_0_are_counted_not_findings(
        load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_warning_exit_zero")
    result = PARSER.parse(ctx)
    assert (result.findings, result.summary["counts"]["warnings"]) == ([], 1)
    assert status(ctx, result) == PASS


def test_io_error_without_a_frame_is_located_by_the_path_in_its_message(
        load_case: CaseLoader) -> None:
    (finding,) = PARSER.parse(load_case("ty", "full_missing_file")).findings
    assert finding.location == "missing.py"
    assert finding.message == "`missing.py`: No such file or directory (os error 2) [io]"
    assert "/tmp/" not in finding.message


def test_no_python_files_is_a_gate_failure_unless_allowed(load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_no_files", options={"allow_no_files": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_found_count_disagreeing_with_diagnostics_read_is_not_understood(
        load_case: CaseLoader) -> None:
    ctx = load_case("ty", "concise_errors")
    log = Path(ctx.log_path)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(ln for ln in lines if "info[" not in ln), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "found 5 diagnostic(s) but 4 were read" in result.notes[0]


def test_exit_0_without_a_verdict_line_is_a_parse_mismatch(load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_clean")
    Path(ctx.log_path).write_text("", encoding="utf-8")
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_exit_0_with_warnings_but_no_found_line_is_a_parse_mismatch(
        load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_warning_exit_zero")
    text = Path(ctx.log_path).read_text(encoding="utf-8")
    Path(ctx.log_path).write_text(text.replace("Found 2 diagnostics\n", ""), encoding="utf-8")
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_found_line_right_after_a_frame_still_closes_the_block(load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_errors")
    text = Path(ctx.log_path).read_text(encoding="utf-8")
    Path(ctx.log_path).write_text(text.replace("\n\nFound 5", "\nFound 5"), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert "Found 5 diagnostics" not in result.findings[-1].detail


# --- the recorded logs -------------------------------------------------------------------
# (garbage, truncations, damage, other tools' logs: the conformance kit, test_conformance.py)

REAL_LOGS = [(FIXTURES / "ty" / case / "full.log").read_bytes() for case in CASES]


def _parse_log(log: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, log=log)


# --- only a complete ty run is read as one ----------------------------------------------------

@given(cut=st.integers(min_value=1, max_value=len(REAL_LOGS[CASES.index("full_errors")]) - 25))
def test_a_log_cut_before_tys_verdict_gives_no_findings_and_no_counts(cut: int) -> None:
    log = REAL_LOGS[CASES.index("full_errors")][:cut]
    result = _parse_log(log, 1)
    assert not result.parser_ok
    assert (result.findings, result.summary) == ([], {})
    assert "the log was cut short" in result.notes[0]
    assert reconcile(Exit(1), result).status == ERROR


@pytest.mark.parametrize("case", [c for c in CASES if b"\nFound " in REAL_LOGS[CASES.index(c)]])
def test_a_verdict_cut_short_is_never_a_clean_run(case: str) -> None:
    # At exit code 0 (--exit-zero-on-warning) warnings are no findings: the verdict decides.
    log = REAL_LOGS[CASES.index(case)]
    end = log.rindex(b"\nFound ") + 1
    for cut in range(end, len(log.rstrip())):
        assert reconcile(Exit(0), _parse_log(log[:cut], 0)).status != PASS, log[end:cut]


def test_tys_own_failure_is_quoted_and_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("ty", "bad_config")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert ("ty failed Cause: /tmp/ckdn-fixtures/ty/bad_config/pyproject.toml is not a valid "
            "`pyproject.toml`") in result.notes[0]
    assert status(ctx, result) == ERROR
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_another_tools_lines_beside_tys_verdict_are_not_ty_output() -> None:
    foreign = (FIXTURES / "ruff" / "config_error" / "full.log").read_bytes()
    result = _parse_log(foreign + REAL_LOGS[CASES.index("full_clean")], 0)
    assert "line(s) of the log are not ty's output" in result.notes[0]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


@pytest.mark.parametrize(("shape", "line"), long_lines(
    "error[", "error[x]: ", "a.py:1:1: error[x] ", " --> ", "Found ", "WARN "))
def test_a_200000_character_line_is_read_in_linear_time(shape: str, line: str) -> None:
    assert parse_growth(PARSER, line) < LINEAR_GROWTH
    assert parse_growth(PARSER, line, before="error[x]: y\n", rc=1) < LINEAR_GROWTH
