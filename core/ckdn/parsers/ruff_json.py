"""The ``ruff`` parser: ``ruff check --output-format json --output-file {run_dir}/ruff.json``."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, ClassVar, Final

from ckdn.parsers._jsonstream import CHUNK, JsonStream, unreadable
from ckdn.parsers._logtext import LongLines, crashed, plain_lines, quote
from ckdn.parsers._rulecounts import RuleCounts
from ckdn.parsers.base import (
    LINE_CAP,
    ArtifactError,
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
    shown_path,
)

__all__ = ["RuffParser", "iter_json_array"]

# Every entry of ruff's JSON array is a ``lint_violation``: ruff exits 1 exactly
# when it reports something, so there is no severity to filter. The report is
# decoded element by element (:class:`~ckdn.parsers._jsonstream.JsonStream`)
# instead of with one ``json.load``: 100,000 diagnostics are ~45 MB of JSON, which
# ``json.load`` turns into ~200 MB of objects (and no less time), while the digest
# keeps only ``top`` findings and a few counts; streamed, the parser stays near
# 20 MB, and an entry too large to read (a 1 GiB message) is refused unread.
#
# Guards: a missing report is ``parser_ok=False`` with a note quoting the log's
# first lines (where ruff says why it stopped, such as an unknown rule selector);
# an entry without filename, message or location is format drift; the verdict
# ruff prints ("Found N errors.", "All checks passed!") must match the report;
# an error ruff reports in its log ("error: ...", "ruff failed", a crash) is
# never beside a report that can be trusted, whatever the report holds; and a
# run that found no Python files is a gate failure unless ``allow_no_files``.

KIND = "lint_violation"
#: One of a file's findings as the tap takes them (FindingSink.located_file): row, column,
#: code, message, cell.
_Row = tuple[int, int, str, str, int | None]
#: The most findings handed over at once (one file's, or part of a file's).
_BATCH = 1024
#: ruff's own count, when the log carries it ("Found 3 errors.", "Found 3 errors
#: (2 fixed, 1 remaining).").
_FOUND: Final = re.compile(r"^Found (\d+) errors?(?: \((\d+) fixed, (\d+) remaining\))?\.$")
_NO_FILES: Final = "warning: No Python files found under the given path(s)"


class RuffParser(BaseParser):
    """Reads the JSON array ruff writes with ``--output-file``."""

    name = "ruff"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "report": Option("str", help="ruff's JSON report, relative to the run dir"),
        "allow_no_files": Option("bool", help="accept a run where ruff found no Python files"),
        "legacy_location": Option("bool", help="locations keep the path as ruff wrote it "
                                               "(absolute), not relative to the check's cwd"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


def _parse(ctx: ParseContext) -> ParseResult:
    log = _scan_log(ctx)
    try:
        report = ctx.artifact("report", "ruff.json")
    except ArtifactError as exc:
        return ParseResult(parser_ok=False, notes=[str(exc)])
    if not report.is_file():
        named = str(ctx.options.get("report", "ruff.json")).removeprefix("{run_dir}/")
        return ParseResult(parser_ok=False, notes=[cap_line(
            f"ruff report {named} not found in the run dir (exit code {ctx.rc}); the command "
            "must include --output-format json --output-file {run_dir}/" + named
            + (f"; log says: {' | '.join(log.head)}" if log.head else ""))])
    sink = ctx.sink()
    tally = _Tally(ctx)
    try:
        with JsonStream.open(report) as reader:
            tally.read(reader.items(), sink, ctx)
            reader.finish()
    except (OSError, ValueError, RecursionError) as exc:
        return ParseResult(parser_ok=False, notes=[cap_line(
            unreadable("ruff report", report.name, exc, lambda: "",
                       expected="a readable JSON array"))])
    return _result(ctx, sink, tally, log)


class _LogFacts:
    __slots__ = ("errors", "first_error", "found", "head", "long", "no_files")

    def __init__(self) -> None:
        self.long = LongLines()
        self.found: int | None = None
        self.no_files = False
        self.head: list[str] = []
        self.errors = 0  # "error: ..." lines, "ruff failed", crashes: ruff says it failed
        self.first_error = ""


def _scan_log(ctx: ParseContext) -> _LogFacts:
    """What the log states beside the report: ruff's own count, "no files", a failure cause."""
    facts = _LogFacts()
    for line in plain_lines(ctx, facts.long):
        if len(facts.head) < 2 and line.strip():
            facts.head.append(quote(line, 200))
        match = _FOUND.match(line)
        if match:
            facts.found = int(match.group(3) or match.group(1))
        elif line == "All checks passed!":
            facts.found = 0
        elif line == _NO_FILES:
            facts.no_files = True
        elif line.startswith("error: ") or line == "ruff failed" or crashed(line):
            facts.errors += 1
            if not facts.first_error:
                facts.first_error = quote(line, 200)
    return facts


class _Tally:
    """Counts every diagnostic; builds a Finding only for the ones the digest keeps."""

    __slots__ = ("_ask", "_cwd", "_direct", "_files", "_legacy", "_name", "_shown", "files",
                 "fixable", "malformed", "rules", "syntax", "total")

    def __init__(self, ctx: ParseContext) -> None:
        self.rules = RuleCounts()
        self.total = 0
        self.fixable = 0
        self.syntax = 0
        self.malformed = 0
        self.files: set[str] = set()
        self._cwd = ctx.cwd
        # legacy_location: the location as ruff wrote it (its absolute path); the id stays
        # cwd-relative, so it is the same whichever checkout the run was in.
        self._legacy = bool(ctx.options.get("legacy_location", False))
        #: the last filename and its shown path: a report lists a file's findings together,
        #: so the path is looked up once a file, not once a finding
        self._name: str | None = None
        self._shown: str | None = None
        #: the tap's way to take a finding as its fields (FindingSink.located), asked once
        #: the sink keeps no more: past the digest's findings, none is built
        self._direct: Callable[[str, int, int, str, str, str, int | None], object] | None = None
        self._ask = not self._legacy
        #: the tap's way to take a file's findings at once (FindingSink.located_file), asked
        #: with ``_direct``: :meth:`read` then hands the rest over so
        self._files: Callable[[str, str, list[_Row]], object] | None = None

    def read(self, items: Iterator[Any], sink: FindingSink, ctx: ParseContext) -> None:
        """Every item: one by one (:meth:`add`) until the tap takes a file's findings at a
        time, then the rest so (:meth:`_read_files`)."""
        add = self.add
        for item in items:
            add(item, sink, ctx)
            if self._files is not None:
                self._read_files(items, sink, ctx, self._files)
                return

    def _read_files(self, items: Iterator[Any], sink: FindingSink,  # noqa: PLR0915 - inline
                    ctx: ParseContext, take: Callable[[str, str, list[_Row]], object]) -> None:
        """:meth:`add` of the rest, each file's findings handed over together as their
        fields (at most :data:`_BATCH` at once); an item that does not fit them (a row
        that is no number) still the general way, in its place."""
        counts, count_new = self.rules.counts, self.rules.add
        cwd, add_file = self._cwd, self.files.add
        name, path = self._name, self._shown
        total = fixable = syntax = malformed = 0
        found: list[_Row] = []
        for item in items:
            try:  # the keys ruff always writes, read as keys (no call each): the usual item
                filename, message, where = item["filename"], item["message"], item["location"]
                code, fix, cell = item["code"], item["fix"], item["cell"]
                row: Any = where["row"]
                col: Any = where["column"]
            except (KeyError, TypeError, IndexError):  # a key missing, or no object: as add
                if not isinstance(item, dict):
                    malformed += 1
                    continue
                filename, message, where = (item.get("filename"), item.get("message"),
                                            item.get("location"))
                code, fix, cell = item.get("code"), item.get("fix"), item.get("cell")
                if isinstance(where, dict):
                    row, col = where.get("row"), where.get("column")
            if not (isinstance(filename, str) and isinstance(message, str)
                    and isinstance(where, dict)):
                malformed += 1
                continue
            total += 1
            code = code or item.get("name") or "invalid-syntax"
            if code == "invalid-syntax":
                syntax += 1
            if type(code) is not str:
                code = str(code)
            try:  # RuleCounts.add, inline for a rule already counted: one lookup less
                counts[code] += 1
            except KeyError:
                count_new(code)
            if isinstance(fix, dict):
                fixable += 1
            if filename != name:
                if found:
                    sink.total += len(found)
                    take(path, KIND, found)  # type: ignore[arg-type]
                    found = []
                add_file(filename)
                name, path = filename, shown_path(filename, cwd)
            if cell is None:
                fields = type(row) is int and type(col) is int and row >= 1 and col >= 1
            else:  # as in add: id path:cellN:row:col (0 when unknown), located at the path
                fields = type(cell) is int
                row = row if type(row) is int and row >= 1 else 0
                col = col if type(col) is int and col >= 1 else 0
            if fields:
                text = f"{code} {message}"
                found.append((row, col, code, text if len(text) <= LINE_CAP
                              else cap_line(text), cell))
                if len(found) >= _BATCH:
                    sink.total += len(found)
                    take(path, KIND, found)  # type: ignore[arg-type]
                    found = []
                continue
            if found:  # the findings before it first, in their order
                sink.total += len(found)
                take(path, KIND, found)  # type: ignore[arg-type]
                found = []
            self._name, self._shown = name, path
            sink.add(self._finding(ctx, item, filename, code, message, where, fix,
                                   detailed=sink.keeps()))
        if found:
            sink.total += len(found)
            take(path, KIND, found)  # type: ignore[arg-type]
        self._name, self._shown = name, path
        self.total += total
        self.fixable += fixable
        self.syntax += syntax
        self.malformed += malformed

    def add(self, item: Any, sink: FindingSink, ctx: ParseContext) -> None:
        if not isinstance(item, dict):
            self.malformed += 1
            return
        filename = item.get("filename")
        message = item.get("message")
        where = item.get("location")
        if not (isinstance(filename, str) and isinstance(message, str) and isinstance(where, dict)):
            self.malformed += 1
            return
        self.total += 1
        code = item.get("code") or item.get("name") or "invalid-syntax"
        if code == "invalid-syntax":
            self.syntax += 1
        code = str(code)
        counts = self.rules.counts
        if code in counts:  # RuleCounts.add, inline for a rule already counted
            counts[code] += 1
        else:
            self.rules.add(code)
        fix = item.get("fix")
        if isinstance(fix, dict):
            self.fixable += 1
        if filename != self._name:
            self.files.add(filename)
            self._name, self._shown = filename, None  # looked up when a finding is built
        direct = self._direct
        if direct is not None:
            row: Any = where.get("row")
            col: Any = where.get("column")
            cell = item.get("cell")
            if cell is None:
                fields = type(row) is int and type(col) is int and row >= 1 and col >= 1
            else:  # a notebook's: id path:cellN:row:col (0 when unknown), located at the path
                fields = type(cell) is int
                row = row if type(row) is int and row >= 1 else 0
                col = col if type(col) is int and col >= 1 else 0
            if fields:
                path = self._shown
                if path is None:
                    path = self._shown = shown_path(filename, self._cwd)
                text = f"{code} {message}"
                sink.total += 1
                direct(path, row, col, code, KIND, text if len(text) <= LINE_CAP
                       else cap_line(text), cell)
                return
        elif not sink.wants():  # build only what the digest (or the tap) takes
            sink.total += 1
            return
        sink.add(self._finding(ctx, item, filename, code, message, where, fix,
                               detailed=sink.keeps()))
        if self._ask and not sink.keeps():
            self._ask = False
            self._direct = sink.located()
            self._files = sink.located_file()

    def _finding(self, ctx: ParseContext, item: dict[str, Any],  # noqa: PLR0917
                 filename: str, code: str, message: str, where: dict[str, Any], fix: Any,
                 *, detailed: bool) -> Finding:
        """One diagnostic as a finding; without ``detailed`` (a finding only handed over, not
        kept: its fingerprint needs no fix text or link) its detail is left out."""
        row, col = where.get("row"), where.get("column")
        if not (type(row) is int and row >= 1):  # _int: bool is no row
            row = _int(row)
        if not (type(col) is int and col >= 1):
            col = _int(col)
        path = self._shown
        if path is None:
            path = self._shown = shown_path(filename, self._cwd)
        cell = item.get("cell")
        text = f"{code} {message}"
        if len(text) > LINE_CAP:
            text = cap_line(text)
        if isinstance(cell, int) and not isinstance(cell, bool):
            # Notebook rows count from the top of the cell, not of the file.
            location = _as_written(filename) if self._legacy else path
            ident = f"{path}:cell{cell}:{row or 0}:{col or 0}:{code}"
            detail = [f"cell {cell}, line {row or '?'}, column {col or '?'}"]
        else:
            # ctx.location(filename, row, col), from the path already shown
            location = (_as_written(filename, row, col) if self._legacy
                        else path if row is None
                        else f"{path}:{row}" if col is None else f"{path}:{row}:{col}")
            ident = f"{path}:{row or 0}:{col or 0}:{code}"
            detail = []
        if not detailed:
            return Finding(ident, KIND, text, location)
        if isinstance(fix, dict):
            applicability = fix.get("applicability") or "unknown"
            fix_message = fix.get("message") or "available"
            detail.append(f"fix ({applicability}): {fix_message}")
        url = item.get("url")
        if isinstance(url, str) and url:
            detail.append(url)
        return Finding(ident, KIND, text, location, ctx.snippet(detail))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _as_written(filename: str, row: int | None = None, col: int | None = None) -> str:
    """``path[:line[:col]]`` with ruff's own path (normalised, forward slashes)."""
    text = os.path.normpath(filename).replace(os.sep, "/")
    if row is not None:
        text += f":{row}" + (f":{col}" if col is not None else "")
    return text


def _result(ctx: ParseContext, sink: FindingSink, tally: _Tally, log: _LogFacts) -> ParseResult:
    counts = {"violations": tally.total, "files": len(tally.files), "fixable": tally.fixable,
              "syntax_errors": tally.syntax}
    result = sink.result(summary={"counts": counts, "violation_count": tally.total,
                                  **tally.rules.summary()})
    if tally.malformed:
        result.parser_ok = False
        result.notes.append(f"{tally.malformed} entries of the ruff report have no filename, "
                            "message or location (format drift?)")
    if log.found is not None and log.found != tally.total:
        result.parser_ok = False
        result.notes.append(f"ruff's log says {log.found} error(s) but its report holds "
                            f"{tally.total}")
    if log.errors:
        result.parser_ok = False
        result.notes.append(f"ruff's log reports {log.errors} error(s) beside its report "
                            f"(first: {log.first_error}): the report is not the whole run")
    log.long.refuse(result, "ruff")
    if log.no_files and not ctx.options.get("allow_no_files", False):
        result.gate_failures.append("ruff found no Python files to check")
        result.notes.append("ruff checked nothing (\"No Python files found\"); set "
                            "allow_no_files = true if that is expected")
    return result


def iter_json_array(handle: IO[str], chunk: int = CHUNK) -> Iterator[Any]:
    """Yield the elements of the top-level JSON array in ``handle``, one at a time.

    Memory stays at about one chunk plus the largest element, whatever the size
    of the array. Raises ValueError when the text is not one JSON array.
    """
    reader = JsonStream(handle, chunk=chunk)
    yield from reader.items()
    reader.finish()
