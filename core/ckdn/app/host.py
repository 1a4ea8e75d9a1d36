"""The door for a host that produces a run itself (the pytest plugin, tox's observe mode): its
run and seal, and the core's rules for its own facts (zero tests, max-warnings, coverage).
"""

from __future__ import annotations

from ckdn.app._ci import GITHUB_ENV, github_reporting, report_to_github
from ckdn.app._hosts.runs import (
    RC_TERMINATED,
    HostLog,
    HostRun,
    ProgressLog,
    begin_host_run,
    write_evidence,
)
from ckdn.app._running.parsing import ALL_FINDINGS
from ckdn.app._running.steps import store_aggregate
from ckdn.documents.aggregate import Member, build_aggregate
from ckdn.parsers.base import Finding, ParseResult, Snippet, cap_line
from ckdn.parsers.gates import (
    ALLOW_NO_TESTS_HINT,
    MAX_WARNINGS_STATUS,
    NO_TESTS_COLLECTED_STATUS,
    CoverageFacts,
    coverage_gates,
    max_warnings_gate,
    no_tests_collected,
    no_tests_gate,
    stopped_early,
)
from ckdn.parsers.outcomes import worse as worse_outcome
from ckdn.parsers.pytest_findings import (
    COLLECTION_ERROR,
    INTERNAL_ERROR,
    TEST_ERROR,
    TEST_FAILURE,
    WORKER_CRASH,
    collection_error,
    internal_error,
    phase_failure,
)
from ckdn.parsers.pytest_order import (
    INTERNAL,
    OUTSIDE,
    PHASES,
    TEST,
    Smallest,
    numbered,
    order_key,
)
from ckdn.process import RC_INTERRUPTED
from ckdn.process.stop import StopRequest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.documents.types import GateDoc
    from ckdn.parsers.gates import WorstFiles

__all__ = [
    "ALLOW_NO_TESTS_HINT",
    "ALL_FINDINGS",
    "COLLECTION_ERROR",
    "GITHUB_ENV",
    "INTERNAL",
    "INTERNAL_ERROR",
    "MAX_WARNINGS_STATUS",
    "NO_TESTS_COLLECTED_STATUS",
    "OUTSIDE",
    "PHASES",
    "RC_INTERRUPTED",
    "RC_TERMINATED",
    "TEST",
    "TEST_ERROR",
    "TEST_FAILURE",
    "WORKER_CRASH",
    "CoverageFacts",
    "Finding",
    "HostLog",
    "HostRun",
    "Member",
    "ParseResult",
    "ProgressLog",
    "Smallest",
    "Snippet",
    "StopRequest",
    "begin_host_run",
    "build_aggregate",
    "cap_line",
    "collection_error",
    "coverage_gates",
    "coverage_worst_files",
    "gate_over",
    "github_reporting",
    "internal_error",
    "max_warnings_gate",
    "no_tests_collected",
    "no_tests_gate",
    "numbered",
    "order_key",
    "phase_failure",
    "report_to_github",
    "stopped_early",
    "store_aggregate",
    "worse_outcome",
    "write_evidence",
]


def gate_over(gates: list[tuple[str, Any]]) -> GateDoc:
    """The gate of a host's aggregate over its runs ``(name, gate or None)``, as an alias's
    is: the worst member's, ``unavailable`` where one did not run (tox's closing aggregate
    under ``ckdn_gate``)."""
    # lazy: a host's entry point; only a run judged by its gate loads the baseline's module
    from ckdn.identity import worst_gate

    return worst_gate(gates)


def coverage_worst_files(path: str, *, cwd: str, top: int,
                         preview: int | None = None) -> WorstFiles | str:
    """The worst-covered files of the coverage.py JSON report a host wrote (the pytest
    plugin, from pytest-cov's data), read as the ``coverage`` parser reads its report."""
    # lazy: a host's entry point; only a missed coverage gate asks for the report's reader
    from ckdn.parsers.coverage_report import worst_files

    return worst_files(path, cwd=cwd, top=top, preview=preview)
