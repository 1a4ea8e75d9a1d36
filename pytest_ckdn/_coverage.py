"""Coverage facts from pytest-cov, gated the way the ``coverage`` parser gates them.

pytest-cov computes the total in its ``pytest_runtestloop`` wrapper, in the
controlling process only, and keeps it on its plugin (registered as ``_cov``,
attribute ``cov_total``; its resolved options hold ``cov_fail_under`` and
``cov_precision``, coverage's own ``[report]`` settings included). When its own
fail-under is missed it bumps ``session.testsfailed``, so pytest exits 1 with no
failing test; that case is reported here as a failed coverage gate, so the
digest explains the exit code instead of showing an unexplained rc 1.

When a gate fails, the files behind the total are named as the ``coverage``
parser names them: pytest-cov's data is written as coverage.py's own JSON report
(``Coverage.json_report``, the public API, with the session's configuration)
into the run dir, as evidence, and the core reads it (:func:`json_report`). A
passing session never writes it.

The comparison, the displayed total and the summary shape are decided by the
core (:func:`ckdn.app.coverage_gates`, the rule the ``coverage`` parser uses,
which reproduces coverage.py's ``should_fail_under`` rounding exactly): this
module only reads pytest-cov's facts.
"""

from __future__ import annotations

import os
from typing import Any

from ckdn.app.host import CoverageFacts

__all__ = ["coverage_of", "json_report"]

#: The name pytest-cov registers its plugin under.
PYTEST_COV = "_cov"


def coverage_of(pluginmanager: Any) -> CoverageFacts | None:
    """pytest-cov's facts for this session; None when pytest-cov is not measuring."""
    plugin = pluginmanager.get_plugin(PYTEST_COV)
    if plugin is None or getattr(plugin, "cov_controller", None) is None:
        return None
    options = getattr(plugin, "options", None)
    total = getattr(plugin, "cov_total", None)
    precision = getattr(options, "cov_precision", None)
    own = None if getattr(options, "collectonly", False) else getattr(options, "cov_fail_under",
                                                                       None)
    return CoverageFacts(
        total=float(total) if isinstance(total, int | float) else None,
        precision=precision if isinstance(precision, int) and precision >= 0 else 0,
        fail_under=float(own) if isinstance(own, int | float) and own > 0 else None,
    )


#: The report written for a missed gate: not ``coverage.json``, which the check's own
#: ``--cov-report=json:{run_dir}/coverage.json`` may be writing.
REPORT_NAME = "ckdn-coverage.json"


def json_report(pluginmanager: Any, run_dir: str) -> str:
    """Write the session's coverage as coverage.py's JSON report into ``run_dir``; its path.

    Raises ``OSError`` or ``RuntimeError`` (naming the cause) when it cannot be written.
    """
    plugin = pluginmanager.get_plugin(PYTEST_COV)
    cov = getattr(getattr(plugin, "cov_controller", None), "cov", None)
    if cov is None or not callable(getattr(cov, "json_report", None)):
        raise RuntimeError("pytest-cov holds no coverage data")
    path = os.path.join(run_dir, REPORT_NAME)
    try:
        cov.json_report(outfile=path)
    except OSError:
        raise
    except Exception as exc:  # coverage.py's own errors (no data, a source gone)
        raise RuntimeError(f"coverage.py could not write its JSON report: {exc}") from None
    return path
