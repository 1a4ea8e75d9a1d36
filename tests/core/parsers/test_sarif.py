"""The sarif parser on real SARIF 2.1.0 logs from semgrep, ruff and ty (tests/fixtures/sarif).

The level rules of SARIF 2.1.0 section 3.27.10 that no fixture exercises
(``ruleIndex``, rules in ``tool.extensions``, ``ruleConfigurationOverrides``,
``kind``) are tested on the real semgrep log, rewritten the way another producer
would write it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.sarif import LEVELS, SarifParser, effective_level
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import assert_loud, run_parser
from ckdn.testing.strategies import mutations
from tests.timing import LINEAR_GROWTH, growth

from .conftest import FIXTURES, CaseLoader, rewrite_json, status
from .documented import check_documented_example
from .garbage import long_lines, shortened

PARSER = SarifParser()
REAL_LOG = (FIXTURES / "sarif" / "semgrep" / "report.sarif").read_bytes()


def rewrite(ctx: ParseContext, change: Callable[[Any], object], name: str = "report.sarif"
            ) -> None:
    rewrite_json(ctx, name, change)


def levels(result: ParseResult) -> dict[str, int]:
    counts: dict[str, int] = result.summary["counts"]
    return {level: counts[level] for level in LEVELS}


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("sarif", PARSER, load_case)


def test_semgrep_results_without_a_level_take_their_rules_default_level(
        load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    raw = json.loads(Path(ctx.run_dir, "report.sarif").read_text())
    assert all("level" not in r for r in raw["runs"][0]["results"])  # semgrep's real shape
    result = PARSER.parse(ctx)
    assert levels(result) == {"error": 3, "warning": 1, "note": 1, "none": 0}


def test_results_at_the_default_fail_level_error_are_findings(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert [f.id for f in result.findings] == ["src/app.py:7:12:no-eval",
                                               "src/app.py:11:12:no-eval",
                                               "src/app.py:11:31:no-eval"]
    first = result.findings[0]
    assert first.kind == "sarif_error"
    assert first.message == "no-eval: eval() runs arbitrary code; parse the input instead"
    assert first.detail == ("    return eval(expression)",)
    assert status(ctx, result) == FAIL


def test_fail_levels_widen_what_counts_as_a_finding(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep", options={"fail_levels": ["error", "warning", "note"]})
    result = PARSER.parse(ctx)
    assert sorted(f.kind for f in result.findings) == [
        "sarif_error", "sarif_error", "sarif_error", "sarif_note", "sarif_warning"]


def test_results_below_fail_levels_are_counted_not_findings(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    result = PARSER.parse(ctx)
    assert result.summary["counts"] == {"error": 3, "warning": 1, "note": 1, "none": 0,
                                        "results": 5, "runs": 1}
    assert result.total == 3


def test_results_at_fail_levels_with_exit_code_zero_are_a_parse_mismatch(
        load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_exit0")  # semgrep without --error
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert status(ctx, result) == PARSE_MISMATCH


def test_exit_code_zero_with_results_only_below_fail_levels_passes(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_exit0")
    rewrite(ctx, lambda d: d["runs"][0].update(results=[
        r for r in d["runs"][0]["results"] if r["ruleId"] != "no-eval"]))
    log = Path(ctx.log_path)  # semgrep's own count, to match the results left
    log.write_text(log.read_text(encoding="utf-8").replace("Findings: 5 (5", "Findings: 2 (2")
                   .replace(": 5 findings.", ": 2 findings."), encoding="utf-8")
    result = PARSER.parse(ctx)
    assert levels(result) == {"error": 0, "warning": 1, "note": 1, "none": 0}
    assert status(ctx, result) == PASS


def test_a_red_exit_with_nothing_at_fail_levels_shows_every_result(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_warning_only")
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    assert [(f.id, f.kind) for f in result.findings] == [("src/app.py:5:5:print-call",
                                                         "sarif_warning")]
    assert "no result at fail_levels (error)" in result.notes[0]
    assert status(ctx, result) == FAIL


def test_a_clean_semgrep_run_passes(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_clean")
    result = PARSER.parse(ctx)
    assert (result.findings, result.notes, result.parser_ok) == ([], [], True)
    assert status(ctx, result) == PASS


def test_error_level_execution_notifications_make_the_log_unreadable(
        load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_bad_rules")
    result = PARSER.parse(ctx)
    assert ctx.rc == 7
    assert not result.parser_ok
    assert "reports execution errors: One of these properties is missing: 'message'" in \
        result.notes[0]
    assert status(ctx, result) == ERROR


def test_execution_successful_false_makes_the_log_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_clean")
    rewrite(ctx, lambda d: d["runs"][0]["invocations"][0].update(executionSuccessful=False))
    result = PARSER.parse(ctx)
    assert "executionSuccessful is false" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_ruff_file_uris_become_cwd_relative_locations(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "ruff")
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert [f.id for f in result.findings] == ["src/lint.py:2:8:F401", "src/lint.py:3:8:F401",
                                               "src/lint.py:8:20:E711"]
    assert result.findings[0].message == "F401: `os` imported but unused"
    assert status(ctx, result) == FAIL


def test_ty_sarif_on_stdout_is_read_from_the_log(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "ty_stdout", options={"report": "full.log"})
    result = PARSER.parse(ctx)
    assert levels(result) == {"error": 1, "warning": 1, "note": 1, "none": 0}
    assert [f.id for f in result.findings] == ["src/typed.py:5:12:invalid-explicit-return"]
    assert status(ctx, result) == FAIL


def test_results_of_every_run_are_read(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    ruff_run = json.loads((FIXTURES / "sarif" / "ruff" / "report.sarif").read_text())["runs"][0]
    rewrite(ctx, lambda d: d["runs"].append(ruff_run))
    result = PARSER.parse(ctx)
    assert result.summary["counts"]["runs"] == 2
    assert levels(result)["error"] == 6
    assert result.findings[-1].id.endswith(":E711")


# --- SARIF's level rules on a rewritten semgrep log ----------------------------------------

def _move_rules_to_an_extension(data: dict[str, Any]) -> None:
    tool = data["runs"][0]["tool"]
    tool["extensions"] = [{"name": "rules-pack", "rules": tool["driver"].pop("rules")}]
    for result in data["runs"][0]["results"]:
        result["rule"] = {"id": result.pop("ruleId"), "toolComponent": {"index": 0}}


def test_a_rule_found_by_rule_index_gives_the_level(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")

    def by_index(data: dict[str, Any]) -> None:
        rules = [r["id"] for r in data["runs"][0]["tool"]["driver"]["rules"]]
        for result in data["runs"][0]["results"]:
            result["ruleIndex"] = rules.index(result["ruleId"])
            result["ruleId"] = "not-the-rule-id"

    rewrite(ctx, by_index)
    assert levels(PARSER.parse(ctx)) == {"error": 3, "warning": 1, "note": 1, "none": 0}


def test_a_rule_in_a_tool_extension_gives_the_level(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, _move_rules_to_an_extension)
    result = PARSER.parse(ctx)
    assert levels(result) == {"error": 3, "warning": 1, "note": 1, "none": 0}
    assert result.findings[0].id == "src/app.py:7:12:no-eval"


def test_a_rule_configuration_override_beats_the_default_level(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    override = {"descriptor": {"id": "print-call"}, "configuration": {"level": "error"}}
    rewrite(ctx, lambda d: d["runs"][0]["invocations"][0].update(
        ruleConfigurationOverrides=[override]))
    assert levels(PARSER.parse(ctx))["error"] == 4


def test_a_level_on_the_result_beats_the_rule(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, lambda d: [r.update(level="note") for r in d["runs"][0]["results"]])
    assert levels(PARSER.parse(ctx)) == {"error": 0, "warning": 0, "note": 5, "none": 0}


def test_a_result_that_is_not_a_failure_has_level_none(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, lambda d: [r.update(kind="pass") for r in d["runs"][0]["results"]])
    assert levels(PARSER.parse(ctx)) == {"error": 0, "warning": 0, "note": 0, "none": 5}


def test_a_result_whose_rule_is_unknown_defaults_to_warning(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, lambda d: d["runs"][0]["tool"]["driver"].update(rules=[]))
    assert levels(PARSER.parse(ctx)) == {"error": 0, "warning": 5, "note": 0, "none": 0}


def test_a_level_sarif_does_not_define_makes_the_log_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, lambda d: d["runs"][0]["results"][0].update(level="critical"))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "SARIF level" in result.notes[0]


def test_a_message_string_of_the_rule_fills_a_message_with_arguments(
        load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")

    def templated(data: dict[str, Any]) -> None:
        rules = data["runs"][0]["tool"]["driver"]["rules"]
        next(r for r in rules if r["id"] == "no-eval")["messageStrings"] = {
            "default": {"text": "eval of {0} in {1}"}}
        for result in data["runs"][0]["results"]:
            result["message"] = {"id": "default", "arguments": ["expression", "evaluate"]}

    rewrite(ctx, templated)
    assert PARSER.parse(ctx).findings[0].message == "no-eval: eval of expression in evaluate"


def test_a_uri_base_id_is_resolved_through_original_uri_base_ids(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")
    root = {"uri": f"file://{ctx.cwd}/"}
    rewrite(ctx, lambda d: d["runs"][0].update(originalUriBaseIds={"%SRCROOT%": root}))
    assert PARSER.parse(ctx).findings[0].location == "src/app.py:7:12"


def test_an_artifact_index_supplies_the_uri(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep")

    def indexed(data: dict[str, Any]) -> None:
        run = data["runs"][0]
        run["artifacts"] = [{"location": {"uri": "src/app.py"}}]
        for result in run["results"]:
            result["locations"][0]["physicalLocation"]["artifactLocation"] = {"index": 0}

    rewrite(ctx, indexed)
    assert PARSER.parse(ctx).findings[0].location == "src/app.py:7:12"


@pytest.mark.parametrize(("result", "rule", "expected"), [
    ({"level": "note"}, {"defaultConfiguration": {"level": "error"}}, "note"),
    ({}, {"defaultConfiguration": {"level": "error"}}, "error"),
    ({}, {"defaultConfiguration": {}}, "warning"),
    ({}, None, "warning"),
    ({"kind": "informational"}, {"defaultConfiguration": {"level": "error"}}, "none"),
    ({"kind": "fail"}, {"defaultConfiguration": {"level": "note"}}, "note"),
    ({"level": "severe"}, None, None),
])
def test_effective_level_follows_sarif_section_3_27_10(
        result: dict[str, Any], rule: dict[str, Any] | None, expected: str | None) -> None:
    assert effective_level(result, rule) == expected


# --- unreadable logs ------------------------------------------------------------------------

@pytest.mark.parametrize(("change", "note"), [
    (lambda d: d.update(version="2.0.0"), "is not a SARIF 2.1.0 log (version '2.0.0')"),
    (lambda d: d.update(runs=[]), "has no runs"),
    (lambda d: d["runs"][0].pop("results"), "has no results array"),
])
def test_a_log_that_is_not_usable_sarif_is_unreadable(load_case: CaseLoader, change: Any,
                                                      note: str) -> None:
    ctx = load_case("sarif", "semgrep")
    rewrite(ctx, change)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert note in result.notes[0]
    assert status(ctx, result) == ERROR


def test_a_missing_log_names_what_the_command_must_write(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_clean")
    Path(ctx.run_dir, "report.sarif").unlink()
    result = PARSER.parse(ctx)
    assert "must write SARIF to {run_dir}/report.sarif" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("sarif", "semgrep", top=1))
    assert len(result.findings) == 1
    assert result.total == 3


@pytest.mark.parametrize("report", ["../outside.sarif", "/etc/passwd"])
def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader, report: str) -> None:
    result = PARSER.parse(load_case("sarif", "semgrep", options={"report": report}))
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


# --- the tool's log beside the SARIF log ---------------------------------------------------

@pytest.mark.parametrize("rc", [0, 1])
def test_a_clean_semgrep_report_beside_a_log_that_says_findings_is_never_green(
        load_case: CaseLoader, rc: int) -> None:
    ctx = load_case("sarif", "semgrep_clean", rc=rc)
    Path(ctx.log_path).write_bytes((FIXTURES / "sarif" / "semgrep" / "full.log").read_bytes())
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert result.notes == ["the log says semgrep found 5 result(s) but the SARIF log holds 0"]
    assert status(ctx, result) != PASS


def test_a_clean_semgrep_report_beside_semgreps_error_is_never_green(
        load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_clean")
    errors = (FIXTURES / "sarif" / "semgrep_bad_rules" / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(Path(ctx.log_path).read_bytes() + errors)
    result = PARSER.parse(ctx)
    assert result.notes[0].startswith("the log reports 2 failure(s) beside the SARIF log "
                                      "(first: semgrep error: Invalid rule schema)")
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_clean_ruff_report_beside_ruffs_error_is_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "ruff", rc=0)
    rewrite(ctx, lambda d: d["runs"][0].update(results=[]))
    Path(ctx.log_path).write_bytes((FIXTURES / "ruff" / "usage_error" / "full.log").read_bytes())
    result = PARSER.parse(ctx)
    assert "(first: error: invalid value 'foo' for '--extension <EXTENSION>'" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_crash_in_any_producers_log_is_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "semgrep_clean")
    rewrite(ctx, lambda d: d["runs"][0]["tool"]["driver"].update(name="gitleaks"))
    traceback = (FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(traceback)
    result = PARSER.parse(ctx)
    assert "(first: Traceback (most recent call last):)" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


def test_sarif_printed_to_the_log_has_no_log_beside_it(load_case: CaseLoader) -> None:
    ctx = load_case("sarif", "ty_stdout", options={"report": "full.log"})
    assert PARSER.parse(ctx).parser_ok


@pytest.mark.parametrize(("shape", "line"), long_lines(
    "Ran 3 rules on 1 file: ", " \u2022 Findings: ", "Found ", "[ERROR] "))
def test_a_200000_character_log_line_is_read_in_linear_time(
        load_case: CaseLoader, shape: str, line: str) -> None:
    def parse_at(size: int) -> Callable[[], object]:
        ctx = load_case("sarif", "semgrep_clean")
        Path(ctx.log_path).write_text(shortened(line, size), encoding="utf-8")
        return lambda: PARSER.parse(ctx)

    assert growth(parse_at, len(line)) < LINEAR_GROWTH


# --- a damaged report that is no longer sarif's is loud -------------------------------------------
# (garbage, truncations, other tools' reports, a missing report: the conformance kit, in
# test_conformance.py)

def _parse_bytes(report: bytes, rc: int, fail_levels: list[str] | None = None) -> ParseResult:
    options = {} if fail_levels is None else {"fail_levels": fail_levels}
    return run_parser(PARSER, rc, files={"report.sarif": report}, options=options)


def _is_sarifs(report: bytes) -> bool:
    try:
        data = json.loads(report)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("version") == "2.1.0"


@given(report=mutations(REAL_LOG), rc=st.sampled_from([0, 1]))
def test_a_damaged_report_that_is_no_longer_sarifs_is_loud(report: bytes, rc: int) -> None:
    result = run_parser(PARSER, rc, files={"report.sarif": report})
    if not _is_sarifs(report):
        assert_loud(result, rc, what="a damaged report.sarif")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["level", "kind", "ruleId", "ruleIndex",
                                                        "rule", "id", "index", "uri", "text",
                                                        "message", "locations", "rules"]),
                                       inner, max_size=4), max_leaves=15)


@given(results=st.lists(_json, max_size=4), tool=_json, invocations=_json,
       rc=st.sampled_from([0, 1, 2]),
       fail_levels=st.lists(st.sampled_from(LEVELS), unique=True))
def test_sarif_shaped_nonsense_never_raises_and_never_passes_a_red_exit(
        results: list[Any], tool: Any, invocations: Any, rc: int, fail_levels: list[str]) -> None:
    log = {"version": "2.1.0",
           "runs": [{"tool": tool, "invocations": invocations, "results": results}]}
    result = _parse_bytes(json.dumps(log).encode(), rc, fail_levels)
    if rc != 0:
        assert reconcile(Exit(rc), result).status != PASS


def test_the_summary_counts_by_level_by_rule_and_names_the_tools(load_case: CaseLoader) -> None:
    from collections import Counter

    for case in ("semgrep", "ruff", "semgrep_warning_only"):
        ctx = load_case("sarif", case, top=1)
        log = json.loads((Path(ctx.run_dir) / "report.sarif").read_text())
        results = [result for run in log["runs"] for result in run["results"]]
        summary = PARSER.parse(ctx).summary
        assert sum(summary["by_level"].values()) == len(results) == summary["counts"]["results"]
        assert {level: n for level, n in summary["by_level"].items() if n} == {
            level: n for level, n in summary["counts"].items() if level in LEVELS and n}
        assert summary["by_rule"] == dict(Counter(result["ruleId"] for result in results))
        assert summary["tools"] == [run["tool"]["driver"]["name"] for run in log["runs"]]
