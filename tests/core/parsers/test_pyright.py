"""The pyright parser on real ``pyright --outputjson`` logs (tests/fixtures/pyright)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers._logtext import LogSample
from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.pyright_json import PyrightParser, find_documents
from ckdn.reconcile import FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import run_parser
from ckdn.testing.strategies import garbage, mutations
from tests.timing import LINEAR_GROWTH

from .conftest import FIXTURES, CaseLoader, status
from .documented import check_documented_example
from .garbage import long_lines, parse_growth

PARSER = PyrightParser()
ERRORS_LOG = (FIXTURES / "pyright" / "errors" / "full.log").read_bytes()
PREAMBLE = b"".join(
    line for line in (FIXTURES / "pyright" / "debug_preamble" / "full.log").read_bytes()
    .splitlines(keepends=True) if b" - DEBUG - " in line)

ERROR_IDS = [
    "shapes.py:7:12:reportReturnType",
    "shapes.py:11:18:reportAssignmentType",
    "shapes.py:13:5:reportUndefinedVariable",
    "use.py:3:6:reportArgumentType",
]


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("pyright", PARSER, load_case)


def test_errors_are_located_one_based_with_their_rule(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pyright", "errors"))
    assert [f.id for f in result.findings] == ERROR_IDS
    first = result.findings[0]
    assert first.location == "shapes.py:7:12"
    assert first.message == 'Type "int" is not assignable to return type "str" [reportReturnType]'


def test_continuation_lines_lose_their_no_break_space_indent(load_case: CaseLoader) -> None:
    first = PARSER.parse(load_case("pyright", "errors")).findings[0]
    assert first.detail == ('  "int" is not assignable to "str"',)


def test_text_before_the_json_is_skipped(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pyright", "debug_preamble"))
    assert result.parser_ok
    assert [f.id for f in result.findings] == ERROR_IDS


def test_text_after_the_json_is_ignored(load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "errors")
    Path(ctx.log_path).write_bytes(PREAMBLE + ERRORS_LOG + PREAMBLE)
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert [f.id for f in result.findings] == ERROR_IDS


def test_a_compact_one_line_document_is_read(load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "errors")
    doc = json.loads(ERRORS_LOG)
    Path(ctx.log_path).write_bytes(PREAMBLE + json.dumps(doc).encode() + b"\n")
    assert [f.id for f in PARSER.parse(ctx).findings] == ERROR_IDS


def test_syntax_errors_without_a_rule_are_type_errors(load_case: CaseLoader) -> None:
    first = PARSER.parse(load_case("pyright", "syntax_error")).findings[0]
    assert (first.id, first.message) == ("broken.py:1:9:error", '"(" was not closed [error]')


def test_warnings_and_information_are_counted_never_findings(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pyright", "warning_only"))
    assert result.findings == []
    assert result.summary["counts"] == {"errors": 0, "warnings": 1, "info": 1, "files": 1}


def test_a_run_that_analysed_no_file_fails_its_gate_unless_allowed(load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "no_files")
    assert PARSER.parse(ctx).gate_failures == ["pyright analysed no files"]
    allowed = load_case("pyright", "clean", options={"allow_no_files": True})
    assert status(allowed, PARSER.parse(allowed)) == PASS


def test_a_log_without_the_document_names_the_flag_and_quotes_the_log(
        load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pyright", "missing_path"))
    assert not result.parser_ok
    assert "--outputjson" in result.notes[0]
    assert "does not exist" in result.notes[0]


@pytest.mark.parametrize("key", ["errorCount", "warningCount", "informationCount"])
def test_summary_counts_disagreeing_with_diagnostics_are_not_understood(
        load_case: CaseLoader, key: str) -> None:
    ctx = load_case("pyright", "errors")
    doc = json.loads(ERRORS_LOG)
    doc["summary"][key] += 1
    Path(ctx.log_path).write_text(json.dumps(doc, indent=4), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert f"summary.{key}" in result.notes[0]


def test_an_unknown_severity_is_format_drift(load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "errors")
    doc = json.loads(ERRORS_LOG)
    doc["generalDiagnostics"][0]["severity"] = "fatal"
    Path(ctx.log_path).write_text(json.dumps(doc, indent=4), encoding="utf-8")
    assert not PARSER.parse(ctx).parser_ok


def test_a_brace_line_of_other_text_does_not_hide_the_document(tmp_path: Path) -> None:
    (tmp_path / "full.log").write_bytes(b"{\nnot json\n}\n" + ERRORS_LOG)
    around = LogSample()
    found = find_documents(ParseContext(check="pyright", run_dir=tmp_path, cwd=tmp_path, rc=1),
                           around)
    assert found.first is not None
    assert found.first.summary["errorCount"] == 4
    assert around.lines == ["{", "not json", "}"]


# --- the log is pyright's document: damaged or not pyright's, it is loud --------------------
# (other tools' logs, generated garbage: also the conformance kit, test_conformance.py)

def _parse_log(log: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, log=log)


@given(cut=st.integers(min_value=0, max_value=len(ERRORS_LOG) - 3), rc=st.sampled_from([0, 1]))
def test_a_truncated_document_is_never_read(cut: int, rc: int) -> None:
    result = _parse_log(ERRORS_LOG[:cut], rc)
    assert not result.parser_ok
    assert reconcile(Exit(rc), result).status != PASS


@given(data=st.data(), rc=st.sampled_from([0, 1, 4]))
def test_a_mutated_log_never_raises_and_never_passes_unread(data: st.DataObject, rc: int) -> None:
    result = _parse_log(data.draw(mutations(PREAMBLE + ERRORS_LOG, most=4)), rc)
    verdict = reconcile(Exit(rc), result).status
    if rc != 0:
        assert verdict != PASS
    # The document holds four errors: read or not, it never comes out green.
    assert verdict != PASS


@given(log=garbage(max_size=300), rc=st.sampled_from([0, 1, 2]))
def test_garbage_logs_are_loud(log: bytes, rc: int) -> None:
    result = _parse_log(log, rc)
    assert not result.parser_ok
    assert reconcile(Exit(rc), result).status != PASS


# --- only what one pyright run printed is read ------------------------------------------------

CLEAN_LOG = (FIXTURES / "pyright" / "clean" / "full.log").read_bytes()
#: A real Python traceback (pip-audit's, when the vulnerability service is unreachable).
TRACEBACK = b"".join((FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
                     .splitlines(keepends=True)[:12])


@pytest.mark.parametrize("log", [CLEAN_LOG + ERRORS_LOG, ERRORS_LOG + CLEAN_LOG,
                                 CLEAN_LOG + CLEAN_LOG], ids=["clean-first", "errors-first",
                                                              "clean-twice"])
def test_two_pyright_documents_are_never_green(log: bytes) -> None:
    result = _parse_log(log, 0)
    assert not result.parser_ok
    assert "2 pyright documents (one run prints one)" in result.notes[-1]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_a_json_object_that_is_not_pyrights_document_is_not_read_as_one() -> None:
    # pyright's clean document without its version and time: another tool's summary object.
    foreign = json.loads(CLEAN_LOG)
    del foreign["version"], foreign["time"]
    alone = _parse_log(json.dumps(foreign).encode() + b"\n", 0)
    assert not alone.parser_ok
    assert "1 JSON object(s) that are not pyright's document" in alone.notes[0]
    before = _parse_log(json.dumps(foreign).encode() + b"\n" + ERRORS_LOG, 1)
    assert not before.parser_ok
    assert [f.id.rsplit("/", 1)[-1] for f in before.findings] == [
        i.rsplit("/", 1)[-1] for i in ERROR_IDS]


def test_pyrights_complaints_about_its_config_beside_a_clean_document_are_never_green(
        load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "bad_config")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert not result.parser_ok
    assert 'Config "typeCheckingMode" entry must contain' in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_traceback_beside_a_clean_document_is_never_green() -> None:
    result = _parse_log(CLEAN_LOG + TRACEBACK, 0)
    assert "Traceback (most recent call last):" in result.notes[0]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_warnings_pyright_fails_on_with_the_warnings_flag_are_findings(
        load_case: CaseLoader) -> None:
    ctx = load_case("pyright", "warnings_flag")
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    (warning,) = result.findings
    assert (warning.kind, warning.id) == ("type_warning", "probe.py:3:8:reportMissingImports")
    assert result.notes == ["pyright exited 1 with no error, only 1 warning(s) (--warnings): "
                            "those are what it failed on, so they are the findings"]
    assert status(ctx, result) == FAIL


@pytest.mark.parametrize(("shape", "line"), long_lines(
    "{", "{\"a\": ", "2026-11-29 14:36:34,679 - "))
def test_a_200000_character_line_is_read_in_linear_time(shape: str, line: str) -> None:
    assert parse_growth(PARSER, line) < LINEAR_GROWTH
    assert parse_growth(PARSER, line, before=CLEAN_LOG.decode()) < LINEAR_GROWTH
