"""The ``pyright`` parser: the JSON document ``pyright --outputjson`` prints to stdout.

The document is in the log, so the log is the artifact. Other text may come
before or after it (pyright-python's own messages, npm/npx output when the node
package is fetched, "File or directory ... does not exist"), so the log is
streamed until a line opening a JSON object, and the document is decoded from
there up to the closing brace at column 0. Errors are ``type_error`` findings;
warnings and information are counted, never findings (pyright exits 0 on them).

Guards: ``summary.errorCount`` / ``warningCount`` / ``informationCount`` must
match the diagnostics read; a log with no pyright document is
``parser_ok=False``; a run that analysed no file (``filesAnalyzed: 0``) is a gate
failure unless ``allow_no_files``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, TypeGuard

from ckdn.parsers._logtext import LogSample, silent_red_note
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)
from ckdn.parsers.guard import guarded

__all__ = ["PyrightParser", "find_document"]

KIND = "type_error"
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

    def parse(self, ctx: ParseContext) -> ParseResult:
        return guarded(self.name, _parse, ctx)


def find_document(lines: Iterator[str], around: LogSample) -> dict[str, Any] | None:
    """The first pyright JSON document in ``lines``; other lines go to ``around``.

    A candidate starts at a line beginning with ``{`` and is tried whenever a line
    is exactly ``}`` (pyright indents its JSON, so only the outermost brace sits
    at column 0). A candidate that does not decode is dropped, except for a later
    ``{`` line inside it, which is tried in turn.
    """
    held: list[str] = []
    size = 0
    for line in lines:
        if not held:
            if not line.startswith("{"):
                around.add(line)
                continue
            if line.rstrip().endswith("}"):  # the whole document on one line
                doc = _decode([line])
                if doc is not None:
                    return doc
                around.add(line)
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
                return doc
        for text in held:
            around.add(text)
        held, size = [], 0
    for text in held:
        around.add(text)
    return None


def _decode(lines: list[str]) -> dict[str, Any] | None:
    try:
        doc = json.loads("\n".join(lines))
    except ValueError:
        return None
    if isinstance(doc, dict) and ("generalDiagnostics" in doc or "summary" in doc):
        return doc
    return None


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


def _finding(ctx: ParseContext, diag: dict[str, Any], path: str, message: str) -> Finding:
    line, col = _position(diag)
    location = ctx.location(path, line, col) if path else None
    rule = diag.get("rule")
    rule = rule if isinstance(rule, str) and rule else "error"
    # pyright indents continuation lines with no-break spaces, even in its JSON.
    first, *rest = message.replace("\xa0", " ").splitlines() or [""]
    return Finding(f"{location or '?'}:{rule}", KIND, cap_line(f"{first} [{rule}]"), location,
                   ctx.snippet(rest))


def _parse(ctx: ParseContext) -> ParseResult:
    around = LogSample()
    doc = find_document(ctx.log_lines(), around)
    if doc is None:
        return ParseResult(parser_ok=False, notes=[
            f"exit code {ctx.rc} but no pyright --outputjson document in the log (the command "
            "must include --outputjson); " + around.describe()])
    diagnostics = doc.get("generalDiagnostics")
    summary = doc.get("summary")
    if not isinstance(diagnostics, list) or not isinstance(summary, dict):
        return ParseResult(parser_ok=False, notes=[
            "pyright's JSON has no generalDiagnostics list or summary object (format drift?)"])
    sink = FindingSink(ctx.top)
    tally = {"error": 0, "warning": 0, "information": 0}
    odd = 0
    for diag in diagnostics:
        severity = diag.get("severity") if isinstance(diag, dict) else None
        if severity not in tally or not isinstance(diag, dict):
            odd += 1
            continue
        tally[severity] += 1
        if severity != "error":
            continue
        path = diag.get("file") or diag.get("uri") or ""
        message = diag.get("message")
        sink.add(_finding(ctx, diag, str(path), message if isinstance(message, str) else ""))
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
    if analysed == 0 and not ctx.options.get("allow_no_files", False):
        result.gate_failures.append("pyright analysed no files")
        notes.append("pyright checked nothing (filesAnalyzed is 0); set allow_no_files = true "
                     "if that is expected")
    if ctx.rc != 0 and not tally["error"]:
        note = silent_red_note("pyright", ctx.rc, tally["warning"], tally["information"])
        notes.append(note or f"pyright exited {ctx.rc} without any diagnostic; "
                     + around.describe())
    return result
