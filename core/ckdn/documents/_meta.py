"""The meta document (``ckdn.meta/1``): the provenance the digest leaves out on purpose.

The digest must be byte-identical for identical inputs, so times, the exact
argv, the working directory, the log's hash and the versions live here instead.
"""

from __future__ import annotations

import sys
import time

from ckdn.documents.textcap import unsurrogate

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from ckdn.documents.types import Meta
    from ckdn.process import Exit

SCHEMA_META: Final = "ckdn.meta/1"


def build_meta(*, check: str, run_dir: str, argv: Sequence[str], cwd: str,
               exit: Exit, started_at: float, finished_at: float,
               log_sha256: str, log_bytes: int, parser: str, status: str) -> Meta:
    """The ``ckdn.meta/1`` provenance of one run.

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
