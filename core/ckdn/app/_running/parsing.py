"""The parse of a run, and the tap that takes every finding the parse hands over, so one parse
serves the digest, the gate and ``findings.jsonl`` in bounded memory.
"""

from __future__ import annotations

import os

from ckdn.documents.textcap import marked, parts
from ckdn.errors import ConfigError
from ckdn.parsers import get_parser
from ckdn.parsers.base import Finding, ParseContext, ParseResult, guarded
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from ckdn.config import Check, Config
    from ckdn.identity import BaselineIndex, FindingsWriter, IdentityTable, TableSpool
    from ckdn.redact import Redaction

    #: A finding as :meth:`FindingTap.located`'s fields: path, row, column, code, kind,
    #: message, cell.
    _Fields = tuple[str, int, int, str, str, str, int | None]
    #: One of a file's findings as :meth:`FindingTap.located_file` takes them: row, column,
    #: code, message, cell.
    _Row = tuple[int, int, str, str, int | None]

__all__ = ["ALL_FINDINGS", "SPOOL", "FindingTap", "options_for", "parse_run", "parse_safely",
           "pick_again", "read_again", "substitute"]

#: The most findings one run has read again in full (the gate, ``findings.jsonl``).
ALL_FINDINGS = 1_000_000
#: The spool of ``findings.jsonl``'s lines in the run dir, removed when the run is sealed.
SPOOL = ".findings.spool"
#: The identity table's line hashes, in the run dir while it runs (removed when opened
#: where the system allows, else with the spool).
LINE_HASHES = ".line-hashes.spool"
#: Findings the tap holds that may be new, in ``top``s (see :meth:`FindingTap._likely_new`).
_HELD = 4
#: Messages remembered as holding nothing to redact (bounded: a report can vary them all).
_CLEAN_KEPT = 1 << 16
#: Only a message this short is remembered clean, up to this many characters in all (a lint
#: message repeats and is short; a hostile report's distinct ones would hold their size).
_CLEAN_CHARS = 256
_CLEAN_BUDGET = 4 << 20


def substitute(value: str, run_dir: str) -> str:
    return value.replace("{run_dir}", run_dir)


def options_for(check: Check, run_dir: str) -> dict[str, Any]:
    """Parser options with ``{run_dir}`` substituted in every string."""
    out: dict[str, Any] = {}
    for key, value in check.options.items():
        if isinstance(value, str):
            value = substitute(value, run_dir)
        elif isinstance(value, list):
            value = [substitute(v, run_dir) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out


def parse_run(config: Config, name: str, parser_name: str, run_dir: str, rc: int, *,
              options: Mapping[str, Any], top: int | None,
              max_snippet_lines: int | None = None,
              tap: Callable[[Finding], object] | None = None) -> ParseResult:
    """What the check's parser makes of the finished run in ``run_dir``; never raises.
    ``tap`` is handed every finding as the parser reports it."""
    ctx = ParseContext(check=name, run_dir=run_dir, cwd=config.cwd, rc=rc, options=options,
                       top=top or config.run.top,
                       max_snippet_lines=(config.run.max_snippet_lines
                                          if max_snippet_lines is None else max_snippet_lines),
                       tap=tap)
    return parse_safely(get_parser(parser_name), ctx)


def parse_safely(parser: Any, ctx: ParseContext) -> ParseResult:
    """Run a parser; one that raises or returns nonsense is a confused parser, never a pass.

    A plugin parser may not guard itself, so the app applies the same guard as
    the built-ins (:mod:`ckdn.parsers.guard`) and checks what comes back.
    """
    name = str(getattr(parser, "name", "?"))
    # The lambda looks ``parser.parse`` up inside the guard: a plugin without it is contained.
    result: Any = guarded(name, lambda c: parser.parse(c), ctx)  # noqa: PLW0108
    if not isinstance(result, ParseResult):
        return ParseResult(parser_ok=False, notes=[
            f"parser '{name}' returned {type(result).__name__}, not a ParseResult"])
    return result


def read_again(config: Config, check: Check, run_dir: str,
               rc: int) -> Callable[[], Sequence[Finding]]:
    """Reads the finished run's findings again, all of them, with no snippets: what the
    gate classifies and ``findings.jsonl`` records when the parse handed over fewer."""
    def read() -> Sequence[Finding]:
        return parse_run(config, check.name, check.parser, run_dir, rc,
                         options=options_for(check, run_dir), top=ALL_FINDINGS,
                         max_snippet_lines=0).findings

    return read


def pick_again(config: Config, check: Check, run_dir: str,
               rc: int) -> Callable[[set[int]], dict[int, Finding]]:
    """Reads the run's findings at some positions again (with their detail), the others
    counted without being built: a new finding the digest lists that the first parse
    did not keep."""
    def pick(positions: set[int]) -> dict[int, Finding]:
        picked = _Picked(positions)
        parse_run(config, check.name, check.parser, run_dir, rc,
                  options=options_for(check, run_dir), top=1, tap=picked)
        return picked.found

    return pick


class _Picked:
    """A tap that takes the findings at ``positions`` (see ``FindingSink``)."""

    __slots__ = ("found", "positions")

    def __init__(self, positions: set[int]) -> None:
        self.positions = positions
        self.found: dict[int, Finding] = {}

    def __call__(self, finding: Finding) -> None:  # a sink that does not pick
        return

    def take(self, position: int, finding: Finding) -> None:
        self.found[position] = finding


class FindingTap:
    """What a run's parse hands over, finding by finding: each one's identity into a packed
    table (42 bytes), its line of ``findings.jsonl`` into a spool on disk.

    ``baseline``: the baseline file's path when the gate will classify the findings;
    its entries are read at the first finding, so the tap also holds the findings that
    may be new (listed first in the digest, they may come after the parser's kept
    ones). Without a baseline the lines are written as they come
    (:class:`~ckdn.identity.FindingsWriter`): no table, unless ``identities`` asks for
    one (a diff-scoped gate places every finding).
    """

    __slots__ = ("_copies", "_cwd", "_parts", "_redaction", "_run_dir", "baseline", "check",
                 "first", "held", "identities", "top")

    def __init__(self, run_dir: str, cwd: str, *, check: str, top: int,
                 baseline: str | None = None, redaction: Redaction | None = None,
                 identities: bool = False) -> None:
        self._run_dir, self._cwd, self._redaction = run_dir, cwd, redaction
        self.check, self.top, self.baseline = check, top, baseline
        self.identities = identities
        self._parts: Any = None  # (table, spool, baseline index or error), at the first finding
        #: the first ``top`` findings handed over, as the sink kept them
        self.first: list[Finding] = []
        #: position -> finding, for the first ``top`` the baseline has no entry like
        self.held: dict[int, Finding] = {}
        #: the primary hashes seen in the current file, each with its first copy (until a
        #: second comes; a copy handed over as its fields kept as them): a second copy, or
        #: the first, may be a new one
        self._copies: tuple[str, dict[bytes, tuple[int, Finding | _Fields] | None]] = ("", {})

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
        if index is not None and not isinstance(index, str) \
                and len(self.held) < _HELD * self.top:  # a full hold takes no more
            self._hold_if_new(table, position, finding, index)
        if position < self.top:
            self.first.append(finding)

    def _located(self, path: str, row: int, col: int, code: str,  # noqa: PLR0917
                 kind: str, message: str, cell: int | None = None) -> None:
        """A finding past the first ``top`` handed over as its fields (see :meth:`located`):
        its identity into the table and its line into the spool, a Finding built only
        for one held as maybe new (or for fields the spool does not write itself)."""
        table, spool, index = self._parts
        if spool.located(table, path, row, col, code, kind, message, cell) is None:
            self(_finding_of((path, row, col, code, kind, message, cell)))
            return
        if index is not None and not isinstance(index, str) \
                and len(self.held) < _HELD * self.top:  # its position asked only then
            self._hold_if_new(table, len(table) - 1,
                              (path, row, col, code, kind, message, cell), index)

    def _hold_if_new(self, table: IdentityTable, position: int, finding: Finding | _Fields,
                     index: BaselineIndex) -> None:
        """Hold this finding if it may be new: the baseline has no entry for its primary
        hash at occurrence 0, or it is another copy of one seen in its file. Occurrences
        go by line, not by the report's order, so the first copy may be the new one: it is
        held too. A guess the gate checks; a new one it missed is read again."""
        path = table.path(position)
        seen_in, copies = self._copies
        if path != seen_in:
            copies = {}
            self._copies = (path, copies)
        key = table.key_at_zero(position)
        if key in copies:
            earlier = copies[key]
            if earlier is not None:
                copies[key] = None
                if earlier[0] >= self.top:
                    self.held[earlier[0]] = _finding_of(earlier[1])
            new = True
        else:
            # the first copy is remembered (a bounded number a file) in case a second comes
            copies[key] = (position, finding) if len(copies) < _HELD * self.top else None
            new = key not in index
        if new and position >= self.top:
            self.held[position] = _finding_of(finding)

    def _start(self) -> tuple[Any, Any, Any]:
        # lazy: the identity room loads at a run's first finding; a green run never needs it
        from ckdn.identity import (
            FindingsWriter,
            IdentityTable,
            SourceLines,
            TableSpool,
            read_index,
        )

        spooled = os.path.join(self._run_dir, SPOOL)
        spill_path = os.path.join(self._run_dir, LINE_HASHES)
        if self.baseline is None:
            if self.identities:
                return (IdentityTable(SourceLines(self._cwd), spill_path),
                        TableSpool(spooled, message_screen(self._redaction)), None)
            return None, FindingsWriter(spooled, SourceLines(self._cwd),
                                        message_screen(self._redaction)), None
        index: BaselineIndex | str
        try:  # streamed: a million entries are never held as text
            index = read_index(self.baseline, shown_path(self.baseline, self._cwd), self.check)
        except ConfigError as exc:
            index = str(exc)
        spool = TableSpool(spooled, message_screen(self._redaction))
        return IdentityTable(SourceLines(self._cwd), spill_path), spool, index

    def located(self) -> Callable[[str, int, int, str, str, str, int | None], None] | None:
        """Once the first ``top`` findings are in, a way to take the next ones as a parser's
        fields (:meth:`~ckdn.parsers.base.FindingSink.located`): the writer's
        :meth:`~ckdn.identity.FindingsWriter.located` without a table, else the table's and
        spool's (:meth:`_located`); None before."""
        parts = self._parts
        if parts is None:
            parts = self._parts = self._start()
        table, spool, _ = parts
        if spool.count < self.top:
            return None
        if table is None:
            return spool.located  # type: ignore[no-any-return]
        return self._located

    def located_file(self) -> Callable[[str, str, Sequence[_Row]], None] | None:
        """:meth:`located`, a file's findings at a time (``path, kind, [(row, col, code,
        message, cell), ...]``): the writer's :meth:`~ckdn.identity.FindingsWriter.located_file`
        without a table; None with one (its findings go one by one) or before."""
        if self.located() is None:
            return None
        table, spool, _ = self._parts
        return spool.located_file if table is None else None

    @property
    def count(self) -> int:
        return 0 if self._parts is None else int(self._parts[1].count)

    @property
    def table(self) -> IdentityTable | None:
        """The packed identities, kept only when a baseline or a diff is matched."""
        return self._parts[0]  # type: ignore[no-any-return]

    @property
    def spool(self) -> TableSpool | FindingsWriter:
        return self._parts[1]  # type: ignore[no-any-return]

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

    def discard(self) -> None:
        if self._parts is not None:
            self._parts[1].discard()
            if self._parts[0] is not None:
                self._parts[0].discard()


def _finding_of(fields: Finding | _Fields) -> Finding:
    """The Finding a parser makes of these fields past the digest's top (no detail): id
    ``path:row:col:code`` at ``path:row:col``, a notebook cell's ``path:cellN:row:col:code``
    at ``path``."""
    if isinstance(fields, Finding):
        return fields
    path, row, col, code, kind, message, cell = fields
    if cell is None:
        return Finding(f"{path}:{row}:{col}:{code}", kind, message, f"{path}:{row}:{col}")
    return Finding(f"{path}:cell{cell}:{row}:{col}:{code}", kind, message, path)


def message_screen(redaction: Redaction | None) -> Callable[[str], str] | None:
    """A message as ``findings.jsonl`` keeps it (its first ``MAX_TEXT`` characters), redacted
    first with a margin past the cut, so what straddles the cut is redacted whole."""
    if redaction is None or not redaction.enabled:
        return None
    from ckdn.identity import MAX_TEXT  # lazy: as in FindingTap._start (a first finding)

    own = redaction.fork()
    # A report repeats its messages (one rule, one wording, thousands of findings): one
    # that may hold nothing is screened once (a set of them, bounded); the screen was a
    # third of merging two 100,000-finding shards.
    clean: set[str] = set()
    kept = [0]  # the characters of ``clean``

    def shown(message: str) -> str:
        if message in clean:
            return message
        body, omitted = parts(message)
        probe = body[:MAX_TEXT + 1024]
        cut = bool(omitted) or len(body) > len(probe)
        window = body[:MAX_TEXT + own.margin] if own.may_hold(probe, edge=cut) else ""
        if not window:
            if len(message) <= _CLEAN_CHARS and kept[0] < _CLEAN_BUDGET \
                    and len(clean) < _CLEAN_KEPT:
                clean.add(message)
                kept[0] += len(message)
            return message
        text = own.text(window, edge=bool(omitted) or len(body) > len(window))
        return marked(text, omitted) if omitted else text

    return shown
