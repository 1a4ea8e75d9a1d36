"""The durations ledger (``ckdn.durations/1``): each test's median seconds over the last whole
runs of a check, one file for a CI cache or a commit, read by ``ckdn plan``.
"""

from __future__ import annotations

import json
import os

from ckdn.app._running.steps import store_for
from ckdn.app._shards.selection import SHARD_FILE
from ckdn.app._stored.outcomes import run_durations
from ckdn.config import Alias
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError, os_reason, quote
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ckdn.config import Config

__all__ = ["DURATIONS_FILE", "SCHEMA_DURATIONS", "read_ledger", "timed_runs",
           "update_durations"]

SCHEMA_DURATIONS = "ckdn.durations/1"
#: The ledger's default place, in the project's directory.
DURATIONS_FILE = "ckdn.durations.json"
#: Runs folded by default: a median of five forgets one slow CI machine.
DEFAULT_LAST = 5


def ledger_path(config: Config, path: str | None) -> str:
    return os.path.join(config.cwd, path if path is not None else DURATIONS_FILE)


def read_ledger(path: str, *, required: bool = False) -> dict[str, dict[str, float]]:
    """``{check: {node id: seconds}}`` of the ledger at ``path`` (empty when absent and not
    ``required``); UsageError in one line for a file that is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except FileNotFoundError:
        if required:
            raise UsageError(f"{quote(path)}: no such durations file") from None
        return {}
    except OSError as exc:
        raise UsageError(f"{quote(path)}: cannot read it: {os_reason(exc)}") from None
    except ValueError as exc:
        raise UsageError(f"{quote(path)}: not JSON: {exc}") from None
    checks = value.get("checks") if isinstance(value, dict) else None
    if not isinstance(value, dict) or value.get("schema") != SCHEMA_DURATIONS \
            or not isinstance(checks, dict) or not all(
                isinstance(tests, dict) and all(type(s) in (int, float) and s >= 0
                                                for s in tests.values())
                for tests in checks.values()):
        raise UsageError(f"{quote(path)}: not a {SCHEMA_DURATIONS} file")
    return {name: {ident: float(s) for ident, s in tests.items()}
            for name, tests in checks.items()}


def timed_runs(config: Config, name: str) -> Iterator[tuple[str, dict[str, float], list[str]]]:
    """Whole runs of ``name`` (never one shard's), newest first: run id, each timed test's
    seconds, and every test the run ran."""
    check = config.get(name)
    if isinstance(check, Alias):
        raise UsageError(f"{quote(name)} is an alias; durations are kept per check")
    store = store_for(config)
    for run_name in store.run_names(name):
        run_dir = os.path.join(store.runs_dir, run_name)
        if os.path.lexists(os.path.join(run_dir, SHARD_FILE)):
            continue
        try:
            digest: dict[str, Any] = dict(read_stored(run_dir, os.path.basename))
            rc = digest.get("rc")
            found = run_durations(config, name, run_dir, rc if type(rc) is int else 0)
        except UsageError:
            continue  # an unfinished or unreadable run says nothing about durations
        if found is not None and found[0]:
            yield run_name, found[1], sorted(found[0])


def _median(values: list[float]) -> float:
    values.sort()
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def update_durations(config: Config, name: str, *, last: int = DEFAULT_LAST,
                     path: str | None = None) -> dict[str, Any]:
    """Fold each test's median over the last ``last`` whole runs of ``name`` (merged shards
    included) into the ledger; tests that did not run keep their seconds. The report."""
    if last < 1:
        raise UsageError(f"--last {last}: fold at least one run")
    target = ledger_path(config, path)
    ledger = read_ledger(target)
    samples: dict[str, list[float]] = {}
    used = []
    for run_name, seconds, _ran in timed_runs(config, name):
        for ident, took in seconds.items():
            samples.setdefault(ident, []).append(took)
        used.append(run_name)
        if len(used) >= last:
            break
    if not used:
        raise UsageError(f"no finished run of {quote(name)} recorded its tests' durations "
                         "(a JUnit report or tests.jsonl with seconds); run it first")
    tests = dict(ledger.get(name, {}))
    kept = len(set(tests) - set(samples))
    tests.update({ident: round(_median(values), 6) for ident, values in samples.items()})
    ledger[name] = dict(sorted(tests.items()))
    document = {"schema": SCHEMA_DURATIONS,
                "checks": {check: ledger[check] for check in sorted(ledger)}}
    data = json.dumps(document, indent=1, sort_keys=False) + "\n"
    try:
        write_atomic(target, data.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"{quote(target)}: cannot write it: {os_reason(exc)}") from None
    return {"file": os.path.relpath(target, config.cwd), "check": name, "runs": used,
            "tests": len(tests), "updated": len(samples), "kept": kept}
