"""The ``pytest`` parser: test findings from pytest's JUnit XML.

Both families pytest writes are read: ``xunit2`` (the default: ``classname`` and
``name`` only) and ``xunit1`` (adds ``file`` and a **0-based** ``line``). Each
``<failure>`` is a ``test_failure``; each ``<error>`` (setup, teardown,
collection) a ``test_error``. The id is the pytest node id rebuilt from
``classname``/``name`` (and ``file`` when present), so it is stable across runs
and across families. A test that fails in its call and errors in teardown is
written by pytest as two testcases with the same name: the teardown error's id
gets an ``@teardown`` suffix so both findings stay distinct. A ``<failure>`` or
``<error>`` outside any ``<testcase>`` (pytest never writes one; a merged or
hand-made report may) is a finding of its own, named after its ``<testsuite>``.

Findings are ordered by :mod:`ckdn.parsers.pytest_order` (by node id, not by the
order the tests ran in), so a shuffled or parallel run with the same failures
gives the same digest.

Guards: the totals every ``<testsuite>`` declares must match what was counted
(a truncated or hand-edited report is loud, not quietly short); a report that
is missing, not well-formed, namespaced or rooted in anything but
``testsuites``/``testsuite`` is ``parser_ok=False`` and contributes **nothing**
(no findings, no counts: a torn report's first half is not a smaller run); and
a run in which no test ran (none collected, or every one skipped) is a gate
failure unless the check sets ``allow_no_tests = true``. pytest's own exit code
5 ("no tests collected") is not a gate but an error of the run, said in a note.

The reading is shared with the ``coverage`` parser (:func:`read_junit`); the
``pytest`` parser's choice between this report and the pytest plugin's evidence
lives in :mod:`ckdn.parsers._pytest_sources`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ckdn.parsers._junit_xml import JUnitReader
from ckdn.parsers._pytest_log import stopped
from ckdn.parsers._pytest_text import node_id
from ckdn.parsers._xml import XmlError
from ckdn.parsers.base import ArtifactError, BaseParser, Option, ParseContext, ParseResult, cap_line
from ckdn.parsers.gates import (
    ALLOW_NO_TESTS_HINT,
    NO_TESTS_COLLECTED_STATUS,
    no_tests_collected,
    no_tests_gate,
)

__all__ = [
    "DEFAULT_JUNIT",
    "INCONSISTENT",
    "JUNIT_OPTIONS",
    "MISSING",
    "READ",
    "UNREADABLE",
    "PytestParser",
    "missing_report_note",
    "node_id",
    "read_junit",
    "read_report",
]

DEFAULT_JUNIT = "junit.xml"

#: Options shared by every parser that reads JUnit (``pytest``, ``coverage``).
JUNIT_OPTIONS: Mapping[str, Option] = {
    "junit": Option("str", help="JUnit XML file in the run dir (default junit.xml)"),
    "allow_no_tests": Option(
        "bool", help="accept a run in which no test ran (none collected, or all skipped)"
    ),
}

#: What became of a report (:func:`read_report`).
READ = "read"
INCONSISTENT = "inconsistent"  # well-formed, but its declared totals disagree with it
UNREADABLE = "unreadable"
MISSING = "missing"


def missing_report_note(name: str, rc: int) -> str:
    """Why the JUnit report ``name`` is missing, and what to do about it."""
    if stopped(rc):
        how = (f"killed by signal {-rc}" if rc < 0 else
               "timed out" if rc == 124 else f"stopped, exit code {rc}")
        return (f"JUnit report {name} not found: pytest was {how} before it wrote its report "
                "(pytest writes it at the end of the session)")
    return (f"JUnit report {name} not found in the run directory (exit code {rc}); "
            f"the command must write it: --junitxml {{run_dir}}/{Path(name).name}")


def read_report(ctx: ParseContext, *, option: str = "junit",
                default: str = DEFAULT_JUNIT) -> tuple[str, ParseResult]:
    """What one JUnit report in the run dir says, and how well it could be read.

    The state is :data:`READ`, :data:`INCONSISTENT` (its declared totals disagree
    with its elements: ``parser_ok=False``, the elements reported), or
    :data:`UNREADABLE` / :data:`MISSING` (``parser_ok=False`` and nothing else:
    no finding and no count comes from a report that could not be read to its end).
    """
    try:
        path = ctx.artifact(option, default)
    except ArtifactError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[str(exc)])
    name = str(ctx.options.get(option, default))
    if not path.is_file():
        if path.exists():
            return UNREADABLE, ParseResult(parser_ok=False, notes=[
                f"JUnit report {name} is not a regular file"])
        return MISSING, ParseResult(parser_ok=False, notes=[missing_report_note(name, ctx.rc)])
    reader = JUnitReader(ctx, name)
    try:
        reader.read(path)
    except XmlError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[cap_line(
            f"{name} is not readable JUnit XML: {exc}; a report that cannot be read to its "
            "end contributes no findings and no counts")])
    except OSError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[
            f"{name} could not be read: {exc.strerror or exc}"])
    counts = reader.counts()
    notes = reader.mismatches()
    state = INCONSISTENT if notes else READ
    excess = reader.excess_note()
    if excess is not None:
        notes.append(excess)
    gate_failures: list[str] = []
    if ctx.rc == NO_TESTS_COLLECTED_STATUS:
        notes.append(no_tests_collected())
    elif ctx.rc == 0 and state == READ and ctx.options.get("allow_no_tests") is not True:
        # only where pytest believed it finished well: any other exit code has its own cause
        gate = no_tests_gate(reader.tests, reader.tests - reader.only_skipped)
        if gate is not None:
            gate_failures.append(gate)
            notes.append(f"{gate} according to {name}; {ALLOW_NO_TESTS_HINT}")
    return state, ParseResult(findings=reader.findings(), findings_total=reader.kept.total,
                              summary={"counts": counts}, parser_ok=state == READ, notes=notes,
                              gate_failures=gate_failures)


def read_junit(ctx: ParseContext, *, option: str = "junit", default: str = DEFAULT_JUNIT,
               missing_ok: bool = False) -> ParseResult | None:
    """Facts from one JUnit XML report in the run dir (:func:`read_report`).

    ``None`` when the report does not exist and ``missing_ok`` (the ``coverage``
    parser reads JUnit only if the command wrote it); otherwise a missing report
    is ``parser_ok=False``: pytest always writes it when asked to, so its absence
    means the run never got that far or the command lacks ``--junitxml``.
    """
    state, result = read_report(ctx, option=option, default=default)
    if state == MISSING and missing_ok:
        return None
    return result


class PytestParser(BaseParser):
    """pytest via its JUnit XML (``--junitxml {run_dir}/junit.xml``), or the plugin's evidence."""

    name = "pytest"
    OPTIONS = JUNIT_OPTIONS

    def read(self, ctx: ParseContext) -> ParseResult:
        # Imported only here: the coverage parser reads JUnit and needs none of it.
        from ckdn.parsers._pytest_sources import parse_pytest_run

        return parse_pytest_run(ctx)
