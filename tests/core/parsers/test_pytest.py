"""The pytest parser on real pytest JUnit XML (tests/fixtures/pytest), both families."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers import junit
from ckdn.parsers._pytest_text import node_id
from ckdn.parsers.base import Finding, OptionError, ParseContext, ParseResult
from ckdn.parsers.junit import PytestParser
from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, encode_evidence
from ckdn.parsers.pytest_order import TEST, order_key
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS
from ckdn.testing import run_parser
from tests.timing import cpu_seconds

from .conftest import FIXTURES, CaseLoader, case_meta, status
from .documented import as_documented, marked_example

PARSER = PytestParser()
CASES = FIXTURES / "pytest"
PROJECTS = CASES / "projects"


def by_id(result: ParseResult) -> dict[str, Finding]:
    return {f.id: f for f in result.findings}


def facts(result: ParseResult) -> list[tuple[str, str, str, str | None, int]]:
    """What must not depend on the JUnit family (detail lines may hold addresses, paths)."""
    return [(f.id, f.kind, f.message, f.location, len(f.detail)) for f in result.findings]


def edit_report(ctx: ParseContext, old: str, new: str, count: int = 1) -> None:
    report = Path(ctx.run_dir, "junit.xml")
    text = report.read_text(encoding="utf-8")
    assert old in text
    report.write_text(text.replace(old, new, count), encoding="utf-8")


# -- findings ------------------------------------------------------------------------


def test_failures_in_call_become_test_failures_named_by_node_id(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert {f.kind for f in result.findings} == {"test_failure"}
    assert [f.id for f in result.findings] == [  # by node id, not by the order they ran in
        "tests/check_failing.py::TestGroup::TestNested::test_nested_fails",
        "tests/check_failing.py::TestGroup::test_method_fails",
        "tests/check_failing.py::test_ansi_message",
        "tests/check_failing.py::test_dict_comparison_fails",
        "tests/check_failing.py::test_helper_raises",
        "tests/check_failing.py::test_param[2]",
        "tests/check_failing.py::test_param_odd_ids[a.b]",
        "tests/check_failing.py::test_param_odd_ids[x::y]",
        "tests/check_failing.py::test_unicode_message",
    ]
    assert status(ctx, result) == FAIL


def test_node_ids_are_the_ones_pytest_prints_in_its_summary(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    printed = {line.split(" ")[1] for line in Path(ctx.run_dir, "full.log").read_text().splitlines()
               if line.startswith("FAILED ")}
    assert {f.id for f in PARSER.parse(ctx).findings} == printed


@pytest.mark.parametrize("case", ["failing", "erroring", "collection_error", "all_pass"])
def test_xunit1_and_xunit2_reports_of_one_run_give_the_same_facts(load_case: CaseLoader,
                                                                  case: str) -> None:
    xunit2 = PARSER.parse(load_case("pytest", case))
    xunit1 = PARSER.parse(load_case("pytest", f"{case}_xunit1"))
    assert facts(xunit1) == facts(xunit2)
    assert xunit1.summary == xunit2.summary


def test_message_is_the_first_line_of_the_failure_message(load_case: CaseLoader) -> None:
    found = by_id(PARSER.parse(load_case("pytest", "failing")))
    dict_fail = found["tests/check_failing.py::test_dict_comparison_fails"]
    assert dict_fail.message == "AssertionError: assert {'a': 1, 'b': 3} == {'a': 1, 'b': 2}"
    assert found["tests/check_failing.py::test_helper_raises"].message == \
        "ValueError: negative size -1x2"


def test_location_is_the_line_in_the_test_file_where_the_test_failed(
        load_case: CaseLoader) -> None:
    found = by_id(PARSER.parse(load_case("pytest", "failing")))
    helper = found["tests/check_failing.py::test_helper_raises"]
    source = (PROJECTS / "failing" / "tests" / "check_failing.py").read_text().splitlines()
    assert helper.location == "tests/check_failing.py:18"
    assert source[18 - 1].strip() == "assert area(-1, 2) == 0"


def test_detail_is_the_e_lines_then_the_crash_location(load_case: CaseLoader) -> None:
    found = by_id(PARSER.parse(load_case("pytest", "failing")))
    assert found["tests/check_failing.py::test_helper_raises"].detail == (
        "E           ValueError: negative size -1x2",
        "tests/shapes.py:3: ValueError",
    )


def test_detail_is_bounded_and_keeps_the_crash_location(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pytest", "failing", max_snippet_lines=3))
    finding = by_id(result)["tests/check_failing.py::test_dict_comparison_fails"]
    assert finding.detail == (
        "E       AssertionError: assert {'a': 1, 'b': 3} == {'a': 1, 'b': 2}",
        "E",
        "tests/check_failing.py:14: AssertionError",
    )
    assert finding.detail_omitted == 4  # E lines left out, counted for the digest
    assert all(len(f.detail) <= 3 for f in result.findings)


def test_ansi_escapes_are_removed_and_unicode_kept(load_case: CaseLoader) -> None:
    found = by_id(PARSER.parse(load_case("pytest", "failing")))
    ansi = found["tests/check_failing.py::test_ansi_message"]
    assert ansi.message == "AssertionError: red failure: ü ≠ u"
    assert ansi.detail[0] == "E       AssertionError: red failure: ü ≠ u"
    unicode = found["tests/check_failing.py::test_unicode_message"]
    assert unicode.message == "AssertionError: assert 'résumé ✓ 東京' == 'resume'"


def test_setup_and_teardown_errors_are_test_errors_with_the_exception_as_message(
        load_case: CaseLoader) -> None:
    # pytest's JUnit writer wraps it (`failed on setup with "..."`); the plugin's road
    # has the exception alone: one finding builder gives both roads the exception
    ctx = load_case("pytest", "erroring")
    found = by_id(PARSER.parse(ctx))
    setup = found["tests/check_erroring.py::test_setup_error"]
    assert setup.kind == "test_error"
    assert setup.message == "RuntimeError: database unavailable"
    assert setup.location == "tests/check_erroring.py:8"
    teardown = found["tests/check_erroring.py::test_teardown_error_after_pass@teardown"]
    assert teardown.message == "RuntimeError: cleanup failed"


def test_a_failing_call_and_a_teardown_error_of_one_test_are_two_distinct_findings(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "erroring")
    report = Path(ctx.run_dir, "junit.xml").read_text()
    assert report.count('name="test_fail_and_teardown_error"') == 2  # pytest's real shape
    result = PARSER.parse(ctx)
    ids = [f.id for f in result.findings]
    assert len(ids) == len(set(ids)) == 6
    assert ("tests/check_erroring.py::test_fail_and_teardown_error", "test_failure") in \
        {(f.id, f.kind) for f in result.findings}
    assert ("tests/check_erroring.py::test_fail_and_teardown_error@teardown", "test_error") in \
        {(f.id, f.kind) for f in result.findings}


def test_ids_are_stable_across_parses(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "erroring")
    assert PARSER.parse(ctx).findings == PARSER.parse(ctx).findings


def test_collection_errors_are_collection_errors_on_the_module(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "collection_error")
    result = PARSER.parse(ctx)
    found = by_id(result)
    assert set(found) == {"tests/check_import_error.py", "tests/check_syntax_error.py"}
    imp = found["tests/check_import_error.py"]
    assert imp.kind == "collection_error"
    assert imp.message == "ModuleNotFoundError: No module named 'module_that_does_not_exist'"
    assert imp.location == "tests/check_import_error.py:1"
    assert not any("_pytest" in line for line in imp.detail)
    syntax = found["tests/check_syntax_error.py"]
    assert syntax.message == "SyntaxError: invalid syntax"
    assert syntax.location == "tests/check_syntax_error.py:1"
    assert status(ctx, result) == FAIL


def test_xunit1_line_attribute_is_not_a_location_the_plugin_road_could_not_give(
        load_case: CaseLoader) -> None:
    # A strict xpass has no traceback: xunit1 names the function's first line, xunit2
    # (the default) names none, so both families and the plugin locate it at its file.
    ctx = load_case("pytest", "xpass_strict_xunit1")
    assert 'name="test_unexpected_pass_strict" file="tests/check_xpass_strict.py" line="5"' \
        in Path(ctx.run_dir, "junit.xml").read_text()
    (finding,) = PARSER.parse(ctx).findings
    assert finding.location == "tests/check_xpass_strict.py"
    assert finding.message == "[XPASS(strict)] should still fail"


def test_xunit2_failure_without_traceback_is_located_at_its_file(load_case: CaseLoader) -> None:
    (finding,) = PARSER.parse(load_case("pytest", "xpass_strict")).findings
    assert finding.id == "tests/check_xpass_strict.py::test_unexpected_pass_strict"
    assert finding.location == "tests/check_xpass_strict.py"
    assert finding.detail == ()


def test_top_keeps_the_first_findings_and_counts_all(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pytest", "failing", top=2))
    assert len(result.findings) == 2
    assert result.total == 9


# -- summary and gates ---------------------------------------------------------------


def test_summary_counts_tests_by_outcome(load_case: CaseLoader) -> None:
    assert PARSER.parse(load_case("pytest", "failing")).summary == {"counts": {
        "tests": 14, "passed": 5, "failures": 9, "errors": 0, "skipped": 0, "xfailed": 0}}
    assert PARSER.parse(load_case("pytest", "erroring")).summary["counts"] == {
        "tests": 6, "passed": 1, "failures": 1, "errors": 5, "skipped": 0, "xfailed": 0}


def test_skips_and_xfails_are_counted_never_findings(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "skips")
    result = PARSER.parse(ctx)
    assert result.findings == []
    assert result.summary["counts"] == {
        "tests": 6, "passed": 2, "failures": 0, "errors": 0, "skipped": 3, "xfailed": 1}
    assert status(ctx, result) == PASS


def test_all_pass_is_a_pass(load_case: CaseLoader) -> None:
    for case in ("all_pass", "all_pass_xunit1"):
        ctx = load_case("pytest", case)
        result = PARSER.parse(ctx)
        assert (result.parser_ok, result.findings, result.gate_failures) == (True, [], [])
        assert status(ctx, result) == PASS


def test_a_run_with_every_test_skipped_is_a_gate_failure(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_skipped")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.gate_failures == ["no tests ran: all 2 test(s) skipped"]
    assert any("allow_no_tests" in note for note in result.notes)
    assert status(ctx, result) == FAIL


def test_pytests_exit_5_is_an_error_whose_note_says_no_tests_were_collected(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "zero_tests")
    result = PARSER.parse(ctx)
    assert ctx.rc == 5
    assert result.gate_failures == []
    assert result.notes == ["pytest collected no tests and exited with status 5: nothing was "
                            "verified; check the test paths and any -k / -m selection"]
    assert status(ctx, result) == ERROR


def test_zero_tests_at_exit_code_0_is_a_no_tests_ran_gate_failure(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "zero_tests", rc=0)  # pytest's report of no tests, exit code 0
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["no tests ran"]
    assert status(ctx, result) == FAIL


def test_allow_no_tests_accepts_zero_tests_at_exit_code_0(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "zero_tests", rc=0, options={"allow_no_tests": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_allow_no_tests_accepts_a_run_that_ran_none(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_skipped", options={"allow_no_tests": True})
    result = PARSER.parse(ctx)
    assert result.gate_failures == []
    assert status(ctx, result) == PASS


def test_allow_no_tests_cannot_turn_pytests_exit_code_5_green(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "zero_tests", options={"allow_no_tests": True})
    assert status(ctx, PARSER.parse(ctx)) == ERROR


# -- guards --------------------------------------------------------------------------


def test_declared_totals_that_disagree_with_the_report_are_loud(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing", rc=0)
    edit_report(ctx, 'failures="9"', 'failures="8"')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == ["junit.xml: <testsuite> declares failures=8 but the report holds "
                            "9 <failure> element(s)"]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_failing_testcase_missing_from_the_report_is_loud(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    text = Path(ctx.run_dir, "junit.xml").read_text()
    first = re.search(r"<testcase [^>]*>(?:(?!</testcase>).)*<failure .*?</testcase>", text,
                      re.S)
    assert first is not None
    Path(ctx.run_dir, "junit.xml").write_text(text.replace(first.group(0), "", 1))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "declares failures=9 but the report holds 8 <failure>" in " ".join(result.notes)
    assert status(ctx, result) != PASS


def test_a_passing_testcase_missing_is_noted_as_pytest_subtests_count_and_hides_nothing(
        load_case: CaseLoader) -> None:
    # pytest's own subtests leave exactly this shape (see the subtests cases): `tests`
    # above the testcases, every failure, error and skip declared present.
    ctx = load_case("pytest", "all_pass")
    text = Path(ctx.run_dir, "junit.xml").read_text()
    first = re.search(r"<testcase [^>]*/>", text)
    assert first is not None
    Path(ctx.run_dir, "junit.xml").write_text(text.replace(first.group(0), "", 1))
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert result.summary["counts"]["tests"] == 2
    assert result.notes == ["junit.xml declares 1 more test(s) than its 2 <testcase> "
                            "element(s): pytest counts each subtest report in tests; every "
                            "failure, error and skip it declares is present"]


def test_pytests_own_subtests_pass_on_the_junit_path(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "subtests")
    result = PARSER.parse(ctx)
    assert status(ctx, result) == PASS
    assert result.summary["counts"] == {"tests": 2, "passed": 2, "failures": 0, "errors": 0,
                                        "skipped": 0, "xfailed": 0}
    assert "declares 6 more test(s) than its 2 <testcase>" in result.notes[0]


def test_a_failing_subtest_is_a_finding_with_the_tests_own_failure(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "subtests_failing")
    result = PARSER.parse(ctx)
    assert status(ctx, result) == FAIL
    assert [(f.id, f.message) for f in result.findings] == [
        ("tests/check_subtests_failing.py::test_discounts", "assert (10 * 0.9) == 8"),
        ("tests/check_subtests_failing.py::test_discounts#2", "contains 1 failed subtest")]


def test_declared_tests_above_the_testcases_with_a_failure_missing_stay_loud(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "subtests_failing")
    edit_report(ctx, 'failures="2"', 'failures="3"')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "declares failures=3 but the report holds 2 <failure>" in " ".join(result.notes)
    assert status(ctx, result) != PASS


def test_a_truncated_report_is_unreadable_not_short(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    data = Path(ctx.run_dir, "junit.xml").read_bytes()
    Path(ctx.run_dir, "junit.xml").write_bytes(data[: len(data) // 2])
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes[0].startswith("junit.xml is not readable JUnit XML: ")
    assert status(ctx, result) == ERROR


@pytest.mark.parametrize("rc", [0, 1])
def test_a_missing_report_is_never_clean(load_case: CaseLoader, rc: int) -> None:
    ctx = load_case("pytest", "failing", rc=rc)
    Path(ctx.run_dir, "junit.xml").unlink()
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "--junitxml {run_dir}/junit.xml" in result.notes[0]
    assert status(ctx, result) == (PARSE_MISMATCH if rc == 0 else ERROR)


def test_a_namespaced_root_is_not_recognised(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    edit_report(ctx, '<testsuites name="pytest tests">',
                '<testsuites xmlns="urn:example:junit" name="pytest tests">')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "namespaced root element" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_report_of_another_format_is_not_recognised(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0,
                    options={"junit": "coverage.xml"})
    shutil.copy(FIXTURES / "coverage" / "boundary" / "coverage.xml", ctx.run_dir)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "unrecognised root element <coverage>" in result.notes[0]


def test_an_entity_expansion_bomb_fails_fast_as_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    levels = "".join(f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 12))
    bomb = (f'<?xml version="1.0"?><!DOCTYPE testsuites [<!ENTITY e0 "ha">{levels}]>'
            '<testsuites><testsuite tests="1"><testcase classname="a" name="&e11;"/>'
            "</testsuite></testsuites>")
    Path(ctx.run_dir, "junit.xml").write_text(bomb)
    bomb_cost = cpu_seconds(lambda: PARSER.parse(ctx))
    result = PARSER.parse(ctx)
    # the floor: the same file without its entities, read in the same run (expanded, the
    # bomb is 2 * 10**11 characters: hours, not a few times the floor)
    Path(ctx.run_dir, "junit.xml").write_text(bomb.replace("&e11;", "a" * len(levels)))
    assert bomb_cost < 20 * max(cpu_seconds(lambda: PARSER.parse(ctx)), 1e-6)
    assert not result.parser_ok
    assert "DOCTYPE" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_external_entities_are_never_read(load_case: CaseLoader, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    ctx = load_case("pytest", "all_pass", rc=1)
    Path(ctx.run_dir, "junit.xml").write_text(
        f'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file://{secret}">]>'
        '<testsuites><testsuite><testcase classname="a" name="b"><failure message="&x;"/>'
        "</testcase></testsuite></testsuites>")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "TOP-SECRET" not in repr(result)


def test_an_undeclared_entity_is_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    edit_report(ctx, 'name="test_one"', 'name="&undeclared;"')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "undefined entity" in result.notes[0]


def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing", options={"junit": "../elsewhere/junit.xml"})
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


def test_duplicate_ids_in_a_report_get_a_counted_suffix(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "xpass_strict")
    text = Path(ctx.run_dir, "junit.xml").read_text()
    case = re.search(r"<testcase [^>]*test_unexpected_pass_strict.*?</testcase>", text)
    assert case is not None
    text = text.replace(case.group(0), case.group(0) * 2).replace('tests="2"', 'tests="3"')
    Path(ctx.run_dir, "junit.xml").write_text(text.replace('failures="1"', 'failures="2"'))
    ids = [f.id for f in PARSER.parse(ctx).findings]
    assert ids == ["tests/check_xpass_strict.py::test_unexpected_pass_strict",
                   "tests/check_xpass_strict.py::test_unexpected_pass_strict#2"]


def test_the_pytest_plugins_evidence_is_preferred_over_junit_that_agrees(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    junit = PARSER.parse(ctx)
    assert junit.summary["counts"]["tests"] == 14  # no evidence file: JUnit
    counts = {"tests": 14, "passed": 5, "failures": 9, "errors": 0, "subtests_passed": 2}
    recorded = ParseResult(findings=junit.findings, summary={"counts": counts})
    Path(ctx.run_dir, EVIDENCE_FILE).write_bytes(encode_evidence(recorded, ctx.rc))
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert result.summary == {"counts": counts}


def test_evidence_that_disagrees_with_the_exit_code_is_not_trusted(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    # the plugin saw 0, the exit code is not
    Path(ctx.run_dir, EVIDENCE_FILE).write_bytes(encode_evidence(ParseResult(), 0))
    assert ctx.rc != 0
    assert not PARSER.parse(ctx).parser_ok


def test_an_unexpected_exception_becomes_a_loud_note(load_case: CaseLoader,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(junit, "read_report", explode)
    ctx = load_case("pytest", "all_pass")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == ["parser 'pytest' crashed on this run's evidence: RuntimeError: boom"]


# -- options -------------------------------------------------------------------------


def test_options_are_validated() -> None:
    PARSER.validate_options({"junit": "{run_dir}/report.xml", "allow_no_tests": True})
    with pytest.raises(OptionError, match="takes no option 'allow_skipped'"):
        PARSER.validate_options({"allow_skipped": True})
    with pytest.raises(OptionError, match="must be true or false"):
        PARSER.validate_options({"allow_no_tests": "yes"})
    with pytest.raises(OptionError, match="must be a string"):
        PARSER.validate_options({"junit": 3})


def test_the_junit_option_names_the_report(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing", options={"junit": "{run_dir}/reports/j.xml"})
    Path(ctx.run_dir, "reports").mkdir()
    Path(ctx.run_dir, "junit.xml").rename(Path(ctx.run_dir, "reports", "j.xml"))
    assert PARSER.parse(ctx).total == 9


# -- node ids ------------------------------------------------------------------------


def test_node_id_of_a_collection_error_is_the_module_path() -> None:
    assert node_id("", "tests.check_x", None) == ("tests/check_x.py", "tests/check_x.py")
    assert node_id("", "tests.check_x", "tests/check_x.py") == ("tests/check_x.py",
                                                                 "tests/check_x.py")


def test_node_id_splits_classes_from_the_module_by_capitalisation() -> None:
    assert node_id("pkg.tests.test_a.TestOuter.TestInner", "test_b[1-x]", None) == (
        "pkg/tests/test_a.py::TestOuter::TestInner::test_b[1-x]", "pkg/tests/test_a.py")


def test_node_id_trusts_the_file_attribute_over_capitalisation() -> None:
    assert node_id("tests.TestModule.TestClass", "test_x", "tests/TestModule.py") == (
        "tests/TestModule.py::TestClass::test_x", "tests/TestModule.py")
    assert node_id("prefix.tests.test_a.TestC", "test_x", "tests/test_a.py") == (
        "tests/test_a.py::TestC::test_x", "tests/test_a.py")


def test_node_id_finds_a_capitalised_module_on_disk(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "TestModule.py").write_text("")
    assert node_id("tests.TestModule", "test_x", None, tmp_path) == (
        "tests/TestModule.py::test_x", "tests/TestModule.py")


# -- documentation -------------------------------------------------------------------

def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    example = marked_example("pytest", "pytest/erroring")
    result = PARSER.parse(load_case("pytest", "erroring"))
    assert as_documented(result, len(example["findings"])) == example


# -- live ----------------------------------------------------------------------------


def clean_env() -> dict[str, str]:
    """This session's environment without what would steer the child pytest."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "COV_CORE_", "COVERAGE_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only pytest itself: fast, and its format
    return env


def test_live_pytest_junit_gives_the_recorded_findings(tmp_path: Path,
                                                       load_case: CaseLoader) -> None:
    pytest_bin = Path(sys.executable).with_name("pytest")
    if not pytest_bin.exists():
        pytest.skip(f"no pytest next to {sys.executable}")
    project = tmp_path / "project"
    shutil.copytree(PROJECTS / "failing", project)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.run(
        [str(pytest_bin), "-p", "no:cacheprovider", "--junitxml", f"{run_dir}/junit.xml",
         "tests/check_failing.py"], cwd=project, capture_output=True, env=clean_env(),
        check=False)
    ctx = ParseContext(check="pytest", run_dir=run_dir, cwd=project, rc=proc.returncode)
    live = PARSER.parse(ctx)
    recorded = PARSER.parse(load_case("pytest", "failing"))
    assert proc.returncode == 1
    assert live.parser_ok
    assert [(f.id, f.kind, f.location) for f in live.findings] == \
        [(f.id, f.kind, f.location) for f in recorded.findings]
    assert live.summary == recorded.summary
    assert status(ctx, live) == FAIL


# -- scale ---------------------------------------------------------------------------


def synthetic_report(path: Path, cases: int) -> None:
    """A report of ``cases`` testcases in pytest's shape, 1 in 50 failing (scale only)."""
    fails = len(range(7, cases, 50))
    with open(path, "w", encoding="utf-8") as out:
        out.write(f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite '
                  f'errors="0" failures="{fails}" skipped="0" tests="{cases}">')
        for i in range(cases):
            head = f'<testcase classname="tests.test_m{i // 100}.TestC" name="test_{i}"'
            if i % 50 == 7:
                out.write(f'{head}><failure message="assert {i}">&gt; assert x\n'
                          f"E   assert {i} == 0\n\ntests/test_m.py:3: AssertionError"
                          "</failure></testcase>")
            else:
                out.write(f'{head} time="0.001"/>')
        out.write("</testsuite></testsuites>")


def peak_memory(run_dir: Path) -> int:
    ctx = ParseContext(check="pytest", run_dir=run_dir, cwd=run_dir, rc=1)
    tracemalloc.start()
    try:
        result = PARSER.parse(ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.parser_ok
    return peak


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
def test_memory_does_not_grow_with_the_number_of_testcases(tmp_path: Path) -> None:
    small, big = tmp_path / "small", tmp_path / "big"
    small.mkdir()
    big.mkdir()
    synthetic_report(small / "junit.xml", 2_000)
    synthetic_report(big / "junit.xml", 40_000)
    assert peak_memory(big) < peak_memory(small) * 1.5 + 64 * 1024


def test_a_huge_single_failure_text_costs_bounded_memory(tmp_path: Path) -> None:
    lines = "".join(f"E   line {i} {'x' * 60}\n" for i in range(60_000))  # ~4 MB of text
    (tmp_path / "junit.xml").write_text(
        '<testsuites><testsuite tests="1" failures="1"><testcase classname="t.test_a" '
        f'name="test_b"><failure message="m">{lines}</failure></testcase></testsuite>'
        "</testsuites>")
    assert peak_memory(tmp_path) < 1_000_000


# -- properties ----------------------------------------------------------------------
# (garbage, truncations, damage, other tools' reports, a missing report: the conformance kit,
# test_conformance.py)


REAL_REPORTS = [(CASES / case / "junit.xml").read_bytes()
                for case in ("failing", "erroring", "collection_error", "skips")]


def parse_bytes(data: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, files={"junit.xml": data})




# -- issue 10: what a JUnit report may and may not say -----------------------------------


def test_a_failure_outside_any_testcase_is_a_finding_not_ignored(load_case: CaseLoader) -> None:
    # pytest's own green report with a suite-level <error> added (the shape merged or
    # hand-made reports have): it must count, never pass
    ctx = load_case("pytest", "all_pass")
    edit_report(ctx, 'hostname="vm">', 'hostname="vm"><error message="suite setup failed: '
                'database down">Traceback: database down</error>')
    result = PARSER.parse(ctx)
    (finding,) = result.findings
    assert finding.kind == "test_error"
    assert finding.message == "suite setup failed: database down"
    assert finding.id == "junit.xml::<testsuite name='pytest'>"
    assert result.summary["counts"]["errors"] == 1
    assert status(ctx, result) != PASS


def test_a_failure_outside_any_testcase_fails_a_red_run_with_its_finding(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=1)
    edit_report(ctx, '<testsuite name="pytest" errors="0" failures="0"',
                '<testsuite name="pytest" errors="0" failures="1"')
    edit_report(ctx, 'hostname="vm">', 'hostname="vm"><failure message="session crashed"/>')
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert [(f.kind, f.message) for f in result.findings] == [("test_failure", "session crashed")]
    assert status(ctx, result) == FAIL


@pytest.mark.parametrize(("old", "new", "what"), [
    ('<failure message="AssertionError: assert {', '<failure message="x"><failure '
     'message="AssertionError: assert {', "a <failure> inside a <failure>"),
    ('<testcase classname="tests.check_failing" name="test_helper_raises"',
     '<testcase classname="a" name="b"><testcase classname="tests.check_failing" '
     'name="test_helper_raises"', "a <testcase> inside a <testcase>"),
], ids=["failure-in-failure", "testcase-in-testcase"])
def test_elements_nested_in_a_way_pytest_never_writes_make_the_report_unreadable(
        load_case: CaseLoader, old: str, new: str, what: str) -> None:
    ctx = load_case("pytest", "failing")
    text = Path(ctx.run_dir, "junit.xml").read_text()
    closing = "</failure>" if "failure" in what else "</testcase>"
    text = text.replace(old, new, 1)
    Path(ctx.run_dir, "junit.xml").write_text(text.replace("</testsuite>", closing
                                                           + "</testsuite>", 1))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert what in result.notes[0]
    assert (result.findings, result.summary) == ([], {})


def test_a_torn_report_contributes_no_findings_and_no_counts(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing")
    report = Path(ctx.run_dir, "junit.xml")
    data = report.read_bytes()
    report.write_bytes(data[: data.index(b"test_param_odd_ids")])  # 5 failures in, 14 tests
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert (result.findings, result.total, result.summary) == ([], 0, {})
    (note,) = result.notes
    assert note.startswith("junit.xml is not readable JUnit XML: ")
    assert note.endswith("a report that cannot be read to its end contributes no findings "
                         "and no counts")
    assert status(ctx, result) == ERROR


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(report=st.sampled_from(REAL_REPORTS), cut=st.floats(0, 1), rc=st.sampled_from([0, 1, 2]))
def test_a_report_cut_anywhere_contributes_nothing(report: bytes, cut: float, rc: int) -> None:
    data = report[: int(len(report) * cut)]
    if data == report:
        return
    result = parse_bytes(data, rc)
    assert not result.parser_ok
    assert (result.findings, result.total, result.summary, result.gate_failures) == (
        [], 0, {}, [])


def test_a_usage_error_with_an_empty_report_is_an_error_not_a_zero_tests_gate(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "path_not_found")
    result = PARSER.parse(ctx)
    assert ctx.rc == 4
    assert result.gate_failures == []
    assert result.notes[0] == ("pytest refused its command line (exit code 4, usage error): "
                               "file or directory not found: tests/check_not_there.py")
    assert status(ctx, result) == ERROR


# -- issue 10: order ----------------------------------------------------------------------


def shuffled_report(report: str, order: list[int]) -> str:
    """A real report with its testcases in another order (as pytest-randomly runs them)."""
    cases = re.findall(r"<testcase .*?(?:/>|</testcase>)", report, re.S)
    head = report[: report.index(cases[0])]
    tail = report[report.rindex(cases[-1]) + len(cases[-1]):]
    return head + "".join(cases[i] for i in order) + tail


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(data=st.data(), case=st.sampled_from(["failing", "erroring", "collection_error"]),
       top=st.sampled_from([2, 20]))
def test_findings_do_not_depend_on_the_order_the_tests_ran_in(data: st.DataObject, case: str,
                                                             top: int) -> None:
    report = (CASES / case / "junit.xml").read_text()
    count = report.count("<testcase ")
    order = data.draw(st.permutations(list(range(count))))
    cwd = case_meta("pytest", case)["cwd"]

    def parsed(text: str) -> list[Finding]:
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "junit.xml").write_text(text)
            ctx = ParseContext(check="pytest", run_dir=tmp, cwd=cwd, rc=1, top=top)
            result = PARSER.parse(ctx)
            assert result.parser_ok
            return result.findings

    assert parsed(shuffled_report(report, order)) == parsed(report)


def test_parameters_are_ordered_by_number_not_by_text() -> None:
    keys = [order_key(TEST, f"t.py::test_p[{n}]") for n in (10, 2, 1)]
    assert sorted(keys) == [order_key(TEST, f"t.py::test_p[{n}]") for n in (1, 2, 10)]


# -- issue 10: what the log says when the report cannot ------------------------------------


@pytest.mark.parametrize(("case", "reason"), [
    ("stopped_x", "stopping after 1 failures"),
    ("stopped_maxfail", "stopping after 2 failures"),
])
def test_a_session_stopped_early_says_so(load_case: CaseLoader, case: str, reason: str) -> None:
    ctx = load_case("pytest", case)
    result = PARSER.parse(ctx)
    assert f"pytest stopped the session early ({reason}): not every collected test ran" \
        in result.notes
    assert status(ctx, result) == FAIL


def test_an_early_stop_without_a_finding_is_never_a_pass(load_case: CaseLoader) -> None:
    # derived: pytest's green report beside the end of a real -x log
    ctx = load_case("pytest", "all_pass")
    shutil.copy(CASES / "stopped_x" / "full.log", Path(ctx.run_dir, "full.log"))
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pytest stopped the session early (stopping after 1 "
                                    "failures): not every collected test ran"]
    assert status(ctx, result) == FAIL


def test_a_stop_line_inside_captured_output_is_not_an_early_stop(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass")
    log = Path(ctx.run_dir, "full.log")
    lines = log.read_text().splitlines()
    stop = "!" * 20 + " stopping after 1 failures " + "!" * 20
    log.write_text("\n".join([lines[0], stop, *(["captured"] * 20), *lines[1:]]) + "\n")
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_a_missing_plugin_says_what_is_missing_and_how_to_add_it(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "plugin_missing")
    result = PARSER.parse(ctx)
    assert ctx.rc == 4
    assert result.notes == [
        "pytest does not know --ckdn-digest: the ckdn pytest plugin is not installed in the "
        "environment that ran pytest; install checkdown there (pip install checkdown; tox: "
        'deps = checkdown; nox: session.install("checkdown")), or drop the option from the '
        "command"]
    assert "--junitxml" not in repr(result)
    assert status(ctx, result) == ERROR


@pytest.mark.parametrize(("rc", "how"), [
    (124, "timed out"), (130, "stopped, exit code 130"), (143, "stopped, exit code 143"),
    (-9, "killed by signal 9"),
])
def test_a_stopped_run_without_a_report_does_not_ask_for_junitxml(load_case: CaseLoader,
                                                                 rc: int, how: str) -> None:
    ctx = load_case("pytest", "failing", rc=rc)
    Path(ctx.run_dir, "junit.xml").unlink()
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == [f"JUnit report junit.xml not found: pytest was {how} before it "
                            "wrote its report (pytest writes it at the end of the session)"]
    assert status(ctx, result) == ERROR


# -- issue 10: two records of one session -----------------------------------------------------


def evidence_of(ctx: ParseContext, result: ParseResult) -> None:
    Path(ctx.run_dir, EVIDENCE_FILE).write_bytes(encode_evidence(result, ctx.rc))


def test_evidence_greener_than_the_junit_report_beside_it_is_not_believed(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "failing", rc=0)  # a conftest forced exit 0 over 9 failures
    evidence_of(ctx, ParseResult(summary={"counts": {"tests": 3, "passed": 3, "failures": 0,
                                                     "errors": 0}}))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.total == 9  # the findings of the record reporting more
    assert (f"{EVIDENCE_FILE} and junit.xml disagree about this session (failures 0 vs 9; "
            "findings 0 vs 9)") in result.notes[-1]
    assert status(ctx, result) == PARSE_MISMATCH


def test_records_with_the_same_counts_but_other_failing_tests_disagree(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "xpass_strict")
    (junit_finding,) = PARSER.parse(ctx).findings
    other = Finding("tests/check_other.py::test_x", "test_failure", "assert 0")
    evidence_of(ctx, ParseResult(findings=[other], summary={"counts": {
        "tests": 2, "passed": 1, "failures": 1, "errors": 0}}))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert ("failing tests differ: only in ckdn-pytest.json: tests/check_other.py::test_x; "
            f"only in the JUnit report: {junit_finding.id}") in result.notes[-1]
    assert status(ctx, result) == ERROR


def test_evidence_beside_an_unreadable_junit_report_is_not_believed(
        load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass")
    evidence_of(ctx, ParseResult(summary={"counts": {"tests": 3, "passed": 3}}))
    report = Path(ctx.run_dir, "junit.xml")
    report.write_bytes(report.read_bytes()[:100])
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes[-1] == (f"{EVIDENCE_FILE} could not be checked against junit.xml: the "
                                "two records of one session must both be readable")
    assert status(ctx, result) == PARSE_MISMATCH


@pytest.mark.parametrize("case", ["erroring", "erroring_xunit1", "skips", "failing",
                                  "xpass_strict", "collection_error"])
def test_every_test_outcome_read_again_agrees_with_the_parsers_counts_and_ids(
        load_case: CaseLoader, case: str) -> None:
    from ckdn.parsers.outcomes import read_outcomes

    ctx = load_case("pytest", case, top=1000)
    result = PytestParser().parse(ctx)
    outcomes = read_outcomes(Path(ctx.run_dir) / "junit.xml", ctx.cwd)
    counts = result.summary["counts"]
    assert len(outcomes) <= counts["tests"]  # a setup error and a call failure: one test
    failing = {f.id.removesuffix("@teardown") for f in result.findings}
    assert failing == {i for i, o in outcomes.items() if o in ("failed", "error")}
    assert sum(o == "passed" for o in outcomes.values()) <= counts["passed"]
