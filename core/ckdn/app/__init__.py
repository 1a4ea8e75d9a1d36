"""The one door: everything a host (the CLI, the MCP server, pytest, nox, tox) does with ckdn.

Hosts import this package and :mod:`ckdn.errors`, nothing else of the core
(import-linter holds them to it), so every rule is written once and behaves
the same from every host:

* **running**: :func:`run` a check or alias by name (with the host's
  environment, stop request and run names), :func:`run_all`;
* **sealing a run a host produced**: :func:`begin_host_run` takes the lock and
  run dir, :class:`HostRun` writes the log and seals it with the host's facts or
  a parser's; :func:`write_evidence` hands the pytest plugin's facts to an outer
  ``ckdn run``; :func:`store_aggregate` is the one writer of aggregates;
* **queries**: :func:`read_run`, :func:`list_runs`, :func:`describe_checks`,
  :func:`requirements`, :func:`headline`, :func:`red_members`, :func:`prune_runs`,
  :func:`write_starter`, the packaged schemas;
* **rules a host applies to its own facts**: zero tests is not green,
  max-warnings and coverage gates (:func:`no_tests_gate`, :func:`max_warnings_gate`,
  :func:`coverage_gates`), decided in :mod:`ckdn.parsers.gates` for every host;
* the **value types** these take and return, re-exported from their rooms.
"""

from ckdn.app._queries import (
    checks_of,
    describe_checks,
    headline,
    list_runs,
    prune_runs,
    read_run,
    red_members,
    requirements,
    shown_runs_dir,
    write_starter,
)
from ckdn.app._run import ALL, run, run_alias, run_all, run_check
from ckdn.app._seal import (
    HostLog,
    HostRun,
    Outcome,
    begin_host_run,
    parse_safely,
    store_aggregate,
    write_evidence,
)
from ckdn.config import (
    CONFIG_ENV,
    CONFIG_NAME,
    Alias,
    Check,
    Config,
    config_path,
    default_config,
    load_config,
)
from ckdn.documents import Member, build_aggregate, encode, render
from ckdn.parsers.base import Finding, ParseContext, ParseResult, Snippet, cap_line
from ckdn.parsers.gates import (
    ALLOW_NO_TESTS_HINT,
    MAX_WARNINGS_STATUS,
    CoverageFacts,
    coverage_gates,
    max_warnings_gate,
    no_tests_gate,
)
from ckdn.process import RC_INTERRUPTED, StopRequest
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, SKIPPED, STATUSES
from ckdn.schema import load_schema, schema_ids

__all__ = [
    "ALL",
    "ALLOW_NO_TESTS_HINT",
    "CONFIG_ENV",
    "CONFIG_NAME",
    "ERROR",
    "FAIL",
    "MAX_WARNINGS_STATUS",
    "PARSE_MISMATCH",
    "PASS",
    "RC_INTERRUPTED",
    "SKIPPED",
    "STATUSES",
    "Alias",
    "Check",
    "Config",
    "CoverageFacts",
    "Finding",
    "HostLog",
    "HostRun",
    "Member",
    "Outcome",
    "ParseContext",
    "ParseResult",
    "Snippet",
    "StopRequest",
    "begin_host_run",
    "build_aggregate",
    "cap_line",
    "checks_of",
    "config_path",
    "coverage_gates",
    "default_config",
    "describe_checks",
    "encode",
    "headline",
    "list_runs",
    "load_config",
    "load_schema",
    "max_warnings_gate",
    "no_tests_gate",
    "parse_safely",
    "prune_runs",
    "read_run",
    "red_members",
    "render",
    "requirements",
    "run",
    "run_alias",
    "run_all",
    "run_check",
    "schema_ids",
    "shown_runs_dir",
    "store_aggregate",
    "write_evidence",
    "write_starter",
]
