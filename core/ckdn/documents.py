"""Every run document's two forms, and the two documents besides the digest.

:func:`encode` is the canonical byte form all three documents are written in
(the digest's determinism rests on it); :func:`render` is the human form
``ckdn show`` prints. The aggregate (``ckdn.aggregate/1``) routes an alias run to
its members' run dirs; the meta (``ckdn.meta/1``) keeps the provenance the digest
leaves out on purpose (times, argv, hashes).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence

try:  # the escaper json.dumps(ensure_ascii=False) uses; json.encoder has it in Python too
    from _json import encode_basestring as _quote
except ImportError:  # pragma: no cover - CPython always has _json
    from json.encoder import encode_basestring as _quote

from ckdn._record import Record, record
from ckdn.reconcile import ERROR, PASS, SKIPPED, STATUSES, Exit, exit_code
from ckdn.textcap import unsurrogate

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SCHEMA_AGGREGATE",
    "SCHEMA_META",
    "Member",
    "aggregate_status",
    "build_aggregate",
    "build_meta",
    "canonical",
    "encode",
    "encoded_size",
    "render",
]

SCHEMA_AGGREGATE = "ckdn.aggregate/1"
SCHEMA_META = "ckdn.meta/1"
_INF = float("inf")


# -------------------------------------------------------------------- encode/show


def encode(doc: Mapping[str, Any]) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, UTF-8, no trailing newline.

    Lone surrogates (which builders already replace) become ``?`` rather than an
    exception: writing evidence must not fail on one odd character.
    """
    return canonical(doc)


def canonical(value: Any) -> bytes:
    """:func:`encode` for any JSON value, not only a document.

    Byte for byte what ``json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False, allow_nan=False)`` gives, encoded to UTF-8 (pinned by a
    property test in tests/core/test_digest.py), without importing :mod:`json`:
    its decoder and scanner are a tenth of a trivial ``ckdn run``, which only
    writes. Strings, the bulk of every document, go through the same C escaper
    ``json`` uses.
    """
    parts: list[str] = []
    _emit(value, parts.append)
    return "".join(parts).encode("utf-8", "replace")


def _emit(value: Any, out: Callable[[str], object]) -> None:
    if isinstance(value, str):
        out(_quote(value))
    elif value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        if not -_INF < value < _INF:  # NaN compares false too
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        out(float.__repr__(value))
    elif isinstance(value, dict):
        out("{")
        for index, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out(("," if index else "") + _quote(key) + ":")
            _emit(value[key], out)
        out("}")
    elif isinstance(value, list | tuple):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(",")
            _emit(item, out)
        out("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encoded_size(value: Any) -> int:
    return len(canonical(value))


_ORDER = (
    "schema", "check", "alias", "status", "status_reason", "rc", "timed_out", "interrupted",
    "started", "gate", "baseline", "summary", "findings_total", "findings",
    "findings_truncated", "gate_failures", "notes", "log_tail", "members",
    "argv", "cwd", "started_at", "finished_at", "duration_s", "parser", "log_bytes",
    "log_sha256", "ckdn_version", "python", "run_dir", "artifacts",
)
_FINDING_ORDER = ("id", "kind", "message", "location", "detail", "baselined")
_MEMBER_ORDER = ("check", "status", "rc", "run_dir")


def render(doc: Mapping[str, Any]) -> str:
    """The human form ``ckdn show`` prints: indented, keys in reading order."""
    import json  # lazy: only `ckdn show` renders

    return json.dumps(_ordered(doc, _ORDER), indent=2, ensure_ascii=False)


def _ordered(node: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    rank = {key: index for index, key in enumerate(order)}
    unknown = len(order) - 2  # keys not in the order go just before run_dir and artifacts
    out: dict[str, Any] = {}
    for key in sorted(node, key=lambda k: (rank.get(k, unknown), k)):
        value = node[key]
        if key == "findings" and isinstance(value, list):
            value = [_ordered(f, _FINDING_ORDER) if isinstance(f, Mapping) else f for f in value]
        elif key == "members" and isinstance(value, list):
            value = [_ordered(m, _MEMBER_ORDER) if isinstance(m, Mapping) else m for m in value]
        elif isinstance(value, Mapping):
            value = _ordered(value, ())
        out[key] = value
    return out


# ---------------------------------------------------------------------- aggregate


@record
class Member(Record):
    """One alias member as the aggregate lists it; ``status="skipped"`` when not reached."""

    __slots__ = ("check", "rc", "run_dir", "status")
    check: str
    status: str
    rc: int | None
    run_dir: str | None

    def __init__(self, check: str, status: str, rc: int | None = None,
                 run_dir: str | None = None) -> None:
        self._assign(check, status, rc, run_dir)


def aggregate_status(members: Sequence[Member]) -> tuple[str, int]:
    """``(status, rc)`` of an alias: pass iff every member passed, else the first red one.

    ``rc`` is that member's exit code under the atomic pass-through rule
    (:func:`ckdn.reconcile.exit_code`). A list where nothing ran red but something
    was skipped is ``error`` / 1: a member that never ran is never green.
    """
    if not members:
        raise ValueError("an aggregate needs at least one member")
    skipped = False
    for member in members:
        if member.status == SKIPPED:
            skipped = True
        elif member.status != PASS:
            return member.status, exit_code(member.status, 1 if member.rc is None else member.rc)
    return (ERROR, 1) if skipped else (PASS, 0)


def build_aggregate(*, alias: str, members: Sequence[Member]) -> dict[str, Any]:
    """The ``ckdn.aggregate/1`` routing document of an alias run."""
    status, rc = aggregate_status(members)
    entries: list[dict[str, Any]] = []
    for member in members:
        if member.status == SKIPPED:
            entries.append({"check": member.check, "status": SKIPPED})
            continue
        if member.status not in STATUSES:
            raise ValueError(f"member {member.check!r} has no valid status: {member.status!r}")
        if member.rc is None or member.run_dir is None:
            raise ValueError(f"member {member.check!r} ran but has no rc or run_dir")
        entries.append({"check": member.check, "status": member.status, "rc": member.rc,
                        "run_dir": member.run_dir})
    return {"schema": SCHEMA_AGGREGATE, "alias": alias, "status": status, "rc": rc,
            "members": entries}


# --------------------------------------------------------------------------- meta


def build_meta(*, check: str, run_dir: str, argv: Sequence[str], cwd: str,
               exit: Exit, started_at: float, finished_at: float,
               log_sha256: str, log_bytes: int, parser: str, status: str) -> dict[str, Any]:
    """The ``ckdn.meta/1`` provenance of one run: what the digest leaves out on purpose.

    Times are ISO 8601 UTC with milliseconds and ``Z``; ``duration_s`` is the
    runner's measurement (wall clock between the two times when it has none).
    """
    from ckdn import __version__

    duration = exit.duration if exit.duration > 0 else max(0.0, finished_at - started_at)
    return {
        "schema": SCHEMA_META,
        "check": check,
        "status": status,
        "rc": int(exit.rc),
        "started": bool(exit.started),
        "timed_out": bool(exit.timed_out),
        "interrupted": bool(exit.interrupted),
        "argv": [unsurrogate(arg) for arg in argv],
        "cwd": unsurrogate(cwd),
        "started_at": _iso_utc(started_at),
        "finished_at": _iso_utc(finished_at),
        "duration_s": round(duration, 6),
        "parser": parser,
        "log_bytes": int(log_bytes),
        "log_sha256": log_sha256,
        "ckdn_version": __version__,
        "python": ".".join(str(part) for part in sys.version_info[:3]),
        "run_dir": unsurrogate(run_dir),
    }


def _iso_utc(timestamp: float) -> str:
    """``datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")`` with
    ``Z`` for ``+00:00``, computed as datetime does (microseconds rounded half to even,
    then cut to milliseconds) without importing datetime."""
    whole = timestamp // 1
    micros = round((timestamp - whole) * 1_000_000)
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return f"{stamp}.{micros // 1000:03d}Z"
