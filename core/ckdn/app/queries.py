"""The door for questions: a project's stored runs, its checks, what they need.

The CLI's ``list``, ``show``, ``checks``, ``gc``, ``init`` and ``schema``, the MCP
server's tools, and the nox and tox integrations (which install a check's
``requires`` and show the red members of an alias) ask the same questions; the
answers are computed here once. Nothing here runs a check, and ``ckdn run``
never imports this module.
"""

from __future__ import annotations

import os

from ckdn.app._pipeline import store_for
from ckdn.config import Alias
from ckdn.documents.render import render
from ckdn.documents.stored import read_stored
from ckdn.documents.textcap import inert
from ckdn.errors import UsageError
from ckdn.reconcile import PASS, SKIPPED
from ckdn.schema import load_schema, schema_ids

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from typing import Any

    from ckdn.config import Check, Config
    from ckdn.documents.types import Digest, Document

__all__ = [
    "checks_of",
    "describe_checks",
    "headline",
    "inert",
    "list_runs",
    "load_schema",
    "prune_runs",
    "read_run",
    "red_members",
    "render",
    "requirements",
    "schema_ids",
    "shown_runs_dir",
    "write_starter",
]


def read_run(config: Config, ref: str | None = None) -> Document:
    """The document of the run ``ref`` names (None: the latest); UsageError if unusable."""
    store = store_for(config)
    return read_stored(store.resolve(ref), store.display)


def list_runs(config: Config, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` newest runs, newest first: run dir, check, kind, and status/rc if finished
    (``corrupt`` for a finished run whose document cannot be read: torn, planted, a symlink)."""
    if limit < 1:
        raise UsageError(f"-n must be at least 1, not {limit}")
    store = store_for(config)
    rows: list[dict[str, Any]] = []
    for info in store.runs()[:limit]:
        row: dict[str, Any] = {"run_dir": store.display(info.path), "check": info.check,
                               "kind": info.kind}
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


def prune_runs(config: Config, keep: int | None = None) -> list[str]:
    """``ckdn gc``: keep ``keep`` (default ``[run].keep``) finished runs per check and alias."""
    keep = config.run.keep if keep is None else keep
    if keep < 1:
        raise UsageError(f"--keep must be at least 1, not {keep}")
    return store_for(config).gc(keep)


def describe_checks(config: Config) -> list[dict[str, Any]]:
    """Every atomic check, then every alias, as ``ckdn checks --json`` lists them."""
    rows: list[dict[str, Any]] = []
    for check in config.checks.values():
        row: dict[str, Any] = {"name": check.name, "kind": "check", "parser": check.parser,
                               "argv": list(check.argv)}
        if check.timeout is not None:
            row["timeout"] = check.timeout
        if check.description:
            row["description"] = check.description
        if check.requires:
            row["requires"] = list(check.requires)
        rows.append(row)
    for alias in config.aliases.values():
        row = {"name": alias.name, "kind": "alias", "members": list(alias.members),
               "fail_fast": alias.fail_fast}
        if alias.description:
            row["description"] = alias.description
        rows.append(row)
    return rows


def checks_of(config: Config, name: str) -> list[Check]:
    """The atomic checks ``name`` stands for: itself, or an alias's members in order."""
    target = config.get(name)
    if isinstance(target, Alias):
        return [config.checks[member] for member in target.members]
    return [target]


def requirements(config: Config, names: Iterable[str]) -> list[str]:
    """The ``requires`` of these checks and aliases' members, in order, each once."""
    found: dict[str, None] = {}
    for name in names:
        for check in checks_of(config, name):
            found.update(dict.fromkeys(check.requires))
    return list(found)


def write_starter(cwd: str, explicit: str | None = None, *, force: bool = False) -> str:
    """``ckdn init``: write the starter ``ckdn.toml`` where ``ckdn run`` would look; its path."""
    from ckdn.config import STARTER, config_path

    path = config_path(cwd, explicit)
    if os.path.exists(path) and not os.path.isfile(path):  # never replace a device or a FIFO
        raise UsageError(f"{path} exists and is not a regular file; name a ckdn.toml to write")
    if os.path.exists(path) and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    from ckdn.store import write_atomic

    try:  # atomically (a failed --force leaves no half config); a symlink's target is written
        write_atomic(os.path.realpath(path), STARTER.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


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
        line = (f"{doc['check']} {doc['status']} (rc {doc['rc']}){reason};"
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
