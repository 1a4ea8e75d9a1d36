"""Questions about a project's stored runs: read one, list them, prune them, say what is red."""

from __future__ import annotations

import os

from ckdn.app._running.steps import store_for
from ckdn.documents.redacting import redact_document
from ckdn.documents.stored import read_stored
from ckdn.documents.textcap import inert
from ckdn.errors import UsageError
from ckdn.process import stop_left_running
from ckdn.reconcile import PASS, SKIPPED
from ckdn.redact import Redaction

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from ckdn.config import Config
    from ckdn.documents.types import Digest, Document

__all__ = ["headline", "list_runs", "prune_runs", "read_run", "red_members", "shown_runs_dir"]


def read_run(config: Config, ref: str | None = None) -> Document:
    """The document of the run ``ref`` names (None: the latest); UsageError if unusable.

    Its strings are redacted again with today's ``[run].redact`` and environment, so a
    run stored before a rule existed is shown without its secrets (a note says what
    this pass took; a document redacted when it was written comes back unchanged).
    """
    store = store_for(config)
    doc = read_stored(store.resolve(ref), store.display)
    if not config.run.redact.enabled:
        return doc
    check = config.checks.get(str(doc.get("check", "")))
    env = {**os.environ, **check.env} if check is not None else None
    return redact_document(doc, Redaction(config.run.redact, env))  # type: ignore[return-value]


def list_runs(config: Config, limit: int = 10) -> list[dict[str, Any]]:
    """The ``limit`` newest runs, oldest to newest, as ``ckdn list --json`` lists them.

    Each row: ``run_id`` (the run dir's name), ``check`` (the check or alias),
    ``status`` (the document's; ``?`` for a run without one, ``corrupt`` for one
    that cannot be read: torn, planted, a symlink), ``rc`` when the document has
    one, ``run_dir`` (as digests show it), and ``kind`` (digest, aggregate,
    unfinished).
    """
    if limit < 1:
        raise UsageError(f"-n must be at least 1, not {limit}")
    store = store_for(config)
    rows: list[dict[str, Any]] = []
    for info in reversed(store.runs()[:limit]):
        row: dict[str, Any] = {"run_id": info.name, "check": info.check, "status": "?",
                               "run_dir": store.display(info.path), "kind": info.kind}
        if info.finished:
            try:
                doc: Mapping[str, Any] = read_stored(info.path, store.display)
            except UsageError:  # unreadable: listed as such, never guessed at
                doc = {"status": "corrupt"}
            row.update({k: doc[k] for k in ("status", "rc") if k in doc})
        rows.append(row)
    return rows


def shown_runs_dir(config: Config) -> str:
    """The runs dir as messages show it (relative to the project when inside it)."""
    store = store_for(config)
    return store.display(store.runs_dir)


def prune_runs(config: Config, keep: int | None = None, *, dry_run: bool = False) -> list[str]:
    """``ckdn gc``: keep ``keep`` (default ``[run].keep``) finished runs per check and alias,
    then apply ``[run].max_age_days`` and ``[run].max_bytes``; ``dry_run``: only say what
    would go.

    ``[run].keep = 0`` means never prune by count, so a plain ``ckdn gc`` removes only what
    the limits say; ``--keep 0`` is refused rather than read as "remove everything" or as
    "nothing".
    """
    if keep is not None and keep < 1:
        raise UsageError(f"--keep must be at least 1, not {keep}"
                         " ([run].keep = 0 means never prune)")
    run = config.run
    return store_for(config).gc(run.keep if keep is None else keep,
                                max_age_days=run.max_age_days, max_bytes=run.max_bytes,
                                dry_run=dry_run, stop_tree=stop_left_running)


def headline(doc: Document) -> str:
    """One inert line saying what is not green and where its evidence is (for host failure
    messages)."""
    if "alias" in doc:
        first = next((m for m in doc["members"] if m["status"] not in (PASS, SKIPPED)), None)
        where = (f"; first red member {first['check']} {first['status']} (rc {first.get('rc')}),"
                 f" evidence in {first.get('run_dir')}" if first else "; a member did not run")
        line = f"{doc['alias']} {doc['status']} (rc {doc['rc']}){where}"
    else:
        reason = f": {doc['status_reason']}" if doc.get("status_reason") else ""
        rc = "imported" if doc["rc"] is None else f"rc {doc['rc']}"
        line = (f"{doc['check']} {doc['status']} ({rc}){reason};"
                f" evidence in {doc['run_dir']}")
    return inert(line)


def red_members(config: Config, doc: Document) -> Iterator[tuple[str, Digest | None]]:
    """``(run_dir, digest)`` of each non-green member of an aggregate, in member order.

    The aggregate only routes; hosts show these member digests, which are what a
    reader acts on. ``None`` when a member's digest is missing or unreadable (or
    its run dir is not one of the runs dir: a stored aggregate is never followed
    out of it).
    """
    if "alias" not in doc:
        return
    store = store_for(config)
    for entry in doc["members"]:
        if entry["status"] in (PASS, SKIPPED) or "run_dir" not in entry:
            continue
        run_dir = entry["run_dir"]
        try:
            member = read_stored(store.resolve(run_dir), store.display)
        except UsageError:
            member = None
        yield run_dir, member if member is not None and "check" in member else None
