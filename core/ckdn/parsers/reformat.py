"""The ``reformat`` parser: the text of ``black --check`` or ``ruff format --check``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar, Final

from ckdn.parsers._logtext import (
    ARROW,
    LogSample,
    LongLines,
    PendingFinding,
    group,
    joined,
    plain_lines,
)
from ckdn.parsers.base import BaseParser, Option, ParseContext, ParseResult

__all__ = ["ReformatParser"]

# Neither formatter writes a report, so the log is the evidence, read line by
# line. Files the formatter would change are ``format_violation`` findings; files
# it could not format at all (a syntax error, an undecodable file) are
# ``format_error`` findings, because ``ruff format --check`` exits 2 on a syntax
# error while still printing "N files already formatted": the error line is the
# only thing telling that run apart from a clean one. The formatter's own summary
# is cross-checked against the lines found, and exit code 0 needs a clean marker
# ("would be left unchanged", "already formatted"): a log with no verdict is never
# read as clean. Every line must be the formatter's: a finding and its detail, a
# summary, black's "All done!" / "Oh no!" banner, a ``warning:`` line; any other
# line (a traceback, an error this parser does not know, another tool's log)
# makes the log unreadable, and so does black's failure banner ("Oh no! 💥 💔 💥")
# with exit code 0.

VIOLATION = "format_violation"
ERROR = "format_error"

# black: "would reformat src/a.py"; ruff before its diagnostic layout: "Would reformat: a.py".
_WOULD: Final = re.compile(r"^[Ww]ould reformat:? (?P<path>.+)$")
# black: "error: cannot format a.py: <reason>"
_CANNOT_FORMAT: Final = re.compile(r"^error: cannot format (?P<path>.+?): (?P<msg>.*)$")
# black >= 26: "error: cannot parse: a.py:1:6", then indented source and "ParseError: ..."
_CANNOT_PARSE: Final = re.compile(
    r"^error: cannot parse: (?P<path>.+?)(?::(?P<line>\d+)(?::(?P<col>\d+))?)?$")
# ruff, older layout: "error: Failed to parse a.py:1:7: <reason>"
_FAILED_PARSE: Final = re.compile(
    r"^error: Failed to (?:parse|format) (?P<path>.+?)(?::(?P<line>\d+):(?P<col>\d+))?: "
    r"(?P<msg>.*)$")
# ruff full layout: "unformatted: File would be reformatted" (or "invalid-syntax: ..."),
# then "--> a.py:1:2" on the next line (ARROW).
_HEADER: Final = re.compile(r"^(?P<code>[a-z][a-z0-9-]*): (?P<msg>.+)$")
# ruff concise layout: "a.py:1:2: unformatted: File would be reformatted"
_CONCISE: Final = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[a-z][a-z0-9-]*): (?P<msg>.*)$")
_WOULD_COUNT: Final = re.compile(r"\b(\d+) files? would be reformatted\b")
_FAIL_COUNT: Final = re.compile(r"\b(\d+) files? would fail to reformat\b")
_CLEAN_COUNT: Final = re.compile(
    r"\b(\d+) files? (?:would be left unchanged|already formatted)\b")
#: How a whole summary line ends: black's with a period, ruff's with its last clause.
#: A line cut short ("... left unchange", "... left unchanged") is no verdict.
_SUMMARY_END: Final = re.compile(
    r"(?:would be reformatted|would fail to reformat|already formatted)\.?$"
    r"|would be left unchanged\.$")
_NO_FILES: Final = ("No Python files are present to be formatted",
                    "warning: No Python files found under the given path(s)")
_UNFORMATTED = "unformatted"
#: black's closing banners: "All done! ✨ 🍰 ✨" on success, "Oh no! 💥 💔 💥" on failure.
_BLACK_DONE = "All done!"
_BLACK_FAILED = "Oh no!"
#: Lines that belong to the finding above them: indented source and carets, ruff's
#: frame and diff rows ("  |", "1 | x", "  - x=1", "1 + x = 1"), black's "ParseError: ...".
_DETAIL: Final = re.compile(r"^(?:\s|\d+\s*[|+-](?: |$)|[A-Z]\w*Error: )")


class ReformatParser(BaseParser):
    """Reads black / ruff-format ``--check`` output from the log."""

    name = "reformat"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "allow_no_files": Option("bool", help="accept a run where the formatter found no files"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


class _Scan:
    """State of one pass over the log."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.sink = ctx.sink()
        self.violations = 0
        self.errors = 0
        self.would: int | None = None
        self.failed: int | None = None
        self.clean: int | None = None
        self.no_files = False
        self.failed_banner = False
        self.pending: PendingFinding | None = None
        self.header: re.Match[str] | None = None
        self.unknown = LogSample()

    def add(self, kind: str, path: str, line: str | None, col: str | None, *, message: str,
            code: str = "") -> None:
        """Open a finding; its detail is whatever indented lines follow it."""
        self.flush()
        if kind == VIOLATION:
            self.violations += 1
        else:
            self.errors += 1
        relpath = self.ctx.location(path)
        location = self.ctx.location(path, _num(line), _num(col))
        if kind == VIOLATION:
            # One per file: the id must not move when the first changed line does.
            ident, message = relpath, f"would reformat {relpath}"
        else:
            ident = f"{location}:{code or 'error'}"
        self.pending = PendingFinding(ident, kind, message, location,
                                      limit=self.ctx.max_snippet_lines)

    def flush(self) -> None:
        if self.pending is not None:
            self.pending.emit(self.sink)
            self.pending = None

    def feed(self, line: str) -> None:
        header, self.header = self.header, None
        if header is not None:
            arrow = ARROW.match(line)
            if arrow:
                code, msg = header["code"], group(header, "msg")
                kind = VIOLATION if code == _UNFORMATTED else ERROR
                self.add(kind, arrow["path"], arrow["line"], arrow["col"],
                         message=joined(f"{code}: ", msg), code=code)
                return
            self.unknown.add(header.string)
        if self._finding_line(line) or self._summary_line(line):
            return
        if self.pending is not None and _DETAIL.match(line):
            self.pending.detail.add(line)
            return
        self.flush()
        head = _HEADER.match(line)
        if head and not line.startswith(("warning: ", "error: ")):
            self.header = head
        elif line.startswith(_BLACK_FAILED):
            self.failed_banner = True
        elif line.strip() and not line.startswith((_BLACK_DONE, "warning: ")):
            self.unknown.add(line)

    def _finding_line(self, line: str) -> bool:
        match = _WOULD.match(line)
        if match:
            self.add(VIOLATION, match["path"], None, None, message="")
            return True
        match = _CANNOT_FORMAT.match(line) or _FAILED_PARSE.match(line)
        if match:
            groups = match.groupdict()
            self.add(ERROR, match["path"], groups.get("line"), groups.get("col"),
                     message=joined("cannot format: ", group(match, "msg")), code="cannot-format")
            return True
        match = _CANNOT_PARSE.match(line)
        if match:
            self.add(ERROR, match["path"], match["line"], match["col"], message="cannot parse",
                     code="cannot-parse")
            return True
        match = _CONCISE.match(line)
        if match:
            code = match["code"]
            kind = VIOLATION if code == _UNFORMATTED else ERROR
            self.add(kind, match["path"], match["line"], match["col"],
                     message=joined(f"{code}: ", group(match, "msg")), code=code)
            return True
        return False

    def _summary_line(self, line: str) -> bool:
        if line.startswith(_NO_FILES):
            self.flush()
            self.no_files = True
            return True
        if not line[:1].isdigit():
            return False
        would = _WOULD_COUNT.search(line)
        failed = _FAIL_COUNT.search(line)
        clean = _CLEAN_COUNT.search(line)
        if not (would or failed or clean) or not _SUMMARY_END.search(line):
            return False
        self.flush()
        self.would = int(would.group(1)) if would else 0
        self.failed = int(failed.group(1)) if failed else 0
        self.clean = int(clean.group(1)) if clean else 0
        return True


def _num(text: str | None) -> int | None:
    return int(text) if text else None


def _parse(ctx: ParseContext) -> ParseResult:
    scan = _Scan(ctx)
    long = LongLines()
    for line in plain_lines(ctx, long):
        scan.feed(line)
    scan.flush()
    if scan.header is not None:
        scan.unknown.add(scan.header.string)
    counts = {"would_reformat": scan.violations, "format_errors": scan.errors}
    if scan.clean is not None:
        counts["unchanged"] = scan.clean
    result = scan.sink.result(summary={"counts": counts})
    verdict = scan.would is not None or scan.violations or scan.errors
    long.refuse(result, "the formatter")
    if scan.unknown.count:
        result.parser_ok = False
        result.notes.append(f"{scan.unknown.count} line(s) of the log are not the formatter's "
                            "output: " + scan.unknown.describe())
    if scan.failed_banner and ctx.rc == 0:
        result.parser_ok = False
        result.notes.append("exit code 0 but black says it failed (\"Oh no!\")")
    if scan.would is not None and scan.would != scan.violations:
        result.parser_ok = False
        result.notes.append(f"the formatter says {scan.would} file(s) would be reformatted but "
                            f"{scan.violations} 'would reformat' line(s) were found")
    if scan.failed and scan.failed != scan.errors:
        result.parser_ok = False
        result.notes.append(f"the formatter says {scan.failed} file(s) would fail to reformat "
                            f"but {scan.errors} error line(s) were found")
    if scan.no_files:
        if not ctx.options.get("allow_no_files", False):
            result.gate_failures.append("the formatter found no Python files to check")
            result.notes.append("the formatter checked nothing (no Python files found); set "
                                "allow_no_files = true if that is expected")
    elif not verdict:
        result.parser_ok = False
        result.notes.append(
            f"exit code {ctx.rc} but no formatting verdict in the log (no 'would reformat', "
            "error or summary line; run black / ruff format with --check and without -q); "
            + scan.unknown.describe())
    elif ctx.rc != 0 and not scan.violations and not scan.errors:
        # e.g. a formatter error in a layout this parser does not know: the summary
        # alone ("1 file already formatted") must not make the run look explained.
        result.parser_ok = False
        result.notes.append(f"exit code {ctx.rc} but no file was reported as unformatted or "
                            "unformattable; " + scan.unknown.describe())
    return result
