"""Linters' JSON findings: reviewdog's rdjson (one document) and rdjsonl (one diagnostic a
line), and GitLab Code Quality. Neither declares totals or what was checked, so an empty
file is never green: it cannot tell a clean run from one that checked nothing."""

from __future__ import annotations

import json

from ckdn.imports._model import Imported, ImportRefused, Tally, place
from ckdn.parsers.base import Finding, ParseContext, cap_line
from ckdn.parsers.readers import VALUE_CAP, JsonStream

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ckdn.parsers.base import FindingSink

__all__ = ["read_codequality", "read_rdjson", "read_rdjsonl"]


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Findings:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx, self.sink, self.tally = ctx, ctx.sink(), Tally()
        self.by_severity: dict[str, int] = {}
        self.sources: dict[str, None] = {}

    def add(self, *, path: object, line: object, col: object, rule: str, severity: str,
            message: object, source: str = "") -> None:
        severity = cap_line(severity or "unknown", 40)
        if len(self.by_severity) < 20 or severity in self.by_severity:
            self.by_severity[severity] = self.by_severity.get(severity, 0) + 1
        if source and len(self.sources) < 20:
            self.sources[cap_line(source, 80)] = None
        location, why = place(self.ctx, path, line, col)
        self.tally.count(why)
        sink: FindingSink = self.sink
        if not sink.wants():
            sink.total += 1
            return
        text = message if isinstance(message, str) else ""
        sink.add(Finding(cap_line(f"{location or '?'}:{rule or severity}", 500),
                         f"lint_{severity.lower()}",
                         cap_line(text.strip().splitlines()[0] if text.strip() else "", 2000),
                         location))

    def imported(self, fmt: str, producer: str) -> Imported:
        result = self.sink.result(summary={"counts": {"diagnostics": self.sink.total},
                                           "by_severity": self.by_severity})
        return Imported(format=fmt, variant=fmt, producer=producer, result=result,
                        cases=self.sink.total, tally=self.tally)


def _diagnostic(out: _Findings, item: object, default_severity: str, source: str) -> None:
    if not isinstance(item, dict) or "message" not in item:
        raise ValueError("a diagnostic that is not an object with a 'message'")
    location = _object(item.get("location"))
    start = _object(_object(location.get("range")).get("start"))
    code = _object(item.get("code"))
    own = _object(item.get("source")).get("name")
    out.add(path=location.get("path"), line=start.get("line"), col=start.get("column"),
            rule=cap_line(str(code.get("value") or ""), 200),
            severity=str(item.get("severity") or default_severity or "unknown"),
            message=item.get("message"), source=str(own or source))


def read_rdjson(ctx: ParseContext, path: str) -> Imported:
    out = _Findings(ctx)
    source, severity, seen = "", "", False
    try:
        with JsonStream.open(path) as reader:
            for key in reader.members():
                if key == "source":
                    source = str(_object(reader.value()).get("name") or "")
                elif key == "severity":
                    severity = str(reader.value() or "")
                elif key == "diagnostics":
                    seen = True
                    for item in reader.items():
                        _diagnostic(out, item, severity, source)
            reader.finish()
    except (OSError, ValueError, RecursionError) as exc:
        raise ImportRefused(f"not readable as rdjson: {cap_line(str(exc), 300)}") from None
    if not seen:
        raise ImportRefused("a JSON document without 'diagnostics': not reviewdog's rdjson")
    return out.imported("rdjson", cap_line(source, 80) or "unknown")


def _lines(path: str) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(iter(lambda: handle.readline(VALUE_CAP + 1), ""), 1):
            if len(line) > VALUE_CAP:
                raise ValueError(f"line {number} is longer than {VALUE_CAP:,} characters")
            if line.strip():
                yield number, line


def read_rdjsonl(ctx: ParseContext, path: str) -> Imported:
    out = _Findings(ctx)
    try:
        for number, line in _lines(path):
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {number}: {exc}") from None
            _diagnostic(out, item, "", "")
    except (OSError, ValueError, RecursionError) as exc:
        raise ImportRefused(f"not readable as rdjsonl: {cap_line(str(exc), 300)}") from None
    return out.imported("rdjsonl", next(iter(out.sources), "unknown"))


def read_codequality(ctx: ParseContext, path: str) -> Imported:
    """GitLab Code Quality: a JSON array of issues (Code Climate's spec, GitLab's subset)."""
    out = _Findings(ctx)
    try:
        with JsonStream.open(path) as reader:
            for item in reader.items():
                issue = _object(item)
                if "description" not in issue or "location" not in issue:
                    raise ValueError("an issue without 'description' and 'location'")
                location = _object(issue.get("location"))
                lines = _object(location.get("lines"))
                begin = lines.get("begin")
                if begin is None:
                    begin = _object(_object(location.get("positions")).get("begin")).get("line")
                out.add(path=location.get("path"), line=begin, col=None,
                        rule=cap_line(str(issue.get("check_name") or ""), 200),
                        severity=str(issue.get("severity") or "unknown"),
                        message=issue.get("description"))
            reader.finish()
    except (OSError, ValueError, RecursionError) as exc:
        raise ImportRefused(f"not readable as Code Quality JSON: {cap_line(str(exc), 300)}"
                            ) from None
    return out.imported("codequality", "unknown")
