"""Checkstyle XML (Checkstyle itself, ruff, ESLint's and PHP_CodeSniffer's formatters): one
finding per ``<error>``; the files listed are what was checked. It declares no totals."""

from __future__ import annotations

from ckdn.imports._model import Imported, ImportRefused, Tally, place
from ckdn.parsers.base import Finding, ParseContext, cap_line
from ckdn.parsers.readers import XmlError, XmlReader

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.parsers.base import FindingSink

__all__ = ["read_checkstyle"]


class _Reader(XmlReader):
    def __init__(self, ctx: ParseContext, sink: FindingSink) -> None:
        super().__init__()
        self.ctx, self.sink, self.tally = ctx, sink, Tally()
        self.file: str | None = None
        self.files = 0
        self.version = ""
        self.by_severity: dict[str, int] = {}

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if tag != "checkstyle":
            raise ImportRefused(f"the root element is <{cap_line(tag, 40)}>, not <checkstyle>")
        self.version = cap_line(attrs.get("version", ""), 40)

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "file":
            self.file = attrs.get("name", "")
            self.files += 1
        elif tag in ("error", "exception") and self.file is not None:
            severity = attrs.get("severity", "error") if tag == "error" else "exception"
            severity = cap_line(severity, 40)
            if len(self.by_severity) < 20 or severity in self.by_severity:
                self.by_severity[severity] = self.by_severity.get(severity, 0) + 1
            location, why = place(self.ctx, self.file, attrs.get("line"), attrs.get("column"))
            self.tally.count(why)
            if not self.sink.wants():
                self.sink.total += 1
                return
            source = cap_line(attrs.get("source", ""), 200)
            rule = source.rsplit(".", 1)[-1] if source else severity
            self.sink.add(Finding(cap_line(f"{location or self.file}:{rule}", 500),
                                  f"checkstyle_{severity}",
                                  cap_line(attrs.get("message", ""), 2000), location))
        elif tag != "checkstyle":
            raise ImportRefused(f"an element <{cap_line(tag, 40)}> at {self.position()}: not "
                                "Checkstyle XML")

    def on_end(self, tag: str) -> None:
        if tag == "file":
            self.file = None


def read_checkstyle(ctx: ParseContext, path: str) -> Imported:
    reader = _Reader(ctx, ctx.sink())
    try:
        reader.read(path)
    except XmlError as exc:
        raise ImportRefused(f"not readable as Checkstyle XML: {exc}") from None
    result = reader.sink.result(summary={"counts": {"files": reader.files,
                                                    "violations": reader.sink.total},
                                         "by_severity": reader.by_severity})
    return Imported(format="checkstyle", variant=f"checkstyle-{reader.version or 'unversioned'}",
                    producer="unknown", result=result, cases=reader.files, tally=reader.tally)
