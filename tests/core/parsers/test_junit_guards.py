"""The JUnit reader's guards hold where a testcase is read inline (its fast road): names with
a colon, nesting depth, and the bounded name table behind the colon check."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckdn.parsers._junit_xml import JUnitReader
from ckdn.parsers._xml import CHUNK, MAX_DEPTH
from ckdn.parsers.junit import PytestParser
from ckdn.reconcile import PARSE_MISMATCH

from .conftest import CaseLoader, status

PARSER = PytestParser()
PASSING = '<testcase classname="tests.check_all_pass" name="test_one" time="0.001" />'


def edit_report(run_dir: str | Path, old: str, new: str) -> None:
    report = Path(run_dir, "junit.xml")
    text = report.read_text(encoding="utf-8")
    assert old in text
    report.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("where", ["attribute", "element"])
@pytest.mark.parametrize("far", [False, True], ids=["first-chunk", "later-chunk"])
def test_a_colon_in_a_name_inside_a_testcase_is_refused(load_case: CaseLoader, where: str,
                                                        far: bool) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    bad = (PASSING.replace("<testcase ", '<testcase x:flaky="1" ') if where == "attribute"
           else PASSING.replace(" />", "><x:rerun /></testcase>"))
    # far: the bad testcase two chunks of blanks in, past the first Parse call
    filler = " " * (2 * CHUNK) if far else ""
    edit_report(ctx.run_dir, PASSING, filler + bad)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "a colon" in result.notes[0], result.notes
    assert status(ctx, result) == PARSE_MISMATCH


def nested(depth: int) -> str:
    """A ``<testcase>`` at element depth ``depth`` (the root at 1), inside plain suites."""
    suites = depth - 2  # the root and the testcase
    return ('<?xml version="1.0"?><testsuites>' + '<testsuite name="s">' * suites + PASSING
            + "</testsuite>" * suites + "</testsuites>")


def test_a_testcase_counts_in_the_depth_guard(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    report = Path(ctx.run_dir, "junit.xml")
    report.write_text(nested(MAX_DEPTH), encoding="utf-8")
    reader = JUnitReader(ctx, "junit.xml")
    reader.read(report)
    assert reader.counts()["passed"] == 1
    report.write_text(nested(MAX_DEPTH + 1), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert f"nested deeper than {MAX_DEPTH}" in result.notes[0], result.notes


def test_the_name_table_holds_one_chunks_names_not_the_reports(load_case: CaseLoader) -> None:
    ctx = load_case("pytest", "all_pass", rc=0)
    report = Path(ctx.run_dir, "junit.xml")
    names = 20_000  # about a megabyte of distinct element names, many chunks of them
    report.write_text('<?xml version="1.0"?><testsuites>'
                      + "".join(f"<extra{i} />" for i in range(names)) + "</testsuites>",
                      encoding="utf-8")
    reader = JUnitReader(ctx, "junit.xml")
    reader.read(report)
    assert len(reader._parser.intern) < CHUNK // len("<extra00000 />")
