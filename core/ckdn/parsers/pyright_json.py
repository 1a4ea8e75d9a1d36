"""The ``pyright`` parser: the JSON document ``pyright --outputjson`` prints to stdout.

The document is in the log, so the log is the artifact, streamed: a candidate
document starts at a line opening a JSON object and is decoded up to the
closing brace at column 0 (pyright indents its JSON). Errors are ``type_error``
findings; warnings and information are counted (pyright exits 0 on them),
except that with ``--warnings`` pyright exits 1 on a warning-only run, and then
those warnings are the findings (``type_warning``).

The log must hold exactly what pyright printed: one pyright document (an
object with ``version``, ``time``, a ``generalDiagnostics`` list and a
``summary`` with pyright's counts), and around it only pyright-python's own
log lines. A second document (a rerun, another tool's JSON), or any other text
(pyright's own complaints about its configuration, which it prints beside a
clean document with exit code 0; a traceback; another tool's log) make the log
unreadable, with a note quoting them.

Guards besides: ``summary.errorCount`` / ``warningCount`` / ``informationCount``
must match the diagnostics read; a log with no pyright document is
``parser_ok=False``; a run that analysed no file (``filesAnalyzed: 0``) is a
gate failure unless ``allow_no_files``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Final, TypeGuard

from ckdn.parsers._logtext import Lesser, LogSample
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["Documents", "PyrightParser", "find_documents"]

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
#: Above this many characters of one candidate document the log is not pyright's output.
MAX_DOCUMENT_CHARS = 512 * 1024 * 1024
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


class Documents:
    """What a log holds: the first pyright document, how many there were, and the rest."""

    __slots__ = ("around", "first", "other_json", "pyright")

    def __init__(self, around: LogSample) -> None:
        self.first: dict[str, Any] | None = None
        self.pyright = 0  # pyright documents, the first one included
        self.other_json = 0  # JSON objects that are not pyright's document
        self.around = around  # text outside any document, pyright-python's logging left out

    def add(self, doc: Any) -> None:
        if not _is_pyright(doc):
            self.other_json += 1
        elif self.first is None:
            self.first, self.pyright = doc, 1
        else:
            self.pyright += 1

    def text(self, line: str) -> None:
        if line.strip() and not (_WRAPPER_LOG.match(line) or line.startswith(_WRAPPER_NOTICE)):
            self.around.add(line)


def find_documents(lines: Iterator[str], around: LogSample) -> Documents:
    """Every JSON document in ``lines``; other lines go to ``around``.

    A candidate starts at a line beginning with ``{`` and is tried whenever a line
    is exactly ``}`` (pyright indents its JSON, so only the outermost brace sits
    at column 0). A candidate that does not decode is text, except for a later
    ``{`` line inside it, which is tried in turn. Only the first pyright document
    is kept; the others are counted.
    """
    found = Documents(around)
    held: list[str] = []
    size = 0
    for line in lines:
        if not held:
            if not line.startswith("{"):
                found.text(line)
                continue
            if line.rstrip().endswith("}"):  # the whole document on one line
                doc = _decode([line])
                if doc is not None:
                    found.add(doc)
                else:
                    found.text(line)
                continue
        held.append(line)
        size += len(line) + 1
        if size > MAX_DOCUMENT_CHARS:
            raise ValueError("no pyright document: an unterminated JSON object runs past "
                             f"{MAX_DOCUMENT_CHARS} characters")
        if line.rstrip() != "}":
            continue
        starts = [i for i, text in enumerate(held) if text.startswith("{")]
        for start in starts:
            doc = _decode(held[start:])
            if doc is not None:
                for text in held[:start]:
                    found.text(text)
                found.add(doc)
                break
        else:
            for text in held:
                found.text(text)
        held, size = [], 0
    for text in held:
        found.text(text)
    return found


def _decode(lines: list[str]) -> Any:
    try:
        doc = json.loads("\n".join(lines))
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _is_pyright(doc: dict[str, Any]) -> bool:
    """pyright's own document: version, time, diagnostics and a summary with its counts."""
    summary = doc.get("summary")
    return (isinstance(doc.get("version"), str) and isinstance(doc.get("time"), str)
            and isinstance(doc.get("generalDiagnostics"), list) and isinstance(summary, dict)
            and all(key in summary for key in _SUMMARY_KEYS))


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
    found = find_documents(ctx.log_lines(), LogSample())
    doc = found.first
    if doc is None:
        drift = (f"; the log holds {found.other_json} JSON object(s) that are not pyright's "
                 "document (format drift?)" if found.other_json else "")
        return ParseResult(parser_ok=False, notes=[
            f"exit code {ctx.rc} but no pyright --outputjson document in the log (the command "
            f"must include --outputjson){drift}; " + found.around.describe()])
    diagnostics, summary = doc["generalDiagnostics"], doc["summary"]
    sink = FindingSink(ctx.top)
    lesser = Lesser(ctx.top)
    tally = {"error": 0, "warning": 0, "information": 0}
    odd = 0
    for diag in diagnostics:
        severity = diag.get("severity") if isinstance(diag, dict) else None
        if severity not in tally or not isinstance(diag, dict):
            odd += 1
            continue
        tally[severity] += 1
        if severity == "information":
            continue
        path = diag.get("file") or diag.get("uri") or ""
        message = diag.get("message")
        message = message if isinstance(message, str) else ""
        if severity == "error":
            sink.add(_finding(ctx, diag, str(path), message))
        else:
            lesser.add(_finding(ctx, diag, str(path), message, kind=WARNING_KIND))
    counts = {"errors": tally["error"], "warnings": tally["warning"],
              "info": tally["information"]}
    analysed = summary.get("filesAnalyzed")
    if _is_count(analysed):
        counts["files"] = analysed
    result = sink.result(summary={"counts": counts})
    notes = result.notes
    if odd:
        result.parser_ok = False
        notes.append(f"{odd} pyright diagnostic(s) have no known severity (format drift?)")
    for severity, key in _SEVERITY_KEYS.items():
        stated = summary.get(key)
        if stated != tally[severity]:
            result.parser_ok = False
            notes.append(f"pyright's summary.{key} is {stated!r} but {tally[severity]} "
                         f"{severity} diagnostic(s) were read")
    _not_pyrights(found, result)
    if analysed == 0 and not ctx.options.get("allow_no_files", False):
        result.gate_failures.append("pyright analysed no files")
        notes.append("pyright checked nothing (filesAnalyzed is 0); set allow_no_files = true "
                     "if that is expected")
    if ctx.rc != 0 and not tally["error"]:
        promoted = lesser.promote(result, tool="pyright", rc=ctx.rc, found_rc=FOUND_RC,
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
