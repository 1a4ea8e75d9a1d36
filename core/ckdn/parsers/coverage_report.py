"""The ``coverage`` parser: coverage.py's total, its ``fail_under`` gate, and test findings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ckdn.parsers._coverage_reports import (
    DEFAULT_JSON,
    DEFAULT_XML,
    Totals,
    Unusable,
    read_json,
    read_xml,
)
from ckdn.parsers._junit_xml import JUNIT_OPTIONS, read_junit
from ckdn.parsers.base import (
    ArtifactError,
    BaseParser,
    Option,
    ParseContext,
    ParseResult,
)
from ckdn.parsers.gates import (
    MISSING_LINES_PREVIEW,
    WorstFiles,
    display_covered,
    fail_under_message,
    installed_copy_note,
    should_fail_under,
)

__all__ = ["CoverageParser", "Totals", "worst_files"]

#: pytest's exit code when it refuses its command line (an unknown ``--cov``, say)
PYTEST_USAGE_ERROR = 4

# It reads coverage.py's native JSON report (``coverage_json``, used when present)
# and its Cobertura XML (``coverage_xml``), plus JUnit XML (``junit``) when the
# command wrote it, which gives exactly the ``pytest`` parser's test findings.
#
# The gate compares the total the way coverage.py does (``should_fail_under`` in
# ``coverage/results.py``, reproduced in :mod:`ckdn.parsers.gates`): the total is
# ``100 * (covered lines + covered branches) / (lines + branches)``, 100 when there
# is nothing to measure; it is
# rounded to the report precision (at least as many decimals as ``fail_under``
# itself has) before the comparison, and ``fail_under = 100`` needs exactly 100.
# So ckdn and ``coverage report --fail-under`` never disagree at the boundary.
# The precision is the ``precision`` option when set, else what the JSON report
# shows (its ``percent_covered_display``), else coverage.py's default 0.
#
# A failed gate names the worst-covered files with their missing lines, and the
# summary lists the ``top`` worst with a preview of each file's missing lines and
# branches (``overall``, ``uncovered_files_total``, ``top_uncovered_files``): from
# the JSON report when present, else the XML (:mod:`ckdn.parsers._coverage_reports`
# reads both).
#
# Guards: each report is checked against itself (the XML's per-line elements
# against its declared totals and rate; the JSON's per-file summaries against its
# totals, each file's line lists against its summary, and its percentage against
# the counts) and, when both are there, against each other. A disagreement, an
# unreadable or unrecognised report, or no coverage report at all is
# ``parser_ok=False`` with a note.


class CoverageParser(BaseParser):
    """coverage.py reports (``--cov-report=xml:{run_dir}/coverage.xml``), plus JUnit if present."""

    name = "coverage"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        **JUNIT_OPTIONS,
        "coverage_xml": Option("str", help="Cobertura XML in the run dir (default coverage.xml)"),
        "coverage_json": Option("str", help="coverage.py JSON in the run dir "
                                            "(default coverage.json; used when present)"),
        "fail_under": Option("number", minimum=0, maximum=100,
                             help="minimum total, compared as coverage.py does"),
        "precision": Option("int", minimum=0,
                            help="decimals the total is rounded to before fail_under "
                                 "(default: the JSON report's, else 0)"),
        "missing_lines_preview": Option("int", minimum=0,
                                        help="missing line numbers listed per uncovered file "
                                             f"(default {MISSING_LINES_PREVIEW})"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        result = read_junit(ctx, missing_ok=True) or ParseResult()
        summary: dict[str, Any] = dict(result.summary)
        counts: dict[str, Any] = dict(summary.get("counts", {}))
        totals = self._totals(ctx, result)
        if totals is not None:
            total = totals.percent
            precision = self._precision(ctx, totals)
            counts.update(lines_valid=totals.lines_valid, lines_covered=totals.lines_covered,
                          branches_valid=totals.branches_valid,
                          branches_covered=totals.branches_covered)
            summary["coverage"] = {"percent": total,
                                   "display": display_covered(total, precision),
                                   "precision": precision}
            summary["overall"] = _overall(totals)
            worst = totals.worst or WorstFiles(0)
            summary.update(worst.summary())
            fail_under = ctx.options.get("fail_under")
            if isinstance(fail_under, int | float) and not isinstance(fail_under, bool) \
                    and should_fail_under(total, float(fail_under), precision):
                result.gate_failures.append(fail_under_message(total, float(fail_under), precision)
                                            + worst.clause(precision))
            if worst.installed is not None:
                result.notes.append(installed_copy_note(worst.installed))
            if totals.files == 0:
                result.gate_failures.append("coverage measured no files")
                result.notes.append("the coverage report lists no measured file: nothing "
                                    "was verified (check --cov / [run] source)")
        summary.pop("counts", None)
        result.summary = {"counts": counts, **summary}
        return result

    def _totals(self, ctx: ParseContext, result: ParseResult) -> Totals | None:
        """The totals of the JSON report (preferred) and/or the XML, checked to agree."""
        found: list[tuple[str, Totals]] = []
        names: list[str] = []
        for option, default, reader in (("coverage_json", DEFAULT_JSON, read_json),
                                        ("coverage_xml", DEFAULT_XML, read_xml)):
            name = str(ctx.options.get(option, default))
            names.append(name)
            try:
                path = ctx.artifact(option, default)
            except ArtifactError as exc:
                result.parser_ok = False
                result.notes.append(str(exc))
                continue
            if not path.exists():
                continue
            try:
                found.append((name, reader(path, name, ctx)))
            except Unusable as exc:
                result.parser_ok = False
                result.notes.append(str(exc))
        if not found:
            if result.parser_ok:
                result.parser_ok = False
                looked = f"no coverage report in the run directory (looked for " \
                         f"{' and '.join(names)}; exit code {ctx.rc})"
                if ctx.rc == PYTEST_USAGE_ERROR:
                    result.notes.append(
                        f"{looked}: exit code 4 is pytest's usage error, it refused its "
                        "arguments before running a test; --cov needs pytest-cov installed "
                        "where the check runs")
                else:
                    result.notes.append(
                        f"{looked}; the command must write one: "
                        f"--cov-report=xml:{{run_dir}}/{Path(names[1]).name}")
            return None
        primary_name, primary = found[0]
        for other_name, other in found[1:]:
            if other.counts() != primary.counts():
                result.parser_ok = False
                result.notes.append(
                    f"{primary_name} and {other_name} disagree: (statements, covered, branches, "
                    f"covered branches) = {primary.counts()} vs {other.counts()}")
        return primary

    @staticmethod
    def _precision(ctx: ParseContext, totals: Totals) -> int:
        option = ctx.options.get("precision")
        if isinstance(option, int) and not isinstance(option, bool) and option >= 0:
            return option
        return totals.precision if totals.precision is not None else 0


def _overall(totals: Totals) -> dict[str, float]:
    """Lines and branches apart, in percent to two decimals (the total mixes them)."""
    def percent(covered: int, valid: int) -> float:
        return round(100.0 * covered / valid, 2) if valid else 100.0

    overall = {"line_percent": percent(totals.lines_covered, totals.lines_valid)}
    if totals.branches_valid:
        overall["branch_percent"] = percent(totals.branches_covered, totals.branches_valid)
    return overall


def worst_files(path: str | os.PathLike[str], *, cwd: str | os.PathLike[str], top: int,
                preview: int | None = None) -> WorstFiles | str:
    """The worst-covered files of a coverage.py JSON report, read as this parser reads it
    (for a host that measured coverage itself: the pytest plugin); why not, as a string."""
    report = Path(path)
    options = {} if preview is None else {"missing_lines_preview": preview}
    ctx = ParseContext(check=CoverageParser.name, run_dir=report.parent, cwd=cwd, rc=0,
                       options=options, top=top)
    try:
        totals = read_json(report, report.name, ctx)
    except Unusable as exc:
        return str(exc)
    return totals.worst or WorstFiles(0)
