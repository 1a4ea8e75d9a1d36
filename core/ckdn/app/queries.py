"""The door for questions: a project's stored runs, its checks, what they need.

The CLI's ``list``, ``show``, ``diff``, ``checks``, ``gc``, ``init`` and ``schema``, the MCP
server's tools, and the nox and tox integrations (which install a check's
``requires`` and show the red members of an alias) ask the same questions; the
answers are computed here once. Nothing here runs a check, and ``ckdn run``
never imports this module.
"""

from __future__ import annotations

import os

from ckdn import DISTRIBUTION
from ckdn.app._evidence import MAX_LIMIT, read_document, read_window, run_id
from ckdn.app._locating import CWD_ENV, locate_config, locate_cwd, resolution_order
from ckdn.app._pipeline import store_for
from ckdn.app._watching import Progress, RunWatch
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
    """The document of the run ``ref`` names (None: the latest); UsageError if unusable."""
    store = store_for(config)
    return read_stored(store.resolve(ref), store.display)


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
                                dry_run=dry_run)


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
    check's ``env`` are never shown: they may be secrets.
    """
    rows: list[dict[str, Any]] = []
    for check in config.checks.values():
        row: dict[str, Any] = {"name": check.name, "kind": "atomic", "parser": check.parser,
                               "command": (check.command if isinstance(check.command, str)
                                           else list(check.command))}
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
    if plugin and not any(_names_checkdown(req) for req in (*wanted, *have)):
        ours = this_checkdown()
        if ours is not None:
            wanted.append(ours)
    return wanted


def _names_checkdown(requirement: str) -> bool:
    import re  # lazy: only hosts installing a check's requires ask

    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match is not None and re.sub(r"[-_.]+", "-", match[1]).lower() == DISTRIBUTION


def this_checkdown() -> str | None:
    """A requirement that installs this same checkdown elsewhere; None without its metadata.

    Installed from a directory, an archive or a VCS URL (pip's ``direct_url.json``,
    an editable checkout included), it is that URL; else the exact version, from
    the index it came from.
    """
    import json
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    url = direct.get("url") if isinstance(direct, dict) else None
    if not isinstance(url, str) or not url:
        return f"{DISTRIBUTION}=={dist.version}"
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        url = f"{vcs['vcs']}+{url}@{vcs['commit_id']}"
    return f"{DISTRIBUTION} @ {url}"


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


#: The agent skills ``ckdn init --skill DIR`` installs (packaged in ``ckdn/skills/``).
SKILLS = ("verified-fix-loop",)


def write_skills(directory: str, *, force: bool = False) -> list[str]:
    """``ckdn init --skill DIR``: each packaged skill as ``DIR/<name>/SKILL.md``; their paths.

    All or nothing: an existing file is refused (without ``force``) before any is written.
    """
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "skills")
    targets = [(os.path.join(here, name, "SKILL.md"), os.path.join(directory, name, "SKILL.md"))
               for name in SKILLS]
    for _source, target in targets:
        if os.path.lexists(target) and not (force and os.path.isfile(target)):
            raise UsageError(f"{target} already exists; pass --force to overwrite it"
                             if os.path.isfile(target) else
                             f"{target} exists and is not a regular file; remove it first")
    from ckdn.store import write_atomic

    written = []
    for source, target in targets:
        with open(source, "rb") as handle:
            body = handle.read()
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            write_atomic(os.path.realpath(target), body)
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
        written.append(target)
    return written


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
