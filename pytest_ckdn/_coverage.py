"""Coverage facts from pytest-cov, gated the way the ``coverage`` parser gates them.

pytest-cov computes the total in its ``pytest_runtestloop`` wrapper, in the
controlling process only, and keeps it on its plugin (registered as ``_cov``,
attribute ``cov_total``; its resolved options hold ``cov_fail_under`` and
``cov_precision``, coverage's own ``[report]`` settings included). When its own
fail-under is missed it bumps ``session.testsfailed``, so pytest exits 1 with no
failing test; that case is reported here as a failed coverage gate, so the
digest explains the exit code instead of showing an unexplained rc 1.

The comparison, the displayed total and the summary shape are the ``coverage``
parser's (``ckdn.parsers.coverage_report``, which reproduces coverage.py's
``should_fail_under`` rounding exactly): one home for the rule, and the same
facts whichever way pytest ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Coverage", "coverage_gates", "coverage_of"]

#: The name pytest-cov registers its plugin under.
PYTEST_COV = "_cov"


@dataclass(frozen=True, slots=True)
class Coverage:
    """What pytest-cov measured in this session (``total`` None: it made no report)."""

    total: float | None
    precision: int
    fail_under: float | None


def coverage_of(pluginmanager: Any) -> Coverage | None:
    """pytest-cov's facts for this session; None when pytest-cov is not measuring."""
    plugin = pluginmanager.get_plugin(PYTEST_COV)
    if plugin is None or getattr(plugin, "cov_controller", None) is None:
        return None
    options = getattr(plugin, "options", None)
    total = getattr(plugin, "cov_total", None)
    precision = getattr(options, "cov_precision", None)
    own = None if getattr(options, "collectonly", False) else getattr(options, "cov_fail_under",
                                                                       None)
    return Coverage(
        total=float(total) if isinstance(total, int | float) else None,
        precision=precision if isinstance(precision, int) and precision >= 0 else 0,
        fail_under=float(own) if isinstance(own, int | float) and own > 0 else None,
    )


def coverage_gates(coverage: Coverage | None, fail_under: float | None
                   ) -> tuple[dict[str, Any], list[str]]:
    """(summary entry, gate failures) for pytest-cov's threshold and ckdn's ``fail_under``."""
    if coverage is None:
        if fail_under is None:
            return {}, []
        return {}, [f"fail_under={fail_under:g} is set but coverage was not measured "
                    "(run with pytest-cov: --cov=PACKAGE)"]
    from ckdn.parsers.coverage_report import (
        display_covered,
        fail_under_message,
        should_fail_under,
    )

    total, precision = coverage.total, coverage.precision
    if total is None:
        if coverage.fail_under is None and fail_under is None:
            return {}, []
        return {}, ["coverage total not measured: pytest-cov made no report "
                    "(--no-cov-on-fail after a failure, or --cov-report= without a report)"]
    summary = {"percent": total, "display": display_covered(total, precision),
               "precision": precision}
    gates: list[str] = []
    if coverage.fail_under is not None and should_fail_under(total, coverage.fail_under,
                                                             precision):
        gates.append(fail_under_message(total, coverage.fail_under, precision)
                     + " (pytest-cov --cov-fail-under)")
    if fail_under is not None and fail_under != coverage.fail_under \
            and should_fail_under(total, fail_under, precision):
        gates.append(fail_under_message(total, fail_under, precision))
    return summary, gates
