"""Reading a tool's terminal text: the pieces every log-reading parser shares.

Several tools leave no report file, or explain a failure only in their log, so
their parsers read the log: stripped of colour escapes, streamed line by line,
keeping only what a digest can show. A diagnostic's detail can be arbitrarily
long, so it is bounded while it arrives (:class:`DetailLines`,
:class:`PendingFinding`); a run nothing explains gets the first lines no pattern
recognised (:class:`LogSample`) or the log's last line (:func:`log_ends`), which
is where a tool that stopped early says why; and a type checker that failed on
warnings or notes alone has them promoted to findings the same way for every
type checker (:class:`Lesser`). Keeping these rules in one place keeps those notes
identical across parsers; the ``-->`` location line of the layout ty and
``ruff format`` share (:data:`ARROW`) is here for the same reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from ckdn.parsers.base import Finding, FindingSink, ParseContext, ParseResult, Snippet, cap_line

__all__ = [
    "ARROW",
    "DetailLines",
    "Lesser",
    "LogSample",
    "PendingFinding",
    "crashed",
    "log_ends",
    "plain",
    "plain_lines",
]

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
    """``line`` without ANSI escape sequences."""
    return _ANSI.sub("", line) if "\x1b" in line else line


def plain_lines(ctx: ParseContext) -> Iterator[str]:
    """The log, streamed, without ANSI escapes or trailing blanks."""
    for line in ctx.log_lines():
        yield plain(line).rstrip()


def log_ends(ctx: ParseContext) -> str:
    """``"; log ends: <last non-blank line>"`` to append to a note, or ``""`` for an empty log.

    A tool that stops before writing its report (a usage error, a crash, an
    unreachable service) says why on its last line; quoting it lets the note
    explain the run.
    """
    last = ""
    for line in plain_lines(ctx):
        if line.strip():
            last = line.strip()
    return f"; log ends: {cap_line(last, 200)}" if last else ""


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
        if not line.strip():
            return
        self.count += 1
        if len(self.lines) < self.limit:
            self.lines.append(cap_line(line.strip(), 200))

    def describe(self) -> str:
        if not self.lines:
            return "the log is empty"
        shown = " | ".join(self.lines)
        return f"first unrecognised log line(s): {shown}"


class Lesser:
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
