"""The door for questions: a project's stored runs, its checks, what they need.

The CLI's ``list``, ``show``, ``diff``, ``checks``, ``gc``, ``init`` and ``schema``, the MCP
server's tools, and the nox and tox integrations (which install a check's
``requires`` and show the red members of an alias) ask the same questions; the
answers are computed here once. Nothing here runs a check, and ``ckdn run``
never imports this module.
"""

from __future__ import annotations

import os

from ckdn.app._evidence import MAX_LIMIT, read_document, read_window, run_id
from ckdn.app._locating import CWD_ENV, locate_config, locate_cwd, resolution_order
from ckdn.app._pipeline import store_for
from ckdn.app._setup import SKILLS, names_checkdown, this_checkdown, write_skills, write_starter
from ckdn.app._watching import Progress, RunWatch
from ckdn.config import Alias
from ckdn.documents.render import render
from ckdn.documents.stored import read_stored
from ckdn.documents.textcap import inert
from ckdn.errors import UsageError
from ckdn.process import stop_left_running
from ckdn.reconcile import PASS, SKIPPED
from ckdn.schema import load_schema, schema_ids

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from typing import Any

    from ckdn.config import Check, Config
    from ckdn.documents.types import Digest, Document

__all__ = [
    "ANNOTATE_FORMATS",
    "CWD_ENV",
    "MAX_LIMIT",
    "PLUGIN_FLAG",
    "SKILLS",
    "Progress",
    "RunWatch",
    "annotate",
    "checks_of",
    "describe_checks",
    "diff_runs",
    "headline",
    "inert",
    "list_runs",
    "load_schema",
    "locate_config",
    "locate_cwd",
    "lock_config",
    "prune_runs",
    "read_document",
    "read_run",
    "read_window",
    "red_members",
    "render",
    "render_diff",
    "report_text",
    "requirements",
    "resolution_order",
    "run_id",
    "schema_ids",
    "shown_runs_dir",
    "this_checkdown",
    "verify_config",
    "write_skills",
    "write_starter",
]


def _formats() -> tuple[str, ...]:
    from ckdn.reports import FORMATS

    return tuple(FORMATS)


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
    from ckdn.documents.redacting import redact_document
    from ckdn.redact import Redaction

    check = config.checks.get(str(doc.get("check", "")))
    env = {**os.environ, **check.env} if check is not None else None
    return redact_document(doc, Redaction(config.run.redact, env))  # type: ignore[return-value]


#: The views ``ckdn annotate --format`` knows (:mod:`ckdn.reports`).
ANNOTATE_FORMATS: tuple[str, ...] = _formats()


def annotate(config: Config, ref: str | None, fmt: str, *, color: bool = False) -> str:
    """``ckdn annotate [RUN] --format FMT``: a stored run (an aggregate: with its members)
    as text, GitHub workflow commands, a step summary, SARIF or GitLab Code Quality; runs
    nothing (:mod:`ckdn.app._annotating`)."""
    from ckdn.app._annotating import annotate as project  # lazy: only `annotate` asks

    return project(config, ref, fmt, color=color)


def report_text(config: Config, doc: Mapping[str, Any], *, color: bool = False) -> str:
    """The text view of a document in hand (``ckdn run --format text``, ``ckdn show`` on a
    terminal); an aggregate's red members are read from the store."""
    from ckdn.app._annotating import render_report, report_of

    return render_report(report_of(config, doc), "text", color=color)


def diff_runs(config: Config, a: str, b: str) -> dict[str, Any]:
    """``ckdn diff A B``: the ``ckdn.diff/1`` document of two runs of one check
    (:mod:`ckdn.app._diffing`); ``a`` may be ``-N``, the N-th run of B's check before B."""
    from ckdn.app._diffing import diff_runs as compare  # lazy: only `ckdn diff` asks

    return compare(config, a, b)


def render_diff(doc: Mapping[str, Any]) -> str:
    """The short text summary of a ``ckdn.diff/1`` document."""
    from ckdn.app._diffing import render_diff as text

    return text(dict(doc))


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


def lock_config(config: Config, output: str | None = None) -> str:
    """``ckdn lock-config``: write ``ckdn.lock.toml`` (:mod:`ckdn.app._locking`); its path."""
    from ckdn.app._locking import write_lock

    return write_lock(config, output)


def verify_config(config: Config, *, locked: bool = False) -> dict[str, Any]:
    """``ckdn verify-config``: the config against its lock file (``--json``'s shape,
    docs/cli.md): ``ok``, the lock's path (None: no lock file), ``changed`` / ``missing`` /
    ``extra`` and their lines. Without a lock file it is ok unless ``locked`` asks for one."""
    import os

    from ckdn.app._locking import lock_path, verify

    path = lock_path(config)
    shown = store_for(config).display(path)
    if not os.path.exists(path):
        line = f"no lock file {shown}; `ckdn lock-config` writes one"
        return {"ok": not locked, "lock": None, "changed": [], "missing": [], "extra": [],
                "lines": [line]}
    differences = verify(config)
    return {"ok": not differences, "lock": shown, **differences.as_json(),
            "lines": differences.lines() or [f"ok: the config matches {shown}"]}


def describe_checks(config: Config) -> list[dict[str, Any]]:
    """Every check and alias, sorted by name, as ``ckdn checks --json`` lists them.

    An atomic check: ``name``, ``kind: "atomic"``, ``parser``, ``command`` (as
    configured: the string, or the array), ``timeout`` and ``options`` (its parser
    options) when set, plus ``description`` and ``requires``. An alias: ``name``,
    ``kind: "alias"``, ``members``, ``fail_fast``, ``description``. The values of a
    check's ``env`` are never shown: they may be secrets. Neither are the secret-looking
    values of a command (``--token=...``, a URL's password, a provider's token: the rules
    of ``[run].redact``, :mod:`ckdn.redact`): a command with one is shown re-joined from
    its redacted arguments.
    """
    rows: list[dict[str, Any]] = []
    for check in config.checks.values():
        row: dict[str, Any] = {"name": check.name, "kind": "atomic", "parser": check.parser,
                               "command": _shown_command(config, check)}
        if check.timeout is not None:
            row["timeout"] = check.timeout
        if check.options:
            row["options"] = dict(check.options)
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
    return sorted(rows, key=lambda row: str(row["name"]))


def _shown_command(config: Config, check: Check) -> str | list[str]:
    """A check's command as configured, unless a value in it looks secret."""
    from ckdn.redact import Redaction

    redaction = Redaction(config.run.redact, {**os.environ, **check.env})
    shown = redaction.argv(check.argv)
    if shown == list(check.argv):
        return check.command if isinstance(check.command, str) else list(check.command)
    if isinstance(check.command, str):
        import shlex

        return shlex.join(shown)
    return shown


def checks_of(config: Config, name: str) -> list[Check]:
    """The atomic checks ``name`` stands for: itself, or an alias's members in order."""
    target = config.get(name)
    if isinstance(target, Alias):
        return [config.checks[member] for member in target.members]
    return [target]


#: A check whose command has this word runs ckdn's pytest plugin inside the env.
PLUGIN_FLAG = "--ckdn-digest"


def requirements(config: Config, names: Iterable[str], *, have: Iterable[str] = ()) -> list[str]:
    """The ``requires`` of these checks and aliases' members, in order, each once.

    A check whose command uses ``--ckdn-digest`` needs ckdn's pytest plugin where
    pytest runs (a tox env or nox session without it exits 4, "unrecognized
    arguments"), so the checkdown that is running is added (:func:`this_checkdown`)
    unless a ``requires`` or ``have`` (what the host installs anyway: a tox env's
    ``deps``) already names checkdown.
    """
    found: dict[str, None] = {}
    plugin = False
    for name in names:
        for check in checks_of(config, name):
            found.update(dict.fromkeys(check.requires))
            plugin = plugin or PLUGIN_FLAG in check.argv
    wanted = list(found)
    if plugin and not any(names_checkdown(req) for req in (*wanted, *have)):
        ours = this_checkdown()
        if ours is not None:
            wanted.append(ours)
    return wanted


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
