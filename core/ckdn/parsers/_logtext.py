"""Reading a tool's terminal text: the pieces every log-reading parser shares."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from ckdn.documents.textcap import Cut
from ckdn.parsers._loglines import LINE_BYTES
from ckdn.parsers.base import Finding, FindingSink, ParseContext, ParseResult, Snippet, cap_line

__all__ = [
    "ARROW",
    "DetailLines",
    "LogSample",
    "LongLines",
    "MinorDiagnostics",
    "PendingFinding",
    "after",
    "crashed",
    "group",
    "joined",
    "log_ends",
    "plain",
    "plain_lines",
    "quote",
]

# Several tools leave no report file, or explain a failure only in their log, so
# their parsers read the log: stripped of colour escapes, streamed line by line,
# keeping only what a digest can show. A line longer than the reading width
# (:data:`~ckdn.parsers._loglines.LINE_BYTES`) arrives cut, as a
# :class:`~ckdn.documents.textcap.Cut`; the helpers here keep it one (:func:`quote`,
# :func:`group`, :func:`joined`), so whatever a digest shows of it counts the whole
# cut, and :class:`LongLines` makes a log read only in part loud: a parser cannot
# vouch for a line it did not read. A diagnostic's detail can be arbitrarily
# long, so it is bounded while it arrives (:class:`DetailLines`,
# :class:`PendingFinding`); a run nothing explains gets the first lines no pattern
# recognised (:class:`LogSample`) or the log's last line (:func:`log_ends`), which
# is where a tool that stopped early says why; and a type checker that failed on
# warnings or notes alone has them promoted to findings the same way for every
# type checker (:class:`MinorDiagnostics`). Keeping these rules in one place keeps those notes
# identical across parsers; the ``-->`` location line of the layout ty and
# ``ruff format`` share (:data:`ARROW`) is here for the same reason.

#: Terminal escape sequences: CSI (colours, cursor moves) and the two-byte ones
#: such as the charset reset ``ESC ( B`` mypy's colours end with. A tool forced
#: into colour (FORCE_COLOR, MYPY_FORCE_COLOR) must not defeat the line patterns.
_ANSI: Final = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()*+][0-9A-Za-z]|[@-Z\\-_])")

#: `` --> path:line:col`` on the line after a diagnostic's header: where it points,
#: in the rustc-style layout ty and ``ruff format`` share (line and column optional).
ARROW: Final = re.compile(r"^\s*--> (?P<path>.+?)(?::(?P<line>\d+)(?::(?P<col>\d+))?)?$")


#: How a crashed Python program's last words start: an uncaught exception, or a fatal
#: error (a segfault, an abort) that faulthandler reports.
CRASH: Final = ("Traceback (most recent call last):", "Fatal Python error: ")


def crashed(line: str) -> bool:
    """``line`` starts a Python traceback or fatal-error report, at column 0."""
    return line.startswith(CRASH)


def plain(line: str) -> str:
    """``line`` without ANSI escape sequences (a cut line stays cut, with its count)."""
    if isinstance(line, Cut):
        return Cut(plain(line.body), line.omitted)
    return _ANSI.sub("", line) if "\x1b" in line else line


class LongLines:
    """The lines of a log that were longer than the reading width, and so read in part.

    A parser vouches only for what it read: a log with such a line (a gigabyte of
    output on one line, a verdict with megabytes after it) is not evidence of a
    finished run, so :meth:`refuse` makes the result loud, quoting the line's start
    with the count of what was cut.
    """

    __slots__ = ("count", "first", "number")

    def __init__(self) -> None:
        self.count = 0
        self.number = 0  # the line number of the first one
        self.first: Cut | None = None

    def see(self, number: int, line: Cut) -> None:
        self.count += 1
        if self.first is None:
            self.number, self.first = number, line

    def note(self, tool: str) -> str:
        first = self.first
        assert first is not None
        length = len(first.body) + first.omitted
        return (f"line {self.number} of the log is {length:,} characters long, more than the "
                f"{LINE_BYTES:,} bytes a parser reads of one line ({self.count} such line(s); "
                f"it starts: {quote(first, 80)}): the log was read only in part, so it is not "
                f"evidence of {tool}'s whole run")

    def refuse(self, result: ParseResult, tool: str) -> None:
        """``parser_ok=False`` with :meth:`note` when a line was cut; nothing otherwise."""
        if self.count:
            result.parser_ok = False
            result.notes.append(self.note(tool))


#: The blanks a tool's line ends with or consists of: ASCII whitespace. ``str.strip`` also
#: takes NEL and U+2028, so a log holding only those would read as blank: no tool's
#: clean output.
BLANKS = " \t\r\n\f\v"


def plain_lines(ctx: ParseContext, long: LongLines | None = None) -> Iterator[str]:
    """The log, streamed, without ANSI escapes or trailing blanks.

    A line cut at the reading width arrives as a ``Cut`` (its trailing blanks are not
    the line's end, so they stay) and is told to ``long``.
    """
    for number, line in enumerate(ctx.log_lines(), 1):
        if isinstance(line, Cut):
            if long is not None:
                long.see(number, line)
            yield plain(line)
        else:
            yield plain(line).rstrip(BLANKS)


def quote(line: str, width: int) -> str:
    """``line`` stripped and cut to ``width`` characters, for a note; a ``Cut`` counts on."""
    if isinstance(line, Cut):
        return cap_line(Cut(line.body.lstrip(), line.omitted), width)
    return cap_line(line.strip(), width)


def group(match: re.Match[str], name: str) -> str:
    """``match[name]``; still a ``Cut`` (counting the cut) when the matched line was cut
    and the group runs to its end, where the cut is."""
    text: str = match[name]
    line = match.string
    if isinstance(line, Cut) and text is not None and match.end(name) == len(line):
        start = match.start(name)
        if start <= len(line.body):
            return Cut(line.body[start:], line.omitted)
    return text


def after(line: str, start: int) -> str:
    """``line[start:]``; still a ``Cut`` when ``line`` is one and ``start`` is within its body."""
    if isinstance(line, Cut) and start <= len(line.body):
        return Cut(line.body[start:], line.omitted)
    return line[start:]


def joined(*pieces: str) -> str:
    """The pieces as one string; a ``Cut`` among them makes it a ``Cut`` counting theirs."""
    omitted = sum(piece.omitted for piece in pieces if isinstance(piece, Cut))
    if not omitted:
        return "".join(pieces)
    return Cut("".join(piece.body if isinstance(piece, Cut) else piece for piece in pieces),
               omitted)


def log_ends(ctx: ParseContext) -> str:
    """``"; log ends: <last non-blank line>"`` to append to a note, or ``""`` for an empty log.

    A tool that stops before writing its report (a usage error, a crash, an
    unreachable service) says why on its last line; quoting it lets the note
    explain the run.
    """
    last = ""
    for line in plain_lines(ctx):
        if line.strip():
            last = line
    return f"; log ends: {quote(last, 200)}" if last else ""


class DetailLines:
    """The first ``limit`` lines of a finding's detail, plus a count of the rest.

    A frame or a diff under one diagnostic, or a hook's output, can be
    arbitrarily long; only what the digest can show is kept. The bare ``|``
    border lines of a diagnostic frame say nothing and are dropped, unless
    ``keep_borders`` (the text is a tool's own output, kept as it was printed).
    """

    __slots__ = ("extra", "keep_borders", "limit", "lines")

    def __init__(self, limit: int, *, keep_borders: bool = False) -> None:
        self.limit = limit
        self.keep_borders = keep_borders
        self.lines: list[str] = []
        self.extra = 0

    def add(self, line: str) -> None:
        if not self.keep_borders and line.strip() == "|":
            return
        if len(self.lines) < self.limit:
            self.lines.append(cap_line(line))
        else:
            self.extra += 1

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.add(line)

    def tuple(self) -> Snippet:
        """The kept lines; the others are counted (``omitted``), not kept."""
        return Snippet(self.lines, self.extra)


class PendingFinding:
    """A finding whose detail lines are still arriving on the following log lines."""

    __slots__ = ("detail", "id", "kind", "location", "message")

    def __init__(self, ident: str, kind: str, message: str, location: str | None, *,
                 limit: int) -> None:
        self.id = ident
        self.kind = kind
        self.message = message
        self.location = location
        self.detail = DetailLines(limit)

    def emit(self, sink: FindingSink) -> None:
        sink.add(Finding(self.id, self.kind, cap_line(self.message), self.location,
                         self.detail.tuple()))


class LogSample:
    """The first few log lines no pattern recognised, to explain an unexplained exit."""

    __slots__ = ("count", "limit", "lines")

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self.count = 0

    def add(self, line: str) -> None:
        if not line.strip(BLANKS):
            return
        self.count += 1
        if len(self.lines) < self.limit:
            self.lines.append(quote(line, 200))

    def merge(self, other: LogSample) -> None:
        """Count ``other``'s lines as this sample's, after its own (their order)."""
        self.count += other.count
        self.lines.extend(other.lines[:max(0, self.limit - len(self.lines))])

    def describe(self) -> str:
        if not self.lines:
            return "the log is empty"
        shown = " | ".join(self.lines)
        return f"first unrecognised log line(s): {shown}"


class MinorDiagnostics:
    """Diagnostics below the severity a tool normally fails on, kept in case it failed on them.

    A type checker's warnings and notes carry no exit-code weight in most runs, so
    they are counted, never findings. But when the tool exits with its "diagnostics
    found" code and printed nothing worse (ty exits 1 on warnings unless
    ``--exit-zero-on-warning``, pyright on warnings with ``--warnings``, mypy's
    ``--output json`` on a note), those are the diagnostics the exit code rests
    on: they become the findings, so the run is a located ``fail``, not an
    unexplained ``error``. The first ``top`` are kept; all are counted.
    """

    __slots__ = ("sink",)

    def __init__(self, top: int) -> None:
        self.sink = FindingSink(top)

    def add(self, finding: Finding) -> None:
        self.sink.add(finding)

    def promote(self, result: ParseResult, *, tool: str, rc: int, found_rc: int,
                what: str) -> bool:
        """Make the kept diagnostics ``result``'s findings when the exit code rests on them.

        Only for exit code ``found_rc`` (the tool's "diagnostics found"), only when
        ``result`` has no finding, and only when there is something to promote; a
        note says so. ``what`` names them with their counts ("1 warning(s)").
        """
        if rc != found_rc or result.total or not self.sink.total:
            return False
        result.findings = self.sink.kept
        result.findings_total = self.sink.total
        result.notes.append(f"{tool} exited {rc} with no error, only {what}: "
                            "those are what it failed on, so they are the findings")
        return True
