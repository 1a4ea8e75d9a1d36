"""The gates a test run must pass to count as verification, decided here once."""

from __future__ import annotations

import bisect
from decimal import Decimal

from ckdn._lite import Record, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ALLOW_NO_TESTS_HINT",
    "GATE_FILES",
    "MAX_WARNINGS_STATUS",
    "MISSING_LINES_PREVIEW",
    "NO_TESTS_COLLECTED_STATUS",
    "CoverageFacts",
    "FileTally",
    "WorstFiles",
    "coverage_gates",
    "display_covered",
    "fail_under_message",
    "is_coverage_gate",
    "max_warnings_gate",
    "no_tests_collected",
    "no_tests_gate",
    "should_fail_under",
    "stopped_early",
]

# The ``pytest`` and ``coverage`` parsers (reading JUnit XML and coverage reports)
# and the pytest plugin (reading pytest's own hooks) see the same runs from two
# sides; the rules that turn what they saw into gate failures live here so the
# two can never drift:
#
# * **zero tests is not green**: a run in which no test ran (none collected, or
#   every one skipped) checked nothing, unless the check sets ``allow_no_tests``;
#   pytest's own exit status 5 ("no tests collected") is not a gate at all but
#   the run's error, said in a note (a nonzero exit code is never upgraded, so
#   ``allow_no_tests`` cannot turn it green either);
# * **max-warnings**: pytest's exit status 6 means ``--max-warnings`` was
#   exceeded, and that is a failed gate, not an unexplained exit code;
# * **coverage**: a total below ``fail_under`` fails, with coverage.py's own
#   rounding and wording reproduced exactly (pytest-cov's ``--cov-fail-under``
#   and ckdn's ``fail_under`` are each checked); the failure names the
#   worst-covered files with their missing lines (:class:`WorstFiles`), so the
#   reader knows where the gap is without opening the report.

#: pytest's ``ExitCode.MAX_WARNINGS_ERROR``.
MAX_WARNINGS_STATUS = 6
#: pytest's ``ExitCode.NO_TESTS_COLLECTED``.
NO_TESTS_COLLECTED_STATUS = 5
#: Said with every zero-tests gate failure.
ALLOW_NO_TESTS_HINT = "set allow_no_tests = true if this check may legitimately run none"
_NO_TESTS = "no tests ran"


def no_tests_gate(tests: int, ran: int, *, deselected: int = 0) -> str | None:
    """The gate failure of a run that checked nothing; None when a test ran.

    ``tests`` is how many tests the run had, ``ran`` how many of them had an
    outcome other than skipped (passed, failed, errored, xfailed, xpassed).
    """
    if tests <= 0:
        return _NO_TESTS + (f" ({deselected} deselected)" if deselected else "")
    if ran <= 0:
        return f"{_NO_TESTS}: all {tests} test(s) skipped"
    return None


def no_tests_collected(deselected: int = 0) -> str:
    """The note of a run pytest itself ended with exit status 5: it collected no tests.

    Not a gate failure: the exit code already says the run went wrong, and the
    run is an ``error`` to fix (wrong paths, a ``-k``/``-m`` that matches nothing),
    not a test that failed.
    """
    selected = f" ({deselected} deselected)" if deselected else ""
    return (f"pytest collected no tests{selected} and exited with status 5: nothing was "
            "verified; check the test paths and any -k / -m selection")


def stopped_early(reason: str) -> str:
    """The note (and, with no finding to show for it, the gate failure) of a session that
    stopped before running every test it collected (``-x``, ``--maxfail``): never a pass."""
    return f"pytest stopped the session early ({reason}): not every collected test ran"


def max_warnings_gate(exit_status: int, warnings: int) -> str | None:
    """The gate failure when pytest stopped at its warning limit; None otherwise."""
    if exit_status != MAX_WARNINGS_STATUS:
        return None
    return f"{warnings} warning(s) exceed pytest's --max-warnings"


# -- coverage ------------------------------------------------------------------------


@record
class CoverageFacts(Record):
    """What a coverage tool measured: the total (None: no report), its display
    precision, and its own ``fail_under`` (pytest-cov's ``--cov-fail-under``)."""

    __slots__ = ("fail_under", "precision", "total")
    total: float | None
    precision: int
    fail_under: float | None

    def __init__(self, total: float | None, precision: int = 0,
                 fail_under: float | None = None) -> None:
        self._assign(total, precision, fail_under)


def coverage_gates(facts: CoverageFacts | None, fail_under: float | None,
                   files: Callable[[], WorstFiles | str] | None = None,
                   ) -> tuple[dict[str, object], list[str], list[str]]:
    """(summary entries, gate failures, notes) for a measured total against both thresholds.

    ``facts`` None: coverage was not measured at all, which fails a configured
    ``fail_under`` rather than passing it. ``files`` is asked, only when a
    threshold is missed, for the files behind the total (or why they cannot be
    had), so a failure names the worst-covered files as the ``coverage`` parser's
    does, and the summary gets the same ``uncovered_files_total`` and
    ``top_uncovered_files``; a passing run never pays for the per-file report.
    """
    if facts is None:
        if fail_under is None:
            return {}, [], []
        return {}, [f"fail_under={fail_under:g} is set but coverage was not measured "
                    "(run with pytest-cov: --cov=PACKAGE)"], []
    total, precision = facts.total, facts.precision
    if total is None:
        if facts.fail_under is None and fail_under is None:
            return {}, [], []
        return {}, ["coverage total not measured: pytest-cov made no report "
                    "(--no-cov-on-fail after a failure, or --cov-report= without a report)"], []
    summary: dict[str, object] = {"coverage": {
        "percent": total, "display": display_covered(total, precision), "precision": precision}}
    gates: list[str] = []
    if facts.fail_under is not None and should_fail_under(total, facts.fail_under, precision):
        gates.append(fail_under_message(total, facts.fail_under, precision)
                     + " (pytest-cov --cov-fail-under)")
    if fail_under is not None and fail_under != facts.fail_under \
            and should_fail_under(total, fail_under, precision):
        gates.append(fail_under_message(total, fail_under, precision))
    notes: list[str] = []
    if gates and files is not None:
        worst = files()
        if isinstance(worst, str):
            notes.append(f"the worst-covered files are not named: {worst}")
        else:
            clause = worst.clause(precision)
            if clause:
                # the clause goes before pytest-cov's marker, as one sentence about the total
                gates = [gate.replace(" (pytest-cov", clause + " (pytest-cov", 1)
                         if gate.endswith("--cov-fail-under)") else gate + clause
                         for gate in gates]
            summary.update(worst.summary())
            if worst.installed is not None:
                notes.append(installed_copy_note(worst.installed))
    return summary, gates, notes


def _fail_under_precision(fail_under: float, precision: int) -> int:
    # coverage.py: at least enough decimal places to represent the threshold.
    if fail_under == int(fail_under):
        return precision

    exponent = Decimal(str(fail_under)).as_tuple().exponent
    assert isinstance(exponent, int)  # a finite number, checked when the config loaded
    return max(precision, -exponent)


def should_fail_under(total: float, fail_under: float, precision: int) -> bool:
    """Whether ``total`` fails ``fail_under``: coverage.py's rule, reproduced exactly."""
    if fail_under == 100.0 and total != 100.0:
        return True
    return round(total, _fail_under_precision(fail_under, precision)) < fail_under


def display_covered(pc: float, precision: int) -> str:
    """A total as coverage.py displays it: never "0" or "100" unless it truly is."""
    near0 = 1.0 / 10**precision
    if 0 < pc < near0:
        pc = near0
    elif (100.0 - near0) < pc < 100:
        pc = 100.0 - near0
    else:
        pc = round(pc, precision)
    return f"{pc:.{precision}f}"


def is_coverage_gate(text: str) -> bool:
    """A gate failure this module worded about a coverage total (a shard merge replaces a
    shard's with the combined total's)."""
    return text.startswith(("coverage total ", "fail_under="))


def fail_under_message(total: float, fail_under: float, precision: int) -> str:
    """The gate failure, worded and rounded as coverage.py's own message."""
    precision = _fail_under_precision(fail_under, precision)
    if fail_under == 100.0 and total != 100.0:
        shown = display_covered(total, precision)
    else:
        shown = f"{round(total, precision):.{precision}f}"
    return f"coverage total of {shown} is less than fail_under={fail_under:.{precision}f}"


# -- the files behind a coverage total -------------------------------------------------

#: Missing line numbers a file's summary entry keeps, unless ``missing_lines_preview`` says.
MISSING_LINES_PREVIEW = 40
#: How many of the worst-covered files a gate failure names, and of each how many
#: missing ranges (or branch arcs): enough to start from, short enough for one line.
GATE_FILES = 3
GATE_RANGES = 4
#: Missing ranges and branch arcs a file's summary entry keeps (all of them are counted).
_KEPT = 10


class FileTally:
    """One file of a coverage report, fed line by line in the report's order.

    Counts are exact; of the detail only a bounded start is kept (the first
    ``preview`` missing lines, the first missing ranges and branch arcs), so a
    report of any size costs the same memory per file. A missing range is a run
    of missing statements with no executed statement in between, as coverage.py's
    ``Missing`` column coalesces them (``4-85`` across blank lines and comments).
    """

    __slots__ = ("arcs", "arcs_total", "branches", "branches_covered", "covered", "file",
                 "missing", "missing_total", "open", "partial", "preview", "ranges",
                 "ranges_total", "statements")

    def __init__(self, file: str, preview: int = MISSING_LINES_PREVIEW) -> None:
        self.file = file
        self.preview = preview
        self.statements = self.covered = self.missing_total = self.ranges_total = 0
        self.branches = self.branches_covered = self.partial = self.arcs_total = 0
        self.missing: list[int] = []
        self.ranges: list[list[int]] = []
        self.arcs: list[str] = []
        self.open: list[int] | None = None  # the missing range still growing

    def line(self, number: int, hit: bool) -> None:
        """A statement at ``number``, executed or not."""
        self.statements += 1
        if hit:
            self.covered += 1
            self.open = None
            return
        self.missing_total += 1
        if len(self.missing) < self.preview:
            self.missing.append(number)
        if self.open is not None:
            self.open[1] = number
            return
        self.ranges_total += 1
        self.open = [number, number]
        if len(self.ranges) < _KEPT:
            self.ranges.append(self.open)

    def branch(self, number: int, total: int, taken: int, missed: list[str], hit: bool) -> None:
        """The line at ``number`` has ``total`` exits, ``taken`` of them run; ``missed`` names
        the others (a line number, or ``exit``). An executed line with a missed exit is a
        partial branch (coverage.py's ``BrPart``)."""
        self.branches += total
        self.branches_covered += taken
        if not hit or taken >= total:
            return
        self.partial += 1
        for dest in missed:
            self.arcs_total += 1
            if len(self.arcs) < _KEPT:
                self.arcs.append(f"{number}->{dest}")

    def unlisted_branches(self, count: int) -> None:
        """Exits coverage.py counts as covered without naming them (a ``# pragma: no branch``
        line's untaken ones), so the file's total stays coverage.py's."""
        self.branches += count
        self.branches_covered += count

    @property
    def percent(self) -> float:
        """coverage.py's per-file total (lines and branches), as the gate's total is made."""
        valid = self.statements + self.branches
        return 100.0 * (self.covered + self.branches_covered) / valid if valid else 100.0

    @property
    def uncovered(self) -> bool:
        return bool(self.missing_total or self.partial)

    def rank(self) -> tuple[float, int, str]:
        """Worst first: the lowest total, then the most missing lines, then by name."""
        return self.percent, -self.missing_total, self.file

    def missing_text(self, limit: int) -> str:
        """The first ``limit`` missing ranges as coverage.py prints them, and how many more."""
        shown = [f"{a}-{b}" if a != b else str(a) for a, b in self.ranges[:limit]]
        more = self.ranges_total - len(shown)
        return ", ".join(shown) + (f", ... (+{more} more)" if more else "")

    def entry(self) -> dict[str, object]:
        """The file as ``summary.top_uncovered_files`` lists it (a digest drops the zeros)."""
        return {
            "file": self.file, "percent": self.percent,
            "line_rate": round(self.covered / self.statements, 4) if self.statements else 1.0,
            "missing_count": self.missing_total, "missing": self.missing_text(_KEPT),
            "missing_lines_preview": list(self.missing),
            "missing_lines_truncated": self.missing_total - len(self.missing),
            "partial_branches": self.partial, "missing_branches_preview": list(self.arcs),
            "missing_branches_truncated": self.arcs_total - len(self.arcs),
        }

    def clause(self, precision: int) -> str:
        """``calc/shop.py 45% (missing 12-14, 18-21)``: the file as a gate failure names it."""
        parts = []
        if self.missing_total:
            parts.append("missing " + self.missing_text(GATE_RANGES))
        if self.arcs_total:
            arcs = self.arcs[:GATE_RANGES]
            more = self.arcs_total - len(arcs)
            parts.append("missing branches " + ", ".join(arcs)
                         + (f", ... (+{more} more)" if more else ""))
        return f"{self.file} {display_covered(self.percent, precision)}% ({'; '.join(parts)})"


def installed_copy_note(file: str) -> str:
    """Why a measured file under site-packages is not the source to edit, and the two fixes."""
    return (f"coverage measured an installed copy of the code ({file[:240]}): its paths are "
            "not the project's source files; install the project editable "
            "(tox: package = editable; nox: session.install('-e', '.')) or map the paths "
            "with coverage's [paths] setting")


def _is_installed_copy(file: str) -> bool:
    """A file under a ``site-packages`` or ``dist-packages`` directory (an env's install)."""
    path = "/" + file.replace("\\", "/") + "/"
    return "/site-packages/" in path or "/dist-packages/" in path


class WorstFiles:
    """The ``top`` worst-covered files of a report, kept while it is read, and how many
    files are not fully covered. Bounded: a report of a million files keeps ``top``."""

    __slots__ = ("installed", "kept", "top", "total")

    def __init__(self, top: int) -> None:
        self.top = max(0, top)
        self.total = 0
        self.kept: list[tuple[tuple[float, int, str, int], FileTally]] = []
        #: the first measured file that is an installed copy (under site-packages): its
        #: lines are not the project's source an agent would edit
        self.installed: str | None = None

    def add(self, tally: FileTally) -> None:
        if self.installed is None and _is_installed_copy(tally.file):
            self.installed = tally.file
        if not tally.uncovered:
            return
        self.total += 1
        if not self.top:
            return

        # the count breaks a tie between two entries of one name (a tally never compares)
        bisect.insort(self.kept, ((*tally.rank(), self.total), tally), key=lambda kt: kt[0])
        del self.kept[self.top:]

    def summary(self) -> dict[str, object]:
        return {"uncovered_files_total": self.total,
                "top_uncovered_files": [tally.entry() for _, tally in self.kept]}

    def clause(self, precision: int) -> str:
        """``; worst covered: A 0% (missing 4-85), B 45% (...), +2 more file(s)`` or empty."""
        shown = [tally.clause(precision) for _, tally in self.kept[:GATE_FILES]]
        if not shown:
            return ""
        more = self.total - len(shown)
        return "; worst covered: " + ", ".join(shown) + (f", +{more} more file(s)" if more else "")
