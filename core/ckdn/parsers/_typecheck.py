"""Pieces shared by the type-checker parsers (mypy, ty, pyright) and their neighbours.

The type checkers turn a stream of diagnostics into findings while counting the
messages that carry no exit-code weight, and must explain a run whose exit code
says "red" although no error was printed; keeping those rules here keeps the
explanation identical across tools. ``reformat`` and ``ruff`` read the same
kind of terminal text (ruff's renderer is ty's) and share the never-raise guard.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from ckdn.parsers.base import (
    Finding,
    FindingSink,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = [
    "DetailLines",
    "LogSample",
    "PendingFinding",
    "guarded",
    "plain",
    "plain_lines",
    "silent_red_note",
]

#: Terminal escape sequences: CSI (colours, cursor moves) and the two-byte ones
#: such as the charset reset ``ESC ( B`` mypy's colours end with. A tool forced
#: into colour (FORCE_COLOR, MYPY_FORCE_COLOR) must not defeat the line patterns.
_ANSI: Final = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()*+][0-9A-Za-z]|[@-Z\\-_])")


def plain(line: str) -> str:
    """``line`` without ANSI escape sequences."""
    return _ANSI.sub("", line) if "\x1b" in line else line


def plain_lines(ctx: ParseContext) -> Iterator[str]:
    """The log, streamed, without ANSI escapes or trailing blanks."""
    for line in ctx.log_lines():
        yield plain(line).rstrip()


def guarded(tool: str, parse: Callable[[ParseContext], ParseResult],
            ctx: ParseContext) -> ParseResult:
    """Run ``parse``; any exception on unexpected input becomes ``parser_ok=False``.

    A parser must never raise: the run's evidence is whatever the tool left, and
    a crash here would turn garbage into a traceback instead of a loud status.
    """
    try:
        return parse(ctx)
    except Exception as exc:  # reported: a note and parser_ok=False, never silent
        return ParseResult(parser_ok=False, notes=[
            cap_line(f"{tool} parser could not read the output: {type(exc).__name__}: {exc}")])


class DetailLines:
    """The first ``limit`` lines of a finding's detail, plus a count of the rest.

    A frame or a diff under one diagnostic can be arbitrarily long; only what the
    digest can show is kept.
    """

    __slots__ = ("extra", "limit", "lines")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self.extra = 0

    def add(self, line: str) -> None:
        if line.strip() == "|":  # a bare frame border says nothing
            return
        if len(self.lines) < self.limit:
            self.lines.append(cap_line(line))
        else:
            self.extra += 1

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.add(line)

    def tuple(self) -> tuple[str, ...]:
        if self.extra:
            return (*self.lines, f"... [+{self.extra} more lines]")
        return tuple(self.lines)


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


def silent_red_note(tool: str, rc: int, warnings: int, infos: int, *,
                    info_word: str = "info") -> str | None:
    """Explain a nonzero exit code that came with no error diagnostics at all.

    Warnings and info/notes are never findings (they carry no exit-code weight
    for most configurations), so such a run reconciles to ``error`` ("no
    findings although the parser expects evidence"); this note says why, so the
    error is explained rather than mysterious.
    """
    if not warnings and not infos:
        return None
    parts = []
    if warnings:
        parts.append(f"{warnings} warning(s)")
    if infos:
        parts.append(f"{infos} {info_word}")
    return (f"{tool} exited {rc} with no error diagnostics, only {' and '.join(parts)}; "
            "those are counted in the summary, never findings")
