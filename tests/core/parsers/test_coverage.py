"""The coverage parser on real pytest-cov / coverage.py reports (tests/fixtures/coverage).

The ``fail_under`` gate is held to the real ``coverage report --fail-under`` exit
codes recorded beside each boundary case (``fail_under.json``), and to
coverage.py's own functions over a large input space.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from coverage.results import Numbers, display_covered, format_fail_under_msg, format_lines
from coverage.results import should_fail_under as coverage_should_fail_under
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext
from ckdn.parsers.coverage_report import CoverageParser, Totals
from ckdn.parsers.gates import FileTally, WorstFiles, fail_under_message, should_fail_under
from ckdn.parsers.gates import display_covered as ckdn_display_covered
from ckdn.parsers.junit import PytestParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS

from .conftest import FIXTURES, CaseLoader, status
from .documented import as_documented, marked_example

PARSER = CoverageParser()
CASES = FIXTURES / "coverage"


def recorded_checks(case: str) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = json.loads((CASES / case / "fail_under.json").read_text())[
        "checks"]
    return checks


def grid(case: str) -> list[Any]:
    return [pytest.param(c, id=f"{c['fail_under']}-p{c['precision']}")
            for c in recorded_checks(case)]


def options_for(check: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {"fail_under": check["fail_under"]}
    if check["precision"] is not None:
        options["precision"] = check["precision"]
    return options


# -- the gate against the real tool ------------------------------------------------------


@pytest.mark.parametrize("reports", ["both", "xml_only", "json_only"])
@pytest.mark.parametrize("check", grid("boundary"))
def test_gate_agrees_with_coverage_report_fail_under_at_the_boundary(
        load_case: CaseLoader, check: dict[str, Any], reports: str) -> None:
    ctx = load_case("coverage", "boundary", options=options_for(check))
    if reports == "xml_only":
        Path(ctx.run_dir, "coverage.json").unlink()
    elif reports == "json_only":
        Path(ctx.run_dir, "coverage.xml").unlink()
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert bool(result.gate_failures) == (check["rc"] == 2)
    if check["rc"] == 2:
        message, worst = result.gate_failures[0].split("; worst covered: ")
        ours = message.removeprefix("coverage ").replace("fail_under=", "fail-under=")
        assert f"Coverage failure: {ours}" == check["last_line"]
        assert worst.startswith("calc/ops.py ")


@pytest.mark.parametrize("check", grid("boundary_precision2"))
def test_gate_uses_the_precision_the_json_report_shows(load_case: CaseLoader,
                                                       check: dict[str, Any]) -> None:
    ctx = load_case("coverage", "boundary_precision2",
                    options={"fail_under": check["fail_under"]})
    result = PARSER.parse(ctx)
    assert result.summary["coverage"]["precision"] == 2
    assert bool(result.gate_failures) == (check["rc"] == 2)


@pytest.mark.parametrize("check", grid("boundary_precision2"))
def test_xml_only_needs_the_precision_option_to_match_a_configured_precision(
        load_case: CaseLoader, check: dict[str, Any]) -> None:
    ctx = load_case("coverage", "boundary_precision2",
                    options={"fail_under": check["fail_under"], "precision": 2})
    Path(ctx.run_dir, "coverage.json").unlink()
    assert bool(PARSER.parse(ctx).gate_failures) == (check["rc"] == 2)


@pytest.mark.parametrize(("case", "check"), [
    pytest.param(case, param.values[0], id=f"{case}-{param.id}")
    for case in ("branches", "full") for param in grid(case)])
def test_gate_agrees_with_coverage_report_with_branches_and_at_100(
        load_case: CaseLoader, case: str, check: dict[str, Any]) -> None:
    result = PARSER.parse(load_case("coverage", case, options=options_for(check)))
    assert result.parser_ok
    assert bool(result.gate_failures) == (check["rc"] == 2)


@pytest.mark.parametrize(("case", "fail_under"), [("boundary_cov_fail_under_80", 80),
                                                  ("boundary_cov_fail_under_79_56", 79.56)])
def test_gate_agrees_with_pytest_covs_own_fail_under(load_case: CaseLoader, case: str,
                                                     fail_under: float) -> None:
    ctx = load_case("coverage", case, options={"fail_under": fail_under})
    result = PARSER.parse(ctx)
    assert bool(result.gate_failures) == (ctx.rc != 0)
    assert status(ctx, result) == (FAIL if ctx.rc else PASS)


# -- the gate against coverage.py's functions --------------------------------------------

percents = st.one_of(st.floats(0, 100), st.integers(0, 2000).flatmap(
    lambda d: st.integers(0, d).map(lambda n: 100.0 * n / d if d else 100.0)))
thresholds = st.one_of(st.floats(0, 100), st.integers(0, 10000).map(lambda n: n / 100),
                       st.integers(0, 100).map(float))


@given(total=percents, fail_under=thresholds, precision=st.integers(0, 6))
def test_should_fail_under_is_coverage_pys_rule(total: float, fail_under: float,
                                                precision: int) -> None:
    assert should_fail_under(total, fail_under, precision) == \
        coverage_should_fail_under(total, fail_under, precision)


@given(total=percents, fail_under=thresholds, precision=st.integers(0, 6))
def test_gate_message_and_display_are_coverage_pys(total: float, fail_under: float,
                                                   precision: int) -> None:
    ours = fail_under_message(total, fail_under, precision)
    theirs = format_fail_under_msg(total, fail_under, precision)
    assert ours == "coverage " + theirs.replace("fail-under=", "fail_under=")
    assert ckdn_display_covered(total, precision) == display_covered(total, precision)


@given(statements=st.integers(0, 10**6), branches=st.integers(0, 10**5), data=st.data())
def test_total_is_coverage_pys_pc_covered_to_the_last_bit(statements: int, branches: int,
                                                          data: st.DataObject) -> None:
    missing = data.draw(st.integers(0, statements))
    missing_branches = data.draw(st.integers(0, branches))
    numbers = Numbers(n_statements=statements, n_missing=missing, n_branches=branches,
                      n_missing_branches=missing_branches)
    totals = Totals(statements, statements - missing, branches, branches - missing_branches, 1)
    assert totals.percent == numbers.pc_covered


# -- facts -------------------------------------------------------------------------------


def test_summary_has_the_total_the_lines_and_the_test_counts(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("coverage", "boundary"))
    assert result.summary == {
        "counts": {"tests": 3, "passed": 3, "failures": 0, "errors": 0, "skipped": 0,
                   "xfailed": 0, "lines_valid": 44, "lines_covered": 35, "branches_valid": 0,
                   "branches_covered": 0},
        "coverage": {"percent": 35 * 100.0 / 44, "display": "80", "precision": 0},
        "overall": {"line_percent": 79.55},
        "uncovered_files_total": 1,
        "top_uncovered_files": [{
            "file": "calc/ops.py", "percent": 35 * 100.0 / 44, "line_rate": 0.7955,
            "missing_count": 9, "missing": "57, 61, 65, 69, 73, 77, 81, 85, 89",
            "missing_lines_preview": [57, 61, 65, 69, 73, 77, 81, 85, 89],
            "missing_lines_truncated": 0, "partial_branches": 0, "missing_branches_preview": [],
            "missing_branches_truncated": 0}],
    }


def test_branches_count_in_the_total(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("coverage", "branches"))
    counts = result.summary["counts"]
    assert (counts["lines_valid"], counts["lines_covered"]) == (17, 13)
    assert (counts["branches_valid"], counts["branches_covered"]) == (12, 8)
    assert result.summary["coverage"]["percent"] == 100.0 * 21 / 29


def test_test_failures_come_from_junit_exactly_as_the_pytest_parser_reads_them(
        load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "below", options={"fail_under": 80})
    result = PARSER.parse(ctx)
    assert result.findings == PytestParser().parse(ctx).findings
    (finding,) = result.findings
    assert finding.id == "tests/check_shop.py::test_total_with_discount"
    assert finding.kind == "test_failure"
    assert finding.message == "assert 14.0 == 13.5"
    assert result.gate_failures == ["coverage total of 47 is less than fail_under=80; worst "
                                    "covered: calc/shop.py 47% (missing 12-14, 18-19, 23-26)"]
    assert status(ctx, result) == FAIL


def test_full_coverage_with_fail_under_100_is_a_pass(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "full", options={"fail_under": 100})
    result = PARSER.parse(ctx)
    assert (result.parser_ok, result.findings, result.gate_failures) == (True, [], [])
    assert status(ctx, result) == PASS


def test_below_fail_under_with_exit_code_0_is_a_fail(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary", options={"fail_under": 90})
    assert status(ctx, PARSER.parse(ctx)) == FAIL


def test_without_fail_under_there_is_no_gate(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    result = PARSER.parse(ctx)
    assert result.gate_failures == []
    assert status(ctx, result) == PASS


def test_junit_is_optional(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_json_only", options={"fail_under": 80})
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert "tests" not in result.summary["counts"]
    assert status(ctx, result) == PASS


def test_zero_tests_in_junit_is_a_gate_failure_here_too(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "junit.xml").write_bytes(
        (FIXTURES / "pytest" / "zero_tests" / "junit.xml").read_bytes())
    assert PARSER.parse(ctx).gate_failures == ["no tests ran"]
    ctx = load_case("coverage", "below", options={"allow_no_tests": True})
    Path(ctx.run_dir, "junit.xml").write_bytes(
        (FIXTURES / "pytest" / "zero_tests" / "junit.xml").read_bytes())
    assert PARSER.parse(ctx).gate_failures == []


def test_the_precision_option_overrides_the_json_reports(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_precision2", options={"fail_under": 80,
                                                                "precision": 0})
    result = PARSER.parse(ctx)
    assert result.summary["coverage"]["display"] == "80"
    assert result.gate_failures == []


# -- the uncovered files, held to `coverage report --show-missing` -----------------------


def report_table(case: str) -> dict[str, dict[str, str]]:
    """coverage.py's own per-file table for the case's data (``report_missing.txt``)."""
    lines = (CASES / case / "report_missing.txt").read_text().splitlines()
    header = lines[0].split()
    rows: dict[str, dict[str, str]] = {}
    for line in lines[2:]:
        if line.startswith(("-", "TOTAL")):
            continue
        cells = line.split(None, len(header) - 1)
        rows[cells[0]] = dict(zip(header, cells + [""] * (len(header) - len(cells)),
                                  strict=True))
    return rows


def coverage_missing(row: dict[str, str]) -> tuple[str, list[str]]:
    """(the line ranges, the branch arcs) of coverage.py's Missing column."""
    items = [item for item in row["Missing"].split(", ") if item]
    return (", ".join(i for i in items if "->" not in i), [i for i in items if "->" in i])


@pytest.mark.parametrize("reports", ["both", "xml_only", "json_only"])
@pytest.mark.parametrize("case", ["spread", "below"])
def test_uncovered_files_are_the_files_coverage_report_shows_below_100_worst_first(
        load_case: CaseLoader, case: str, reports: str) -> None:
    ctx = load_case("coverage", case)
    if reports == "xml_only":
        Path(ctx.run_dir, "coverage.json").unlink()
    elif reports == "json_only":
        Path(ctx.run_dir, "coverage.xml").unlink()
    summary = PARSER.parse(ctx).summary
    table = report_table(case)
    uncovered = {name: row for name, row in table.items() if row["Cover"] != "100%"}
    assert summary["uncovered_files_total"] == len(uncovered)
    listed = summary["top_uncovered_files"]
    assert [entry["file"] for entry in listed] == sorted(
        uncovered, key=lambda name: (int(uncovered[name]["Cover"].rstrip("%")),
                                     -int(uncovered[name]["Miss"]), name))
    for entry in listed:
        row = uncovered[entry["file"]]
        ranges, arcs = coverage_missing(row)
        assert entry["missing_count"] == int(row["Miss"])
        assert f"{ckdn_display_covered(entry['percent'], 0)}%" == row["Cover"]
        assert entry["missing"] == ranges
        assert entry["partial_branches"] == int(row.get("BrPart", "0"))
        assert entry["missing_branches_preview"] == arcs


def test_the_xml_and_the_json_report_give_the_same_uncovered_files(
        load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread")
    from_json = PARSER.parse(ctx)  # the JSON report is preferred when both are there
    Path(ctx.run_dir, "coverage.json").unlink()
    from_xml = PARSER.parse(ctx)
    assert from_json.parser_ok
    assert from_xml.parser_ok
    assert from_json.summary == from_xml.summary


def test_overall_gives_lines_and_branches_apart_as_the_xml_rates_do(
        load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread")
    root = Path(ctx.run_dir, "coverage.xml").read_text()
    line_rate = float(re.search(r'<coverage [^>]*line-rate="([\d.]+)"', root)[1])  # type: ignore[index]
    branch_rate = float(re.search(r'<coverage [^>]*branch-rate="([\d.]+)"', root)[1])  # type: ignore[index]
    assert PARSER.parse(ctx).summary["overall"] == {
        "line_percent": round(line_rate * 100, 2), "branch_percent": round(branch_rate * 100, 2)}
    assert PARSER.parse(load_case("coverage", "below")).summary["overall"] == {
        "line_percent": 47.06}


def test_a_missing_line_preview_keeps_the_first_lines_and_counts_the_rest(
        load_case: CaseLoader) -> None:
    data = json.loads((CASES / "spread" / "coverage.json").read_text())
    missing = data["files"]["calc/convert.py"]["missing_lines"]
    assert len(missing) == 60
    ctx = load_case("coverage", "spread")
    for options, kept in (({}, 40), ({"missing_lines_preview": 5}, 5),
                          ({"missing_lines_preview": 0}, 0)):
        (entry, *_) = PARSER.parse(replace(ctx, options=options)).summary[
            "top_uncovered_files"]
        assert entry["file"] == "calc/convert.py"
        assert entry["missing_lines_preview"] == missing[:kept]
        assert entry["missing_lines_truncated"] == 60 - kept


def test_a_failed_gate_names_the_worst_covered_files_with_their_missing_lines(
        load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread", options={"fail_under": 90})
    result = PARSER.parse(ctx)
    assert result.gate_failures == [
        "coverage total of 18 is less than fail_under=90; worst covered: calc/convert.py 0% "
        "(missing 4-85), calc/shop.py 45% (missing 12-14, 18-21), calc/grade.py 82% (missing "
        "branches 6->8, 8->10)"]
    assert status(ctx, result) == FAIL


def test_the_gate_names_three_files_and_counts_the_others(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread", options={"fail_under": 90}, top=1)
    result = PARSER.parse(ctx)
    assert result.summary["uncovered_files_total"] == 3
    assert [e["file"] for e in result.summary["top_uncovered_files"]] == ["calc/convert.py"]
    assert result.gate_failures == [
        "coverage total of 18 is less than fail_under=90; worst covered: calc/convert.py 0% "
        "(missing 4-85), +2 more file(s)"]


def test_a_gate_failure_cuts_a_file_with_many_missing_ranges(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread", options={"fail_under": 90})
    Path(ctx.run_dir, "coverage.xml").unlink()
    data = json.loads(Path(ctx.run_dir, "coverage.json").read_text())
    convert = data["files"]["calc/convert.py"]
    # every other missing statement run: 30 ranges where coverage.py had one
    convert["executed_lines"] = convert["missing_lines"][1::2]
    convert["missing_lines"] = convert["missing_lines"][::2]
    convert["summary"].update(covered_lines=30, missing_lines=30)
    data["totals"].update(covered_lines=48, missing_lines=37)
    data["totals"]["percent_covered"] = 100 * 52 / 119
    Path(ctx.run_dir, "coverage.json").write_text(json.dumps(data))
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    (entry, *_) = result.summary["top_uncovered_files"]
    assert entry["missing"] == "4, 6, 8, 12, 14, 18, 20, 22, 26, 28, ... (+20 more)"
    assert f"calc/convert.py {ckdn_display_covered(entry['percent'], 0)}% (missing 4, 6, 8, " \
        "12, ... (+26 more)" in result.gate_failures[0]


line_sets = st.lists(st.booleans(), max_size=200).flatmap(
    lambda hits: st.tuples(st.just(hits), st.lists(st.integers(1, 3), min_size=len(hits),
                                                   max_size=len(hits))))


@given(lines=line_sets, preview=st.integers(0, 50))
def test_a_tallys_ranges_and_counts_are_coverage_pys_format_lines(
        lines: tuple[list[bool], list[int]], preview: int) -> None:
    hits, gaps = lines
    numbers = list(itertools.accumulate(gaps))  # increasing statement lines, gaps between
    tally = FileTally("f.py", preview)
    for number, hit in zip(numbers, hits, strict=True):
        tally.line(number, hit)
    missing = [n for n, hit in zip(numbers, hits, strict=True) if not hit]
    ranges = format_lines(numbers, missing).split(", ") if missing else []
    # a tally keeps its first 10 ranges (bounded memory) and counts the rest
    kept = ", ".join(ranges[:10]) + (f", ... (+{len(ranges) - 10} more)" if len(ranges) > 10
                                     else "")
    assert tally.missing_text(10_000) == kept
    assert (tally.statements, tally.missing_total) == (len(numbers), len(missing))
    assert tally.missing == missing[:preview]
    assert tally.missing_text(3).startswith(format_lines(numbers, missing)[:1])


@given(files=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20),
                                st.sampled_from("abc")), max_size=40),
       top=st.integers(0, 8))
def test_worst_files_keeps_exactly_the_top_of_a_full_sort(
        files: list[tuple[int, int, str]], top: int) -> None:
    worst = WorstFiles(top)
    tallies = []
    for covered, missing, name in files:
        tally = FileTally(name)
        for number in range(covered + missing):
            tally.line(number + 1, number < covered)
        worst.add(tally)
        tallies.append(tally)
    uncovered = [t for t in tallies if t.uncovered]
    assert worst.total == len(uncovered)
    expected = sorted(enumerate(uncovered), key=lambda it: (*it[1].rank(), it[0]))[:top]
    assert [t for _, t in worst.kept] == [t for _, t in expected]


def test_a_json_file_whose_lines_disagree_with_its_summary_is_loud(
        load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "spread")
    Path(ctx.run_dir, "coverage.xml").unlink()
    data = json.loads(Path(ctx.run_dir, "coverage.json").read_text())
    data["files"]["calc/shop.py"]["missing_lines"].pop()
    Path(ctx.run_dir, "coverage.json").write_text(json.dumps(data))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == [
        "coverage.json: file 'calc/shop.py' lists 7 executed and 6 missing lines, 2 taken and "
        "4 missed branches, but its summary counts (statements, covered, branches, covered "
        "branches) = (14, 7, 6, 2)"]


NO_BRANCH_MODULE = """\
def first_even(numbers):
    for n in numbers:  # pragma: no branch
        if n % 2 == 0:
            return n
    raise ValueError(numbers)


def unused():
    return 1


first_even([1, 2])
"""


@pytest.mark.parametrize("reports", ["both", "xml_only", "json_only"])
def test_a_no_branch_pragma_keeps_coverage_pys_counts(tmp_path: Path, reports: str) -> None:
    # coverage.py counts the loop's untaken exit as covered and lists it nowhere in its
    # JSON report: towncrier's suite (a `# pragma: no branch` loop) read as parse_mismatch.
    (tmp_path / "nobranch.py").write_text(NO_BRANCH_MODULE)
    coverage = [sys.executable, "-m", "coverage"]
    for argv in (["run", "--branch", "nobranch.py"], ["json", "-o", "coverage.json"],
                 ["xml", "-o", "coverage.xml"], ["report", "--format=total", "--precision=6"]):
        done = subprocess.run([*coverage, *argv], cwd=tmp_path, capture_output=True,
                              text=True, check=True)
    declared = json.loads((tmp_path / "coverage.json").read_text())
    assert declared["files"]["nobranch.py"]["summary"]["covered_branches"] == 4
    assert len(declared["files"]["nobranch.py"]["executed_branches"]) == 3
    for name in {"xml_only": ["coverage.json"], "json_only": ["coverage.xml"]}.get(reports, []):
        (tmp_path / name).unlink()
    ctx = ParseContext(check="coverage", run_dir=tmp_path, cwd=tmp_path, rc=0,
                       options={"fail_under": 50}, top=5)
    result = PARSER.parse(ctx)
    assert status(ctx, result) == PASS, result.notes
    summary = result.summary
    assert summary["counts"] == {"lines_valid": 8, "lines_covered": 6, "branches_valid": 4,
                                 "branches_covered": 4}
    assert summary["coverage"]["percent"] == pytest.approx(float(done.stdout))
    [file] = summary["top_uncovered_files"]
    assert (file["file"], file["percent"], file.get("partial_branches", 0)) == (
        "nobranch.py", 100.0 * 10 / 12, 0)


def test_a_report_of_many_files_keeps_the_top_and_counts_them_all(
        load_case: CaseLoader) -> None:
    """Derived from the real report: its worst file repeated 5,000 times under new names."""
    ctx = load_case("coverage", "spread", top=3)
    Path(ctx.run_dir, "coverage.json").unlink()
    path = Path(ctx.run_dir, "coverage.xml")
    text = path.read_text()
    start = text.index('\t\t\t\t<class name="convert.py"')
    end = text.index("</class>", start) + len("</class>\n")
    copies = 5_000
    body = "".join(text[start:end].replace('"convert.py"', f'"c{i:05}.py"')
                   for i in range(copies))
    text = text[:end] + body + text[end:]
    for key, extra in (("lines-valid", 60), ("branches-valid", 24)):
        declared = int(re.search(rf'{key}="(\d+)"', text)[1])  # type: ignore[index]
        text = text.replace(f'{key}="{declared}"', f'{key}="{declared + extra * copies}"', 1)
    text = re.sub(r'line-rate="[\d.]+"', 'line-rate="0.0001"', text, count=1)
    path.write_text(text)
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert result.summary["uncovered_files_total"] == copies + 3
    assert [e["file"] for e in result.summary["top_uncovered_files"]] == [
        "calc/c00000.py", "calc/c00001.py", "calc/c00002.py"]


# -- guards ------------------------------------------------------------------------------


def test_no_coverage_report_is_never_clean(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "no_data", options={"fail_under": 80})
    result = PARSER.parse(ctx)
    assert ctx.rc == 0  # pytest-cov only warned "No data to report"
    assert not result.parser_ok
    assert result.notes[0].startswith("no coverage report in the run directory")
    assert "--cov-report=xml:{run_dir}/coverage.xml" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_missing_report_with_a_failing_exit_code_is_an_error(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "below")
    Path(ctx.run_dir, "coverage.xml").unlink()
    Path(ctx.run_dir, "coverage.json").unlink()
    Path(ctx.run_dir, "junit.xml").unlink()
    assert status(ctx, PARSER.parse(ctx)) == ERROR


def edit(path: Path, pattern: str, new: str) -> None:
    text = path.read_text()
    changed, n = re.subn(pattern, new, text, count=1)
    assert n == 1, pattern
    path.write_text(changed)


def test_xml_declared_totals_must_match_its_lines(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.json").unlink()
    edit(Path(ctx.run_dir, "coverage.xml"), r'lines-covered="35"', 'lines-covered="36"')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == ["coverage.xml declares lines-covered=36 but its <line> elements "
                            "give 35"]
    assert status(ctx, result) == PARSE_MISMATCH


def test_xml_line_rate_must_match_its_counts(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.json").unlink()
    edit(Path(ctx.run_dir, "coverage.xml"), r'line-rate="0.7955"', 'line-rate="0.9"')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "line-rate=0.9" in result.notes[0]


def test_xml_with_a_line_dropped_is_loud(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.json").unlink()
    edit(Path(ctx.run_dir, "coverage.xml"), r'\s*<line number="\d+" hits="0"/>', "")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "lines-valid=44 but its <line> elements give 43" in result.notes[0]


def test_json_percent_must_match_its_counts(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_json_only")
    data = json.loads(Path(ctx.run_dir, "coverage.json").read_text())
    data["totals"]["percent_covered"] = 81.0
    Path(ctx.run_dir, "coverage.json").write_text(json.dumps(data))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "percent_covered=81.0" in result.notes[0]


def test_json_totals_must_match_its_files(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_json_only")
    data = json.loads(Path(ctx.run_dir, "coverage.json").read_text())
    data["totals"]["covered_lines"] = 36
    data["totals"]["percent_covered"] = 3600 / 44
    Path(ctx.run_dir, "coverage.json").write_text(json.dumps(data))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "but its files add up to (44, 35, 0, 0)" in result.notes[0]


def test_json_and_xml_that_disagree_are_loud(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.xml").write_bytes((CASES / "below" / "coverage.xml").read_bytes())
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == ["coverage.json and coverage.xml disagree: (statements, covered, "
                            "branches, covered branches) = (44, 35, 0, 0) vs (17, 8, 0, 0)"]


def test_an_unrecognised_json_document_is_loud(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_json_only")
    Path(ctx.run_dir, "coverage.json").write_text('{"summary": {}}')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "not coverage.py's JSON report" in result.notes[0]


def test_a_junit_file_is_not_coverage_xml(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary", options={"coverage_xml": "junit.xml"})
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "unrecognised root element <testsuites>" in result.notes[0]


def test_a_namespaced_coverage_root_is_not_recognised(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.json").unlink()
    edit(Path(ctx.run_dir, "coverage.xml"), r"<coverage ", '<coverage xmlns="urn:x" ')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "namespaced root element <coverage>" in result.notes[0]


def test_a_doctype_in_coverage_xml_is_refused(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary")
    Path(ctx.run_dir, "coverage.json").unlink()
    edit(Path(ctx.run_dir, "coverage.xml"), r"<coverage ",
         '<!DOCTYPE coverage [<!ENTITY a "aaaaaaaaaa">]><coverage ')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "DOCTYPE" in result.notes[0]


def test_a_report_measuring_no_file_is_a_gate_failure(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary_json_only")
    data = json.loads(Path(ctx.run_dir, "coverage.json").read_text())
    data["files"] = {}
    data["totals"].update(covered_lines=0, num_statements=0, percent_covered=100.0)
    Path(ctx.run_dir, "coverage.json").write_text(json.dumps(data))
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert result.gate_failures == ["coverage measured no files"]


def test_report_paths_outside_the_run_dir_are_refused(load_case: CaseLoader) -> None:
    ctx = load_case("coverage", "boundary", options={"coverage_xml": "/etc/hostname"})
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


# -- documentation -------------------------------------------------------------------

def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    example = marked_example("coverage", "coverage/below fail_under=80")
    result = PARSER.parse(load_case("coverage", "below", options={"fail_under": 80}))
    assert as_documented(result, len(example["findings"])) == example
