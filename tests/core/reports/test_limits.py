"""Every view stays within its place's limits, for any digest (hypothesis).

The digests are generated: any text in any field (control characters, line
breaks, Markdown and workflow-command specials), any counts, with or without a
baseline, a findings list shorter than its total. The limits are GitHub's and
GitLab's (lowered here where the real one would need a huge example: the code is
the same).
"""

from __future__ import annotations

import json
import re
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.identity import FindingRow
from ckdn.reports import (
    GITHUB_LIMITS,
    SARIF_LIMITS,
    Checked,
    Report,
    codequality,
    decode_data,
    github,
    sarif,
    summary,
    text,
)
from tests.core.reports.test_sarif import github_problems, schema_errors

ANY_TEXT = st.text(max_size=80)
LOCATION = st.one_of(st.none(), ANY_TEXT,
                     st.builds(lambda p, a, b: f"{p}:{a}:{b}", ANY_TEXT,
                               st.integers(0, 10**6), st.integers(0, 500)))
KIND = st.sampled_from(["lint_violation", "type_error", "type_warning", "type_note",
                        "test_failure", "sarif_note", "vulnerability"]) | ANY_TEXT.filter(bool)
FINDING = st.fixed_dictionaries(
    {"id": ANY_TEXT.filter(bool), "kind": KIND, "message": ANY_TEXT},
    optional={"location": ANY_TEXT.filter(bool),
              "detail": st.lists(ANY_TEXT, min_size=1, max_size=3),
              "baselined": st.just(True)})
STATUS = st.sampled_from(["pass", "fail", "error", "parse_mismatch"])


@st.composite
def digests(draw: st.DrawFn) -> dict[str, Any]:
    findings = draw(st.lists(FINDING, max_size=30))
    doc: dict[str, Any] = {
        "schema": "ckdn.digest/2", "check": draw(ANY_TEXT.filter(bool)),
        "status": draw(STATUS), "rc": draw(st.integers(-300, 300)),
        "run_dir": draw(ANY_TEXT.filter(bool)),
        "status_reason": draw(ANY_TEXT),
        "notes": draw(st.lists(ANY_TEXT, max_size=3)),
        "gate_failures": draw(st.lists(ANY_TEXT, max_size=2)),
        "summary": draw(st.dictionaries(ANY_TEXT, ANY_TEXT | st.integers(), max_size=4)),
    }
    if findings:
        doc["findings"] = findings
        doc["findings_total"] = len(findings) + draw(st.integers(0, 10**6))
    if draw(st.booleans()):
        doc["baseline"] = {"known": draw(st.integers(0, 9)), "new": draw(st.integers(0, 9))}
        doc["gate"] = {"status": draw(st.sampled_from(["pass", "fail", "unavailable"])),
                       "policy": "no_new_findings"}
    return doc


def checked(doc: dict[str, Any], extra: list[FindingRow]) -> Checked:
    rows = [FindingRow(f"{i:024x}:0:{i:012x}", f["id"], f["kind"], f.get("location"),
                       f["message"], baselined=f.get("baselined", False))
            for i, f in enumerate(doc.get("findings", []))] + extra
    return Checked(doc, lambda: iter(rows), complete=bool(extra), tool="ruff")


ROWS = st.lists(st.builds(lambda k, loc, msg, known: FindingRow(
    f"{abs(hash((k, loc, msg))) % 16**24:024x}:0:000000000000", f"{loc}:{k}", k, loc, msg,
    baselined=known), KIND, LOCATION, ANY_TEXT, st.booleans()), max_size=60)


@st.composite
def reports(draw: st.DrawFn) -> Report:
    docs = draw(st.lists(digests(), min_size=1, max_size=4))
    checks = [checked(doc, draw(ROWS)) for doc in docs]
    if len(docs) == 1 and draw(st.booleans()):
        return Report(docs[0], checks, root="/project")
    members = [{"check": d["check"], "status": d["status"], "rc": d["rc"],
                "run_dir": d["run_dir"]} for d in docs]
    aggregate = {"schema": "ckdn.aggregate/1", "alias": draw(ANY_TEXT.filter(bool)),
                 "status": draw(STATUS), "rc": 1, "members": members}
    return Report(aggregate, checks, members=members, root="/project")


COMMAND = re.compile(r"::(error|warning|notice) [^\r\n]*::[^\r\n]*")


@given(reports(), st.integers(0, 60))
def test_github_annotations_stay_within_the_step_and_job_budgets(report: Report,
                                                                 job_left: int) -> None:
    out, counts = github(report, job_left=job_left)
    count = sum(counts.values())
    lines = out.splitlines()
    assert len(lines) == count <= max(0, job_left)
    assert all(COMMAND.fullmatch(line) for line in lines), lines
    levels = [line[2:].split(" ", 1)[0] for line in lines]
    assert levels.count("error") <= GITHUB_LIMITS["error"]
    assert levels.count("warning") <= GITHUB_LIMITS["warning"]
    assert levels.count("notice") <= GITHUB_LIMITS["notice"]
    red = [c for c in report.checks if c.status != "pass"]
    wanted = sum(max(len(list(c.rows())), c.total, 1) for c in red)
    if 0 < count < wanted:  # something left out, and room for the notice: it says so
        assert lines[-1].startswith("::notice title=ckdn::")
        assert "more finding(s) not annotated" in decode_data(lines[-1].split("::", 2)[2])


@given(reports(), st.integers(2000, 40000))
def test_the_step_summary_is_always_under_its_byte_budget(report: Report, budget: int) -> None:
    out = summary(report, budget=budget)
    assert len(out.encode("utf-8")) <= budget
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out)


@settings(max_examples=60)  # each example validates SARIF against its schema
@given(reports())
def test_sarif_is_valid_ingestible_and_capped_for_any_report(report: Report) -> None:
    with mock.patch.dict(SARIF_LIMITS, {"results": 7, "runs": 3}):
        out = sarif(report)
    log = json.loads(out)
    assert schema_errors(log) == []
    assert github_problems(out) == []
    assert len(log["runs"]) == min(3, len(report.checks))
    for run in log["runs"]:
        assert len(run["results"]) <= 7


@given(reports())
def test_code_quality_fingerprints_are_unique_for_any_report(report: Report) -> None:
    from ckdn.reports import _codequality

    with mock.patch.dict(_codequality.CODEQUALITY_LIMITS, {"issues": 25}):
        issues = json.loads(codequality(report))
    prints = [issue["fingerprint"] for issue in issues]
    assert len(prints) == len(set(prints))
    assert len(issues) <= 26
    for issue in issues:
        assert issue["location"]["path"]
        assert issue["location"]["lines"]["begin"] >= 1
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")


@given(reports())
def test_text_has_no_control_bytes_without_colour(report: Report) -> None:
    out = text(report)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]", out)
    coloured = text(report, color=True)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == out


@settings(max_examples=60)  # each example builds SARIF of up to 60 kB
@given(reports())
def test_sarif_stays_under_its_byte_limit_for_any_report(report: Report) -> None:
    with mock.patch.dict(SARIF_LIMITS, {"results": 50, "runs": 3, "bytes": 60_000,
                                        "envelope": 12_000}):
        out = sarif(report)
    assert len(out.encode("utf-8")) <= 60_000
    log = json.loads(out)
    assert schema_errors(log) == []
    for run in log["runs"]:
        rules = run["tool"]["driver"]["rules"]
        assert {r["ruleId"] for r in run["results"]} == {rule["id"] for rule in rules}


@given(reports())
def test_code_quality_stays_under_its_byte_limit_for_any_report(report: Report) -> None:
    from ckdn.reports import _codequality

    with mock.patch.dict(_codequality.CODEQUALITY_LIMITS, {"issues": 1000, "bytes": 40_000}):
        out = codequality(report)
    assert len(out.encode("utf-8")) <= 40_000
    json.loads(out)
