"""The importers' rules on files made to break them: unknown variants and unsafe XML refused
naming what was seen, declared totals that disagree, nothing checked, and the residue
always counted (``read == attached + unattached``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.imports import Imported, ImportRefused, read_import
from ckdn.parsers.base import ParseContext
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, reconcile_import

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


def read(tmp_path: Path, fmt: str, text: str | bytes, name: str = "report") -> Imported:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return read_import(fmt, ParseContext("c", tmp_path, tmp_path, 0, {}, 20), str(path))


def status(imported: Imported) -> str:
    return reconcile_import(imported.result, cases=imported.cases,
                            mismatch=imported.mismatch).status


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuites><testsuite name="x" tests="1"><testcase name="&lol3;"/></testsuite></testsuites>"""
QUADRATIC = ("<?xml version=\"1.0\"?>\n<!DOCTYPE kaboom [<!ENTITY a \"" + "x" * 50_000
             + "\">]>\n<testsuite tests=\"1\"><testcase name=\"" + "&a;" * 1000
             + "\"/></testsuite>")
XXE = """<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite name="x" tests="1"><testcase name="&xxe;"/></testsuite>"""


@pytest.mark.parametrize(("fmt", "bomb"), [
    ("junit", BILLION_LAUGHS), ("junit", QUADRATIC), ("junit", XXE),
    ("checkstyle", XXE.replace("testsuite", "checkstyle")),
    ("cobertura", XXE.replace("testsuite", "coverage")),
])
def test_an_entity_bomb_or_an_external_entity_is_refused_unread(tmp_path: Path, fmt: str,
                                                                 bomb: str) -> None:
    with pytest.raises(ImportRefused, match=r"DOCTYPE|entity"):
        read(tmp_path, fmt, bomb)


def test_a_bare_doctype_naming_a_dtd_is_read_for_cobertura_only(tmp_path: Path) -> None:
    text = ('<?xml version="1.0"?>\n<!DOCTYPE coverage SYSTEM '
            '"http://cobertura.sourceforge.net/xml/coverage-04.dtd">\n'
            '<coverage line-rate="1" lines-valid="1" lines-covered="1"><packages><package>'
            '<classes><class filename="a.py"><lines><line number="1" hits="1"/></lines>'
            '</class></classes></package></packages></coverage>')
    assert read(tmp_path, "cobertura", text).variant == "coverage-04"
    with pytest.raises(ImportRefused, match="DOCTYPE"):
        read(tmp_path, "junit", text.replace("coverage", "testsuite"))


@pytest.mark.parametrize(("fmt", "text", "seen"), [
    ("junit", "<results><test/></results>", "<results>"),
    ("junit", '<testsuite tests="1"><testcase name="a"><bogus/></testcase></testsuite>',
     "<bogus>"),
    ("junit", '<testsuite tests="1"><weird/></testsuite>', "<weird>"),
    ("checkstyle", '<pmd version="1"/>', "<pmd>"),
    ("cobertura", "<report/>", "<report>"),
    ("tap", "TAP version 15\n1..1\nok 1\n", "TAP version 15"),
    ("tap", "1..1\nthis is not tap\n", "not TAP"),
    ("lcov", "SF:a.py\nXYZ:1\nend_of_record\n", "XYZ"),
    ("ctrf", '{"results": {"tests": [{"name": "a", "status": "flaky"}]}}', "flaky"),
    ("ctrf", '{"report": {}}', "without 'results'"),
    ("rdjson", '{"source": {"name": "x"}}', "without 'diagnostics'"),
    ("codequality", '{"issues": []}', "expected an array"),
    ("sarif", '{"version": "2.0.0", "runs": []}', "2.1.0"),
])
def test_an_unknown_variant_is_refused_naming_what_was_seen(tmp_path: Path, fmt: str, text: str,
                                                            seen: str) -> None:
    with pytest.raises(ImportRefused, match=seen.replace("(", r"\(")):
        read(tmp_path, fmt, text)


def test_a_torn_file_is_refused_not_half_read(tmp_path: Path) -> None:
    whole = (FIXTURES / "junit" / "pytest-xunit1.xml").read_bytes()
    with pytest.raises(ImportRefused, match="not readable as JUnit XML"):
        read(tmp_path, "junit", whole[: len(whole) // 2])


def test_declared_totals_that_disagree_are_a_parse_mismatch(tmp_path: Path) -> None:
    junit = read(tmp_path, "junit", '<testsuite name="s" tests="3" failures="0">'
                 '<testcase name="a"/><testcase name="b"/></testsuite>')
    assert junit.mismatch == "<testsuite> 's' declares tests=3 but 2 were read"
    assert status(junit) == PARSE_MISMATCH
    ctrf = read(tmp_path, "ctrf", json.dumps({"results": {
        "summary": {"tests": 60, "passed": 60, "failed": 0},
        "tests": [{"name": "a", "status": "passed"}]}}))
    assert status(ctrf) == PARSE_MISMATCH
    tap = read(tmp_path, "tap", "TAP version 13\n1..3\nok 1 - a\nok 2 - b\n")
    assert tap.mismatch == "the plan declares 1..3 but 2 test line(s) were read"
    lcov = read(tmp_path, "lcov", "SF:a.py\nDA:1,1\nDA:2,0\nLF:3\nLH:1\nend_of_record\n")
    assert status(lcov) == PARSE_MISMATCH


def test_zero_cases_is_never_green(tmp_path: Path) -> None:
    for fmt, text in (("junit", '<testsuites tests="0"/>'),
                      ("ctrf", '{"results": {"summary": {"tests": 0}, "tests": []}}'),
                      ("tap", "TAP version 13\n1..0\n"), ("codequality", "[]"),
                      ("rdjson", '{"diagnostics": []}'), ("checkstyle", "<checkstyle/>")):
        assert status(read(tmp_path, fmt, text)) == ERROR, fmt


def test_a_bail_out_is_an_error_and_a_plan_of_skips_is_not_empty(tmp_path: Path) -> None:
    assert status(read(tmp_path, "tap", "1..2\nok 1 - a\nBail out! db down\n")) == ERROR
    assert status(read(tmp_path, "tap", "1..0 # SKIP no database\n")) == PASS


def test_a_todo_failure_is_not_a_failure_and_a_yaml_message_is_the_findings(
        tmp_path: Path) -> None:
    tap = read(tmp_path, "tap", "TAP version 14\n1..2\nnot ok 1 - later # TODO not yet\n"
               "not ok 2 - sums\n  ---\n  message: 'expected 4, got 3'\n  ...\n")
    assert status(tap) == FAIL
    assert [(f.id, f.message) for f in tap.result.findings] == [("2 sums", "expected 4, got 3")]


def test_rdjsonl_reads_one_diagnostic_a_line(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "rdjson" / "ruff.json").read_text())
    # rdjsonl carries the source on each diagnostic (the document form, once at the top)
    lines = "".join(json.dumps({**item, "source": document["source"]}) + "\n"
                    for item in document["diagnostics"])
    imported = read(tmp_path, "rdjsonl", lines)
    assert imported.result.total == len(document["diagnostics"])
    assert imported.producer == "ruff"
    with pytest.raises(ImportRefused, match="line 2"):
        read(tmp_path, "rdjsonl", '{"message": "a"}\n{torn\n')


def test_a_diagnostic_without_a_place_is_kept_and_counted_unattached(tmp_path: Path) -> None:
    imported = read(tmp_path, "codequality", json.dumps([
        {"description": "a", "check_name": "r", "location": {"path": "a.py",
                                                             "lines": {"begin": 1}}},
        {"description": "b", "check_name": "r", "location": {}},
        {"description": "c", "check_name": "r", "location": {"path": "/elsewhere/c.py"}}]))
    assert imported.result.total == 3
    assert imported.tally.summary() == {"read": 3, "attached": 1, "unattached_by_reason": {
        "no_location": 1, "outside_project": 1}}


OUTCOMES = st.sampled_from(["passed", "failure", "error", "skipped", "flaky"])


@given(cases=st.lists(st.tuples(OUTCOMES, st.booleans()), max_size=30),
       lie=st.sampled_from([None, "tests", "failures", "errors", "skipped"]))
def test_read_is_attached_plus_unattached_and_only_true_totals_pass(
        cases: list[tuple[str, bool]], lie: str | None) -> None:
    counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    body = []
    for index, (outcome, named) in enumerate(cases):
        name = f' name="t{index}"' if named else ""
        inner = {"passed": "", "failure": '<failure message="m"/>', "error": "<error/>",
                 "skipped": "<skipped/>", "flaky": "<flakyFailure/>"}[outcome]
        if outcome in ("failure", "error"):
            counts[outcome + "s"] += 1
        elif outcome == "skipped":
            counts["skipped"] += 1
        body.append(f'<testcase classname="c"{name}>{inner}</testcase>')
    declared = dict(counts)
    if lie is not None:
        declared[lie] += 1
    attrs = " ".join(f'{key}="{value}"' for key, value in declared.items())
    text = f'<testsuite name="s" {attrs}>{"".join(body)}</testsuite>'
    with tempfile.TemporaryDirectory() as tmp:
        imported = read(Path(tmp), "junit", text)
    summary = imported.tally.summary()
    assert summary["read"] == summary["attached"] + sum(summary["unattached_by_reason"].values())
    assert summary["read"] == len(cases)
    assert summary["unattached_by_reason"].get("no_name", 0) == sum(1 for _, n in cases if not n)
    # a rerun element (Surefire's) makes tests and skipped uncompared: they count the last
    # rerun round alone
    partial = any(outcome == "flaky" for outcome, _ in cases) and lie in ("tests", "skipped")
    lied = lie is not None and not partial
    assert (imported.mismatch is not None) == lied
    expected = (PARSE_MISMATCH if lied else ERROR if not cases
                else FAIL if counts["failures"] + counts["errors"] else PASS)
    assert status(imported) == expected


def test_passed_testcases_counted_apart_reach_every_suites_totals(tmp_path: Path) -> None:
    # the reader counts a passed testcase apart (one call an event) and folds the count in
    # before any other event: each suite's end compares what it holds
    suites = ('<testsuite name="a" tests="{a}"><testcase name="x"/><testsuite name="in" '
              'tests="1"><testcase name="i"/></testsuite><testcase name="y"/></testsuite>'
              '<testsuite name="b" tests="3"><testcase name="z"/><testcase/>'
              '<testcase name="w"><failure message="m">text</failure></testcase></testsuite>')
    junit = read(tmp_path, "junit", f'<testsuites tests="6">{suites.format(a=3)}</testsuites>')
    assert junit.mismatch is None
    assert junit.result.summary["counts"] == {"tests": 6, "passed": 5, "failures": 1}
    assert junit.tally.summary() == {"read": 6, "attached": 5,
                                     "unattached_by_reason": {"no_name": 1}}
    assert [f.id for f in junit.result.findings] == ["w"]
    off = read(tmp_path, "junit", f'<testsuites tests="6">{suites.format(a=4)}</testsuites>')
    assert off.mismatch == "<testsuite> 'a' declares tests=4 but 3 were read"


def test_junit_nested_past_the_depth_cap_is_refused(tmp_path: Path) -> None:
    deep = "<testsuite>" * 300 + "</testsuite>" * 300
    with pytest.raises(ImportRefused, match="nested deeper than 256"):
        read(tmp_path, "junit", f'<testsuites>{deep}</testsuites>')
