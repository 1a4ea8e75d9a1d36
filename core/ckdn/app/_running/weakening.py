"""A green run with less to check than the last green run of its check on the same branch is
named: fewer tests, more skipped, a lower threshold, fewer files, another command. Each green
run leaves its few facts in ``facts.json``, so the next one compares without reading any log.
"""

from __future__ import annotations

import os

from ckdn._lite import canonical
from ckdn.errors import CkdnError
from ckdn.evidence_files import read_regular

try:  # json's own C scanner: importing json costs a tenth of a trivial run (its decoder)
    from _json import make_scanner as _c_scanner

    _make_scanner: Any = _c_scanner
except ImportError:  # pragma: no cover - CPython always has _json
    _make_scanner = None

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ckdn.config import Check
    from ckdn.store import Store

__all__ = ["FACTS_FILE", "MAX_NOTE", "SCHEMA_FACTS", "facts_of", "read_facts", "reference",
           "settings_hash", "weakened", "weakening_note"]

FACTS_FILE = "facts.json"
SCHEMA_FACTS = "ckdn.facts/1"
#: Counts in ``summary.counts`` that say how much a test run checked (more is stronger)...
_FEWER_IS_WEAKER = ("tests",)
#: ...and how much it left out (more is weaker).
_MORE_IS_WEAKER = ("skipped", "xfailed", "deselected")
#: Parsers whose ``summary.counts.files`` is the number of files checked (ruff's is not:
#: it counts files with findings).
_FILE_COUNTERS = ("mypy", "pyright")
#: A check's options that are thresholds: lower is weaker.
_THRESHOLDS = ("fail_under", "score_fail_under")
#: The note's length at most, and a command's within it.
MAX_NOTE = 600
_MAX_COMMAND = 120
_KEPT_COMMAND = 2000  # of the command in facts.json
#: Runs of the check looked at for its last green run on this branch, newest first.
_LOOKBACK = 50


def settings_hash(check: Check | None, extra_args: Sequence[str] = (),
                  argv: Sequence[str] = ()) -> str:
    """A hash of what decides what the check checks: its command as configured, parser,
    options, env (values hashed, never shown) and the extra arguments of this run."""
    value: Any = (["host", list(argv)] if check is None else
                  [list(check.argv), check.parser, dict(check.options), dict(check.env),
                   list(extra_args)])
    digest = _sha256()
    digest.update(canonical(value))
    return str(digest.hexdigest())


def _sha256() -> Any:
    for name in ("_sha2", "_sha256"):  # the builtin module: OpenSSL costs more to load
        try:
            return __import__(name).sha256()
        except ImportError:
            continue
    import hashlib  # here: a Python built without the builtin modules

    return hashlib.sha256()


def facts_of(*, check: str, parser: str, branch: str | None, settings: str,
             command: str, options: Mapping[str, Any], summary: Mapping[str, Any]
             ) -> dict[str, Any]:
    """``facts.json`` of a green run: how much it checked, and with what."""
    counts = summary.get("counts")
    counts = counts if isinstance(counts, dict) else {}
    measures = {key: counts[key] for key in (*_FEWER_IS_WEAKER, *_MORE_IS_WEAKER)
                if _is_count(counts.get(key))}
    if parser in _FILE_COUNTERS and _is_count(counts.get("files")):
        measures["files"] = counts["files"]
    thresholds = {key: options[key] for key in _THRESHOLDS
                  if isinstance(options.get(key), int | float)
                  and not isinstance(options.get(key), bool)}
    return {"schema": SCHEMA_FACTS, "check": check, "branch": branch, "settings": settings,
            "command": _cut(command, _KEPT_COMMAND), "measures": measures,
            "thresholds": thresholds}


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [+{len(text) - limit} chars]"


def weakened(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What ``now`` checks less than ``before`` did, one phrase each (empty: not weaker)."""
    said: list[str] = []
    was, has = _mapping(before.get("measures")), _mapping(now.get("measures"))
    for key in (*_FEWER_IS_WEAKER, "files"):
        if key in was and key not in has:
            said.append(f"no {_unit(key)} counted (it was {was[key]})")
        elif key in was and has[key] < was[key]:
            said.append(f"{was[key] - has[key]} fewer {_unit(key)} ({was[key]} -> {has[key]})")
    for key in _MORE_IS_WEAKER:
        if has.get(key, 0) > was.get(key, 0):
            said.append(f"{has[key] - was.get(key, 0)} more {key} "
                        f"({was.get(key, 0)} -> {has[key]})")
    was_t, has_t = _mapping(before.get("thresholds")), _mapping(now.get("thresholds"))
    for key in _THRESHOLDS:
        if key in was_t and key not in has_t:
            said.append(f"{key} removed (it was {was_t[key]:g})")
        elif key in was_t and has_t[key] < was_t[key]:
            said.append(f"{key} lowered ({was_t[key]:g} -> {has_t[key]:g})")
    if before.get("settings") != now.get("settings"):
        if before.get("command") != now.get("command"):
            was_c, has_c = _where_they_differ(str(before.get("command")), str(now.get("command")))
            said.append(f"the command changed ({was_c} -> {has_c})")
        else:
            said.append("the check's options, env or extra arguments changed")
    return said


def _where_they_differ(before: str, now: str) -> tuple[str, str]:
    """The two commands from the word before their first difference on, each cut."""
    a, b = before.split(" "), now.split(" ")
    same = 0
    while same < min(len(a), len(b)) and a[same] == b[same]:
        same += 1
    start = max(0, same - 1)
    lead = "... " if start else ""
    return (_cut(lead + " ".join(a[start:]), _MAX_COMMAND),
            _cut(lead + " ".join(b[start:]), _MAX_COMMAND))


def _unit(key: str) -> str:
    return "files checked" if key == "files" else key


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def weakening_note(reference_run: str, phrases: Sequence[str]) -> str:
    """The digest's note: what changed since which run, within :data:`MAX_NOTE`."""
    return _cut(f"weakened since the last green run {reference_run}: " + "; ".join(phrases),
                MAX_NOTE)


def read_facts(run_dir: str) -> dict[str, Any] | None:
    """A run's ``facts.json`` (a green run's), None when absent or not one."""
    try:
        data = read_regular(os.path.join(run_dir, FACTS_FILE), 1 << 16)
    except OSError:
        return None
    doc = _loads(data)
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA_FACTS else None


class _Decoding:
    """What json's C scanner reads off its decoder (``json.decoder.JSONDecoder``'s defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, Any] = {}  # noqa: RUF012 - the scanner's own attribute name

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.lower())  # NaN, Infinity: never written by ckdn; read as json would


def _loads(data: bytes) -> Any:
    """``json.loads`` of a small document ckdn wrote, by json's scanner (None: not JSON)."""
    try:
        text = data.decode("utf-8")
        if _make_scanner is None:  # pragma: no cover - CPython always has _json
            import json  # here: only where the C scanner is missing

            return json.loads(text)
        value, end = _make_scanner(_Decoding())(text, 0)
    except (ValueError, StopIteration):  # not UTF-8, not JSON
        return None
    return value if not text[end:].strip() else None


def reference(store: Store, name: str, this_run: str, branch: str | None
              ) -> tuple[str, dict[str, Any]] | None:
    """The newest earlier green run of ``name`` on ``branch`` and its facts."""
    try:
        runs = store.runs(name)
    except CkdnError:  # an unreadable runs dir: nothing to compare with
        return None
    for info in runs[:_LOOKBACK]:
        if info.path == this_run or not info.finished:
            continue
        facts = read_facts(info.path)
        if facts is not None and facts.get("branch") == branch:
            return info.name, facts
    return None
