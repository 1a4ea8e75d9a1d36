"""The ``mypy`` parser: mypy's text output, or its NDJSON (``--output json``, mypy >= 1.11)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeGuard

from ckdn.parsers._logtext import (
    BLANKS,
    DetailLines,
    LogSample,
    LongLines,
    MinorDiagnostics,
    after,
    group,
    joined,
    plain_lines,
)
from ckdn.parsers.base import (
    LINE_CAP,
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["MypyParser"]

# Both go to stdout, so the log is the evidence; it is read line by line. Every
# line is tried as either form, because mypy prints some errors as text even
# under ``--output json`` ("x.py: error: Cannot read file", "Found 1 error ...").
# Errors are ``type_error`` findings; notes (and warnings) are counted, and a note
# right after an error becomes part of that error's detail.
#
# Every line must be mypy's: a diagnostic, an NDJSON record, "Found N errors",
# "Success: ...", mypy's messages about its invocation ("mypy: ...", argparse's
# "usage:" block, "There are no .py[i] files ..."), its configuration warnings
# ("mypy.ini: [mypy]: Unrecognized option: ..."), its "Warning: ..." about a
# deprecated flag (quoted in a note), ``-v``'s "LOG:" lines or a report's
# "Generated ... report" line. Any other line (a traceback, a crash
# message, another tool's log) makes the log unreadable, at any exit code: in
# JSON mode a clean run prints nothing at all, so nothing else can tell such a
# log from a clean one. Guards besides: "Found N errors" and "Success: no issues
# found" are cross-checked; in text mode exit code 0 needs the "Success:" line;
# a message about the invocation or the configuration is never green (mypy did
# not check what was asked, or not as configured).
#
# ``mypy --output json`` exits 1 when its only output is a note (``reveal_type``):
# mypy counts any line without ": note:" as an error, and an NDJSON record has
# none. Then the notes are what it failed on, so they become the findings
# (``type_note``; :class:`~ckdn.parsers._logtext.MinorDiagnostics`). A torn NDJSON record
# makes the whole log unreadable: it contributes no findings and no counts.

KIND = "type_error"
LESSER_KINDS: Final = {"note": "type_note", "warning": "type_warning"}
#: mypy's exit code when it found errors (2 is a blocker: a crash, bad usage, no files).
FOUND_RC = 1
# "a.py:5: error: msg  [code]", "a.py:5:12: ...", "a.py:5:12:5:13: ..." (--show-error-end),
# "a.py: error: Cannot read file ..." (no line). Each repetition is bounded by the
# literal after it (":" or ": "), so a failing match costs time linear in the line.
_TEXT: Final = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>-?\d+)(?::(?P<col>-?\d+)(?::-?\d+:-?\d+)?)?)?: "
    r"(?P<sev>error|warning|note): (?P<msg>.*)$")
_CODE_NAME: Final = re.compile(r"[a-z0-9-]+")
_FOUND: Final = re.compile(r"^Found (\d+) errors? in (\d+) files?")
# The whole line, in the number mypy prints: a line cut short is not mypy's verdict.
_SUCCESS: Final = re.compile(
    r"^Success: no issues found in (?:(?P<one>1) source file|(?P<many>\d+) source files)$")
_CHECKED: Final = re.compile(r"\(checked (\d+) source files?\)")
#: "mypy.ini: [mypy]: Unrecognized option: x = y", "mypy.ini: [mypy-x]: ..." (config_parser).
_CONFIG: Final = re.compile(r"^[^\s:][^:]*: \[[^\]]*\]: ")
_NO_SECTION: Final = ": No [mypy] section in config file"
_NO_FILES: Final = "There are no .py[i] files in directory "
#: Lines mypy prints that say nothing about the code: -v logging, written reports.
_CHATTER: Final = ("LOG: ", "TRACE: ", "Generated ")
_TOOL = "mypy"


class MypyParser(BaseParser):
    """Reads mypy's diagnostics (text or NDJSON) from the log."""

    name = "mypy"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "format": Option("str", choices=("text", "json"),
                         help="what the command prints: text (default) or json (--output json)"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


def split_code(message: str) -> tuple[str, str | None]:
    """``("msg", "code")`` from ``"msg  [code]"``; ``(message, None)`` without a code.

    String methods, not a pattern: a message of 50,000 spaces before a bracket
    made ``^(.*?)\\s+\\[...\\]$`` backtrack quadratically.
    """
    if message.endswith("]"):
        start = message.rfind("[")
        if start > 0 and message[start - 1].isspace() and _CODE_NAME.fullmatch(
                message, start + 1, len(message) - 1):
            return message[:start].rstrip(), message[start + 1:-1]
    return message, None


class _Error:
    """An error whose message may still continue (``--pretty`` wraps long lines)."""

    __slots__ = ("code", "detail", "kind", "line", "location", "message", "path")

    def __init__(self, path: str, line: int | None, location: str, *, message: str,
                 code: str | None, limit: int, kind: str = KIND) -> None:
        self.path = path
        self.line = line
        self.location = location
        self.message = message
        self.code = code
        self.kind = kind
        self.detail = DetailLines(limit)

    def finding(self) -> Finding:
        message, code = self.message, self.code
        if code is None:
            message, code = split_code(message)
        text = message if code is None else f"{message} [{code}]"
        ident = f"{self.location}:{code or ('error' if self.kind == KIND else 'note')}"
        return Finding(ident, self.kind, cap_line(text), self.location, self.detail.tuple())


class _Scan:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.json_mode = ctx.options.get("format", "text") == "json"
        self.sink = ctx.sink()
        self.minor = MinorDiagnostics(ctx.top)
        self.errors = 0
        self.notes = 0
        self.warnings = 0
        self.tool_messages: list[str] = []  # "mypy: ...": about the invocation
        self.tool_count = 0
        self.config: list[str] = []  # configuration warnings
        self.config_count = 0
        self.warned: list[str] = []  # mypy's "Warning: ..." lines (deprecated flags)
        self.malformed = 0
        self.found: int | None = None
        self.files: int | None = None
        self.success = False
        self.pending: _Error | None = None
        self.usage = False  # inside argparse's "usage:" block
        self.unknown = LogSample()

    def flush(self) -> None:
        if self.pending is not None:
            self.sink.add(self.pending.finding())
            self.pending = None

    def tool(self, message: str) -> None:
        self.tool_count += 1
        if len(self.tool_messages) < 3:
            self.tool_messages.append(cap_line(message, 200))

    def diagnostic(self, path: str, line: int | None, col: int | None, *, severity: str,
                   message: str, code: str | None, hint: str | None = None) -> None:
        if severity != "error":
            if severity == "note":
                self.notes += 1
            else:
                self.warnings += 1
            # A note on the line of the error just read explains it ("See https://...").
            pending = self.pending
            if pending is not None and (path, line) == (pending.path, pending.line):
                pending.detail.add(joined(f"{severity}: ", message))
                return
            minor = _Error(path, line, self.ctx.location(path, line, col), message=message,
                            code=code, limit=self.ctx.max_snippet_lines,
                            kind=LESSER_KINDS.get(severity, "type_warning"))
            self.minor.add(minor.finding())
            return
        self.flush()
        if path == _TOOL and line is None:
            self.tool(message)  # "mypy: error: ..." is about the invocation, not a file
            return
        self.errors += 1
        self.pending = _Error(path, line, self.ctx.location(path, line, col), message=message,
                              code=code, limit=self.ctx.max_snippet_lines)
        if hint:
            self.pending.detail.extend(hint.splitlines())

    def feed(self, line: str) -> None:
        if line.startswith("{"):
            self.usage = False
            self.json_record(line)
            return
        match = _TEXT.match(line)
        if match:
            self.usage = False
            msg, code = split_code(group(match, "msg"))
            self.diagnostic(match["path"], _positive(match["line"]), _positive(match["col"]),
                            severity=match["sev"], message=msg, code=code)
            return
        pending = self.pending
        if pending is not None and line[:1].isspace():
            pending.detail.add(line)  # --pretty: source line and caret
            return
        if (pending is not None and pending.code is None and not pending.detail.lines and line
                and len(pending.message) < LINE_CAP
                and _FOUND.match(line) is None and _SUCCESS.match(line) is None):
            pending.message = f"{pending.message} {line}"  # --pretty wrapped the message
            return
        self.flush()
        if self.usage and line[:1].isspace():
            return  # argparse's usage text continues, indented
        self.usage = False
        if line.strip(BLANKS):  # NEL or U+2028 alone is no blank line mypy printed
            self.other(line)

    def other(self, line: str) -> None:
        """A line that is not a diagnostic: mypy's verdict, its own messages, or not mypy's."""
        found = _FOUND.match(line)
        success = _SUCCESS.match(line)
        if found:
            self.found = int(found.group(1))
            checked = _CHECKED.search(line)
            if checked:
                self.files = int(checked.group(1))
        elif success:
            self.success = True
            self.files = int(success["one"] or success["many"])
        elif line.startswith("usage: mypy"):
            self.usage = True
        elif line.startswith("mypy: "):
            self.tool(after(line, len("mypy: ")))
        elif line.startswith(_NO_FILES):
            self.tool(line)
        elif _CONFIG.match(line) or line.endswith(_NO_SECTION):
            self.config_count += 1
            if len(self.config) < 2:
                self.config.append(cap_line(line, 200))
        elif line.startswith("Warning: "):  # a deprecated flag, still honoured: said, not fatal
            if len(self.warned) < 2:
                self.warned.append(cap_line(line, 200))
        elif not line.startswith(_CHATTER):
            self.unknown.add(line)

    def json_record(self, line: str) -> None:
        try:
            record: Any = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            # Under --output json this is drift; in text mode, just a line mypy did not write.
            if self.json_mode:
                self.malformed += 1
            else:
                self.unknown.add(line)
            return
        path, lineno, message = record.get("file"), record.get("line"), record.get("message")
        severity = record.get("severity")
        if not (isinstance(path, str) and isinstance(message, str) and isinstance(severity, str)
                and (lineno is None or _is_int(lineno))):
            self.malformed += 1
            return
        column = record.get("column")
        code, hint = record.get("code"), record.get("hint")
        self.diagnostic(
            path, _positive(lineno),
            # NDJSON columns are 0-based (the text output adds 1); -1 means "none".
            column + 1 if _is_int(column) and column >= 0 else None,
            severity=severity, message=message, code=code if isinstance(code, str) else None,
            hint=hint if isinstance(hint, str) else None)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: Any) -> int | None:
    if isinstance(value, str):
        value = int(value) if value else None
    return value if _is_int(value) and value >= 1 else None


def _parse(ctx: ParseContext) -> ParseResult:
    scan = _Scan(ctx)
    long = LongLines()
    for line in plain_lines(ctx, long):
        scan.feed(line)
    scan.flush()
    if scan.malformed:
        # A torn or drifted record: the log is not mypy's whole output, so nothing in it counts.
        return ParseResult(parser_ok=False, notes=[
            f"{scan.malformed} line(s) of mypy's JSON output could not be read (cut short, "
            "or format drift): the log is not read at all"])
    counts = {"errors": scan.errors, "notes": scan.notes, "warnings": scan.warnings}
    if scan.files is not None:
        counts["files"] = scan.files
    result = scan.sink.result(summary={"counts": counts})
    if scan.json_mode:
        result.tail_omits = _RECORD_HEADS  # the findings are these lines, read
    _guards(ctx, scan, result)
    long.refuse(result, "mypy")
    return result


#: How each of mypy's JSON records starts: a log tail need not repeat them.
_RECORD_HEADS = ('{"file":',)


def _minor_counts(scan: _Scan) -> str:
    parts = [f"{scan.notes} note(s)"] if scan.notes else []
    if scan.warnings:
        parts.append(f"{scan.warnings} warning(s)")
    return " and ".join(parts)


def _guards(ctx: ParseContext, scan: _Scan, result: ParseResult) -> None:
    notes = result.notes
    if scan.found is not None and scan.found != scan.errors + scan.tool_count:
        result.parser_ok = False
        notes.append(f"mypy says it found {scan.found} error(s) but {scan.errors} were read "
                     "from the log")
    if scan.success and scan.errors:
        result.parser_ok = False
        notes.append(f"mypy says 'Success: no issues found' but {scan.errors} error(s) were read")
    notes.extend(f"mypy: {message}" for message in scan.tool_messages)
    if scan.tool_count and ctx.rc == 0:
        result.parser_ok = False
        notes.append(f"exit code 0 but mypy printed {scan.tool_count} message(s) about its "
                     "invocation: it did not check what was asked")
    if scan.config_count:
        result.parser_ok = False
        notes.append(cap_line(f"mypy did not apply its configuration as written "
                              f"({scan.config_count} warning(s)): " + " | ".join(scan.config)))
    notes.extend(f"mypy says: {line}" for line in scan.warned)
    if scan.unknown.count:
        result.parser_ok = False
        notes.append(f"{scan.unknown.count} line(s) of the log are not mypy's output (a crash, "
                     "or another tool's log): " + scan.unknown.describe())
    if ctx.rc == 0 and not scan.json_mode and not scan.success and scan.found is None:
        result.parser_ok = False
        notes.append("exit code 0 but no 'Success: no issues found' line: cannot confirm a clean "
                     "run (keep mypy's error summary on, or use format = \"json\" with "
                     "--output json)")
    elif ctx.rc != 0 and not scan.errors and scan.tool_count:
        result.parser_ok = False  # mypy stopped before checking; its messages are quoted above
    elif ctx.rc != 0 and not scan.errors:
        promoted = scan.minor.promote(result, tool="mypy", rc=ctx.rc, found_rc=FOUND_RC,
                                       what=_minor_counts(scan))
        if not promoted and not scan.unknown.count:
            result.parser_ok = False
            notes.append(f"exit code {ctx.rc} but no mypy diagnostic in the log; "
                         + scan.unknown.describe())
