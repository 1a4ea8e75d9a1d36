"""``ckdn annotate``: one stored run assembled into a :class:`~ckdn.reports.Report`, rendered.

Nothing runs: findings come from the run's ``findings.jsonl``, else from its digest,
fingerprinted by the one function; the formats themselves are :mod:`ckdn.reports`.
"""

from __future__ import annotations

import json
import os

from ckdn.app._running.steps import store_for
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError
from ckdn.evidence_files import read_regular
from ckdn.identity import (
    FINDINGS_FILE,
    FindingRow,
    SourceLines,
    fingerprints,
    iter_findings,
    split_location,
)
from ckdn.reports import REPORTERS, Checked, Rendering, Report
from ckdn.reports import render_report as render_format
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from ckdn.config import Config
    from ckdn.store import Store

__all__ = ["JobLedger", "annotate", "build_report", "github_ledger", "render_report", "report_of"]

_META_BYTES = 1 << 20


def build_report(config: Config, ref: str | None = None) -> Report:
    """The report of the run ``ref`` names (None: the latest); UsageError if unusable."""
    store = store_for(config)
    path = store.resolve(ref)
    return report_of(config, read_stored(path, store.display), path=path)


def report_of(config: Config, doc: Mapping[str, Any], *, path: str | None = None) -> Report:
    """The report of a document in hand (a run just made, or one read from ``path``)."""
    store = store_for(config)
    anchor = _anchor(config)
    if "alias" not in doc:
        where = path or store.resolve(str(doc["run_dir"]))
        return Report(doc, [_checked(config, store, doc, where)], anchor=anchor,
                      root=config.cwd)
    checks: list[Checked] = []
    missing: list[tuple[str, str]] = []
    members = [m for m in doc.get("members", []) if isinstance(m, dict)]
    for member in members:
        run_dir = member.get("run_dir")
        if not isinstance(run_dir, str) or member.get("status") in ("pass", "skipped"):
            continue
        try:
            where = store.resolve(run_dir)
            digest = read_stored(where, store.display)
        except UsageError as exc:
            missing.append((run_dir, exc.message))
            continue
        if "check" not in digest:
            missing.append((run_dir, "not a digest"))
            continue
        checks.append(_checked(config, store, digest, where))
    return Report(doc, checks, members=members, missing=missing, anchor=anchor,
                  root=config.cwd)


def annotate(config: Config, ref: str | None, fmt: str, *, color: bool = False,
             env: Mapping[str, str] | None = None, diff_base: str | None = None) -> str:
    """``ckdn annotate [RUN] --format FMT``: the format's text (see :mod:`ckdn.reports`);
    with ``diff_base``, only the findings on lines the change since ``git merge-base
    DIFF_BASE HEAD`` added (a base that cannot be trusted is a UsageError)."""
    if fmt not in REPORTERS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(REPORTERS)}")
    report = build_report(config, ref)
    if diff_base is not None:
        report = _on_the_change(config, report, diff_base)
    return render_report(report, fmt, color=color, env=os.environ if env is None else env)


def _on_the_change(config: Config, report: Report, ref: str) -> Report:
    """``report`` with each check's findings cut to those on added lines of the change."""
    # lazy: only `annotate --diff-base` reads a change (the hosts' reports load this module)
    from ckdn.identity.change import ADDED
    from ckdn.identity.git_base import BaseError, change_against  # (as the line above)

    try:
        changes = change_against(config.cwd, ref, ignore=(config.run.runs_dir,)).changes
    except BaseError as exc:
        raise UsageError(str(exc)) from None

    def cut(rows: Callable[[], Iterable[FindingRow]]) -> Callable[[], Iterable[FindingRow]]:
        def on_added() -> Iterable[FindingRow]:
            for row in rows():
                path, line = split_location(row.location)
                if changes.where(os.path.normpath(path) if path else "", line) == ADDED:
                    yield row
        return on_added

    for checked in report.checks:
        checked.rows = cut(checked.rows)
    return report


def render_report(report: Report, fmt: str, *, color: bool = False,
                  env: Mapping[str, str] | None = None,
                  summary_budget: int | None = None) -> str:
    """``report`` in the format ``fmt``; in a GitHub job, annotations keep the job's ledger."""
    env = env or {}
    path = github_ledger(env)
    rendering = Rendering(color=color, summary_budget=summary_budget,
                          ledger=JobLedger(path) if path else None,
                          step=env.get("GITHUB_ACTION", "")[:100])
    return render_format(report, fmt, rendering)


def github_ledger(env: Mapping[str, str]) -> str | None:
    """The file counting this GitHub job's annotations so far; None outside a job.

    ``RUNNER_TEMP`` is emptied when a job starts, so a count kept there is the
    job's: every ``ckdn annotate --format github`` and every host's annotation step
    in the job shares GitHub's one budget of 50.
    """
    temp = env.get("RUNNER_TEMP")
    if env.get("GITHUB_ACTIONS") != "true" or not temp or not os.path.isdir(temp):
        return None
    job = "".join(c if c.isalnum() or c in "-_" else "_" for c in env.get("GITHUB_JOB", "job"))
    return os.path.join(temp, f"ckdn-annotations-{job[:100]}")


class JobLedger:
    """The annotations a GitHub job has printed so far, in a file:
    ``{"job": N, "steps": {STEP: {"error": N, ...}}}`` (missing or unreadable: none)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _read(self) -> tuple[int, dict[str, Any]]:
        try:
            with open(self.path, "rb") as handle:
                value = json.loads(handle.read(1 << 20))
        except (OSError, ValueError):
            value = {}
        kept = value if isinstance(value, dict) else {}
        found_steps, found_job = kept.get("steps"), kept.get("job")
        steps: dict[str, Any] = found_steps if isinstance(found_steps, dict) else {}
        return (found_job if type(found_job) is int else 0), steps

    def used(self, step: str) -> tuple[int, dict[str, int]]:
        job, steps = self._read()
        return job, _counts(steps.get(step))

    def spend(self, step: str, counts: dict[str, int]) -> None:
        job, steps = self._read()
        before = _counts(steps.get(step))
        steps[step] = {k: before.get(k, 0) + v for k, v in counts.items()}
        ledger = {"job": job + sum(counts.values()), "steps": steps}
        try:  # noqa: SIM105 - a ledger that cannot be kept only risks GitHub's own cut
            write_atomic(self.path, json.dumps(ledger, sort_keys=True).encode("utf-8"))
        except OSError:
            pass


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and type(v) is int}


def _anchor(config: Config) -> str:
    """The config file, relative to the cwd, where a finding without a place is put."""
    if config.path:
        relative = os.path.relpath(config.path, config.cwd)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return "ckdn.toml"


def _checked(config: Config, store: Store, digest: Mapping[str, Any], path: str) -> Checked:
    check = str(digest["check"])
    tool = _tool(config, path, check)
    findings_file = os.path.join(path, FINDINGS_FILE)
    shown = store.display(findings_file)
    if os.path.isfile(findings_file) and not os.path.islink(findings_file):
        return Checked(digest, lambda: iter_findings(findings_file, shown, check),
                       complete=True, tool=tool)
    rows = _digest_rows(config, digest)
    checked = Checked(digest, lambda: iter(rows), complete=False, tool=tool)
    if os.path.lexists(findings_file):  # planted, or not a file: never followed, never read
        checked.problems.append(f"{shown} is not a regular file; the digest's findings are "
                                "shown instead")
    return checked


def _digest_rows(config: Config, digest: Mapping[str, Any]) -> list[FindingRow]:
    """The digest's own findings as rows, fingerprinted now by the one function."""
    rows = [FindingRow("", str(f.get("id") or "?"), str(f.get("kind") or "?"),
                       f["location"] if isinstance(f.get("location"), str) else None,
                       str(f.get("message", "")), baselined=f.get("baselined") is True)
            for f in _findings(digest)]
    for row, item in zip(rows, fingerprints(rows, SourceLines(config.cwd)), strict=True):
        row.fingerprint = item.fingerprint
    return rows


def _findings(digest: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    found = digest.get("findings")
    return [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []


def _tool(config: Config, path: str, check: str) -> str:
    """The parser that read the run (its ``meta.json``), else the configured one, else the
    check's name: the SARIF driver."""
    try:
        meta = json.loads(read_regular(os.path.join(path, "meta.json"), _META_BYTES))
        parser = meta.get("parser") if isinstance(meta, dict) else None
        if isinstance(parser, str) and parser:
            return parser
    except (OSError, ValueError):
        pass
    configured = config.checks.get(check)
    return configured.parser if configured is not None else check
