"""``ckdn baseline NAME``: run a check (or read its newest stored run) and record every
finding's fingerprint, all or nothing (a run whose findings may be incomplete refuses, the
file unchanged; docs/baseline.md).
"""

from __future__ import annotations

import os
from typing import Any

from ckdn.app._running.parsing import read_again
from ckdn.app._running.steps import run_check
from ckdn.config import HOST_SEPARATOR, Alias, Check, Config
from ckdn.documents.stored import read_stored
from ckdn.errors import ConfigError, RefusedError, UsageError
from ckdn.identity import (
    FINDINGS_FILE,
    Rowed,
    SourceLines,
    fingerprints,
    match,
    read_baseline,
    read_findings,
    write_baseline,
)
from ckdn.identity.renames import git_renames
from ckdn.store import Store, shown_path

__all__ = ["record_baseline"]

_INCOMPLETE = ("error", "parse_mismatch")


def record_baseline(config: Config, name: str, *, prune: bool = False,
                    stored: bool = False) -> dict[str, Any]:
    """Run ``name`` (``stored``: read each check's newest stored run, as a nox session or a
    tox env left it) and write the baseline; what was recorded, as a JSON-ready report."""
    path = config.run.baseline
    if path is None:
        raise UsageError("no baseline is configured: add baseline = \"ckdn.baseline.json\" "
                         "under [run] in ckdn.toml")
    shown = shown_path(path, config.cwd)
    name, env = _host_of(name, stored)
    target = config.get(name)
    checks = ([config.checks[m] for m in target.members] if isinstance(target, Alias)
              else [target])
    replaced = ""
    try:
        existing = read_baseline(path, shown).checks if os.path.exists(path) else {}
    except ConfigError as exc:
        if prune:
            raise
        existing, replaced = {}, str(exc)
    recorded: dict[str, list[str]] = {}
    report: dict[str, Any] = {}
    for check in checks:
        doc, run_dir = (_newest_stored(config, check.name, env) if stored
                        else _ran(config, check))
        prints, identities = _every_fingerprint(config, check, shown, doc, run_dir)
        if prune:
            old = existing.get(check.name, [])
            matched = match(old, identities, git_renames(config.cwd) if old else None)
            kept = [p for p, known in zip(prints, matched.known, strict=True) if known]
            report[check.name] = {"kept": len(kept), "dropped": len(matched.stale),
                                  "new_not_added": matched.new}
            recorded[check.name] = kept
        else:
            report[check.name] = {"recorded": len(prints)}
            recorded[check.name] = prints
        if stored:
            report[check.name]["from"] = doc["run_dir"]
    merged = {**existing, **recorded}
    stale = sorted(n for n in merged if n not in config.checks)
    if prune:
        for gone in stale:
            del merged[gone]
    try:
        write_baseline(path, merged)
    except OSError as exc:
        raise RefusedError(f"cannot write {shown}: {exc.strerror or exc}") from None
    out: dict[str, Any] = {"baseline": shown, "checks": report}
    if stale:
        out["stale_checks" if not prune else "dropped_checks"] = stale
    if replaced:
        out["replaced"] = replaced
    return out


def _host_of(name: str, stored: bool) -> tuple[str, str | None]:
    """``NAME@ENV`` (a tox env's or nox session's run of NAME) -> (NAME, ENV); read only
    from the store, since running it is the host's job."""
    check, sep, env = name.partition(HOST_SEPARATOR)
    if not sep:
        return name, None
    if not stored:
        raise UsageError(f"{name} is a run a tox env or nox session made: add --stored to "
                         f"record from it (`ckdn baseline {name} --stored`)")
    if not check or not env:
        raise UsageError(f"{name}: expected NAME@ENV, a check (or alias) and the env that "
                         "ran it")
    return check, env


def _ran(config: Config, check: Check) -> tuple[dict[str, Any], str]:
    outcome = run_check(config, check)
    return dict(outcome.digest), outcome.run_dir or ""


def _newest_stored(config: Config, name: str, env: str | None) -> tuple[dict[str, Any], str]:
    """The digest and dir of ``name``'s newest run, finished or not (an unfinished one is
    refused, never skipped back past): ``ckdn run``'s or one host's (``NAME@ENV``),
    whichever is newer; ``env`` names the host whose run to read."""
    store = Store(config.run.runs_dir, config.cwd, private=config.run.private)
    hosted_prefix = name + HOST_SEPARATOR
    if env is not None:
        runs = store.runs(hosted_prefix + env)
    else:
        runs = [info for info in store.runs(None)
                if info.check == name or info.check.startswith(hosted_prefix)]
        hosts = sorted({info.check for info in runs if info.check != name})
        if len(hosts) > 1:
            raise UsageError(f"{name}: runs of {', '.join(hosts[:5])} are stored; a baseline"
                             " holds one set of findings a check: name the env to record "
                             f"from, e.g. `ckdn baseline {hosts[0]} --stored`")
    if not runs:
        where = f"{hosted_prefix}{env}" if env is not None else name
        raise UsageError(f"{where}: no stored run to record from; run it first (`ckdn run "
                         f"{name}`, or the nox session or tox env that runs it)")
    doc = dict(read_stored(runs[0].path, store.display))
    if "check" not in doc:
        raise UsageError(f"{store.display(runs[0].path)} is not a run of {name}")
    return doc, runs[0].path


def _every_fingerprint(config: Config, check: Check, shown: str, doc: dict[str, Any],
                       run_dir: str) -> tuple[list[str], Any]:
    """The fingerprints of all the run's findings (refused if they may be partial),
    and their identities for matching: the run's own ``findings.jsonl`` when it holds
    every finding (its fingerprints are the ones the run computed from the lines the
    tool saw), else the evidence read again."""
    status = doc["status"]
    if doc.get("interrupted") or status in _INCOMPLETE:
        why = "interrupted" if doc.get("interrupted") else f"status {status}"
        raise RefusedError(
            f"{check.name}: {why} ({doc.get('status_reason', '')}); a baseline is recorded "
            f"only from a run whose findings are complete: {shown} unchanged; evidence in "
            f"{doc['run_dir']}")
    total = doc.get("findings_total", 0)
    if total:
        rows = _stored_rows(run_dir, str(doc["check"]), total)  # a host's: NAME@ENV
        if rows is not None:
            return [row.fingerprint for row in rows], Rowed(rows)
    findings: list[Any] = []
    if total:
        findings = list(read_again(config, check, run_dir, int(doc["rc"] or 0))())
        if len(findings) < total:
            raise RefusedError(f"{check.name}: {total} findings, only {len(findings)} could be "
                               f"read again; {shown} unchanged")
    identities = fingerprints(findings, SourceLines(config.cwd))
    return [item.fingerprint for item in identities], identities


def _stored_rows(run_dir: str, check: str, total: int) -> list[Any] | None:
    """The rows of the run's ``findings.jsonl`` if it holds all ``total`` findings."""
    path = os.path.join(run_dir, FINDINGS_FILE)
    if not os.path.isfile(path):
        return None
    try:
        rows = read_findings(path, FINDINGS_FILE, check)
    except UsageError:
        return None
    return rows if len(rows) == total else None
