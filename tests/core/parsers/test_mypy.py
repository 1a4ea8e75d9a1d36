"""The mypy parser on real mypy text and ``--output json`` logs (tests/fixtures/mypy)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.mypy_output import MypyParser, split_code
from ckdn.reconcile import FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import RecordedCase, load_cases, replay, run_parser
from tests.timing import LINEAR_GROWTH

from .conftest import FIXTURES, CaseLoader, status
from .documented import check_documented_example
from .garbage import long_lines, parse_growth

PARSER = MypyParser()
JSON: dict[str, object] = {"format": "json"}


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("mypy", PARSER, load_case)


@pytest.mark.parametrize("case", load_cases(FIXTURES / "mypy"), ids=repr)
def test_every_finding_is_a_type_error_or_a_type_note(case: RecordedCase) -> None:
    # Each case's status and finding count: its case.json, replayed by the kit.
    assert {f.kind for f in replay(PARSER, case).findings} <= {"type_error", "type_note"}


def test_text_errors_carry_code_location_and_message(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("mypy", "text_errors"))
    first = result.findings[0]
    assert first.id == "shapes.py:7:return-value"
    assert first.location == "shapes.py:7"
    assert first.message == (
        'Incompatible return value type (got "int", expected "str") [return-value]')


def test_json_columns_are_made_one_based_like_mypys_own_text(load_case: CaseLoader) -> None:
    json_result = PARSER.parse(load_case("mypy", "json_errors", options=JSON))
    text_result = PARSER.parse(load_case("mypy", "text_errors_pretty"))
    assert [f.location for f in json_result.findings] == [
        "shapes.py:7:12", "shapes.py:11:18", "shapes.py:13:5", "use.py:3:6"]
    assert [f.id for f in json_result.findings] == [f.id for f in text_result.findings]


def test_pretty_output_rejoins_wrapped_messages_and_keeps_the_source(
        load_case: CaseLoader) -> None:
    pretty = PARSER.parse(load_case("mypy", "text_errors_pretty")).findings
    assert pretty[0].message == (
        'Incompatible return value type (got "int", expected "str") [return-value]')
    assert pretty[0].detail == ("        return width * height", "               ^~~~~~~~~~~~~~")
    assert pretty[2].message == 'Name "undefined_helper" is not defined [name-defined]'


def test_forced_colour_reads_the_same_as_plain_text(load_case: CaseLoader) -> None:
    plain = PARSER.parse(load_case("mypy", "text_errors"))
    colored = PARSER.parse(load_case("mypy", "text_errors_colored"))
    assert colored.findings == plain.findings
    assert colored.summary == plain.summary


def test_notes_are_counted_never_findings(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("mypy", "text_errors"))
    assert result.summary["counts"] == {"errors": 4, "notes": 1, "warnings": 0, "files": 2}
    assert "Revealed type" not in " ".join(f.message for f in result.findings)


def test_json_run_exiting_1_with_only_a_note_fails_on_that_note(load_case: CaseLoader) -> None:
    # mypy --output json counts a note as an error: the exit code rests on it.
    ctx = load_case("mypy", "json_note_only", options=JSON)
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    assert result.parser_ok
    (note,) = result.findings
    assert (note.id, note.kind, note.message) == (
        "reveal.py:4:13:misc", "type_note", 'Revealed type is "int" [misc]')
    assert result.summary["counts"]["notes"] == 1
    assert result.notes == ["mypy exited 1 with no error, only 1 note(s): those are what it "
                            "failed on, so they are the findings"]
    assert status(ctx, result) == FAIL


def test_text_notes_beside_success_stay_counted_not_findings(load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "text_note_only")
    result = PARSER.parse(ctx)
    assert (result.findings, result.summary["counts"]["notes"]) == ([], 1)
    assert status(ctx, result) == PASS


def test_empty_json_run_passes_but_an_empty_text_run_cannot_be_confirmed(
        load_case: CaseLoader) -> None:
    json_ctx = load_case("mypy", "json_clean", options=JSON)
    assert Path(json_ctx.log_path).read_text().strip() == ""
    assert status(json_ctx, PARSER.parse(json_ctx)) == PASS
    ctx = replace(json_ctx, options={"format": "text"})
    result = PARSER.parse(ctx)
    assert "no 'Success: no issues found' line" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


@pytest.mark.parametrize("blank", ["\x85", "\u2028", "\u2029", "\x1c", "\u00a0"])
def test_a_log_of_a_unicode_space_alone_is_not_an_empty_json_run(
        load_case: CaseLoader, blank: str) -> None:
    """mypy's clean JSON run prints a newline; NEL or U+2028 (whitespace to ``str.strip``)
    is no such run (hypothesis found NEL read as a blank line, a false green)."""
    ctx = load_case("mypy", "json_clean", options=JSON)
    Path(ctx.log_path).write_text(blank + "\n", encoding="utf-8")
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_text_error_printed_under_json_output_is_still_a_finding(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("mypy", "json_missing_file", options=JSON))
    (finding,) = result.findings
    assert (finding.location, finding.message) == (
        "missing.py", "Cannot read file: No such file or directory")


def test_exit_without_any_diagnostic_quotes_the_log(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("mypy", "text_no_files"))
    assert not result.parser_ok
    assert "There are no .py[i] files in directory '.'" in result.notes[0]


def test_an_invocation_error_is_quoted_not_a_finding(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("mypy", "text_usage_error"))
    assert result.findings == []
    assert "mypy: unrecognized arguments: --no-such-flag" in result.notes


def test_found_count_disagreeing_with_the_errors_read_is_not_understood(
        load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "text_errors")
    log = Path(ctx.log_path)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(ln for ln in lines if "use.py" not in ln), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "found 4 error(s) but 3 were read" in result.notes[0]


def test_success_line_beside_errors_is_not_understood(load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "text_errors")
    success = (FIXTURES / "mypy" / "text_clean" / "full.log").read_text(encoding="utf-8")
    lines = Path(ctx.log_path).read_text(encoding="utf-8").splitlines(keepends=True)
    Path(ctx.log_path).write_text("".join(lines[:-1]) + success, encoding="utf-8")
    assert not PARSER.parse(ctx).parser_ok


def test_unreadable_json_record_is_format_drift(load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "json_errors", options=JSON)
    text = Path(ctx.log_path).read_text(encoding="utf-8")
    Path(ctx.log_path).write_text(text.replace('"line": 7,', '"line": "seven",'), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "format drift" in result.notes[0]


# --- a log cut short ------------------------------------------------------------------------
# (garbage, truncations, damage, other tools' logs: the conformance kit, test_conformance.py)

def _parse_log(log: bytes, rc: int, fmt: str) -> ParseResult:
    return run_parser(PARSER, rc, log=log, options={"format": fmt})


@pytest.mark.parametrize("case", ["text_clean", "text_note_only", "text_deprecated_flag"])
def test_a_success_line_cut_short_is_never_a_clean_run(case: str) -> None:
    log = (FIXTURES / "mypy" / case / "full.log").read_bytes()
    end = log.rindex(b"Success: ")
    for cut in range(end, len(log.rstrip())):
        result = _parse_log(log[:cut], 0, "text")
        assert reconcile(Exit(0), result).status != PASS, log[end:cut]


def test_the_success_line_counts_the_files_as_mypy_does() -> None:
    for line, files in [("Success: no issues found in 1 source file", 1),
                        ("Success: no issues found in 12 source files", 12)]:
        result = _parse_log(line.encode() + b"\n", 0, "text")
        assert reconcile(Exit(0), result).status == PASS
        assert result.summary["counts"]["files"] == files
    for torn in ("Success: no issues found in 2 source file", "Success: no issues found"):
        assert reconcile(Exit(0), _parse_log(torn.encode(), 0, "text")).status != PASS


@given(cut=st.integers(min_value=1, max_value=200))
def test_a_json_record_cut_short_is_never_read_as_clean(cut: int) -> None:
    record = (FIXTURES / "mypy" / "json_errors" / "full.log").read_bytes().split(b"\n")[0]
    truncated = record[:min(cut, len(record) - 1)]
    result = _parse_log(truncated, 0, "json")
    assert not result.parser_ok
    assert reconcile(Exit(0), result).status != PASS


# --- only mypy's own output is read as mypy's ------------------------------------------------

def _log(case: str) -> bytes:
    return (FIXTURES / "mypy" / case / "full.log").read_bytes()


#: A real Python traceback (pip-audit's, when the vulnerability service is unreachable).
TRACEBACK = b"".join((FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
                     .splitlines(keepends=True)[:12])


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_traceback_is_never_a_clean_mypy_run(fmt: str) -> None:
    clean = _log("json_clean" if fmt == "json" else "text_clean")
    result = _parse_log(TRACEBACK + clean, 0, fmt)
    assert not result.parser_ok
    assert "Traceback (most recent call last):" in result.notes[-1]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_crashed_pythons_fatal_error_is_never_a_clean_mypy_run(tmp_path: Path,
                                                                 fmt: str) -> None:
    # A real segfault: CPython's faulthandler report of a NULL read.
    crash = subprocess.run([sys.executable, "-X", "faulthandler", "-c",
                            "import ctypes; ctypes.string_at(0)"],
                           capture_output=True, check=False).stderr
    assert b"Segmentation fault" in crash
    clean = _log("json_clean" if fmt == "json" else "text_clean")
    result = _parse_log(crash + clean, 0, fmt)
    assert "Fatal Python error: Segmentation fault" in result.notes[-1]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_an_invocation_error_is_never_green_even_beside_success(fmt: str) -> None:
    clean = _log("json_clean" if fmt == "json" else "text_clean")
    result = _parse_log(_log("text_usage_error") + clean, 0, fmt)
    assert not result.parser_ok
    assert "mypy: unrecognized arguments: --no-such-flag" in result.notes
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_ruffs_output_under_json_format_is_not_mypys(load_case: CaseLoader) -> None:
    result = _parse_log((FIXTURES / "ruff" / "text_output" / "full.log").read_bytes(), 0, "json")
    assert "are not mypy's output" in result.notes[-1]
    assert reconcile(Exit(0), result).status == PARSE_MISMATCH


def test_a_configuration_mypy_did_not_apply_is_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "text_config_typo")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.notes == ["mypy did not apply its configuration as written (1 warning(s)): "
                            "mypy.ini: [mypy]: Unrecognized option: disallow_untyped_defz = True"]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_deprecated_flag_mypy_still_honours_is_quoted_not_fatal(load_case: CaseLoader) -> None:
    ctx = load_case("mypy", "text_deprecated_flag")
    result = PARSER.parse(ctx)
    assert result.notes == ["mypy says: Warning: --strict-concatenate is deprecated; use "
                            "--extra-checks instead"]
    assert status(ctx, result) == PASS


@given(cut=st.integers(min_value=1, max_value=len(_log("json_errors")) - 1))
def test_a_torn_json_log_gives_no_findings_and_no_counts(cut: int) -> None:
    log = _log("json_errors")[:cut]
    result = _parse_log(log, 1, "json")
    if log.endswith((b"}", b"}\n")):
        return  # cut between records: every record it holds is whole
    assert not result.parser_ok
    assert (result.findings, result.summary) == ([], {})
    assert "could not be read" in result.notes[0]


def test_the_error_code_is_split_off_the_message_as_the_pattern_did() -> None:
    assert split_code("Name is not defined  [name-defined]") == ("Name is not defined",
                                                                 "name-defined")
    assert split_code("msg [Bad]") == ("msg [Bad]", None)
    assert split_code("[code]") == ("[code]", None)
    assert split_code("x\t[a-1]") == ("x", "a-1")
    assert split_code("list[int]") == ("list[int]", None)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize(("shape", "line"), long_lines(
    "a.py:1: error: ", "a.py:1:2:3:4: note: ", "mypy: error: ", "Found 1 error in ",
    "mypy.ini: [", "{"))
def test_a_200000_character_line_is_read_in_linear_time(shape: str, line: str,
                                                                 fmt: str) -> None:
    assert parse_growth(PARSER, line, options={"format": fmt}) < LINEAR_GROWTH


# --- live: the mypy in this environment ---------------------------------------------------

MYPY = Path(sys.executable).with_name("mypy")


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the live runs: typeshed is analysed once, not per test."""
    return tmp_path_factory.mktemp("mypy-cache")


def _run_live(tmp_path: Path, cache: Path, project: str,
              *flags: str) -> tuple[ParseContext, ParseResult]:
    cwd = tmp_path / project
    shutil.copytree(FIXTURES / "mypy" / "projects" / project, cwd)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with open(run_dir / "full.log", "wb") as log:
        proc = subprocess.run([str(MYPY), f"--cache-dir={cache}", *flags, "."], cwd=cwd,
                              stdout=log, stderr=subprocess.STDOUT, check=False,
                              env={**os.environ, "NO_COLOR": "1"})
    options = JSON if "json" in flags else {}
    ctx = ParseContext(check="mypy", run_dir=run_dir, cwd=cwd, rc=proc.returncode,
                       options=options)
    return ctx, PARSER.parse(ctx)


@pytest.mark.skipif(not MYPY.exists(), reason="mypy is not installed next to this Python")
@pytest.mark.parametrize("flags", [(), ("--output", "json")], ids=["text", "json"])
def test_live_mypy_type_errors_are_read_in_both_formats(tmp_path: Path, mypy_cache: Path,
                                                        flags: tuple[str, ...]) -> None:
    ctx, result = _run_live(tmp_path, mypy_cache, "type_errors", *flags)
    assert result.parser_ok, result.notes
    assert status(ctx, result) == FAIL
    assert {f.id.rsplit(":", 1)[1] for f in result.findings} == {
        "return-value", "assignment", "name-defined", "arg-type"}


@pytest.mark.skipif(not MYPY.exists(), reason="mypy is not installed next to this Python")
def test_live_mypy_on_a_clean_project_passes(tmp_path: Path, mypy_cache: Path) -> None:
    ctx, result = _run_live(tmp_path, mypy_cache, "clean")
    assert status(ctx, result) == PASS, result.notes
