"""The conformance kit itself: each rule catches the broken parser it names.

The broken parsers are ckdn's real ruff parser with one defect each (a parser that
is silently clean when confused, one that trusts its report blindly), run over
ruff's real recorded outputs (tests/fixtures/ruff): the rule must fail, naming
the input, where the real parser keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from ckdn.parsers.base import BaseParser, Finding, FindingSink, ParseContext, ParseResult
from ckdn.parsers.generic import GenericParser
from ckdn.parsers.guard import guarded
from ckdn.parsers.ruff_json import RuffParser
from ckdn.reconcile import FAIL, PASS
from ckdn.testing import (
    Conformance,
    RecordedCase,
    assert_loud,
    assert_never_green,
    assert_replays,
    ill_formed,
    load_case,
    load_cases,
    project_cases,
    run_parser,
    verdict,
)
from ckdn.testing import conformance as rules
from ckdn.testing.profiles import CI, CI_EXAMPLES, DEV, load_profile
from tests.conftest import HYPOTHESIS_PROFILE

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RUFF_CASES = load_cases(FIXTURES / "ruff")


class SilentRuff(RuffParser):
    """ruff's parser, but clean whenever it is confused: the false green the kit exists for."""

    def read(self, ctx: ParseContext) -> ParseResult:
        result = super().read(ctx)
        return result if result.parser_ok else ParseResult()


class TrustingRuff(BaseParser):
    """Reads ruff.json without asking whether it is whole or ruff's."""

    name = "ruff"

    def read(self, ctx: ParseContext) -> ParseResult:
        items = json.loads(ctx.artifact("report", "ruff.json").read_text(encoding="utf-8"))
        sink = FindingSink(ctx.top)
        for item in items:
            sink.add(Finding(id=item["code"], kind="lint_violation", message=item["message"]))
        return sink.result()


def ruff_spec(parser: Any) -> Conformance:
    return Conformance(parser, reports=["ruff.json"], cases=RUFF_CASES,
                       foreign=project_cases(exclude={"ruff"}))


# --- each rule catches what it names ------------------------------------------------------------

@pytest.mark.parametrize("rule", [rules.garbage_reports_are_loud_and_never_green,
                                  rules.truncated_outputs_are_never_green,
                                  rules.verdicts_cut_short_are_never_green,
                                  rules.foreign_outputs_are_never_green],
                         ids=lambda rule: rule.__name__)
def test_a_parser_that_is_clean_when_confused_fails_the_rule(rule: rules.Rule) -> None:
    with pytest.raises(AssertionError, match=r"^(false green|silent): "):
        rule(ruff_spec(SilentRuff()))


def test_a_parser_that_takes_a_value_its_option_does_not_fails_the_options_rule() -> None:
    class Lax(RuffParser):
        def validate_options(self, options: Mapping[str, Any]) -> None:
            super().validate_options({k: v for k, v in options.items() if k != "report"})

    with pytest.raises(AssertionError, match=r"^parser 'ruff' accepts option report=1$"):
        rules.options_are_validated(ruff_spec(Lax()))


def test_a_parser_silent_about_a_missing_report_fails_the_missing_report_rule() -> None:
    with pytest.raises(AssertionError, match=r"^silent: ruff/clean without its report at exit "
                                             r"code 0 is read as evidence"):
        rules.recorded_runs_without_their_report_are_loud(ruff_spec(SilentRuff()))


def test_a_parser_that_is_clean_when_confused_fails_on_garbage_logs() -> None:
    with pytest.raises(AssertionError, match=r"^(false green|silent): .*garbage log|a run "
                                             r"without ruff.json"):
        rules.garbage_logs_are_never_green(ruff_spec(SilentRuff()))


def test_a_parser_that_trusts_its_report_shows_its_exception() -> None:
    # The kit calls read() without the crash guard: the bug is the traceback, not a note.
    with pytest.raises((OSError, ValueError, KeyError, TypeError)):
        rules.mutated_outputs_never_crash_the_parser(ruff_spec(TrustingRuff()))


def test_a_recorded_case_that_replays_to_another_status_fails_the_replay() -> None:
    clean = next(case for case in RUFF_CASES if case.name == "ruff/clean")
    wrong = RecordedCase(**{**vars(clean), "status": FAIL})
    with pytest.raises(AssertionError, match="ruff/clean: recorded as fail, replays as pass"):
        assert_replays(RuffParser(), wrong)


def test_recordings_without_a_clean_run_fail_the_replay_rule() -> None:
    failing = [case for case in RUFF_CASES if case.status != PASS]
    with pytest.raises(AssertionError, match="no recorded clean run"):
        rules.recorded_cases_replay_to_their_status(
            Conformance(RuffParser(), reports=["ruff.json"], cases=failing, foreign=[]))


def test_an_exit_code_only_parser_must_give_the_exit_codes_status() -> None:
    class Confused(GenericParser):
        def read(self, ctx: ParseContext) -> ParseResult:
            return ParseResult(parser_ok=False, notes=["?"], evidence_expected=False)

    with pytest.raises(AssertionError, match="an exit-code-only parser gave parse_mismatch"):
        rules.garbage_logs_are_never_green(Conformance(Confused(), exit_code_only=True,
                                                       foreign=[]))


# --- the pieces -----------------------------------------------------------------------------

def test_run_parser_lets_an_exception_of_read_through_where_parse_guards_it(
        tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_parser(TrustingRuff(), 0)
    ctx = ParseContext(check="ruff", run_dir=tmp_path, cwd=tmp_path, rc=0)
    assert not TrustingRuff().parse(ctx).parser_ok


def test_run_parser_refuses_a_parser_whose_own_guard_caught_a_crash() -> None:
    class SelfGuarded:
        name = "own"

        def parse(self, ctx: ParseContext) -> ParseResult:
            return guarded(self.name, self._read, ctx)

        def _read(self, ctx: ParseContext) -> ParseResult:
            raise KeyError("file")

    with pytest.raises(AssertionError, match="the parser's own guard caught a crash: parser "
                                             "'own' crashed on this run's evidence: KeyError"):
        run_parser(SelfGuarded(), 0)


def test_run_parser_refuses_a_result_that_is_not_a_parse_result() -> None:
    class Dict:
        name = "dict"

        def parse(self, ctx: ParseContext) -> object:
            return {}

    with pytest.raises(AssertionError, match="returned dict, not a ParseResult"):
        run_parser(Dict(), 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["full.log", "../outside", "/etc/x", "sub/../../x"])
def test_run_parser_writes_files_only_inside_the_run_dir_and_the_log_as_log(name: str) -> None:
    with pytest.raises(ValueError, match=r"full\.log|inside the run dir"):
        run_parser(RuffParser(), 0, files={name: b""})


def test_run_parser_writes_the_log_and_the_files_of_the_run() -> None:
    report = (FIXTURES / "ruff" / "violations" / "ruff.json").read_bytes()
    result = run_parser(RuffParser(), 1, files={"ruff.json": report})
    assert verdict(result, 1) == FAIL
    assert result.total == 19


def test_each_run_parser_call_sees_only_its_own_run_and_leaves_nothing() -> None:
    seen: list[list[str]] = []

    class Litter:
        """Lists its run dir, then leaves a file and a directory in it."""

        name = "litter"

        def parse(self, ctx: ParseContext) -> ParseResult:
            run_dir = Path(ctx.run_dir)
            seen.append(sorted(str(path.relative_to(run_dir)) for path in run_dir.rglob("*")))
            (run_dir / "left.txt").write_text("x")
            (run_dir / "left" / "deep").mkdir(parents=True)
            return ParseResult(parser_ok=True)

    run_parser(Litter(), 0, files={"sub/report.json": b"{}"})
    run_parser(Litter(), 0, log=b"second")
    with pytest.raises(FileNotFoundError):
        run_parser(TrustingRuff(), 0)  # an exception still empties the run dir
    run_parser(Litter(), 0)
    assert seen == [["full.log", "sub", "sub/report.json"], ["full.log"], ["full.log"]]


def test_the_verdict_rules_name_the_input_and_the_facts() -> None:
    with pytest.raises(AssertionError, match=r"^false green: an empty run at exit code 0 passes "
                                             r"\(parser_ok=True, 0 finding\(s\)"):
        assert_never_green(ParseResult(), 0, what="an empty run")
    with pytest.raises(AssertionError, match="parser_ok=False without a note"):
        assert_loud(ParseResult(parser_ok=False), 1, what="x")
    assert_loud(ParseResult(parser_ok=False, notes=["no report"]), 0)


def test_a_clean_run_is_known_by_its_evidence_and_options_only() -> None:
    spec = ruff_spec(RuffParser())
    assert spec.is_clean_run({}, {"full.log": b"anything", "ruff.json": b"[]\n"})
    assert not spec.is_clean_run({}, {"ruff.json": b"[ ]"})
    assert not spec.is_clean_run({"allow_no_files": True}, {"ruff.json": b"[]"})
    assert not spec.is_clean_run({}, {"full.log": b""})


def test_only_json_and_xml_reports_are_judged_for_well_formedness() -> None:
    junit = (FIXTURES / "pytest" / "failing" / "junit.xml").read_bytes()
    sarif = (FIXTURES / "sarif" / "semgrep" / "report.sarif").read_bytes()
    assert not ill_formed("junit.xml", junit)
    assert ill_formed("junit.xml", junit.replace(b"<testcase", b"<test\x00case", 1))
    assert not ill_formed("report.sarif", sarif)
    assert ill_formed("report.sarif", sarif[:-5])
    assert ill_formed("ruff.json", b'["\xff"]')  # not UTF-8: json refuses it
    assert not ill_formed("report.txt", b"\x00")


def test_a_case_json_without_an_exit_code_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(json.dumps({"tool": "x"}))
    with pytest.raises(ValueError, match=r"case\.json: a case needs an integer 'rc'"):
        load_case(tmp_path)
    (tmp_path / "case.json").write_text(json.dumps({"rc": 0, "expect": {"status": "green"}}))
    with pytest.raises(ValueError, match=r"expect\.status must be one of"):
        load_case(tmp_path)


def test_every_fixture_case_is_a_recorded_case_with_an_expectation() -> None:
    cases = project_cases()
    assert len(cases) > 100
    assert [case.name for case in cases if case.status is None] == []
    assert {case.family for case in project_cases(exclude={"ruff"})}.isdisjoint({"ruff"})


# --- the profiles -------------------------------------------------------------------------

@pytest.fixture
def restore_profile() -> Iterator[None]:
    yield
    settings.load_profile(HYPOTHESIS_PROFILE)


@pytest.mark.usefixtures("restore_profile")
@pytest.mark.parametrize(("environ", "profile"), [
    ({}, DEV), ({"CI": "true"}, CI), ({"CI": "1"}, CI), ({"CI": "false"}, DEV),
    ({"CI": "true", "HYPOTHESIS_PROFILE": DEV}, DEV), ({"HYPOTHESIS_PROFILE": CI}, CI)])
def test_the_profile_is_ci_under_ci_unless_hypothesis_profile_says_otherwise(
        environ: dict[str, str], profile: str) -> None:
    assert load_profile(environ) == profile
    assert (settings().max_examples == CI_EXAMPLES) == (profile == CI)


def test_the_ci_profile_is_a_fixed_budget_of_the_same_examples() -> None:
    ci = settings.get_profile(CI)
    assert (ci.max_examples, ci.derandomize, ci.database, ci.deadline) == (
        CI_EXAMPLES, True, None, None)
