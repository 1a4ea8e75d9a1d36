"""Coverage facts from pytest-cov, gated the way the ``coverage`` parser gates them.

pytest-cov computes the total in its ``pytest_runtestloop`` wrapper, in the
controlling process only, and keeps it on its plugin (registered as ``_cov``,
attribute ``cov_total``; its resolved options hold ``cov_fail_under`` and
``cov_precision``, coverage's own ``[report]`` settings included). When its own
fail-under is missed it bumps ``session.testsfailed``, so pytest exits 1 with no
failing test; that case is reported here as a failed coverage gate, so the
digest explains the exit code instead of showing an unexplained rc 1.

The comparison, the displayed total and the summary shape are decided by the
core (:func:`ckdn.app.coverage_gates`, the rule the ``coverage`` parser uses,
which reproduces coverage.py's ``should_fail_under`` rounding exactly): this
module only reads pytest-cov's facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ckdn.app.host import CoverageFacts

__all__ = ["coverage_of"]

#: The name pytest-cov registers its plugin under.
PYTEST_COV = "_cov"


def coverage_of(pluginmanager: Any) -> CoverageFacts | None:
    """pytest-cov's facts for this session; None when pytest-cov is not measuring."""
    from ckdn.app.host import CoverageFacts

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
