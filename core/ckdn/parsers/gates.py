"""The gates a test run must pass to count as verification, decided here once.

The ``pytest`` and ``coverage`` parsers (reading JUnit XML and coverage reports)
and the pytest plugin (reading pytest's own hooks) see the same runs from two
sides; the rules that turn what they saw into gate failures live here so the
two can never drift:

* **zero tests is not green**: a run in which no test ran (none collected, or
  every one skipped) checked nothing, unless the check sets ``allow_no_tests``;
  pytest's own exit status 5 ("no tests collected") is not a gate at all but
  the run's error, said in a note (a nonzero exit code is never upgraded, so
  ``allow_no_tests`` cannot turn it green either);
* **max-warnings**: pytest's exit status 6 means ``--max-warnings`` was
  exceeded, and that is a failed gate, not an unexplained exit code;
* **coverage**: a total below ``fail_under`` fails, with coverage.py's own
  rounding and wording reproduced exactly (pytest-cov's ``--cov-fail-under``
  and ckdn's ``fail_under`` are each checked).
"""

from __future__ import annotations

from ckdn._lite.record import Record, record

__all__ = [
    "ALLOW_NO_TESTS_HINT",
    "MAX_WARNINGS_STATUS",
    "NO_TESTS_COLLECTED_STATUS",
    "CoverageFacts",
    "coverage_gates",
    "display_covered",
    "fail_under_message",
    "max_warnings_gate",
    "no_tests_collected",
    "no_tests_gate",
    "should_fail_under",
    "stopped_early",
]

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


def coverage_gates(facts: CoverageFacts | None, fail_under: float | None
                   ) -> tuple[dict[str, object], list[str]]:
    """(summary entry, gate failures) for a measured total against both thresholds.

    ``facts`` None: coverage was not measured at all, which fails a configured
    ``fail_under`` rather than passing it.
    """
    if facts is None:
        if fail_under is None:
            return {}, []
        return {}, [f"fail_under={fail_under:g} is set but coverage was not measured "
                    "(run with pytest-cov: --cov=PACKAGE)"]
    total, precision = facts.total, facts.precision
    if total is None:
        if facts.fail_under is None and fail_under is None:
            return {}, []
        return {}, ["coverage total not measured: pytest-cov made no report "
                    "(--no-cov-on-fail after a failure, or --cov-report= without a report)"]
    summary: dict[str, object] = {"percent": total, "display": display_covered(total, precision),
                                  "precision": precision}
    gates: list[str] = []
    if facts.fail_under is not None and should_fail_under(total, facts.fail_under, precision):
        gates.append(fail_under_message(total, facts.fail_under, precision)
                     + " (pytest-cov --cov-fail-under)")
    if fail_under is not None and fail_under != facts.fail_under \
            and should_fail_under(total, fail_under, precision):
        gates.append(fail_under_message(total, fail_under, precision))
    return summary, gates


def _fail_under_precision(fail_under: float, precision: int) -> int:
    # coverage.py: at least enough decimal places to represent the threshold.
    if fail_under == int(fail_under):
        return precision
    from decimal import Decimal

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


def fail_under_message(total: float, fail_under: float, precision: int) -> str:
    """The gate failure, worded and rounded as coverage.py's own message."""
    precision = _fail_under_precision(fail_under, precision)
    if fail_under == 100.0 and total != 100.0:
        shown = display_covered(total, precision)
    else:
        shown = f"{round(total, precision):.{precision}f}"
    return f"coverage total of {shown} is less than fail_under={fail_under:.{precision}f}"
