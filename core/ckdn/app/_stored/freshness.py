"""``ckdn status``: does each check's latest run still hold for the tree as it is now? Fresh
(the tree it recorded is the tree now), stale (files changed since: named), missing (never run),
unknown (no git: never called fresh); and whether a green run was weaker than the one before.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from ckdn.app._running.run_facts import (
    SCHEMA_SOURCE,
    SOURCE_FILE,
    SourceState,
    SourceWatch,
    in_repository,
    read_facts,
    settings_hash,
)
from ckdn.app._running.steps import run_check, store_for
from ckdn.config import HOST_SEPARATOR
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError, quote
from ckdn.evidence_files import read_regular
from ckdn.reconcile import PASS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from ckdn.config import Check, Config
    from ckdn.store import RunInfo

    #: (old commit, new commit) -> path -> (its blob in old, in new); None: not comparable.
    Between = Callable[[str | None, str | None],
                       Mapping[str, tuple[str | None, str | None]] | None]

__all__ = ["FRESH", "MISSING", "SCHEMA_STATUS", "STALE", "STATES", "UNKNOWN", "changed_paths",
           "read_source", "read_source_state", "render_status", "status", "tree_now"]

#: How a merged run's facts.json names its command (:mod:`ckdn.app._shards.merge`).
_MERGE_COMMAND = "ckdn merge "

SCHEMA_STATUS = "ckdn.status/1"
FRESH, STALE, MISSING, UNKNOWN = "fresh", "stale", "missing", "unknown"
STATES = (FRESH, STALE, MISSING, UNKNOWN)
#: Changed files a stale check names; the rest are counted.
MAX_CHANGED = 10
_MAX_SOURCE = 1 << 22  # a source.json larger than this is not one ckdn wrote
_OLD_SCHEMA = "ckdn.source/1"  # a tree hash alone (test checks, before ckdn status)
_GIT_TIMEOUT = 10.0


def read_source(run_dir: str) -> SourceState | None:
    """The tree a run recorded (``source.json``, ``ckdn.source/2``); None for none or another."""
    doc = _source_doc(run_dir)
    if doc is None or doc.get("schema") != SCHEMA_SOURCE:
        return None
    paths = doc.get("paths")
    head, branch, omitted = doc.get("head"), doc.get("branch"), doc.get("paths_omitted", 0)
    if (not isinstance(paths, dict) or not isinstance(omitted, int)
            or not all(isinstance(v, str) or v is None for v in (head, branch))):
        return None
    kept: dict[str, tuple[str | None, str | None]] = {}
    for path, pair in paths.items():
        if not (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, str) or v is None for v in pair)):
            return None
        kept[path] = (pair[0], pair[1])
    return SourceState(head, branch, kept, omitted, str(doc["tree"]))


def read_source_state(run_dir: str) -> str | None:
    """The tree's hash a run recorded, either version; None for none or a bad file."""
    doc = _source_doc(run_dir)
    if doc is None or doc.get("schema") not in (SCHEMA_SOURCE, _OLD_SCHEMA):
        return None
    return str(doc["tree"])


def _source_doc(run_dir: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(read_regular(os.path.join(run_dir, SOURCE_FILE), _MAX_SOURCE))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    tree = doc.get("tree")
    return doc if isinstance(tree, str) and len(tree) == 64 else None


def tree_now(cwd: str) -> tuple[SourceState | None, str]:
    """The tree's state now, or None and why not."""
    if not in_repository(cwd):
        return None, "no git repository"
    with tempfile.TemporaryDirectory(prefix="ckdn-status-") as spool:
        state = SourceWatch(cwd, spool).result()
    return state, "" if state is not None else "git could not say what the tree is"


def commit_diff(cwd: str) -> Between:
    """What differs between two commits, from one ``git diff --raw`` each pair (cached)."""
    seen: dict[tuple[str | None, str | None],
               Mapping[str, tuple[str | None, str | None]] | None] = {}

    def between(old: str | None, new: str | None
                ) -> Mapping[str, tuple[str | None, str | None]] | None:
        if (old, new) not in seen:
            seen[old, new] = _git_diff(cwd, old, new)
        return seen[old, new]

    return between


def _git_diff(cwd: str, old: str | None, new: str | None
              ) -> dict[str, tuple[str | None, str | None]] | None:
    if old is None or new is None:
        return None
    try:
        out = subprocess.run(["git", "-C", cwd, "diff", "--raw", "-z", "--no-renames",
                              "--no-abbrev", "--no-ext-diff", old, new],
                             capture_output=True, timeout=_GIT_TIMEOUT, check=False,
                             env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    fields = out.stdout.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, tuple[str | None, str | None]] = {}
    for meta, path in zip(fields[::2], fields[1::2], strict=False):
        parts = meta.split(" ")
        if len(parts) >= 5 and meta.startswith(":"):
            found[path] = (_blob(parts[2]), _blob(parts[3]))
    return found


def _blob(oid: str) -> str | None:
    return None if set(oid) <= {"0"} else oid


_SAME = object()  # a path clean on both sides that the commits do not differ in


def changed_paths(then: SourceState, now: SourceState,
                  between: Between) -> tuple[list[str], bool] | None:
    """The files whose content differs between the tree a run saw and the tree now, sorted,
    and whether that list is complete; None when it cannot be told (the commits unknown)."""
    if then.tree == now.tree:
        return [], True
    commits: Mapping[str, tuple[str | None, str | None]] = {}
    if then.head != now.head:
        found = between(then.head, now.head)
        if found is None:
            return None
        commits = found

    def at_head(p: str, side: int) -> object:
        if p in commits:
            return commits[p][side]
        for state in (then, now):  # not in the commits' diff: the same blob at both heads
            if p in state.paths:
                return state.paths[p][1]
        return _SAME

    changed = []
    for p in sorted({*then.paths, *now.paths, *commits}):
        before = then.paths[p][0] if p in then.paths else at_head(p, 0)
        after = now.paths[p][0] if p in now.paths else at_head(p, 1)
        if before is not _SAME and before != after:
            changed.append(p)
    return changed, not (then.omitted or now.omitted)


def _targets(config: Config, names: Sequence[str] | None) -> list[Check]:
    """The checks asked about (aliases expanded, in order, once each): by default
    ``[run].required``, else every atomic check."""
    wanted = list(names) if names else list(config.run.required or config.checks)
    chosen: dict[str, Check] = {}
    for name in wanted:
        alias = config.aliases.get(name)
        members = alias.members if alias is not None else (name,)
        for member in members:
            check = config.checks.get(member)
            if check is None:
                config.get(member)  # a name nothing defines: refused with the nearest names
                # an alias among an alias's members: aliases do not nest, as `ckdn run` says
                raise UsageError(f"unknown check {quote(member)}; `ckdn checks` lists them")
            chosen.setdefault(member, check)
    if not chosen:
        where = os.path.basename(config.path) if config.path else "the configuration"
        raise UsageError(f"{where} defines no checks; add a [check.NAME] table")
    return list(chosen.values())


def status(config: Config, names: Sequence[str] | None = None, *,
           accept_weakened: bool = False, run: bool = False) -> dict[str, Any]:
    """The ``ckdn.status/1`` document of the named checks (default: ``[run].required``, else
    every atomic check); ``run``: rerun those that are stale or missing first."""
    checks = _targets(config, names)
    doc = _status(config, checks, accept_weakened)
    if not run:
        return doc
    rerun = [entry["check"] for entry in doc["checks"] if entry["state"] in (STALE, MISSING)]
    for name in rerun:
        run_check(config, config.checks[name])
    doc = _status(config, checks, accept_weakened)
    doc["ran"] = rerun
    return doc


def _status(config: Config, checks: Iterable[Check], accept_weakened: bool) -> dict[str, Any]:
    store = store_for(config)
    latest: dict[str, RunInfo] = {}
    for info in store.runs():
        if info.finished and info.kind == "digest":
            latest.setdefault(info.check, info)
    now, why_not = tree_now(config.cwd)
    between = commit_diff(config.cwd)
    entries = [_entry(check, latest.get(check.name), now=now, why_not=why_not, between=between,
                      shown=store.display, accept_weakened=accept_weakened) for check in checks]
    for entry in entries:
        if entry["state"] == MISSING:
            hosted = sorted(name for name in latest
                            if name.startswith(entry["check"] + HOST_SEPARATOR))
            if hosted:  # tox envs and nox sessions record CHECK@ENV: another check's runs
                entry["reason"] = (f"only host runs as {', '.join(hosted[:3])}"
                                   + (f" (+{len(hosted) - 3} more)" if len(hosted) > 3 else "")
                                   + f"; `ckdn run {entry['check']}` records its own")
    not_green = [e for e in entries if not e["green"]]
    return {"schema": SCHEMA_STATUS, "verdict": "not_green" if not_green else "green",
            "counts": {state: sum(e["state"] == state for e in entries) for state in STATES},
            "checks": entries}


def _entry(check: Check, info: RunInfo | None, *, now: SourceState | None, why_not: str,
           between: Between, shown: Callable[[str], str], accept_weakened: bool
           ) -> dict[str, Any]:
    entry: dict[str, Any] = {"check": check.name}
    if info is None:
        return {**entry, "state": MISSING, "green": False}
    entry["run_id"], entry["run_dir"] = info.name, shown(info.path)
    try:
        digest = read_stored(info.path, shown)
    except UsageError as exc:
        return {**entry, "state": UNKNOWN, "green": False, "reason": str(exc)}
    entry["status"] = str(digest.get("status", "?"))
    facts = read_facts(info.path)
    entry.update(_freshness(check, info.path, facts, now=now, why_not=why_not, between=between))
    if facts is not None and isinstance(facts.get("weakened"), list):
        entry["weakened"] = [str(p) for p in facts["weakened"]][:MAX_CHANGED]
    entry["green"] = (entry["state"] == FRESH and entry["status"] == PASS
                      and (accept_weakened or "weakened" not in entry))
    return entry


def _freshness(check: Check, run_dir: str, facts: Mapping[str, Any] | None, *,
               now: SourceState | None, why_not: str, between: Between) -> dict[str, Any]:
    if facts is not None and facts.get("settings") != settings_hash(check):
        if str(facts.get("command", "")).startswith(_MERGE_COMMAND):
            return {"state": STALE, "reason": "a merge of shards (ckdn merge) records neither "
                    "the settings nor the source tree its shards ran with, so it never vouches"
                    f" for the tree as it is now; `ckdn run {check.name}` records a run that "
                    "does"}
        return {"state": STALE, "reason": "the run used other settings or arguments than the "
                                          "check has now"}
    if not check.reads_files:
        return {"state": FRESH, "reason": "the check reads no files (reads_files = false)"}
    if now is None:
        return {"state": UNKNOWN, "reason": why_not}
    then = read_source(run_dir)
    if then is None:
        return {"state": UNKNOWN, "reason": "the run recorded no source state (no git then, "
                                            "or an older ckdn)"}
    compared = changed_paths(then, now, between)
    if compared is None:
        return {"state": STALE, "reason": f"the commit changed from {(then.head or '')[:12]}, "
                                          "which git cannot compare with now"}
    changed, complete = compared
    if not changed and complete:  # the same content, under another commit perhaps
        return {"state": FRESH}
    out: dict[str, Any] = {"state": STALE, "changed": changed[:MAX_CHANGED],
                           "changed_total": len(changed)}
    reasons = [] if complete else ["more files changed than the run recorded one by one"]
    appeared = sum(1 for p in changed if p not in then.paths and _untracked(now, p))
    if appeared:
        reasons.append(f"{'all' if appeared == len(changed) else appeared} of them untracked"
                       " and not ignored, new since the run: if a check writes them (its"
                       " tests' temporary files, a report), ignore them in .gitignore or"
                       " write them into {run_dir}")
    if reasons:
        out["reason"] = "; ".join(reasons)
    if not changed:
        del out["changed"]
    return out


def _untracked(state: SourceState, path: str) -> bool:
    """Whether ``path`` is a file in the work tree that ``HEAD`` does not have."""
    blobs = state.paths.get(path)
    return blobs is not None and blobs[0] is not None and blobs[1] is None


def render_status(doc: Mapping[str, Any]) -> str:
    """One line per check and one verdict, as ``ckdn status`` prints them."""
    lines = []
    for e in doc["checks"]:
        parts = [e["check"], e["state"], e.get("status", "-")]
        if "changed" in e:
            more = e["changed_total"] - len(e["changed"])
            parts.append(f"{e['changed_total']} file(s) changed: " + ", ".join(e["changed"])
                         + (f" (+{more} more)" if more else "")
                         + (f" ({e['reason']})" if "reason" in e else ""))
        elif "reason" in e and e["state"] != FRESH:
            parts.append(e["reason"])
        if "weakened" in e:
            parts.append("weakened: " + "; ".join(e["weakened"]))
        lines.append("\t".join(parts))
    bad = [f"{e['check']} {_why(e)}" for e in doc["checks"] if not e["green"]]
    lines.append("green: every check is a fresh pass" if not bad
                 else "not green: " + ", ".join(bad))
    return "\n".join(lines)


def _why(entry: Mapping[str, Any]) -> str:
    if entry["state"] != FRESH:
        return str(entry["state"])
    if entry.get("status") != PASS:
        return str(entry.get("status"))
    return "weakened"
