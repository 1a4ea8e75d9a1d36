"""The pip_audit parser on real ``pip-audit -f json`` runs (tests/fixtures/pip_audit).

This machine reaches no vulnerability service, so the cases with vulnerabilities
come from the real pip-audit pointed (``--osv-url``) at a local OSV stand-in;
their case.json says so. The unreachable-service cases are pip-audit's real
offline behaviour.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers.base import ParseContext
from ckdn.parsers.pip_audit import PipAuditParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS
from ckdn.testing import assert_loud, run_parser
from ckdn.testing.strategies import mutations

from .conftest import FIXTURES, CaseLoader, case_meta, rewrite_json, status
from .documented import check_documented_example

PARSER = PipAuditParser()
REAL_REPORT = (FIXTURES / "pip_audit" / "vulnerable" / "pip-audit.json").read_bytes()


def rewrite(ctx: ParseContext, change: Callable[[Any], object]) -> None:
    rewrite_json(ctx, "pip-audit.json", change)


def test_the_documented_example_is_what_the_parser_reports(load_case: CaseLoader) -> None:
    check_documented_example("pip_audit", PARSER, load_case)


def test_the_cases_with_vulnerabilities_say_they_used_the_osv_stand_in() -> None:
    for case in ("vulnerable", "ignored", "fixed", "clean", "no_dependencies"):
        assert "stand-in" in case_meta("pip_audit", case)["service"]
    assert "service" not in case_meta("pip_audit", "pypi_unavailable")


def test_each_known_vulnerability_is_a_finding_naming_the_pin_and_the_fix(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "vulnerable")
    result = PARSER.parse(ctx)
    assert result.parser_ok, result.notes
    assert [(f.id, f.message) for f in result.findings] == [
        ("requests==2.19.0:PYSEC-2018-28", "requests==2.19.0: PYSEC-2018-28 (fix: 2.20.0)"),
        ("requests==2.19.0:PYSEC-2023-74", "requests==2.19.0: PYSEC-2023-74 (fix: 2.31.0)"),
        ("py==1.11.0:PYSEC-2022-42969", "py==1.11.0: PYSEC-2022-42969 (no fix version)"),
    ]
    assert {f.kind for f in result.findings} == {"vulnerability"}
    assert status(ctx, result) == FAIL


def test_aliases_are_sorted_in_the_detail_whatever_order_pip_audit_wrote(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "vulnerable")
    rewrite(ctx, lambda d: d["dependencies"][0]["vulns"][0]["aliases"].reverse())
    first = PARSER.parse(ctx).findings[0]
    assert first.detail[0] == "aliases: CVE-2018-18074, GHSA-x84v-xcm2-53pg"
    assert first.detail[1].startswith("Requests before 2.20.0 sends an HTTP Authorization")


def test_summary_counts_dependencies_vulnerabilities_and_skips(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pip_audit", "vulnerable"))
    assert result.summary == {"counts": {"dependencies": 3, "vulnerabilities": 3,
                                         "vulnerable": 2, "fixed": 0, "skipped": 0,
                                         "skipped_accepted": 0}}


def test_ignored_vulnerabilities_are_gone_and_the_logs_count_still_agrees(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "ignored")
    result = PARSER.parse(ctx)
    assert result.parser_ok
    assert result.total == 2
    assert status(ctx, result) == FAIL


def test_vulnerabilities_fixed_by_fix_are_counted_not_findings(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "fixed")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.total == 0
    assert result.summary["counts"]["fixed"] == 2
    assert status(ctx, result) == PASS


def test_a_clean_audit_passes(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "clean")
    result = PARSER.parse(ctx)
    assert (result.findings, result.notes, result.gate_failures) == ([], [], [])
    assert status(ctx, result) == PASS


def test_dependencies_pip_audit_could_not_audit_are_a_gate_failure_despite_exit_zero(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "pypi_unavailable")
    result = PARSER.parse(ctx)
    assert ctx.rc == 0
    assert result.gate_failures == ["pip-audit could not audit 3 dependencies"]
    assert ("requests: Dependency not found on PyPI and could not be audited: requests (2.19.0)"
            in result.notes[0])
    assert status(ctx, result) == FAIL


def test_allow_skipped_accepts_dependencies_pip_audit_could_not_audit(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "pypi_unavailable", options={"allow_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_an_audit_of_no_dependency_is_a_gate_failure(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "no_dependencies")
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pip-audit audited no dependency"]
    assert status(ctx, result) == FAIL


def test_an_unreachable_service_is_an_error_whose_note_names_the_cause(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "osv_unreachable")
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "pip-audit.json not found in the run dir (exit code 1)" in result.notes[0]
    assert "Failed to resolve 'api.osv.dev'" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_strict_mode_failing_on_a_skip_is_an_error_quoting_the_skip(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "strict_skip")
    result = PARSER.parse(ctx)
    assert "Dependency not found on PyPI and could not be audited" in result.notes[0]
    assert status(ctx, result) == ERROR


def test_a_log_count_that_disagrees_with_the_report_is_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "vulnerable")
    rewrite(ctx, lambda d: d["dependencies"][2].update(vulns=[]))
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "log says 3 known vulnerabilities but its report lists 2" in result.notes[0]


def test_exit_code_one_with_nothing_unfixed_is_unreadable(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "clean", rc=1)
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "exited 1 but its report lists no unfixed vulnerability" in result.notes[0]


def test_a_report_without_dependencies_is_format_drift(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "clean")
    Path(ctx.run_dir, "pip-audit.json").write_text('[{"name": "idna"}]')
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert status(ctx, result) == PARSE_MISMATCH


def test_only_top_findings_are_kept_but_all_are_counted(load_case: CaseLoader) -> None:
    result = PARSER.parse(load_case("pip_audit", "vulnerable", top=1))
    assert len(result.findings) == 1
    assert result.total == 3


@pytest.mark.parametrize("report", ["../outside.json", "/etc/passwd"])
def test_a_report_path_outside_the_run_dir_is_refused(load_case: CaseLoader, report: str) -> None:
    result = PARSER.parse(load_case("pip_audit", "vulnerable", options={"report": report}))
    assert not result.parser_ok
    assert "outside the run directory" in result.notes[0]


# --- a damaged report that is no longer pip_audit's is loud ---------------------------------------
# (garbage, truncations, other tools' reports, a missing report: the conformance kit, in
# test_conformance.py)

def _is_pip_audits(report: bytes) -> bool:
    try:
        data = json.loads(report)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("dependencies"), list)


@given(report=mutations(REAL_REPORT), rc=st.sampled_from([0, 1]))
def test_a_damaged_report_that_is_no_longer_pip_audits_is_loud(report: bytes, rc: int) -> None:
    result = run_parser(PARSER, rc, files={"pip-audit.json": report})
    if not _is_pip_audits(report):
        assert_loud(result, rc, what="a damaged pip-audit.json")


# --- pip-audit's log beside its report --------------------------------------------------------

def test_a_clean_report_without_pip_audits_summary_line_is_never_green(
        load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "clean")
    lines = Path(ctx.log_path).read_bytes().splitlines(keepends=True)
    Path(ctx.log_path).write_bytes(b"".join(lines[:-1]))  # the log cut before the summary
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert "no pip-audit summary line" in result.notes[0]
    assert status(ctx, result) == PARSE_MISMATCH


@pytest.mark.parametrize(("source", "first"), [
    ("strict_skip", "ERROR:pip_audit._cli:requests: Dependency not found on PyPI"),
    ("osv_unreachable", "Traceback (most recent call last):")])
def test_a_clean_report_beside_an_error_in_the_log_is_never_green(
        load_case: CaseLoader, source: str, first: str) -> None:
    ctx = load_case("pip_audit", "clean")
    failing = (FIXTURES / "pip_audit" / source / "full.log").read_bytes()
    Path(ctx.log_path).write_bytes(failing + Path(ctx.log_path).read_bytes())
    result = PARSER.parse(ctx)
    assert not result.parser_ok
    assert f"beside its report (first: {first}" in result.notes[-1]
    assert status(ctx, result) == PARSE_MISMATCH


def test_allow_skipped_as_a_list_accepts_only_the_packages_it_names_pep_503_normalised(
        load_case: CaseLoader) -> None:
    # the real report skips requests, idna and py; "Requests" and "IDNA" name two of them
    ctx = load_case("pip_audit", "pypi_unavailable",
                    options={"allow_skipped": ["Requests", "IDNA"]})
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pip-audit could not audit 1 dependency"]
    skipped = next(note for note in result.notes if note.startswith("skipped: "))
    assert skipped.startswith("skipped: py: Dependency not found on PyPI")
    assert "requests" not in skipped
    assert "idna" not in skipped
    assert "2 skipped dependencies accepted by allow_skipped" in result.notes
    assert result.summary["counts"]["skipped"] == 3
    assert result.summary["counts"]["skipped_accepted"] == 2
    assert status(ctx, result) == FAIL


def test_normalised_names_match_whatever_separators_and_case_the_config_uses() -> None:
    from ckdn.parsers.pip_audit import normalise

    assert {normalise(name) for name in ("Foo_Bar", "foo.bar", "FOO--bar", "foo-_.bar")} == {
        "foo-bar"}
    assert normalise("zope.interface") == "zope-interface"


def test_a_list_naming_every_skipped_package_still_needs_allow_all_skipped_when_none_was_audited(
        load_case: CaseLoader) -> None:
    every = ["requests", "idna", "py"]
    ctx = load_case("pip_audit", "pypi_unavailable", options={"allow_skipped": every})
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pip-audit audited no dependency"]
    assert any("every dependency was skipped" in note and "allow_all_skipped = true" in note
               for note in result.notes)
    assert status(ctx, result) == FAIL
    ctx = load_case("pip_audit", "pypi_unavailable",
                    options={"allow_skipped": every, "allow_all_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS


def test_allow_all_skipped_accepts_an_empty_audit_but_not_a_skip(load_case: CaseLoader) -> None:
    ctx = load_case("pip_audit", "no_dependencies", options={"allow_all_skipped": True})
    assert status(ctx, PARSER.parse(ctx)) == PASS
    ctx = load_case("pip_audit", "pypi_unavailable", options={"allow_all_skipped": True})
    result = PARSER.parse(ctx)
    assert result.gate_failures == ["pip-audit could not audit 3 dependencies"]
    assert status(ctx, result) == FAIL


def test_allow_skipped_false_or_an_empty_list_accepts_no_skip(load_case: CaseLoader) -> None:
    allow: bool | list[str]
    for allow in (False, []):
        ctx = load_case("pip_audit", "pypi_unavailable", options={"allow_skipped": allow})
        assert PARSER.parse(ctx).gate_failures == ["pip-audit could not audit 3 dependencies"]
