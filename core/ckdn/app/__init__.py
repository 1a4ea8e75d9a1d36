"""The one door: everything a host (the CLI, the MCP server, pytest, nox, tox) does with ckdn.

This module runs checks and aliases; :mod:`ckdn.app.host`, ``.queries``, ``.doctor`` and
``.types`` are the other doors, so that ``ckdn run`` loads only this one.
"""

from __future__ import annotations

import os

from ckdn.app._running.parsing import parse_safely
from ckdn.app._running.steps import (
    ALL,
    ChangeRequest,
    Outcome,
    diff_scoped,
    green,
    run,
    run_alias,
    run_all,
    run_check,
)
from ckdn.config import (
    CONFIG_ENV,
    CONFIG_NAME,
    HOST_SEPARATOR,
    Alias,
    Check,
    Config,
    config_path,
    default_config,
    load_config,
)
from ckdn.documents import encode
from ckdn.documents.textcap import inert
from ckdn.parsers.base import Finding, ParseContext, ParseResult
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, SKIPPED, STATUSES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "ALL",
    "CONFIG_ENV",
    "CONFIG_NAME",
    "DIFF_BASE_ENV",
    "ERROR",
    "FAIL",
    "GATE_ENV",
    "HOST_SEPARATOR",
    "PARSE_MISMATCH",
    "PASS",
    "SKIPPED",
    "STATUSES",
    "Alias",
    "ChangeRequest",
    "Check",
    "Config",
    "Finding",
    "Outcome",
    "ParseContext",
    "ParseResult",
    "change_requested",
    "config_path",
    "default_config",
    "encode",
    "gate_exit_code",
    "gate_requested",
    "green",
    "inert",
    "load_config",
    "merge_runs",
    "parse_safely",
    "record_baseline",
    "run",
    "run_alias",
    "run_all",
    "run_check",
]


def record_baseline(config: Config, name: str, *, prune: bool = False,
                    stored: bool = False) -> dict[str, object]:
    """Run ``name`` (``stored``: read its newest stored run instead) and record every
    finding's fingerprint in ``[run].baseline`` (:mod:`ckdn.app._project.baseline`); the
    report of what was recorded."""
    # lazy: recording a baseline is not on the run path (nor its room's imports)
    from ckdn.app._project.baseline import record_baseline as record

    return record(config, name, prune=prune, stored=stored)


def merge_runs(config: Config, name: str, runs: Sequence[str], *,
               expect: int | None = None, plan: str | None = None) -> Outcome:
    """Seal the shard runs ``runs`` of check ``name`` as one run of it, failing closed
    (:mod:`ckdn.app._shards.merge`); ``plan``: the ``ckdn.plan/1`` file they ran."""
    from ckdn.app._shards.merge import merge_runs as merge  # lazy: as record_baseline

    return merge(config, name, runs, expect=expect, plan=plan)


def gate_exit_code(outcome: Outcome) -> int:
    """``--gate``: the exit code follows the gate (pass 0, fail 1), else the run's own; a
    diff-scoped gate ``unavailable`` (a base that cannot be trusted) is never 0."""
    gate = outcome.document.get("gate")
    status = gate.get("status") if isinstance(gate, dict) else None
    if status == "pass":
        return 0
    if status == "fail":
        return 1
    if status == "unavailable" and diff_scoped(gate):
        return outcome.exit_code or 1
    return outcome.exit_code


#: Set to 1 (or true, yes, on) in the environment, the nox and tox integrations judge
#: a check by its baseline gate, as ``ckdn run --gate`` does.
GATE_ENV = "CKDN_GATE"


def gate_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$CKDN_GATE`` asks hosts to judge by the gate."""
    value = (os.environ if environ is None else environ).get(GATE_ENV, "").strip().lower()
    return value in ("1", "true", "yes", "on")


#: Set to a git ref in the environment, the hosts (nox, tox, the pytest plugin) gate each
#: run by the change since its merge base with ``HEAD`` and judge by that gate, as
#: ``ckdn run --gate --diff-base REF`` does (docs/diff-gate.md).
DIFF_BASE_ENV = "CKDN_DIFF_BASE"


def change_requested(environ: Mapping[str, str] | None = None) -> ChangeRequest | None:
    """The diff-scoped gate ``$CKDN_DIFF_BASE`` asks hosts for (None when unset or empty)."""
    ref = (os.environ if environ is None else environ).get(DIFF_BASE_ENV, "").strip()
    return ChangeRequest(base=ref) if ref else None
