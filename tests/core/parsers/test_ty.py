"""The ty parser on real ``ty check`` logs, full and concise layouts (tests/fixtures/ty)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseResult
from ckdn.parsers.ty_text import TyParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile

from .conftest import FIXTURES, CaseLoader, case_meta, status
from .documented import check_documented_example
from .garbage import cut_and_mutated, parse_run

PARSER = TyParser()
CASES = sorted(p.parent.name for p in (FIXTURES / "ty").glob("*/case.json"))

ERROR_IDS = [
    "shapes.py:7:12:invalid-explicit-return",
    "shapes.py:11:18:invalid-assignment",
    "shapes.py:13:5:unresolved-reference",
    "use.py:3:6:invalid-argument-type",
]


# case -> (status, findings, counts)
EXPECTED: dict[str, tuple[str, int, dict[str, int]]] = {
    "full_errors": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "full_errors_colored": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "concise_errors": (FAIL, 4, {"errors": 4, "warnings": 0, "info": 1}),
    "full_clean": (PASS, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "concise_clean": (PASS, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "full_syntax_error": (FAIL, 2, {"errors": 2, "warnings": 0, "info": 0}),
    "concise_syntax_error": (FAIL, 2, {"errors": 2, "warnings": 0, "info": 0}),
    "full_warning_only": (ERROR, 0, {"errors": 0, "warnings": 1, "info": 1}),
    "concise_warning_only": (ERROR, 0, {"errors": 0, "warnings": 1, "info": 1}),
    "full_warning_exit_zero": (PASS, 0, {"errors": 0, "warnings": 1, "info": 1}),
    "full_info_only": (PASS, 0, {"errors": 0, "warnings": 0, "info": 1}),
    "full_no_files": (FAIL, 0, {"errors": 0, "warnings": 0, "info": 0}),
    "full_missing_file": (FAIL, 1, {"errors": 1, "warnings": 0, "info": 0}),
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
    assert result.summary["counts"] == counts


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


def test_warning_only_exit_1_is_an_error_that_says_it_held_only_warnings(
        load_case: CaseLoader) -> None:
    ctx = load_case("ty", "full_warning_only")
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    assert result.parser_ok
    assert result.findings == []
    (note,) = result.notes
    assert note.startswith("ty exited 1 with no error diagnostics, only 1 warning(s) and 1 info")
    assert "--exit-zero-on-warning" in note
    assert status(ctx, result) == ERROR


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


# --- garbage never passes -----------------------------------------------------------------

REAL_LOGS = [(FIXTURES / "ty" / case / "full.log").read_bytes() for case in CASES]


def _parse_log(log: bytes, rc: int) -> ParseResult:
    return parse_run(PARSER, rc, log=log)


@given(log=st.binary(max_size=300), rc=st.sampled_from([0, 1, 2]))
def test_garbage_logs_never_raise_and_never_pass_without_a_verdict(log: bytes, rc: int) -> None:
    result = _parse_log(log, rc)
    if rc != 0 or not (b"All checks passed!" in log or b"Found " in log):
        assert reconcile(Exit(rc), result).status != PASS


@given(data=st.data(), rc=st.sampled_from([0, 1, 2]))
def test_truncated_or_mutated_real_logs_never_raise(data: st.DataObject, rc: int) -> None:
    result = _parse_log(cut_and_mutated(data, REAL_LOGS), rc)
    if rc != 0:
        assert reconcile(Exit(rc), result).status != PASS
