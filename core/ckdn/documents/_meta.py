"""The meta document (``ckdn.meta/1``): the provenance the digest leaves out on purpose; and
the change a diff-scoped gate judged (``ckdn.change/1``, ``change.json``), its sidecar."""

from __future__ import annotations

import time

from ckdn import __version__
from ckdn.documents.textcap import unsurrogate

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Final

    from ckdn.documents.types import ChangeDoc, GateDoc, Meta, ScopeDoc
    from ckdn.process import Exit

# The digest must be byte-identical for identical inputs, so times, the exact
# command, the log's hash and the version live here instead, in exactly the keys
# the published ``ckdn.meta/1`` schema allows (CONTRACT.md): a consumer's
# validator rejects any other.

SCHEMA_META: Final = "ckdn.meta/1"


def build_meta(*, check: str, argv: Sequence[str], exit: Exit, started_at: float,
               finished_at: float, log_sha256: str, log_bytes: int, parser: str,
               env_keys: Iterable[str] = ()) -> Meta:
    """The ``ckdn.meta/1`` provenance of one run: the published key set, nothing else (the
    change a diff-scoped gate judged is in ``change.json``: :func:`build_change`).

    ``command`` is the argv after ``{run_dir}`` substitution; ``started_at`` is
    ISO 8601 UTC in whole seconds with a ``+00:00`` offset; ``duration_s`` is the
    runner's measurement (wall clock between the two times when it has none),
    rounded to milliseconds; ``env_keys`` are the names (never the values) the
    check's ``env`` set, sorted, and absent when it set none.
    """

    duration = exit.duration if exit.duration > 0 else max(0.0, finished_at - started_at)
    meta: Meta = {
        "schema": SCHEMA_META,
        "ckdn_version": __version__,
        "check": check,
        "parser": parser,
        "command": [unsurrogate(arg) for arg in argv],
        "rc": int(exit.rc),
        "timed_out": bool(exit.timed_out),
        "interrupted": bool(exit.interrupted),
        "started_at": _iso_utc(started_at),
        "duration_s": round(duration, 3),
        "log_sha256": log_sha256,
        "log_bytes": int(log_bytes),
    }
    keys = sorted({unsurrogate(key) for key in env_keys})
    if keys:
        meta["env_keys"] = keys
    return meta


SCHEMA_CHANGE: Final = "ckdn.change/1"


def build_change(*, check: str, gate: GateDoc, facts: ScopeDoc, sha256: str,
                 size: int) -> ChangeDoc:
    """``change.json`` (``ckdn.change/1``), the sidecar of a run a diff-scoped gate judged:
    the change (base, head, the diff's SHA-256 and bytes), the policy, the counts. No
    times: equal changes and findings give equal bytes."""
    doc: ChangeDoc = {"schema": SCHEMA_CHANGE, "check": check, "policy": facts["policy"],
                      "gate": gate["status"], "gated": int(facts.get("gated", 0))}
    if gate.get("reason"):
        doc["reason"] = gate["reason"]
    for key in ("origin", "base", "head"):
        value = facts.get(key)
        if isinstance(value, str) and value:
            doc[key] = value
    if sha256:
        doc["diff"] = {"sha256": sha256, "bytes": max(0, int(size))}
    if "counts" in facts:
        doc["counts"] = facts["counts"]
    return doc


def _iso_utc(timestamp: float) -> str:
    """``datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")``
    (``2026-07-07T10:15:00+00:00``), without importing datetime."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(timestamp // 1))
