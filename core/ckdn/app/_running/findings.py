"""``findings.jsonl``, every finding of a red run with its fingerprint, for ``ckdn diff``,
``merge`` and ``baseline``: one writer, and a note instead of a file that cannot be whole.
"""

from __future__ import annotations

import os

from ckdn.app._running.parsing import message_screen
from ckdn.errors import CkdnError
from ckdn.identity import (
    FINDINGS_FILE,
    FindingsWriter,
    SourceLines,
    encode_findings,
    fingerprints,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ckdn.app._running.gate import Gated
    from ckdn.app._running.parsing import FindingTap
    from ckdn.identity import FindingRow, Fingerprinted
    from ckdn.parsers.base import Finding, ParseResult
    from ckdn.redact import Redaction
    from ckdn.store import Store

__all__ = ["REREAD_LIMIT", "write_findings"]

#: The most findings read again for the file when the parser kept fewer and no
#: baseline gate classified them.
REREAD_LIMIT = 1000


def write_findings(store: Store, run_dir: str, *, check: str, cwd: str,
                   result: ParseResult, gated: Gated | None,
                   every: Callable[[], Sequence[Finding]] | None,
                   identities: Sequence[FindingRow] | None = None,
                   redaction: Redaction | None = None,
                   tap: FindingTap | None = None) -> list[str]:
    """Write ``findings.jsonl`` into ``run_dir``; the notes for the digest (none if written).

    The lines come from the first source that has them all: the tap (what the parse
    handed over), the host's ``identities`` (a shard merge's rows), the gate's
    fingerprints, the parser's kept findings, or the evidence read again (``every``,
    up to :data:`REREAD_LIMIT` findings without a baseline). Fingerprints are of the
    raw findings; only the messages written are redacted (``redaction``).
    """
    lines = _lines(check, cwd, result, gated=gated, every=every, identities=identities,
                   redaction=redaction, tap=tap)
    if isinstance(lines, list):
        return lines
    try:
        store.write_atomic(os.path.join(run_dir, FINDINGS_FILE), lines)
    except (OSError, CkdnError) as exc:
        reason = exc.message if isinstance(exc, CkdnError) else (exc.strerror or str(exc))
        return [f"{FINDINGS_FILE} not written: {reason}"]
    return []


def _lines(check: str, cwd: str, result: ParseResult, *, gated: Gated | None,
           every: Callable[[], Sequence[Finding]] | None,
           identities: Sequence[FindingRow] | None, redaction: Redaction | None,
           tap: FindingTap | None) -> Iterable[bytes] | list[str]:
    """The file's bytes, or the notes saying why there is no file (none: a host's own
    facts kept to ``top``, with nothing to read again, get no file and no note)."""
    known: Sequence[int] | None = gated.known if gated is not None else None
    if tap is not None and tap.covers(result):
        spool, table = tap.spool, tap.table
        if isinstance(spool, FindingsWriter):  # no baseline: numbered as the lines came
            return spool.encode(check)
        if table is not None:
            return spool.encode(check, table.fingerprints(), known)
    total = result.total
    rows: Sequence[Fingerprinted] | Sequence[FindingRow]
    if identities is not None and len(identities) == len(result.findings) == total:
        findings: Sequence[Finding] = result.findings
        rows = identities
        known = [row.baselined for row in identities]  # as the shards' gates marked them
    elif gated is not None and gated.identities is not None \
            and len(gated.identities[0]) >= total:
        findings, rows = gated.identities
    else:
        known = None
        findings = list(result.findings)
        if len(findings) < total:
            if every is None:
                return []
            if total > REREAD_LIMIT:
                return [f"{FINDINGS_FILE} not written: {total:,} findings, more than the "
                        f"{REREAD_LIMIT:,} read again for it without a baseline; set "
                        "[run].baseline (or a top that keeps them all) for `ckdn diff`"]
            findings = list(every())
            if len(findings) < total:
                return [f"{FINDINGS_FILE} not written: {total} findings, only "
                        f"{len(findings)} could be read again"]
        rows = fingerprints(findings, SourceLines(cwd))
    return encode_findings(check, findings, rows, known, shown=message_screen(redaction))
