"""Writing a red run's ``findings.jsonl`` when it is sealed (:mod:`ckdn.identity`'s file).

Called by :func:`~ckdn.app._pipeline.seal` for a non-green run with findings
only. Every finding is recorded: the parser's kept ones when it kept them all,
else the evidence read again with no limit (``every``), or the identities the
baseline gate computed in this same run, which already cover all of them.
Source lines are read now, from the check's cwd: they are the ones the tool saw.

Reading the evidence again costs what parsing it did (a 100,000-diagnostic ruff
report: about a second with fingerprinting), so a run with no baseline does it
only up to :data:`REREAD_LIMIT` findings: past that it gets no file and a note
naming the way to have one (a baseline, which classifies every finding anyway,
or a ``top`` that keeps them), and a red run with many findings costs what it
did before the file existed.
A run whose findings cannot all be read again, or whose file cannot be written,
gets no file and a note saying so (``ckdn diff`` then refuses it); the digest is
never lost for it. A host's own facts kept to ``top`` (the pytest plugin's) with
nothing to read again get no file and no note: their digests stay as they were.
"""

from __future__ import annotations

import os

from ckdn.errors import CkdnError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ckdn.app._gating import Gated
    from ckdn.identity import FindingRow, Fingerprinted
    from ckdn.parsers.base import Finding, ParseResult
    from ckdn.redact import Redaction
    from ckdn.store import Store

__all__ = ["REREAD_LIMIT", "record_findings"]

#: The most findings read again for the file when the parser kept fewer and no
#: baseline gate classified them.
REREAD_LIMIT = 1000
#: Messages remembered as holding nothing to redact (bounded: a report can vary them all).
_CLEAN_KEPT = 1 << 16


def record_findings(store: Store, run_dir: str, *, check: str, cwd: str,
                    result: ParseResult, gated: Gated | None,
                    every: Callable[[], Sequence[Finding]] | None,
                    identities: Sequence[FindingRow] | None = None,
                    redaction: Redaction | None = None) -> list[str]:
    """Write ``findings.jsonl`` into ``run_dir``; the notes for the digest (none if written).
    ``identities``: the fingerprints of all of ``result``'s findings, when the host has them.

    Fingerprints are computed from the raw findings, and only the messages written are
    redacted (``redaction``, counted apart from the digest's): a finding keeps its
    identity whatever rule is added or allowlisted later.
    """
    from ckdn.identity import FINDINGS_FILE, SourceLines, encode_findings, fingerprints

    total = result.total
    known: Sequence[bool] | None = None
    rows: Sequence[Fingerprinted] | Sequence[FindingRow]
    if identities is not None and len(identities) == len(result.findings) == total:
        findings: Sequence[Finding] = result.findings
        rows = identities
        known = [row.baselined for row in identities]  # as the shards' gates marked them
    elif gated is not None and gated.identities is not None \
            and len(gated.identities[0]) >= total:
        findings, rows = gated.identities
        known = gated.known
    else:
        findings = list(result.findings)
        if len(findings) < total:
            if every is None:  # a host's own facts, kept to `top`: nothing to read again
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
    try:
        store.write_atomic(os.path.join(run_dir, FINDINGS_FILE),
                           encode_findings(check, findings, rows, known,
                                           shown=_shown(redaction)))
    except CkdnError as exc:
        return [f"{FINDINGS_FILE} not written: {exc.message}"]
    return []


def _shown(redaction: Redaction | None) -> Callable[[str], str] | None:
    """A message as the file keeps it (its first ``MAX_TEXT`` characters), redacted first
    with a margin past the cut, so what straddles the cut is redacted whole."""
    if redaction is None or not redaction.enabled:
        return None
    from ckdn.documents.textcap import marked, parts
    from ckdn.identity import MAX_TEXT

    own = redaction.fork()
    # A report repeats its messages (one rule, one wording, thousands of findings): one
    # that may hold nothing is screened once (a set of them, bounded); the screen was a
    # third of merging two 100,000-finding shards.
    clean: set[str] = set()

    def shown(message: str) -> str:
        if message in clean:
            return message
        body, omitted = parts(message)
        window = body[:MAX_TEXT + own.margin] if own.may_hold(body[:MAX_TEXT + 1024]) else ""
        if not window:
            if len(clean) < _CLEAN_KEPT:
                clean.add(message)
            return message
        text = own.text(window, edge=bool(omitted) or len(body) > len(window))
        return marked(text, omitted) if omitted else text

    return shown
