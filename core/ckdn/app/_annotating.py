"""``ckdn annotate``: one stored run assembled into a :class:`~ckdn.reports.Report`, projected.

Nothing runs: the run's document is read from the store (a digest, or an
aggregate and the digests of its red members, never followed out of the runs
dir), each digest's findings come from its run's ``findings.jsonl`` when it has
one (every finding, with the fingerprint the run gave it, streamed), else from
the digest itself, fingerprinted by the same one function
(:func:`ckdn.identity.fingerprints`) against the sources as they are now. The
views themselves are :mod:`ckdn.reports`. Also here: the text view of a document
a run just produced (``ckdn run --format text``, ``ckdn show`` on a terminal) and
the GitHub job's annotation ledger (how many annotations the job has left).
"""

from __future__ import annotations

import os

from ckdn.app._running.steps import store_for
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from ckdn.config import Config
    from ckdn.identity import FindingRow
    from ckdn.reports import Checked, Report
    from ckdn.store import Store

__all__ = ["FORMATS", "annotate", "build_report", "github_ledger", "report_of"]

from ckdn.reports import FORMATS  # noqa: E402 - the one list, from the room that has them

_META_BYTES = 1 << 20


def build_report(config: Config, ref: str | None = None) -> Report:
    """The report of the run ``ref`` names (None: the latest); UsageError if unusable."""
    from ckdn.documents.stored import read_stored

    store = store_for(config)
    path = store.resolve(ref)
    return report_of(config, read_stored(path, store.display), path=path)


def report_of(config: Config, doc: Mapping[str, Any], *, path: str | None = None) -> Report:
    """The report of a document in hand (a run just made, or one read from ``path``)."""
    from ckdn.documents.stored import read_stored
    from ckdn.reports import Report

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
             env: Mapping[str, str] | None = None) -> str:
    """``ckdn annotate [RUN] --format FMT``: the view's text (see :mod:`ckdn.reports`)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return render_report(build_report(config, ref), fmt, color=color,
                         env=os.environ if env is None else env)


def render_report(report: Report, fmt: str, *, color: bool = False,
                  env: Mapping[str, str] | None = None,
                  summary_budget: int | None = None) -> str:
    """``report`` in the view ``fmt``; a GitHub view in a GitHub job keeps the job's ledger."""
    import ckdn.reports as views

    if fmt == "text":
        return views.text(report, color=color)
    if fmt == "github":
        env = env or {}
        ledger = github_ledger(env)
        kept = _ledger_read(ledger) if ledger else {}
        step = env.get("GITHUB_ACTION", "")[:100]
        found_steps, found_job = kept.get("steps"), kept.get("job")
        steps: dict[str, Any] = found_steps if isinstance(found_steps, dict) else {}
        job: int = found_job if type(found_job) is int else 0
        out, counts = views.github(report, job_left=views.GITHUB_LIMITS["job"] - job,
                                   step_used=_counts(steps.get(step)))
        if ledger and any(counts.values()):
            before = _counts(steps.get(step))
            steps[step] = {k: before.get(k, 0) + v for k, v in counts.items()}
            _ledger_write(ledger, {"job": job + sum(counts.values()), "steps": steps})
        return out
    if fmt == "summary":
        return views.summary(report, budget=summary_budget or views.SUMMARY_BYTES)
    if fmt == "sarif":
        return views.sarif(report)
    return views.codequality(report)


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


def _ledger_read(path: str) -> dict[str, Any]:
    """The job's ledger: ``{"job": N, "steps": {STEP: {"error": N, ...}}}``; empty if none."""
    import json

    try:
        with open(path, "rb") as handle:
            value = json.loads(handle.read(1 << 20))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and type(v) is int}


def _ledger_write(path: str, ledger: dict[str, Any]) -> None:
    import json

    from ckdn.store import write_atomic

    try:  # noqa: SIM105 - a ledger that cannot be kept only risks GitHub's own cut
        write_atomic(path, json.dumps(ledger, sort_keys=True).encode("utf-8"))
    except OSError:
        pass


def _anchor(config: Config) -> str:
    """The config file, relative to the cwd, where a finding without a place is put."""
    if config.path:
        relative = os.path.relpath(config.path, config.cwd)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return "ckdn.toml"


def _checked(config: Config, store: Store, digest: Mapping[str, Any], path: str) -> Checked:
    from ckdn.identity import FINDINGS_FILE, iter_findings
    from ckdn.reports import Checked

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
    from ckdn.identity import FindingRow, SourceLines, fingerprints

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
    import json

    try:
        from ckdn.regular import read_regular

        meta = json.loads(read_regular(os.path.join(path, "meta.json"), _META_BYTES))
        parser = meta.get("parser") if isinstance(meta, dict) else None
        if isinstance(parser, str) and parser:
            return parser
    except (OSError, ValueError):
        pass
    configured = config.checks.get(check)
    return configured.parser if configured is not None else check
