"""The pylint parser on real pylint json2 reports (tests/fixtures/pylint)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.pylint_json2 import PylintParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, Exit, reconcile
from ckdn.testing import assert_loud, run_parser
from ckdn.testing.strategies import mutations

from .conftest import FIXTURES, CaseLoader, rewrite_json, status
from .documented import check_documented_example

PARSER = PylintParser()
REAL_REPORT = (FIXTURES / "pylint" / "messages" / "pylint.json").read_bytes()


def rewrite(ctx: ParseContext, change: Callable[[Any], object]) -> None:
    rewrite_json(ctx, "pylint.json", change)


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("pylint", PARSER, load_case)


def test_every_weighted_message_class_becomes_a_lint_violation(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "messages")
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert ctx.rc == 31  # fatal | error | warning | refactor | convention
    symbols = {f.id.rsplit(":", 1)[1] for f in result.findings}
    assert {"fatal", "syntax-error", "undefined-variable", "non-ascii-file-name",
            "no-else-return", "duplicate-code", "singleton-comparison"} <= symbols
    assert {f.kind for f in result.findings} == {"lint_violation"}
    assert result.total == 13
    assert status(ctx, result) == FAIL


def test_info_messages_are_counted_but_never_findings(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages"))
    assert result.summary["counts"]["info"] == 3
    symbols = {f.id.rsplit(":", 1)[1] for f in result.findings}
    assert not symbols & {"useless-suppression", "locally-disabled"}


def test_summary_counts_every_message_type_and_keeps_the_score(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages"))
    assert result.summary == {
        "counts": {"fatal": 1, "error": 2, "warning": 1, "refactor": 3, "convention": 6,
                   "info": 3, "messages": 16},
        "score": 0,
    }


def test_columns_are_made_one_based_and_ids_carry_the_symbol(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages"))
    by_id = {f.id: f for f in result.findings}
    undefined = by_id["pkg/core.py:11:16:undefined-variable"]  # pylint says column 15
    assert undefined.location == "pkg/core.py:11:16"
    assert undefined.message == "E0602: Undefined variable 'undefined_name' (undefined-variable)"
    assert undefined.detail == ("in check",)


def test_a_multi_line_message_keeps_its_first_line_and_details_the_rest(
        load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages", max_snippet_lines=4))
    duplicate = next(f for f in result.findings if f.id.endswith(":duplicate-code"))
    assert duplicate.message == "R0801: Similar lines in 2 files (duplicate-code)"
    assert duplicate.detail[:2] == ("==pkg.copy_a:[5:11]", "==pkg.copy_b:[5:11]")
    assert (len(duplicate.detail), duplicate.detail_omitted) == (4, 4)


def test_non_ascii_file_names_survive_into_locations(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages"))
    assert "pkg/ünïcode.py:3:1" in {f.location for f in result.findings}


def test_a_clean_run_passes(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean")
    result = PARSER.parse(ctx)
    assert (result.findings, result.notes, result.parser_ok) == ([], [], True)
    assert status(ctx, result) == PASS


def test_an_info_only_run_passes_with_the_info_counted(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "info_only")
    result = PARSER.parse(ctx)
    assert result.summary["counts"]["info"] == 4
    assert status(ctx, result) == PASS


def test_fail_on_an_info_message_shows_the_info_messages_as_evidence(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "fail_on_info")
    result = PARSER.parse(ctx)
    assert ctx.rc == 1
    assert result.parser_ok
    assert result.total == 4
    assert "--fail-on or --fail-under tripped" in result.notes[0]
    assert status(ctx, result) == FAIL


def test_exit_code_one_with_an_empty_report_is_an_explained_error(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean", rc=1)
    result = PARSER.parse(ctx)
    assert "the report has no message to show" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_messages_pylint_itself_accepted_with_exit_code_zero_are_counted_not_findings(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored")  # --fail-under=5, score 8.00
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.total == 0
    assert result.summary["counts"]["accepted"] == 2
    assert "--exit-zero or --fail-under accepted them" in result.notes[0]
    assert status(ctx, result) == PASS


def test_the_same_messages_under_pylints_default_policy_are_findings(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored_default")
    result = PARSER.parse(ctx)
    assert ctx.rc == 16
    assert [f.id for f in result.findings] == ["mostly_fine.py:19:1:missing-function-docstring",
                                               "mostly_fine.py:23:1:invalid-name"]
    assert status(ctx, result) == FAIL


@pytest.mark.parametrize(("threshold", "expected"), [(8, PASS), (8.0, PASS), (7.5, PASS),
                                                     (8.01, FAIL), (10, FAIL)])
def test_score_fail_under_gates_on_the_score_like_pylints_own_fail_under(
        load_case: CaseLoader, threshold: float, expected: str) -> None:
    ctx = load_case("pylint", "scored", options={"score_fail_under": threshold})
    result = PARSER.parse(ctx)
    assert status(ctx, result) == expected
    if expected == FAIL:
        assert result.gate_failures == [f"pylint score 8 < score_fail_under {threshold:g}"]


def test_a_score_just_under_the_threshold_is_never_shown_rounded_up(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored", options={"score_fail_under": 8})
    rewrite(ctx, lambda d: d["statistics"].update(score=7.99999))
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pylint score 7.99999 < score_fail_under 8"]
    assert result.summary["score"] == 7.99999


def test_pylints_float_noise_is_trimmed_from_the_summary_score(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored")
    rewrite(ctx, lambda d: d["statistics"].update(score=7.199999999999999))
    assert PARSER.parse(ctx).summary["score"] == 7.2


def test_a_score_gate_on_a_report_without_a_numeric_score_fails(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean", options={"score_fail_under": 5})
    rewrite(ctx, lambda d: d["statistics"].update(score="An exception occurred while rating"))
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pylint score unavailable for score_fail_under"]
    assert status(ctx, result) == FAIL


def test_a_usage_error_leaves_an_empty_report_and_is_an_error_quoting_pylint(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "usage_error")
    result = PARSER.parse(ctx)
    assert ctx.rc == 32
    assert not result.parser_ok
    assert "is empty (exit code 32: pylint usage error)" in result.notes[0]
    assert "Unrecognized option found: no-such-option" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_text_output_without_json2_is_an_error_naming_the_flag(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "text_only")
    result = PARSER.parse(ctx)
    assert "--output-format=json2:{run_dir}/pylint.json" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_a_missing_report_with_exit_code_zero_is_a_parse_mismatch(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean")
    Path(ctx.run_dir, "pylint.json").unlink()
    assert status(ctx, PARSER.parse(ctx)) == PARSE_MISMATCH


def test_the_usage_error_bit_with_a_readable_report_is_still_an_error(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "messages", rc=32 | 31)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "32 is a usage error" in result.notes[-1]


def test_an_exit_code_whose_bits_disagree_with_the_messages_is_unreadable(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored_default", rc=4)  # says warning, report holds convention
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "exit code 4 says (warning) but the report holds (convention)" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_statistics_that_disagree_with_the_messages_are_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored_default")
    rewrite(ctx, lambda d: d["statistics"]["messageTypeCount"].update(convention=3))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "convention 3 vs 2" in result.notes[0]


def test_the_old_json_format_is_recognised_as_the_wrong_format(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "scored_default")
    Path(ctx.run_dir, "pylint.json").write_text(json.dumps([{"type": "convention"}]))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "json2 is an object, json is an array" in result.notes[0]


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pylint", "messages", top=3))
    assert len(result.findings) == 3
    assert result.total == 13


def test_finding_ids_are_stable_across_parses(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "messages")
    assert [f.id for f in PARSER.parse(ctx).findings] == [f.id for f in PARSER.parse(ctx).findings]


@pytest.mark.parametrize("report", ["../outside.json", "/etc/passwd"])
def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader, report: str) -> None:
    result = PARSER.parse(load_case("pylint", "messages", options={"report": report}))
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


# --- unverified is not clean; the log must agree with the report ---------------------------

def test_modules_pylint_could_not_lint_under_exit_zero_fail_the_gate(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "exit_zero_unlintable")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.gate_failures == ["pylint could not lint 2 module(s)"]
    assert result.notes[0].startswith(
        "not linted: missing_module: F0001 No module named missing_module; broken.py: E0001 "
        "Parsing failed: 'invalid syntax (broken, line 1)'")
    assert status(ctx, result) == FAIL


def test_allow_skipped_accepts_modules_pylint_could_not_lint(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "exit_zero_unlintable", options={"allow_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_a_report_that_linted_no_module_fails_the_gate(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean")
    rewrite(ctx, lambda d: d["statistics"].update(modulesLinted=0))
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pylint linted no module"]
    assert status(ctx, result) == FAIL


def test_a_clean_report_beside_a_log_showing_messages_is_never_green(
        load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean")
    log = (FIXTURES / "pylint" / "scored_default" / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(log)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert ("pylint's log shows 2 fatal/error/warning/refactor/convention message(s) but its "
            "report holds 0") in result.notes
    assert status(ctx, result) == PARSE_MISMATCH


def test_a_crash_in_the_log_beside_a_clean_report_is_never_green(load_case: CaseLoader) -> None:
    ctx = load_case("pylint", "clean")
    traceback = (FIXTURES / "pip_audit" / "osv_unreachable" / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(Path(ctx.log_path).read_bytes() + traceback)
    result = PARSER.parse(ctx)
    assert "pylint's log holds a crash (Traceback (most recent call last):)" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


# --- a damaged report that is no longer pylint's is loud ------------------------------------------
# (garbage, truncations, other tools' reports, a missing report: the conformance kit, in
# test_conformance.py)

def _parse_bytes(report: bytes, rc: int) -> ParseResult:
    return run_parser(PARSER, rc, files={"pylint.json": report})


def _is_pylints(report: bytes) -> bool:
    try:
        data = json.loads(report)
    except (ValueError, RecursionError):
        return False
    return (isinstance(data, dict) and isinstance(data.get("messages"), list)
            and isinstance(data.get("statistics"), dict))


@given(report=mutations(REAL_REPORT), rc=st.sampled_from([0, 16, 31]))
def test_a_damaged_report_that_is_no_longer_pylints_is_loud(report: bytes, rc: int) -> None:
    result = run_parser(PARSER, rc, files={"pylint.json": report})
    if not _is_pylints(report):
        assert_loud(result, rc, what="a damaged pylint.json")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=12)


@given(messages=st.lists(st.dictionaries(
           st.sampled_from(["type", "message", "symbol", "messageId", "path", "line", "column",
                            "obj"]), _json, max_size=8), max_size=4),
       counts=st.dictionaries(st.sampled_from(["fatal", "error", "info", "convention"]), _json),
       score=_json, rc=st.integers(min_value=-9, max_value=70))
def test_json2_shaped_nonsense_never_raises_and_never_passes_a_red_exit(
        messages: list[dict[str, Any]], counts: dict[str, Any], score: Any, rc: int) -> None:
    report = {"messages": messages, "statistics": {"messageTypeCount": counts, "score": score}}
    result = _parse_bytes(json.dumps(report).encode(), rc)
    if rc != 0:
        assert reconcile(Exit(rc), result).status != PASS
