"""The ``mypy`` parser: mypy's text output, or its NDJSON (``--output json``, mypy >= 1.11).

Both go to stdout, so the log is the evidence; it is read line by line. Every
line is tried as either form, because mypy prints some errors as text even
under ``--output json`` ("x.py: error: Cannot read file", "Found 1 error ...").
Errors are ``type_error`` findings; notes (and warnings) are counted, and a note
right after an error becomes part of that error's detail.

Guards: "Found N errors" and "Success: no issues found" are cross-checked. In
text mode (the default) exit code 0 also needs the "Success:" line; in JSON mode
mypy prints nothing at all on a clean run, so an empty log is accepted there.

``mypy --output json`` exits 1 when its only output is a note (``reveal_type``):
no finding comes out of that, so the run reconciles to ``error`` — never
``pass`` — with a note saying the run held only notes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeGuard

from ckdn.parsers._logtext import DetailLines, LogSample, plain_lines, silent_red_note
from ckdn.parsers.base import (
    LINE_CAP,
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)
from ckdn.parsers.guard import guarded

__all__ = ["MypyParser"]

KIND = "type_error"
# "a.py:5: error: msg  [code]", "a.py:5:12: ...", "a.py:5:12:5:13: ..." (--show-error-end),
# "a.py: error: Cannot read file ..." (no line).
_TEXT: Final = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>-?\d+)(?::(?P<col>-?\d+)(?::-?\d+:-?\d+)?)?)?: "
    r"(?P<sev>error|warning|note): (?P<msg>.*)$")
_CODE: Final = re.compile(r"^(?P<msg>.*?)\s+\[(?P<code>[a-z0-9-]+)\]$")
_FOUND: Final = re.compile(r"^Found (\d+) errors? in (\d+) files?")
_SUCCESS: Final = re.compile(r"^Success: no issues found(?: in (\d+) source files?)?")
_CHECKED: Final = re.compile(r"\(checked (\d+) source files?\)")
_TOOL = "mypy"


class MypyParser(BaseParser):
    """Reads mypy's diagnostics (text or NDJSON) from the log."""

    name = "mypy"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "format": Option("str", choices=("text", "json"),
                         help="what the command prints: text (default) or json (--output json)"),
    }

    def parse(self, ctx: ParseContext) -> ParseResult:
        return guarded(self.name, _parse, ctx)


class _Error:
    """An error whose message may still continue (``--pretty`` wraps long lines)."""

    __slots__ = ("code", "detail", "line", "location", "message", "path")

    def __init__(self, path: str, line: int | None, location: str, *, message: str,
                 code: str | None, limit: int) -> None:
        self.path = path
        self.line = line
        self.location = location
        self.message = message
        self.code = code
        self.detail = DetailLines(limit)

    def emit(self, sink: FindingSink) -> None:
        message, code = self.message, self.code
        if code is None:
            coded = _CODE.match(message)
            if coded:
                message, code = coded["msg"], coded["code"]
        text = message if code is None else f"{message} [{code}]"
        sink.add(Finding(f"{self.location}:{code or 'error'}", KIND, cap_line(text),
                         self.location, self.detail.tuple()))


class _Scan:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.json_mode = ctx.options.get("format", "text") == "json"
        self.sink = FindingSink(ctx.top)
        self.errors = 0
        self.notes = 0
        self.warnings = 0
        self.tool_errors = 0
        self.tool_messages: list[str] = []
        self.malformed = 0
        self.found: int | None = None
        self.files: int | None = None
        self.success = False
        self.pending: _Error | None = None
        self.first_note = ""
        self.unknown = LogSample()

    def flush(self) -> None:
        if self.pending is not None:
            self.pending.emit(self.sink)
            self.pending = None

    def diagnostic(self, path: str, line: int | None, col: int | None, *, severity: str,
                   message: str, code: str | None, hint: str | None = None) -> None:
        if severity != "error":
            if severity == "note":
                self.notes += 1
            else:
                self.warnings += 1
            if not self.first_note:
                self.first_note = cap_line(f"{self.ctx.location(path, line)}: {message}", 200)
            # A note on the line of the error just read explains it ("See https://...").
            pending = self.pending
            if pending is not None and (path, line) == (pending.path, pending.line):
                pending.detail.add(f"{severity}: {message}")
            return
        self.flush()
        if path == _TOOL and line is None:
            # "mypy: error: ..." is about the invocation, not about a file.
            self.tool_errors += 1
            if len(self.tool_messages) < 3:
                self.tool_messages.append(cap_line(message, 200))
            return
        self.errors += 1
        self.pending = _Error(path, line, self.ctx.location(path, line, col), message=message,
                              code=code, limit=self.ctx.max_snippet_lines)
        if hint:
            self.pending.detail.extend(hint.splitlines())

    def feed(self, line: str) -> None:
        if line.startswith("{"):
            self.json_record(line)
            return
        match = _TEXT.match(line)
        if match:
            msg, code = match["msg"], None
            coded = _CODE.match(msg)
            if coded:
                msg, code = coded["msg"], coded["code"]
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
        found = _FOUND.match(line)
        if found:
            self.found = int(found.group(1))
        elif _SUCCESS.match(line):
            self.success = True
        else:
            self.unknown.add(line)
            return
        checked = _CHECKED.search(line) or _SUCCESS.match(line)
        if checked and checked.group(1):
            self.files = int(checked.group(1))

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
    for line in plain_lines(ctx):
        scan.feed(line)
    scan.flush()
    counts = {"errors": scan.errors, "notes": scan.notes, "warnings": scan.warnings}
    if scan.files is not None:
        counts["files"] = scan.files
    result = scan.sink.result(summary={"counts": counts})
    notes = result.notes
    if scan.malformed:
        result.parser_ok = False
        notes.append(f"{scan.malformed} line(s) of mypy's JSON output could not be read "
                     "(format drift?)")
    if scan.found is not None and scan.found != scan.errors + scan.tool_errors:
        result.parser_ok = False
        notes.append(f"mypy says it found {scan.found} error(s) but {scan.errors} were read "
                     "from the log")
    if scan.success and scan.errors:
        result.parser_ok = False
        notes.append(f"mypy says 'Success: no issues found' but {scan.errors} error(s) were read")
    notes.extend(f"mypy: {message}" for message in scan.tool_messages)
    if ctx.rc == 0 and not scan.json_mode and not scan.success and scan.found is None:
        result.parser_ok = False
        notes.append("exit code 0 but no 'Success: no issues found' line: cannot confirm a clean "
                     "run (keep mypy's error summary on, or use format = \"json\" with "
                     "--output json); " + scan.unknown.describe())
    elif ctx.rc != 0 and not scan.errors and not scan.tool_errors:
        note = silent_red_note("mypy", ctx.rc, scan.warnings, scan.notes, info_word="note(s)")
        if note is not None:
            note += f"; first: {scan.first_note}"
        else:
            result.parser_ok = False
            note = (f"exit code {ctx.rc} but no mypy diagnostic in the log; "
                    + scan.unknown.describe())
        notes.append(note)
    return result
