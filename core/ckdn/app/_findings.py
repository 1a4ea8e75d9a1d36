"""A red run's findings: handed over as the parser reports them, then ``findings.jsonl``.

A run's parse hands every finding to a :class:`Tap` (the parsers' sink does),
which keeps no finding but a few the digest may show: each one's identity goes
into a packed table (:class:`~ckdn.identity.IdentityTable`, 42 bytes), and its
line of ``findings.jsonl`` (less the fingerprint, known only once the report is
in) into a spool on disk. So one parse serves the digest, the baseline gate and
the file, in bounded memory, whatever the number of findings. The tap does
nothing until the first finding: a green run pays for one object.

:func:`record_findings` writes the file when :func:`~ckdn.app._pipeline.seal`
seals a non-green run with findings: from the tap when it saw them all (the
built-in parsers with many findings all hand theirs over), else from the
parser's kept ones when it kept them all, else from the evidence read again
with no limit (``every``), or the identities the baseline gate computed.
Reading the evidence again costs what parsing it did, so a run with no baseline
does it only up to :data:`REREAD_LIMIT` findings (a parser that hands over
nothing: a plugin's): past that it gets no file and a note.
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
    from typing import Any

    from ckdn.app._gating import Gated
    from ckdn.config import Check, Config
    from ckdn.identity import BaselineIndex, FindingRow, Fingerprinted, IdentityTable
    from ckdn.parsers.base import Finding, ParseResult
    from ckdn.redact import Redaction
    from ckdn.store import Store

__all__ = ["REREAD_LIMIT", "SPOOL", "Tap", "every_finding", "record_findings"]

#: The most findings read again for the file when the parser kept fewer and no
#: baseline gate classified them.
REREAD_LIMIT = 1000
#: Findings the tap holds that may be new, in ``top``s (see :meth:`Tap._likely_new`).
_HELD = 4
#: Messages remembered as holding nothing to redact (bounded: a report can vary them all).
_CLEAN_KEPT = 1 << 16
#: The spool of ``findings.jsonl``'s lines in the run dir, removed when the run is sealed.
SPOOL = ".findings.spool"


def every_finding(config: Config, check: Check, run_dir: str,
                  rc: int) -> Callable[[], Sequence[Finding]]:
    """Reads the finished run's findings again, all of them, with no snippets: what the
    gate classifies and ``findings.jsonl`` records when the parse handed over fewer."""
    def read() -> Sequence[Finding]:
        from ckdn.app._pipeline import ALL_FINDINGS, options_for, parse_run

        return parse_run(config, check.name, check.parser, run_dir, rc,
                         options=options_for(check, run_dir), top=ALL_FINDINGS,
                         max_snippet_lines=0).findings

    return read


class Tap:
    """What a run's parse hands over, finding by finding (see the module).

    ``baseline``: the baseline file's path when the gate will classify the findings;
    its entries are read at the first finding, so the tap also holds the first
    findings that may be new (a new finding is listed first in the digest, and may
    come after the parser's kept ones). Without a baseline the file's lines are
    written as they come (:class:`~ckdn.identity.FindingsWriter`): no table.
    """

    __slots__ = ("_copies", "_cwd", "_parts", "_redaction", "_run_dir", "baseline", "check",
                 "first", "held", "top")

    def __init__(self, run_dir: str, cwd: str, *, check: str, top: int,
                 baseline: str | None = None, redaction: Redaction | None = None) -> None:
        self._run_dir, self._cwd, self._redaction = run_dir, cwd, redaction
        self.check, self.top, self.baseline = check, top, baseline
        self._parts: Any = None  # (table, spool, baseline index or error), at the first finding
        #: the first ``top`` findings handed over, as the sink kept them
        self.first: list[Finding] = []
        #: position -> finding, for the first ``top`` the baseline has no entry like
        self.held: dict[int, Finding] = {}
        #: the primary hashes seen in the current file: a second copy may be a new one
        self._copies: tuple[str, set[bytes]] = ("", set())

    def __call__(self, finding: Finding) -> None:
        parts = self._parts
        if parts is None:
            parts = self._parts = self._start()
        table, spool, index = parts
        if table is None:  # no baseline: each line written as it comes, no table kept
            if spool.count < self.top:
                self.first.append(finding)
            spool.add(finding)
            return
        position = len(table)
        table.add(finding)
        spool.add(finding, table.line_hash(position))
        if index is not None and not isinstance(index, str) and len(self.held) < _HELD * self.top \
                and self._likely_new(table, position, index) and position >= self.top:
            self.held[position] = finding
        if position < self.top:
            self.first.append(finding)

    def _likely_new(self, table: IdentityTable, position: int, index: BaselineIndex) -> bool:
        """Whether this finding may be new: the baseline has no entry for its primary hash
        at occurrence 0, or it is another copy of one seen in its file (its occurrence is
        known only at the end). A guess the gate checks; a new finding it missed is read
        again by position."""
        path = table.path(position)
        seen_in, copies = self._copies
        if path != seen_in:
            copies = set()
            self._copies = (path, copies)
        key = table.key_at_zero(position)
        if key in copies:
            return True
        copies.add(key)
        return key not in index.entries

    def _start(self) -> tuple[Any, Any, Any]:
        from ckdn.errors import ConfigError
        from ckdn.identity import (
            BaselineIndex,
            FindingsSpool,
            FindingsWriter,
            IdentityTable,
            SourceLines,
            read_baseline,
        )

        spooled = os.path.join(self._run_dir, SPOOL)
        if self.baseline is None:
            return None, FindingsWriter(spooled, SourceLines(self._cwd),
                                        _shown(self._redaction)), None
        index: BaselineIndex | str | None = None
        from ckdn.store import shown_path  # the baseline as every message shows it

        try:
            entries = read_baseline(self.baseline, shown_path(self.baseline, self._cwd)
                                    ).checks.get(self.check, [])
        except ConfigError as exc:
            index = str(exc)
        else:
            index = BaselineIndex(entries)
            del entries
        spool = FindingsSpool(spooled, _shown(self._redaction))
        return IdentityTable(SourceLines(self._cwd)), spool, index

    @property
    def count(self) -> int:
        return 0 if self._parts is None else self._parts[1].count

    @property
    def table(self) -> IdentityTable:
        return self._parts[0]  # type: ignore[no-any-return]

    @property
    def index(self) -> BaselineIndex | str | None:
        """The baseline's entries (used up by matching), or why they could not be read."""
        return None if self._parts is None else self._parts[2]

    def covers(self, result: ParseResult) -> bool:
        """Whether the tap saw exactly ``result``'s findings: as many as it counts, and
        the ones it kept are the first ones handed over (a parser that promoted other
        findings, or a plugin that hands none over, is read the old way)."""
        if self._parts is None or self.count != result.total or self.count == 0:
            return False
        kept = result.findings
        return len(kept) <= len(self.first) and all(
            a is b for a, b in zip(kept, self.first, strict=False))

    def write(self, store: Store, check: str, known: Sequence[bool] | None) -> list[str]:
        """Write ``findings.jsonl`` from the spool; the notes (none if written)."""
        from ckdn.identity import FINDINGS_FILE

        table, spool, _ = self._parts
        try:
            store.write_atomic(os.path.join(self._run_dir, FINDINGS_FILE),
                               spool.encode(check) if table is None
                               else spool.encode(check, table.fingerprint, known))
        except (OSError, CkdnError) as exc:
            reason = exc.message if isinstance(exc, CkdnError) else (exc.strerror or str(exc))
            return [f"{FINDINGS_FILE} not written: {reason}"]
        return []

    def discard(self) -> None:
        if self._parts is not None:
            self._parts[1].discard()


def record_findings(store: Store, run_dir: str, *, check: str, cwd: str,
                    result: ParseResult, gated: Gated | None,
                    every: Callable[[], Sequence[Finding]] | None,
                    identities: Sequence[FindingRow] | None = None,
                    redaction: Redaction | None = None, tap: Tap | None = None) -> list[str]:
    """Write ``findings.jsonl`` into ``run_dir``; the notes for the digest (none if written).
    ``identities``: the fingerprints of all of ``result``'s findings, when the host has them.

    Fingerprints are computed from the raw findings, and only the messages written are
    redacted (``redaction``, counted apart from the digest's): a finding keeps its
    identity whatever rule is added or allowlisted later.
    """
    from ckdn.identity import FINDINGS_FILE, SourceLines, encode_findings, fingerprints

    total = result.total
    if tap is not None and tap.covers(result):
        return tap.write(store, check, gated.known if gated is not None else None)
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
