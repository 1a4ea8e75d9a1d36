"""The ``pyright`` parser: the JSON document ``pyright --outputjson`` prints to stdout."""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from typing import IO, Any, ClassVar, Final, TypeGuard

from ckdn.documents.textcap import Cut
from ckdn.parsers._jsonstream import JsonStream, TooLarge
from ckdn.parsers._loglines import open_log
from ckdn.parsers._logtext import LogSample, LongLines, MinorDiagnostics
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["Documents", "PyrightParser", "find_documents"]

# The document is in the log, so the log is the artifact, streamed: a candidate
# document starts at a line opening a JSON object and runs to the closing brace at
# column 0 (pyright indents its JSON); that span of the log is then read as JSON,
# streamed too (:class:`~ckdn.parsers._jsonstream.JsonStream`), its diagnostics one
# at a time, so a document of any size costs bounded memory, and a single value
# too large to read is refused with a note. Errors are ``type_error``
# findings; warnings and information are counted (pyright exits 0 on them),
# except that with ``--warnings`` pyright exits 1 on a warning-only run, and then
# those warnings are the findings (``type_warning``).
#
# The log must hold exactly what pyright printed: one pyright document (an
# object with ``version``, ``time``, a ``generalDiagnostics`` list and a
# ``summary`` with pyright's counts), and around it only pyright-python's own
# log lines. A second document (a rerun, another tool's JSON), or any other text
# (pyright's own complaints about its configuration, which it prints beside a
# clean document with exit code 0; a traceback; another tool's log) make the log
# unreadable, with a note quoting them.
#
# Guards besides: ``summary.errorCount`` / ``warningCount`` / ``informationCount``
# must match the diagnostics read; a log with no pyright document is
# ``parser_ok=False``; a run that analysed no file (``filesAnalyzed: 0``) is a
# gate failure unless ``allow_no_files``.

KIND = "type_error"
WARNING_KIND = "type_warning"
#: pyright's exit code when it reported errors (or, with --warnings, warnings).
FOUND_RC = 1
#: pyright-python's own logging ("2026-11-29 14:36:34,679 - DEBUG - pyright.node - ...")
#: and its notice of a newer release: not pyright's output, but not a problem either.
_WRAPPER_LOG: Final = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [A-Z]+ - pyright")
_WRAPPER_NOTICE: Final = ("WARNING: there is a new pyright version available",
                          "Please install the new version or set PYRIGHT_PYTHON_FORCE_VERSION")
_SUMMARY_KEYS: Final = ("filesAnalyzed", "errorCount", "warningCount", "informationCount")
#: The ``{`` lines of one candidate span tried as a document's start; later ones are text.
MAX_STARTS = 8
_DOCUMENT_KEYS: Final = frozenset({"version", "time", "summary", "generalDiagnostics"})
_SEVERITY_KEYS = {"error": "errorCount", "warning": "warningCount",
                  "information": "informationCount"}


class PyrightParser(BaseParser):
    """Reads pyright's ``--outputjson`` document from the log."""

    name = "pyright"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "allow_no_files": Option("bool", help="accept a run where pyright analysed no file"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


class _Doc:
    """One JSON object of the log, read as it streamed: its diagnostics already graded."""

    __slots__ = ("ctx", "lists", "minor", "odd", "sink", "summary", "tally", "time", "version")

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.version: Any = None
        self.time: Any = None
        self.summary: Any = None
        self.lists = 0  # generalDiagnostics arrays: pyright writes one
        self.sink = ctx.sink()
        self.minor = MinorDiagnostics(ctx.top)
        self.tally = {"error": 0, "warning": 0, "information": 0}
        self.odd = 0  # diagnostics with no known severity

    def is_pyright(self) -> bool:
        """pyright's own document: version, time, diagnostics and a summary with its counts."""
        summary = self.summary
        return (isinstance(self.version, str) and isinstance(self.time, str) and self.lists == 1
                and isinstance(summary, dict) and all(key in summary for key in _SUMMARY_KEYS))

    def add(self, diag: Any) -> None:
        severity = diag.get("severity") if isinstance(diag, dict) else None
        if severity not in self.tally or not isinstance(diag, dict):
            self.odd += 1
            return
        self.tally[severity] += 1
        if severity == "information":
            return
        path = diag.get("file") or diag.get("uri") or ""
        message = diag.get("message")
        message = message if isinstance(message, str) else ""
        target = self.sink if severity == "error" else self.minor.sink
        if not target.wants():  # build only what the digest (or the tap) takes
            target.total += 1
        elif severity == "error":
            target.add(_finding(self.ctx, diag, str(path), message))
        else:
            target.add(_finding(self.ctx, diag, str(path), message, kind=WARNING_KIND))


class Documents:
    """What a log holds: the first pyright document, how many there were, and the rest."""

    __slots__ = ("around", "first", "long", "other_json", "pyright")

    def __init__(self, around: LogSample) -> None:
        self.long = LongLines()  # lines past the reading width: the log was read in part
        self.first: _Doc | None = None
        self.pyright = 0  # pyright documents, the first one included
        self.other_json = 0  # JSON objects that are not pyright's document
        self.around = around  # text outside any document, pyright-python's logging left out

    def add(self, doc: _Doc) -> None:
        if not doc.is_pyright():
            self.other_json += 1
        elif self.first is None:
            self.first, self.pyright = doc, 1
        else:
            self.pyright += 1


def _text(sample: LogSample, line: str) -> None:
    if line.strip() and not (_WRAPPER_LOG.match(line) or line.startswith(_WRAPPER_NOTICE)):
        sample.add(line)


def _copy(sample: LogSample) -> LogSample:
    copy = LogSample(sample.limit)
    copy.merge(sample)
    return copy


def find_documents(ctx: ParseContext, around: LogSample) -> Documents:
    """Every JSON document in the log; other lines go to ``around``.

    A candidate starts at a line beginning with ``{`` and is tried whenever a line
    is exactly ``}`` (pyright indents its JSON, so only the outermost brace sits
    at column 0). A candidate that does not decode is text, except for a later
    ``{`` line inside it (up to :data:`MAX_STARTS`), which is tried in turn. Only
    the first pyright document is kept; the others are counted.
    """
    found = Documents(around)
    lines = ctx.log_spans()
    try:
        handle = open_log(ctx.log_path)  # for the spans that may be documents
    except FileNotFoundError:
        return found
    with handle:
        starts: list[tuple[int, LogSample]] = []  # the open candidate's starts
        held = LogSample(around.limit)  # its lines, as text if it is not a document
        for number, (start, end, line) in enumerate(lines, 1):
            if isinstance(line, Cut):
                found.long.see(number, line)
            if not starts:
                if not line.startswith("{"):
                    _text(around, line)
                    continue
                if line.rstrip().endswith("}"):  # the whole document on one line
                    doc = _document(ctx, handle, start, end)
                    if doc is not None:
                        found.add(doc)
                    else:
                        _text(around, line)
                    continue
            if line.startswith("{") and len(starts) < MAX_STARTS:
                starts.append((start, _copy(held)))  # what comes before it is text
            _text(held, line)
            if line.rstrip() != "}":
                continue
            for first, before in starts:
                doc = _document(ctx, handle, first, end)
                if doc is not None:
                    around.merge(before)
                    found.add(doc)
                    break
            else:
                around.merge(held)
            starts, held = [], LogSample(around.limit)
        if starts:
            around.merge(held)
    return found


def _document(ctx: ParseContext, handle: IO[bytes], start: int, end: int) -> _Doc | None:
    """The JSON object in bytes ``[start, end)`` of the log, streamed; None if it is not one.

    :class:`TooLarge` passes: a value too large to read is said, not taken for text.
    """
    reader = JsonStream(_Span(handle, start, end))  # type: ignore[arg-type]
    doc = _Doc(ctx)
    try:
        if reader.peek() != "{":
            return None
        seen: set[str] = set()
        for key in reader.members():
            if key in _DOCUMENT_KEYS:
                if key in seen:
                    return None  # pyright writes each once: a document with one twice is not its
                seen.add(key)
            if key == "version":
                doc.version = reader.value()
            elif key == "time":
                doc.time = reader.value()
            elif key == "summary":
                doc.summary = reader.value()
            elif key == "generalDiagnostics" and reader.peek() == "[":
                doc.lists += 1
                for diag in reader.items():
                    doc.add(diag)
        reader.finish()
    except TooLarge:
        raise
    except (ValueError, RecursionError):
        return None
    return doc


class _Span:
    """The text of bytes ``[start, end)`` of the log, decoded leniently, for a JsonStream."""

    __slots__ = ("decoder", "handle", "left")

    def __init__(self, handle: IO[bytes], start: int, end: int) -> None:
        handle.seek(start)
        self.handle = handle
        self.left = end - start
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def read(self, size: int) -> str:
        while self.left > 0:
            data = self.handle.read(min(size, self.left))
            self.left = self.left - len(data) if data else 0
            text = self.decoder.decode(data, final=self.left <= 0)
            if text:
                return text
        return self.decoder.decode(b"", final=True)


def _position(diag: dict[str, Any]) -> tuple[int | None, int | None]:
    """1-based (line, column) from pyright's 0-based ``range.start``."""
    where = diag.get("range")
    start = where.get("start") if isinstance(where, dict) else None
    if not isinstance(start, dict):
        return None, None
    line, col = start.get("line"), start.get("character")
    return (line + 1 if _is_count(line) else None, col + 1 if _is_count(col) else None)


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _finding(ctx: ParseContext, diag: dict[str, Any], path: str, message: str, *,
             kind: str = KIND) -> Finding:
    line, col = _position(diag)
    location = ctx.location(path, line, col) if path else None
    rule = diag.get("rule")
    rule = rule if isinstance(rule, str) and rule else ("error" if kind == KIND else "warning")
    # pyright indents continuation lines with no-break spaces, even in its JSON.
    first, *rest = message.replace("\xa0", " ").splitlines() or [""]
    return Finding(f"{location or '?'}:{rule}", kind, cap_line(f"{first} [{rule}]"), location,
                   ctx.snippet(rest))


def _parse(ctx: ParseContext) -> ParseResult:
    try:
        found = find_documents(ctx, LogSample())
    except TooLarge as exc:
        return ParseResult(parser_ok=False, notes=[
            f"the pyright document in the log holds {exc}: refused unread, so the log counts "
            "for nothing"])
    doc = found.first
    if doc is None:
        drift = (f"; the log holds {found.other_json} JSON object(s) that are not pyright's "
                 "document (format drift?)" if found.other_json else "")
        return ParseResult(parser_ok=False, notes=[
            f"exit code {ctx.rc} but no pyright --outputjson document in the log (the command "
            f"must include --outputjson){drift}; " + found.around.describe()])
    summary, tally, minor = doc.summary, doc.tally, doc.minor
    counts = {"errors": tally["error"], "warnings": tally["warning"],
              "info": tally["information"]}
    analysed = summary.get("filesAnalyzed")
    if _is_count(analysed):
        counts["files"] = analysed
    result = doc.sink.result(summary={"counts": counts})
    notes = result.notes
    if doc.odd:
        result.parser_ok = False
        notes.append(f"{doc.odd} pyright diagnostic(s) have no known severity (format drift?)")
    for severity, key in _SEVERITY_KEYS.items():
        stated = summary.get(key)
        if stated != tally[severity]:
            result.parser_ok = False
            notes.append(f"pyright's summary.{key} is {stated!r} but {tally[severity]} "
                         f"{severity} diagnostic(s) were read")
    _not_pyrights(found, result)
    found.long.refuse(result, "pyright")
    if analysed == 0 and not ctx.options.get("allow_no_files", False):
        result.gate_failures.append("pyright analysed no files")
        notes.append("pyright checked nothing (filesAnalyzed is 0); set allow_no_files = true "
                     "if that is expected")
    if ctx.rc != 0 and not tally["error"]:
        promoted = minor.promote(result, tool="pyright", rc=ctx.rc, found_rc=FOUND_RC,
                                  what=f"{tally['warning']} warning(s) (--warnings)")
        if not promoted and not result.gate_failures:
            notes.append(f"pyright exited {ctx.rc} without an error diagnostic; "
                         + found.around.describe())
    return result


def _not_pyrights(found: Documents, result: ParseResult) -> None:
    """A second document, other JSON, other text: the log is not one pyright run's output."""
    extra = []
    if found.pyright > 1:
        extra.append(f"{found.pyright} pyright documents (one run prints one)")
    if found.other_json:
        extra.append(f"{found.other_json} JSON object(s) that are not pyright's document")
    if found.around.count:
        extra.append(f"{found.around.count} line(s) of text ({found.around.describe()})")
    if extra:
        result.parser_ok = False
        result.notes.append(cap_line("the log holds more than pyright's document: "
                                     + "; ".join(extra), 800))
