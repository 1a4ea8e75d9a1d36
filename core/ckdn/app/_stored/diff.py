"""``ckdn diff A B``: two stored runs of one check compared by fingerprint, into new, fixed,
unchanged and moved findings (``ckdn.diff/1``, bounded whatever the runs hold).
"""

from __future__ import annotations

import os
import re

from ckdn.app._running.steps import store_for
from ckdn.app._stored.freshness import read_source_state
from ckdn.app._stored.outcomes import run_outcomes
from ckdn.config import HOST_SEPARATOR
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError, quote
from ckdn.identity import FINDINGS_FILE, read_findings, retried_head, split_location
from ckdn.identity.diff import compare_tests, pair
from ckdn.identity.renames import git_renames
from ckdn.parsers import TEST_PARSERS
from ckdn.redact import Redaction

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from ckdn.config import Config
    from ckdn.identity import FindingRow
    from ckdn.store import Store

__all__ = ["SCHEMA_DIFF", "classify", "diff_runs", "render_diff"]

SCHEMA_DIFF = "ckdn.diff/1"
#: Characters of a message the document shows.
MESSAGE_CHARS = 300
_PREVIOUS = re.compile(r"-([1-9]\d{0,5})")
CLASSES = ("new", "fixed", "moved", "unchanged")


def diff_runs(config: Config, a_ref: str, b_ref: str) -> dict[str, Any]:
    """The ``ckdn.diff/1`` document of runs ``a_ref`` (earlier) and ``b_ref`` (later)."""
    store = store_for(config)
    if _PREVIOUS.fullmatch(b_ref):
        raise UsageError(f"B {quote(b_ref)}: -N names a run before B; name B itself "
                         "(a run dir from `ckdn list`, or latest)")
    b_path = store.resolve(b_ref)
    b_doc = _digest(store, b_path)
    check = b_doc["check"]
    previous = _PREVIOUS.fullmatch(a_ref)
    a_path = _before(store, b_path, check, int(previous[1])) if previous \
        else store.resolve(a_ref)
    a_doc = _digest(store, a_path)
    if a_doc["check"] != check:
        check = _one_check(store, (a_path, a_doc["check"]), (b_path, check))
    before, after = _rows(store, a_path, a_doc), _rows(store, b_path, b_doc)
    top = config.run.top
    counts, lists = classify(before, after, top, config.cwd)
    if config.run.redact.enabled:  # a run's findings file from before redaction shows none

        redaction = Redaction(config.run.redact)
        for entry in (entry for listed in lists.values() for entry in listed):
            entry["message"] = redaction.text(entry["message"])
    sides = [_side(store, path, doc) for path, doc in ((a_path, a_doc), (b_path, b_doc))]
    if a_doc["check"] != b_doc["check"]:  # one check in two envs: each side says which
        for side, ran in zip(sides, (a_doc, b_doc), strict=True):
            side["check"] = ran["check"]
    doc = {"schema": SCHEMA_DIFF, "check": check, "a": sides[0], "b": sides[1],
           "counts": counts, "top": top, **lists}
    tests = _tests(config, (a_path, a_doc), (b_path, b_doc), top)
    if tests is not None:
        doc["tests"] = tests
    return doc


def _one_check(store: Store, a: tuple[str, str], b: tuple[str, str]) -> str:
    """The check two differently named runs are runs of: ``NAME`` and ``NAME@ENV`` (a tox
    env's or nox session's), or two envs of it; a UsageError for two checks."""
    bases = {name.partition(HOST_SEPARATOR)[0] for _path, name in (a, b)}
    if len(bases) == 1:
        return bases.pop()
    (a_path, a_check), (b_path, b_check) = a, b
    raise UsageError(f"{store.display(a_path)} is a run of {quote(a_check)} and "
                     f"{store.display(b_path)} of {quote(b_check)}; ckdn diff compares two "
                     f"runs of one check (in one env or two: NAME@ENV); to compare B with its "
                     f"check's run before it: ckdn diff -1 {os.path.basename(b_path)}")


def _tests(config: Config, a: tuple[str, dict[str, Any]], b: tuple[str, dict[str, Any]],
           top: int) -> dict[str, Any] | None:
    """Tests compared by node id (:mod:`ckdn.app._stored.outcomes`): for a run that recorded every
    test's outcome, or a check of a test parser; ``None`` for any other check. Runs in two
    envs are never flaky: what changed their outcome may be the env."""
    check = b[1]["check"]
    before, after = (run_outcomes(config, doc["check"], path, doc["rc"]) for path, doc in (a, b))
    if before is None and after is None:
        configured = config.check_of_run(check)
        if configured is None or configured.parser not in TEST_PARSERS:
            return None
    if before is None or after is None:
        which = " and ".join(label for label, side in (("A", before), ("B", after))
                             if side is None)
        return {"compared": False, "reason": f"{which}: no record of every test's outcome "
                                             "(a JUnit report in the run dir, or tests.jsonl)"}
    states = [read_source_state(path) for path, _doc in (a, b)]
    same = states[0] is not None and states[0] == states[1]
    one_env = a[1]["check"] == check
    counts, lists = compare_tests(before, after, same_source=same and one_env, top=top)
    return {"compared": True, "same_source": same, "counts": counts, **lists}


def classify(before: Sequence[FindingRow], after: Sequence[FindingRow],
             top: int, cwd: str | None = None
             ) -> tuple[dict[str, int], dict[str, list[dict[str, str]]]]:
    """The count of each class, and its first ``top`` findings as the document shows them;
    ``cwd``: the project, whose git renames pair a finding of a moved file."""
    paired = pair([row.fingerprint for row in before], [row.fingerprint for row in after],
                  _retry(after, cwd) if cwd is not None else None)
    lists: dict[str, list[dict[str, str]]] = {name: [] for name in CLASSES}
    counts = dict.fromkeys(CLASSES, 0)
    taken = bytearray(len(before))
    for row, index in zip(after, paired, strict=True):
        name = "new"
        if index >= 0:
            taken[index] = 1
            was = before[index].location
            name = "unchanged" if was == row.location else "moved"
        counts[name] += 1
        if len(lists[name]) < top:
            shown = _shown(row)
            if name == "moved":
                shown["was"] = (was or "")[:MESSAGE_CHARS]
            lists[name].append(shown)
    for row, done in zip(before, taken, strict=True):
        if not done:
            counts["fixed"] += 1
            if len(lists["fixed"]) < top:
                lists["fixed"].append(_shown(row))
    return counts, lists


def _retry(after: Sequence[FindingRow], cwd: str) -> Callable[[int], list[str]]:
    """``pair``'s rename pass: the heads a later finding would have had under the old paths
    of its file, from its ``line_hash`` (a row without one is not retried). git is asked
    at the first finding left unpaired, once."""
    renames: list[Mapping[str, Sequence[str]]] = []

    def retry(index: int) -> list[str]:
        row = after[index]
        if not row.line_hash:
            return []
        if not renames:
            renames.append(git_renames(cwd))
        path = split_location(row.location)[0]
        return [retried_head(row.line_hash, old, row.fingerprint)
                for old in renames[0].get(path, ())]

    return retry


def _digest(store: Store, path: str) -> dict[str, Any]:
    doc: dict[str, Any] = dict(read_stored(path, store.display))
    if "check" not in doc:
        raise UsageError(f"{store.display(path)} is an alias run ({doc.get('alias')}); "
                         "ckdn diff compares two runs of one check: name a member's run")
    return doc


def _before(store: Store, b_path: str, check: str, n: int) -> str:
    """The run ``n`` runs before ``b_path`` among ``check``'s stored runs."""
    names = store.run_names(check)  # newest first
    name = os.path.basename(b_path)
    where = names.index(name) if name in names else -1
    if where < 0 or where + n >= len(names):
        have = len(names) - 1 - where if where >= 0 else 0
        raise UsageError(f"-{n}: {store.display(b_path)} has {have} earlier run(s) of "
                         f"{quote(check)} stored; `ckdn list` shows them")
    return os.path.join(store.runs_dir, names[where + n])


def _rows(store: Store, path: str, doc: dict[str, Any]) -> list[FindingRow]:
    total = doc.get("findings_total", 0)
    if not isinstance(total, int) or total <= 0:
        return []
    file = os.path.join(path, FINDINGS_FILE)
    shown = store.display(file)
    if not os.path.lexists(file):
        raise UsageError(f"{store.display(path)} has {total} finding(s) but no {FINDINGS_FILE} "
                         "(a run from before ckdn recorded them, or a run whose findings "
                         "could not all be read again); run the check again to compare it")
    rows = read_findings(file, shown, doc["check"])
    if len(rows) != total:
        raise UsageError(f"{shown} holds {len(rows)} finding(s), its digest counts {total}; "
                         "not this run's findings")
    return rows


def _side(store: Store, path: str, doc: dict[str, Any]) -> dict[str, Any]:
    return {"run_dir": store.display(path), "status": doc["status"],
            "findings_total": doc.get("findings_total", 0)}


def _shown(row: FindingRow) -> dict[str, str]:
    shown = row.as_json()
    for key in ("id", "kind", "location"):
        if key in shown:
            shown[key] = shown[key][:MESSAGE_CHARS]
    shown["message"] = row.message[:MESSAGE_CHARS]
    return shown


def render_diff(doc: Mapping[str, Any]) -> str:
    """The short text form: a headline of counts, then the listed findings of each class."""
    counts = doc["counts"]
    envs = f" ({doc['a']['check']} -> {doc['b']['check']})" if "check" in doc["a"] else ""
    lines = [f"{doc['check']}{envs}: {counts['new']} new, {counts['fixed']} fixed, "
             f"{counts['moved']} moved, {counts['unchanged']} unchanged "
             f"({doc['a']['run_dir']} -> {doc['b']['run_dir']})"]
    for name in ("new", "fixed", "moved"):
        for entry in doc[name]:
            where = entry.get("location") or entry["id"]
            if name == "moved":
                where = f"{entry['was']} -> {where}"
            lines.append(f"{name:5}  {where}  {entry['message']}")
        more = counts[name] - len(doc[name])
        if more > 0:
            lines.append(f"{name:5}  ... and {more} more")
    tests = doc.get("tests")
    if tests is not None:
        lines.extend(_render_tests(tests, two_envs=bool(envs)))
    return "\n".join(lines)


def _render_tests(tests: dict[str, Any], *, two_envs: bool) -> list[str]:
    if not tests["compared"]:
        return [f"tests: not compared ({tests['reason']})"]
    counts = tests["counts"]
    if two_envs:
        tree = ("the same source tree" if tests["same_source"] else "another source tree"
                ) + ", two envs: no change is called flaky"
    else:
        tree = ("the same source tree" if tests["same_source"] else
                "not known to be the same source tree: no change is called flaky")
    lines = [f"tests: {counts['newly_failing']} newly failing, {counts['fixed']} fixed, "
             f"{counts['still_failing']} still failing, {counts['flaky']} flaky ({tree})"]
    for name in ("newly_failing", "fixed", "flaky"):
        label = name.replace("_", " ")
        for entry in tests[name]:
            lines.append(f"{label}  {entry['id']}  {entry.get('a', 'absent')} -> {entry['b']}")
        more = counts[name] - len(tests[name])
        if more > 0:
            lines.append(f"{label}  ... and {more} more")
    return lines
