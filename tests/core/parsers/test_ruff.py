"""The ruff parser on real ``ruff check --output-format json`` reports (tests/fixtures/ruff)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.ruff_json import RuffParser, iter_json_array
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS
from ckdn.testing import assert_loud, run_parser
from ckdn.testing.strategies import mutations
from tests.timing import LINEAR_GROWTH, growth

from .conftest import FIXTURES, CaseLoader, status
from .documented import check_documented_example
from .garbage import long_lines, shortened

PARSER = RuffParser()
REAL_REPORT = (FIXTURES / "ruff" / "violations" / "ruff.json").read_bytes()


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("ruff", PARSER, load_case)


def test_violations_become_lint_violations_with_code_first_messages(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "violations")
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert result.total == 19
    assert {f.kind for f in result.findings} == {"lint_violation"}
    by_id = {f.id: f for f in result.findings}
    bare = by_id["pkg/shell.py:10:5:E722"]
    assert bare.message == "E722 Do not use bare `except`"
    assert bare.location == "pkg/shell.py:10:5"
    assert status(ctx, result) == FAIL


def test_violations_of_every_selected_rule_family_are_read(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("ruff", "violations"))
    codes = {f.id.rsplit(":", 1)[1] for f in result.findings}
    families = {code.rstrip("0123456789") for code in codes}
    assert families >= {"E", "F", "I", "B", "UP", "S"}


def test_fix_and_rule_url_are_the_detail_of_a_violation(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("ruff", "violations"))
    default = next(f for f in result.findings if f.id.endswith(":B006"))
    assert default.detail == (
        "fix (unsafe): Replace with `None`; initialize within function",
        "https://docs.astral.sh/ruff/rules/mutable-argument-default",
    )


def test_notebook_violation_names_the_cell_not_a_file_line(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("ruff", "violations"))
    cell = next(f for f in result.findings if f.id == "analysis.ipynb:cell2:2:5:F821")
    assert cell.location == "analysis.ipynb"
    assert cell.detail[0] == "cell 2, line 2, column 5"


def test_non_ascii_file_names_survive_into_locations(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("ruff", "violations"))
    assert "pkg/naïve_unicode.py:1:12" in {f.location for f in result.findings}


def test_summary_counts_violations_files_fixes_and_syntax_errors(load_case: CaseLoader) -> None:
    violations = PARSER.parse(load_case("ruff", "violations")).summary["counts"]
    syntax = PARSER.parse(load_case("ruff", "syntax_error")).summary["counts"]
    assert violations == {"violations": 19, "files": 3, "fixable": 10, "syntax_errors": 0}
    assert syntax == {"violations": 4, "files": 2, "fixable": 1, "syntax_errors": 3}


def test_syntax_errors_are_violations_at_their_position(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "syntax_error")
    result = PARSER.parse(ctx)
    first = result.findings[0]
    assert first.id == "broken.py:1:10:invalid-syntax"
    assert first.message.startswith("invalid-syntax Expected a parameter")
    assert status(ctx, result) == FAIL


def test_clean_run_with_an_empty_report_passes(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "clean")
    result = PARSER.parse(ctx)
    assert (result.findings, result.parser_ok, result.notes) == ([], True, [])
    assert status(ctx, result) == PASS


def test_a_run_that_found_no_python_files_fails_its_gate(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "no_files")
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["ruff found no Python files to check"]
    assert status(ctx, result) == FAIL


def test_allow_no_files_accepts_a_run_that_checked_nothing(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "no_files", options={"allow_no_files": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_missing_report_after_a_ruff_failure_is_an_error_quoting_the_cause(
        load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "config_error")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "ruff.json not found" in result.notes[0]
    assert "Unknown rule selector `XYZ1`" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_text_output_without_the_report_flags_is_an_error_naming_them(
        load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "text_output")
    result = PARSER.parse(ctx)
    assert "--output-format json --output-file {run_dir}/ruff.json" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_missing_report_with_exit_code_zero_is_a_parse_mismatch(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "clean")
    Path(ctx.run_dir, "ruff.json").unlink()
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("ruff", "violations", top=5))
    assert len(result.findings) == 5
    assert result.total == 19


def test_finding_ids_are_unique_and_stable_across_parses(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "violations")
    first = [f.id for f in PARSER.parse(ctx).findings]
    again = [f.id for f in PARSER.parse(ctx).findings]
    assert first == again
    assert len(set(first)) == len(first)


def test_ruff_count_in_the_log_must_match_the_report(load_case: CaseLoader) -> None:
    # The text run's log says "Found 19 errors."; the syntax_error report holds 4.
    found_line = (FIXTURES / "ruff" / "text_output" / "full.log").read_bytes()
    agree = load_case("ruff", "violations")
    Path(agree.log_path).write_bytes(found_line)
    disagree = load_case("ruff", "syntax_error")
    Path(disagree.log_path).write_bytes(found_line)
    assert PARSER.parse(agree).parser_ok
    result = PARSER.parse(disagree)
    assert not result.parser_ok
    assert "19 error(s) but its report holds 4" in result.notes[0]


@pytest.mark.parametrize("report", ["../outside.json", "/etc/passwd", "{run_dir}/../x.json"])
def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader, report: str) -> None:
    ctx = load_case("ruff", "violations", options={"report": report})
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


def test_a_report_symlink_escaping_the_run_dir_is_refused(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "violations")
    outside = Path(ctx.run_dir).parent / "elsewhere.json"
    outside.write_bytes(REAL_REPORT)
    Path(ctx.run_dir, "ruff.json").unlink()
    Path(ctx.run_dir, "ruff.json").symlink_to(outside)
    assert not PARSER.parse(ctx).parser_ok


def test_report_option_names_another_file_in_the_run_dir(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "violations", options={"report": "{run_dir}/lint/out.json"})
    Path(ctx.run_dir, "lint").mkdir()
    Path(ctx.run_dir, "ruff.json").rename(Path(ctx.run_dir, "lint", "out.json"))
    assert PARSER.parse(ctx).total == 19


def test_entries_without_filename_or_location_are_format_drift(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "violations")
    entries = json.loads(REAL_REPORT)
    del entries[3]["location"]
    Path(ctx.run_dir, "ruff.json").write_text(json.dumps(entries))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "format drift" in result.notes[0]


# --- the streaming decoder ---------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@given(items=st.lists(_json_values, max_size=8), indent=st.sampled_from([None, 0, 2, 4]),
       chunk=st.integers(min_value=1, max_value=64))
def test_streamed_array_equals_json_loads(items: list[object], indent: int | None,
                                          chunk: int) -> None:
    text = json.dumps(items, indent=indent, ensure_ascii=False)
    assert list(iter_json_array(io.StringIO(text), chunk)) == json.loads(text)


@given(text=st.text(max_size=60), chunk=st.integers(min_value=1, max_value=16))
def test_streamed_array_rejects_what_json_rejects(text: str, chunk: int) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    if not isinstance(expected, list):
        with pytest.raises(ValueError, match=r"(?i)expect|truncated|unexpected|delimiter|"
                           r"unterminated|invalid|extra"):
            list(iter_json_array(io.StringIO(text), chunk))
    else:
        assert list(iter_json_array(io.StringIO(text), chunk)) == expected


@pytest.mark.parametrize("after", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u3000"])
def test_only_jsons_whitespace_may_follow_the_array(after: str) -> None:
    # str.strip() calls these whitespace; json.loads does not, and neither may the reader.
    with pytest.raises(ValueError, match="Extra data"):
        json.loads("[]" + after)
    with pytest.raises(ValueError, match="unexpected data after the JSON document"):
        list(iter_json_array(io.StringIO("[]" + after), 4))


# --- an error in the log is never beside a trusted report -----------------------------------

CLEAN_REPORT = (FIXTURES / "ruff" / "clean" / "ruff.json").read_bytes()


@pytest.mark.parametrize("case", ["usage_error", "config_error"])
@pytest.mark.parametrize("rc", [0, 2])
def test_a_clean_report_beside_ruffs_own_error_is_never_green(load_case: CaseLoader, case: str,
                                                              rc: int) -> None:
    ctx = load_case("ruff", case, rc=rc)
    Path(ctx.run_dir, "ruff.json").write_bytes(CLEAN_REPORT)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "ruff's log reports 1 error(s) beside its report (first: " in result.notes[0]
    assert status(ctx, result) != PASS


def test_a_crash_beside_a_clean_report_is_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("ruff", "clean")
    traceback = (FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(traceback)
    result = PARSER.parse(ctx)
    assert "(first: Traceback (most recent call last):)" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


@pytest.mark.parametrize(("shape", "line"), long_lines("Found ", "error: ", "warning: "))
def test_a_200000_character_log_line_is_read_in_linear_time(shape: str,
                                                                    line: str) -> None:
    files = {"ruff.json": CLEAN_REPORT}

    def parse_at(size: int) -> Callable[[], object]:
        log = shortened(line, size).encode()
        return lambda: run_parser(PARSER, 0, log=log, files=files)

    assert growth(parse_at, len(line)) < LINEAR_GROWTH


# --- a damaged report that is no longer ruff's is loud --------------------------------------------
# (garbage, truncations, other tools' reports, a missing report: the conformance kit, in
# test_conformance.py)

def _is_ruffs(report: bytes) -> bool:
    try:
        entries = json.loads(report.decode("utf-8"))
    except ValueError:
        return False
    return isinstance(entries, list) and all(
        isinstance(e, dict) and isinstance(e.get("filename"), str)
        and isinstance(e.get("message"), str) and isinstance(e.get("location"), dict)
        for e in entries)


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(report=mutations(REAL_REPORT), rc=st.sampled_from([0, 1]))
def test_a_damaged_report_that_is_no_longer_ruffs_is_loud(report: bytes, rc: int) -> None:
    result = run_parser(PARSER, rc, files={"ruff.json": report})
    if not _is_ruffs(report):
        assert_loud(result, rc, what="a damaged ruff.json")


# --- live: the ruff in this environment ---------------------------------------------------

RUFF = Path(sys.executable).with_name("ruff")


def _run_live(project: str, tmp_path: Path) -> tuple[ParseContext, ParseResult]:
    cwd = tmp_path / project
    shutil.copytree(FIXTURES / "ruff" / "projects" / project, cwd)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with open(run_dir / "full.log", "wb") as log:
        proc = subprocess.run(
            [str(RUFF), "check", "--no-cache", "--output-format", "json", "--output-file",
             str(run_dir / "ruff.json"), "."],
            cwd=cwd, stdout=log, stderr=subprocess.STDOUT, check=False,
            env={**os.environ, "NO_COLOR": "1"})
    ctx = ParseContext(check="ruff", run_dir=run_dir, cwd=cwd, rc=proc.returncode)
    return ctx, PARSER.parse(ctx)


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed next to this Python")
def test_live_ruff_report_is_parsed_into_the_same_findings_as_the_fixture(
        tmp_path: Path, load_case: CaseLoader) -> None:
    ctx, result = _run_live("violations", tmp_path)
    recorded = PARSER.parse(load_case("ruff", "violations"))
    assert result.parser_ok, result.notes
    assert status(ctx, result) == FAIL
    assert [f.id for f in result.findings] == [f.id for f in recorded.findings]


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed next to this Python")
def test_live_ruff_on_a_clean_project_passes(tmp_path: Path) -> None:
    ctx, result = _run_live("clean", tmp_path)
    assert status(ctx, result) == PASS


def test_the_summary_has_violation_count_and_per_rule_counts_from_the_whole_report(
        load_case: CaseLoader) -> None:
    from collections import Counter

    report = json.loads(REAL_REPORT)
    by_rule = Counter(item["code"] or "invalid-syntax" for item in report)
    summary = PARSER.parse(load_case("ruff", "violations", top=1)).summary
    assert summary["violation_count"] == len(report) == 19
    assert summary["by_rule"] == dict(by_rule)
    assert "by_rule_omitted" not in summary


def test_legacy_location_keeps_ruffs_absolute_paths_and_the_ids_stay_cwd_relative(
        load_case: CaseLoader) -> None:
    report = json.loads(REAL_REPORT)
    plain = PARSER.parse(load_case("ruff", "violations", top=50))
    legacy = PARSER.parse(load_case("ruff", "violations", top=50,
                                    options={"legacy_location": True}))
    assert [f.id for f in legacy.findings] == [f.id for f in plain.findings]
    written = {item["filename"] for item in report}
    legacy_locations = [str(f.location) for f in legacy.findings]
    plain_locations = [str(f.location) for f in plain.findings]
    assert all(os.path.isabs(location) for location in legacy_locations)
    assert {location.split(":")[0] for location in legacy_locations} == written
    assert not any(os.path.isabs(location) for location in plain_locations)
    for old, new in zip(plain_locations, legacy_locations, strict=True):
        assert new.endswith("/" + old)
