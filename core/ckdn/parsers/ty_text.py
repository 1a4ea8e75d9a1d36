"""The ``ty`` parser: ``ty check`` terminal text, full or ``--output-format concise``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar, Final

from ckdn.parsers._logtext import (
    ARROW,
    LogSample,
    LongLines,
    PendingFinding,
    after,
    group,
    joined,
    plain_lines,
    quote,
)
from ckdn.parsers.base import BaseParser, Option, ParseContext, ParseResult

__all__ = ["TyParser"]

# ty writes no report file, so the log is read line by line. Error (and fatal)
# diagnostics are ``type_error`` findings. ty exits 1 on warnings too, unless
# ``--exit-zero-on-warning``: so with exit code 1 its warnings are what it failed
# on, and they are findings as well (``type_warning``); with exit code 0 they are
# counted. Info diagnostics never fail a run: counted.
#
# ty ends every run with its verdict, "Found N diagnostics" or "All checks
# passed!", so a log without one was cut short (or ty stopped: "ty failed"): it
# is unreadable and contributes no findings and no counts. Outside a
# diagnostic's block every line must be ty's (the verdict, "WARN No python
# files found ...", ``-v``'s "INFO" / "DEBUG" / "TRACE" lines); any other line is
# another tool's, and the log is unreadable. "Found N diagnostics" must equal
# the diagnostics read.

KIND = "type_error"
WARNING_KIND = "type_warning"
#: ty's exit code when it found diagnostics (2: its own failure, 101: a panic).
FOUND_RC = 1
_SEVERITIES = "error|warning|info|fatal"
# full layout: "error[invalid-assignment]: Object of type ..." then " --> a.py:9:14" (ARROW)
_HEADER: Final = re.compile(rf"^(?P<sev>{_SEVERITIES})(?:\[(?P<code>[^\]]+)\])?: (?P<msg>.*)$")
# concise layout: "a.py:9:14: error[invalid-assignment] Object of type ..."
_CONCISE: Final = re.compile(
    rf"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>{_SEVERITIES})\[(?P<code>[^\]]+)\] "
    r"(?P<msg>.*)$")
# In the number ty prints ("1 diagnostic", "2 diagnostics"): a verdict cut short is not one.
_FOUND: Final = re.compile(r"^Found (?:(?P<one>1) diagnostic|(?P<many>\d+) diagnostics)$")
_CLEAN = "All checks passed!"
_NO_FILES = "No python files found under the given path(s)"
#: ty's own failure ("ty failed", then "  Cause: ..." lines).
_FAILED = "ty failed"
#: ty's tracing lines under -v / -vv: they say nothing about the code.
_CHATTER: Final = ("INFO ", "DEBUG ", "TRACE ")
# ty's io diagnostics name the file in the message: "`/abs/x.py`: No such file ..."
_PATH_IN_MESSAGE: Final = re.compile(r"^`(?P<path>[^`]+)`: ")


class TyParser(BaseParser):
    """Reads ty's diagnostics from the log."""

    name = "ty"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "allow_no_files": Option("bool", help="accept a run where ty found no Python files"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


class _Scan:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.sink = ctx.sink()
        self.counts = {"error": 0, "warning": 0, "info": 0}
        self.found: int | None = None
        self.clean = False
        self.no_files = False
        self.failed: list[str] = []  # "ty failed" and its "Cause:" lines
        self.fails_on_warnings = ctx.rc == FOUND_RC
        self.in_block = False
        # The open error diagnostic (its location arrives on the next line).
        self.header: re.Match[str] | None = None
        self.pending: PendingFinding | None = None
        self.unknown = LogSample()

    def count(self, severity: str) -> None:
        self.counts["error" if severity == "fatal" else severity] += 1

    def open(self, sev: str, code: str | None, msg: str, *, path: str | None = None,
             line: str | None = None, col: str | None = None) -> None:
        self.flush()
        self.count(sev)
        kind = KIND if sev in ("error", "fatal") else WARNING_KIND
        if kind == WARNING_KIND and not (sev == "warning" and self.fails_on_warnings):
            return
        code = code or sev
        if path is None:
            named = _PATH_IN_MESSAGE.match(msg)
            location = self.ctx.location(named["path"]) if named else None
            if named and location:  # keep machine paths out of the digest
                msg = joined(f"`{location}`: ", after(msg, named.end()))
        else:
            location = self.ctx.location(path, _num(line), _num(col))
        ident = f"{location}:{code}" if location else f"{code}:{msg}"
        self.pending = PendingFinding(ident, kind, joined(msg, f" [{code}]"), location,
                                      limit=self.ctx.max_snippet_lines)

    def flush(self) -> None:
        header, self.header = self.header, None
        if header is not None:  # a header with no "-->" line: the diagnostic has no location
            self.open(header["sev"], header["code"], group(header, "msg"))
        if self.pending is not None:
            self.pending.emit(self.sink)
            self.pending = None

    def feed(self, line: str) -> None:
        if not line:
            self.flush()
            self.in_block = False
            return
        header = self.header
        if header is not None:
            arrow = ARROW.match(line)
            if arrow:
                self.header = None
                self.open(header["sev"], header["code"], group(header, "msg"),
                          path=arrow["path"], line=arrow["line"], col=arrow["col"])
                self.in_block = True
                return
            self.flush()
        if _FOUND.match(line) or line == _CLEAN:  # the verdict closes any open block
            self.flush()
            self.in_block = False
            self._summary(line)
            return
        concise = _CONCISE.match(line)
        if concise:
            self.open(concise["sev"], concise["code"], group(concise, "msg"),
                      path=concise["path"], line=concise["line"], col=concise["col"])
            self.flush()
            return
        head = _HEADER.match(line)
        # A header without [code] inside a block is a sub-diagnostic ("info: Function
        # defined here"), part of the diagnostic above it.
        if head and (head["code"] or not self.in_block):
            self.flush()
            self.header = head
            self.in_block = True
            return
        if self.in_block:
            if self.pending is not None:
                self.pending.detail.add(line)
            return
        self._summary(line)

    def _summary(self, line: str) -> None:
        found = _FOUND.match(line)
        if found:
            self.found = int(found["one"] or found["many"])
        elif line == _CLEAN:
            self.clean = True
        elif line.endswith(_NO_FILES):
            self.no_files = True
        elif line == _FAILED or (self.failed and line.startswith("  Cause: ")):
            if len(self.failed) < 3:
                self.failed.append(quote(line, 300))
        elif not line.startswith(_CHATTER) and not self.failed:
            self.unknown.add(line)

    def finish(self) -> None:
        self.flush()


def _num(text: str | None) -> int | None:
    return int(text) if text else None


def _parse(ctx: ParseContext) -> ParseResult:
    scan = _Scan(ctx)
    long = LongLines()
    for line in plain_lines(ctx, long):
        scan.feed(line)
    scan.finish()
    if scan.found is None and not scan.clean:
        # No verdict: ty stopped, or the log was cut short. Nothing in it counts.
        said = " ".join(scan.failed) if scan.failed else scan.unknown.describe()
        return ParseResult(parser_ok=False, notes=[
            f"exit code {ctx.rc} but ty printed no 'Found N diagnostics' and no 'All checks "
            f"passed!' (ty stopped, or the log was cut short): {said}"])
    counts = scan.counts
    total = sum(counts.values())
    result = scan.sink.result(summary={"counts": {
        "errors": counts["error"], "warnings": counts["warning"], "info": counts["info"]}})
    if scan.found is not None and scan.found != total:
        result.parser_ok = False
        result.notes.append(f"ty says it found {scan.found} diagnostic(s) but {total} were read "
                            "from the log (output format drift?)")
    if scan.unknown.count:
        result.parser_ok = False
        result.notes.append(f"{scan.unknown.count} line(s) of the log are not ty's output: "
                            + scan.unknown.describe())
    if scan.no_files and not ctx.options.get("allow_no_files", False):
        result.gate_failures.append("ty found no Python files to check")
        result.notes.append("ty checked nothing (\"No python files found\"); set "
                            "allow_no_files = true if that is expected")
    long.refuse(result, "ty")
    if scan.fails_on_warnings and counts["warning"]:
        result.notes.append(f"ty exits {FOUND_RC} on warnings (unless run with "
                            f"--exit-zero-on-warning): its {counts['warning']} warning(s) are "
                            f"findings ({WARNING_KIND})")
    elif ctx.rc != 0 and not result.total and not result.gate_failures:
        result.notes.append(f"ty exited {ctx.rc} without an error or warning diagnostic; "
                            + scan.unknown.describe())
    return result
