"""The ``bandit`` parser: ``bandit -f json -o {run_dir}/bandit.json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ckdn.parsers._jsonstream import JsonStream, NameSet, find_report, kind_of, unreadable
from ckdn.parsers._logtext import LongLines, crashed, log_ends, plain_lines, quote
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["BanditParser"]

# Every entry of ``results`` is a ``security_issue``: bandit's exit code counts
# exactly the results its own severity / confidence filters let into the report,
# so the parser never filters again (it must not hide what the exit code knows).
#
# bandit exits 0 after failing to parse a file: the file lands in ``errors`` and
# nothing in the exit code says it was never scanned. Files it could not scan,
# and a run that scanned no file at all, are unverified, not clean: a gate
# failure unless ``allow_skipped = true``.
#
# Guards: ``metrics._totals`` counts every issue bandit found before its filters,
# so the report's results per severity and confidence can never exceed those
# counts; exit code 1 needs a result, and any other code but 0 is not a bandit
# result (2 is its usage or config error); a missing or empty report is
# ``parser_ok=False`` with a note quoting the log's last line.
#
# The log is read too: bandit logs a plugin that crashed on a file ("Bandit
# internal error running: B...") at ``ERROR`` level and leaves that file's
# results out of a report that looks clean, with exit code 0. An ``ERROR`` or
# ``CRITICAL`` log line, or a Python traceback, makes the report untrusted.

KIND = "security_issue"
LEVELS: Final = ("HIGH", "MEDIUM", "LOW", "UNDEFINED")
TOTALS = "_totals"
#: Unscanned files named in a note; the rest are counted.
NAMED_ERRORS = 3
#: bandit's log lines: "[module]\tLEVEL\tmessage"; these levels say the scan went wrong.
_LOG_FAILURES: Final = ("\tERROR\t", "\tCRITICAL\t")


class BanditParser(BaseParser):
    """Reads bandit's JSON report."""

    name = "bandit"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "report": Option("str", help="bandit's JSON report, relative to the run dir"),
        "allow_skipped": Option("bool", help="accept files bandit could not scan"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


def _parse(ctx: ParseContext) -> ParseResult:
    report = _load(ctx)
    if isinstance(report, str):
        return ParseResult(parser_ok=False, notes=[cap_line(report)])
    totals, sink, reported = report.totals, report.sink, report.sink.total
    found = sum(_count(totals, f"SEVERITY.{level}") for level in LEVELS)
    counts = {"issues": reported, "high": report.severity["HIGH"],
              "medium": report.severity["MEDIUM"], "low": report.severity["LOW"],
              "filtered_out": max(found - reported, 0), "files": report.scanned(),
              "unscanned": report.unscanned.count,
              "nosec": _count(totals, "nosec"), "skipped_tests": _count(totals, "skipped_tests")}
    result = sink.result(summary={"counts": counts})
    _cross_check(ctx, result, severity=report.severity, confidence=report.confidence,
                 totals=totals, reported=reported)
    _unverified(ctx, result, report)
    _log_failures(ctx, result)
    return result


class _Report:
    """What the streamed report holds: kept findings, counts, the files named."""

    __slots__ = ("confidence", "errors", "files", "severity", "sink", "totals", "unscanned")

    def __init__(self, ctx: ParseContext) -> None:
        self.sink = ctx.sink()
        self.severity = dict.fromkeys(LEVELS, 0)
        self.confidence = dict.fromkeys(LEVELS, 0)
        self.totals: dict[str, Any] = {}
        self.errors: list[dict[str, Any]] = []  # the first few, named in a note
        self.unscanned = NameSet()  # the files in ``errors``
        self.files = NameSet()  # the files in ``metrics``

    def result(self, ctx: ParseContext, item: dict[str, Any]) -> None:
        self.severity[_level(item.get("issue_severity"))] += 1
        self.confidence[_level(item.get("issue_confidence"))] += 1
        sink = self.sink
        if sink.wants():  # build only what the digest (or the tap) takes
            sink.add(_finding(ctx, item))
        else:
            sink.total += 1

    def error(self, error: Any) -> None:
        entry = error if isinstance(error, dict) else {}
        self.unscanned.add(str(entry.get("filename")) if isinstance(error, dict) else "?")
        if len(self.errors) < NAMED_ERRORS:
            self.errors.append({"filename": cap_line(str(entry.get("filename", "?")), 300),
                                "reason": cap_line(str(entry.get("reason", "?")), 300)})

    def scanned(self) -> int:
        """Files in the metrics that are not among the unscanned (by count past the budget)."""
        if self.files.complete and self.unscanned.complete:
            return len(self.files.names - self.unscanned.names)
        return max(self.files.count - len(self.unscanned.names), 0)


def _log_failures(ctx: ParseContext, result: ParseResult) -> None:
    """bandit's own ERROR lines, or a crash, beside the report: the report is not the scan."""
    failures = 0
    first = ""
    long = LongLines()
    for line in plain_lines(ctx, long):
        if (line.startswith("[") and any(level in line for level in _LOG_FAILURES)) or crashed(
                line):
            failures += 1
            if not first:
                first = quote(line, 200).replace("\t", " ")
    if failures:
        result.parser_ok = False
        result.notes.append(f"bandit's log reports {failures} error(s) beside its report "
                            f"(first: {first}): files may have gone unscanned")
    long.refuse(result, "bandit")


def _load(ctx: ParseContext) -> _Report | str:
    """The report's facts, read as it streams, or why it cannot be trusted."""
    found = find_report(ctx, default="bandit.json", label="bandit report",
                        needs="include -f json -o {run_dir}/", log_tail=lambda: log_ends(ctx),
                        why=" (bandit's usage or config error)" if ctx.rc == 2 else "",
                        empty="bandit stopped before scanning")
    if isinstance(found, str):
        return found
    name, path = found
    try:
        with JsonStream.open(path) as reader:
            return _read(ctx, reader, f"bandit report {name} is not bandit's JSON format")
    except (OSError, ValueError, RecursionError) as exc:
        return unreadable("bandit report", name, exc, lambda: log_ends(ctx))


def _read(ctx: ParseContext, reader: JsonStream, drift: str) -> _Report | str:
    """Walk the report: ``results`` and ``errors`` item by item, ``metrics`` by file name."""
    kind = kind_of(reader)
    if kind != "dict":
        return f"{drift} (a JSON {kind}, not an object)"
    report = _Report(ctx)
    seen: dict[str, str] = {}
    for key in reader.members():
        if key not in ("results", "errors", "metrics"):
            continue
        if key in seen:
            return f"{drift} (its key {key!r} appears twice)"
        seen[key] = kind_of(reader)
        if key == "results" and seen[key] == "list":
            for index, item in enumerate(reader.items()):
                if not (isinstance(item, dict) and isinstance(item.get("filename"), str)
                        and isinstance(item.get("test_id"), str)):
                    return f"{drift} (result {index} has no filename and test_id)"
                report.result(ctx, item)
        elif key == "errors" and seen[key] == "list":
            for error in reader.items():
                report.error(error)
        elif key == "metrics" and seen[key] == "dict":
            for file in reader.members():
                if file == TOTALS:
                    totals = reader.value()
                    report.totals = totals if isinstance(totals, dict) else {}
                    seen[TOTALS] = type(totals).__name__
                else:
                    report.files.add(file)  # its metrics are not needed: skipped
    reader.finish()
    if (seen.get("results"), seen.get("errors"), seen.get("metrics"), seen.get(TOTALS)) != (
            "list", "list", "dict", "dict"):
        return f"{drift} (no 'results', 'errors' and 'metrics._totals')"
    return report


def _level(value: Any) -> str:
    return value if value in LEVELS else "UNDEFINED"


def _count(totals: dict[str, Any], key: str) -> int:
    value = totals.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _cross_check(ctx: ParseContext, result: ParseResult, *, severity: dict[str, int],
                 confidence: dict[str, int], totals: dict[str, Any], reported: int) -> None:
    over = [f"{kind} {level}: {seen} reported > {_count(totals, f'{kind}.{level}')} found"
            for kind, seen_by in (("SEVERITY", severity), ("CONFIDENCE", confidence))
            for level, seen in seen_by.items() if seen > _count(totals, f"{kind}.{level}")]
    if over:
        result.parser_ok = False
        result.notes.append(cap_line("bandit's metrics._totals disagree with its results: "
                                     + "; ".join(over)))
    if ctx.rc == 1 and not reported:
        result.parser_ok = False
        result.notes.append("bandit exited 1 but its report lists no result")
    elif ctx.rc not in (0, 1):
        result.parser_ok = False
        result.notes.append(f"exit code {ctx.rc} is not a bandit result (0 clean, 1 issues)")


def _unverified(ctx: ParseContext, result: ParseResult, report: _Report) -> None:
    if ctx.options.get("allow_skipped", False):
        return
    errors = report.unscanned.count
    if errors:
        named = [f"{ctx.location(entry['filename'])}: {entry['reason']}"
                 for entry in report.errors]
        more = f" (+{errors - NAMED_ERRORS} more)" if errors > NAMED_ERRORS else ""
        result.gate_failures.append(f"bandit could not scan {errors} file(s)")
        result.notes.append(cap_line("unscanned: " + "; ".join(named) + more
                                     + "; set allow_skipped = true to accept them"))
    elif not report.scanned():
        result.gate_failures.append("bandit scanned no file")
        result.notes.append("bandit found no Python file to scan; set allow_skipped = true "
                            "if that is expected")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finding(ctx: ParseContext, item: dict[str, Any]) -> Finding:
    line = _int(item.get("line_number"))
    column = _int(item.get("col_offset"))
    # bandit's col_offset is the AST's, counted from 0.
    location = ctx.location(item["filename"], line, None if column is None else column + 1)
    test_id = item["test_id"]
    where = ctx.location(item["filename"], line)
    text = str(item.get("issue_text") or item.get("test_name") or "")
    facts = [f"severity {item.get('issue_severity', '?')}",
             f"confidence {item.get('issue_confidence', '?')}"]
    cwe = item.get("issue_cwe")
    if isinstance(cwe, dict) and _int(cwe.get("id")):
        facts.append(f"CWE-{cwe['id']}")
    detail = [", ".join(facts)]
    code = item.get("code")
    if isinstance(code, str):
        detail.extend(code.splitlines())
    return Finding(f"{where}:{test_id}", KIND, cap_line(f"{test_id} {text}"), location,
                   ctx.snippet(detail))
