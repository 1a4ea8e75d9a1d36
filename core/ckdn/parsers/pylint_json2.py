"""The ``pylint`` parser: pylint's ``json2`` report (pylint >= 3.0)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ckdn.parsers._jsonstream import JsonStream, find_report, kind_of, unreadable
from ckdn.parsers._logtext import LongLines, crashed, log_ends, plain_lines, quote
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["PylintParser"]

# pylint's exit code is a bitmask (1 fatal, 2 error, 4 warning, 8 refactor,
# 16 convention, 32 usage error), so the report and the exit code can be checked
# against each other exactly: every weighted message type in the report sets its
# bit, and nothing else does. ``info`` messages never set a bit; they are counted,
# never findings.
#
# Guards: a missing or empty report is ``parser_ok=False`` with a note quoting the
# log's last line (pylint says there why it stopped); ``statistics.messageTypeCount``
# must match the messages; an exit code with the usage-error bit, or a bit pylint
# never sets, is not a pylint result; and the weighted types the exit code names
# must be the ones the report holds.
#
# pylint exits 0 with weighted messages only when its own policy accepted them
# (``--exit-zero``, or a score at or above ``--fail-under``). Those messages carry
# no exit-code weight in that run, so they are counted, not findings; a project
# that wants ckdn to judge the score sets ``score_fail_under``. But a module
# pylint could not lint at all (a fatal message such as F0001 "No module named",
# or E0001 "Parsing failed") was never checked, and a report with
# ``modulesLinted`` 0 checked nothing: unverified, not clean, so a gate failure
# unless ``allow_skipped = true``.
#
# The log is read too, for what it says beside the report: pylint's text
# messages (with ``,text`` in the output format) may not outnumber the report's,
# and a Python traceback means pylint (or a plugin) crashed. Either makes the
# report untrusted.

KIND = "lint_violation"
#: Message type -> its bit in pylint's exit code (pylint.constants.MSG_TYPES_STATUS).
WEIGHT: Final = {"fatal": 1, "error": 2, "warning": 4, "refactor": 8, "convention": 16}
TYPES: Final = (*WEIGHT, "info")
USAGE_ERROR = 32
#: Messages that mean the module was never linted: every fatal one, and a parse failure.
UNLINTED_IDS: Final = ("E0001",)
NAMED_UNLINTED = 3
#: pylint's text layout, "path:line:col: C0116: text (symbol)"; the letter is the type.
_TEXT_MESSAGE: Final = re.compile(r"^[^\s:][^:]*:\d+:\d+: (?P<type>[CRWEF])\d{4}: ")


class PylintParser(BaseParser):
    """Reads ``--output-format=json2:{run_dir}/pylint.json``."""

    name = "pylint"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "report": Option("str", help="pylint's json2 report, relative to the run dir"),
        "score_fail_under": Option("number", help="gate: fail when pylint's score is below this"),
        "allow_skipped": Option("bool", help="accept modules pylint could not lint, or none"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


def _parse(ctx: ParseContext) -> ParseResult:
    report = _load(ctx)
    if isinstance(report, str):
        return ParseResult(parser_ok=False, notes=[cap_line(report)])
    statistics = report.statistics
    rc = ctx.rc
    counts = report.counts
    present = sum(WEIGHT[t] for t in WEIGHT if counts[t])
    weighted = sum(counts[t] for t in WEIGHT)
    result = ParseResult(summary={"counts": {**counts, "messages": report.total}})
    _score(ctx, statistics, result)
    _log_disagrees(ctx, result, weighted)
    _unlinted(ctx, result, report)
    stated = statistics["messageTypeCount"]
    wrong = [f"{t} {stated.get(t)!r} vs {counts[t]}" for t in TYPES if stated.get(t) != counts[t]]
    if wrong:
        result.parser_ok = False
        result.notes.append(cap_line("pylint's statistics disagree with its messages: "
                                     + ", ".join(wrong)))
    if rc < 0 or rc >= 2 * USAGE_ERROR or rc & USAGE_ERROR:
        result.parser_ok = False
        result.notes.append(f"exit code {rc} is not a pylint result: 32 is a usage error "
                            "(bad option or unreadable config), and pylint sets no bit above it")
        return result
    if rc == 0:
        if weighted:
            result.summary["counts"]["accepted"] = weighted
            result.notes.append(
                f"pylint exited 0 with {weighted} fatal/error/warning/refactor/convention "
                "message(s): its --exit-zero or --fail-under accepted them (see summary "
                "counts; set score_fail_under to gate on the score)")
        return result
    sink = report.weighted
    if rc == 1 and present == 0:
        # pylint exits "msg_status or 1" when --fail-on or --fail-under trips: with no
        # weighted message, the info messages are the only evidence the code rests on.
        sink = report.info
        shown = (f"{counts['info']} info message(s) shown" if counts["info"]
                 else "the report has no message to show")
        result.notes.append("pylint exited 1 with no fatal message: its --fail-on or "
                            f"--fail-under tripped; {shown}")
    elif rc != present:
        result.parser_ok = False
        result.notes.append(f"exit code {rc} says {_bits(rc)} but the report holds "
                            f"{_bits(present)}")
    return sink.result(summary=result.summary, parser_ok=result.parser_ok, notes=result.notes,
                       gate_failures=result.gate_failures)


class _Messages:
    """What the streamed report holds: counts by type, and the findings either way.

    Which messages are the findings depends on all of them (exit code 1 with no
    weighted message makes the info messages the evidence), so both kinds are
    kept, the first ``top`` of each, and the parser chooses at the end.
    """

    __slots__ = ("counts", "info", "statistics", "total", "unlinted", "unlinted_count",
                 "weighted")

    def __init__(self, ctx: ParseContext) -> None:
        self.counts = dict.fromkeys(TYPES, 0)
        self.total = 0
        self.weighted = ctx.sink()  # the findings, unless only info
        self.info = FindingSink(ctx.top)
        self.unlinted: list[str] = []  # the first few modules never linted, named in a note
        self.unlinted_count = 0
        self.statistics: dict[str, Any] = {}

    def add(self, ctx: ParseContext, message: dict[str, Any]) -> None:
        kind = message["type"]
        self.counts[kind] += 1
        self.total += 1
        sink = self.info if kind == "info" else self.weighted
        if sink.wants():  # build only what the digest (or the tap) takes
            sink.add(_finding(ctx, message))
        else:
            sink.total += 1
        if kind == "fatal" or message.get("messageId") in UNLINTED_IDS:
            self.unlinted_count += 1
            if len(self.unlinted) < NAMED_UNLINTED:
                self.unlinted.append(cap_line(
                    f"{message.get('path') or message.get('module') or '?'}: "
                    f"{message.get('messageId', kind)} {message['message']}", 160))


def _load(ctx: ParseContext) -> _Messages | str:
    """The report's facts, read as it streams, or why they cannot be trusted."""
    found = find_report(ctx, default="pylint.json", label="pylint report",
                        needs="include --output-format=json2:{run_dir}/",
                        log_tail=lambda: log_ends(ctx), why=_usage_hint(ctx.rc),
                        empty="pylint stopped before linting")
    if isinstance(found, str):
        return found
    name, path = found
    try:
        with JsonStream.open(path) as reader:
            return _read(ctx, reader, f"pylint report {name} is not pylint's json2 format")
    except (OSError, ValueError, RecursionError) as exc:
        return unreadable("pylint report", name, exc, lambda: log_ends(ctx))


def _read(ctx: ParseContext, reader: JsonStream, drift: str) -> _Messages | str:
    """Walk the report: ``messages`` one by one, ``statistics`` whole."""
    kind = kind_of(reader)
    if kind != "dict":
        return f"{drift} (a JSON {kind}; json2 is an object, json is an array)"
    report = _Messages(ctx)
    seen: dict[str, str] = {}
    for key in reader.members():
        if key not in ("messages", "statistics"):
            continue
        if key in seen:
            return f"{drift} (its key {key!r} appears twice)"
        seen[key] = kind_of(reader)
        if key == "messages" and seen[key] == "list":
            for index, message in enumerate(reader.items()):
                if not (isinstance(message, dict) and message.get("type") in TYPES
                        and isinstance(message.get("message"), str)):
                    return f"{drift} (message {index} has no known type and text)"
                report.add(ctx, message)
        elif key == "statistics" and seen[key] == "dict":
            report.statistics = reader.value()
    reader.finish()
    if (seen.get("messages"), seen.get("statistics")) != ("list", "dict"):
        return f"{drift} (no 'messages' list and 'statistics' object)"
    if not isinstance(report.statistics.get("messageTypeCount"), dict):
        return f"{drift} (no statistics.messageTypeCount)"
    return report


def _log_disagrees(ctx: ParseContext, result: ParseResult, weighted: int) -> None:
    """A log that shows more than the report holds, or a crash: the report is not the run."""
    shown = 0
    crash = ""
    long = LongLines()
    for line in plain_lines(ctx, long):
        if _TEXT_MESSAGE.match(line):
            shown += 1
        elif not crash and crashed(line):
            crash = quote(line, 300)
    if shown > weighted:
        result.parser_ok = False
        result.notes.append(f"pylint's log shows {shown} fatal/error/warning/refactor/convention "
                            f"message(s) but its report holds {weighted}")
    if crash:
        result.parser_ok = False
        result.notes.append(cap_line(f"pylint's log holds a crash ({crash}): the report may "
                                     "not be the whole run"))
    long.refuse(result, "pylint")


def _unlinted(ctx: ParseContext, result: ParseResult, report: _Messages) -> None:
    """Modules pylint never linted, and a run that linted none: unverified, not clean."""
    if ctx.options.get("allow_skipped", False):
        return
    statistics, count = report.statistics, report.unlinted_count
    if count:
        named = "; ".join(report.unlinted)
        more = f" (+{count - NAMED_UNLINTED} more)" if count > NAMED_UNLINTED else ""
        result.gate_failures.append(f"pylint could not lint {count} module(s)")
        result.notes.append(cap_line(f"not linted: {named}{more}; set allow_skipped = true to "
                                     "accept them", 600))
    if statistics.get("modulesLinted") == 0:
        result.gate_failures.append("pylint linted no module")
        result.notes.append("pylint's report says modulesLinted is 0; set allow_skipped = true "
                            "if that is expected")


def _usage_hint(rc: int) -> str:
    return ": pylint usage error" if rc > 0 and rc & USAGE_ERROR else ""


def _score(ctx: ParseContext, statistics: dict[str, Any], result: ParseResult) -> None:
    score = statistics.get("score")
    number = (isinstance(score, (int, float)) and not isinstance(score, bool)
              and math.isfinite(score))
    if number:
        # Ten significant digits: pylint's float arithmetic (7.199999999999999) without
        # hiding a score just under a threshold (7.9999 stays 7.9999).
        result.summary["score"] = float(f"{score:.10g}")
    threshold = ctx.options.get("score_fail_under")
    if threshold is None:
        return
    if not number:
        result.gate_failures.append("pylint score unavailable for score_fail_under")
        result.notes.append(cap_line(f"pylint's report has no numeric score: {score!r}"))
    elif score < threshold:
        result.gate_failures.append(f"pylint score {score:.10g} < score_fail_under "
                                    f"{threshold:.10g}")


def _bits(status: int) -> str:
    names = [name for name, bit in WEIGHT.items() if status & bit]
    return "(" + (", ".join(names) if names else "no weighted message") + ")"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finding(ctx: ParseContext, message: dict[str, Any]) -> Finding:
    path = message.get("path") or message.get("absolutePath") or message.get("module") or "?"
    line = _int(message.get("line"))
    column = _int(message.get("column"))
    # pylint's columns count from 0; locations count from 1.
    location = ctx.location(str(path), line, None if column is None else column + 1)
    symbol = str(message.get("symbol") or message.get("messageId") or message["type"])
    text, *rest = message["message"].splitlines() or [""]
    msg_id = message.get("messageId")
    head = f"{msg_id}: {text} ({symbol})" if msg_id else f"{text} ({symbol})"
    obj = message.get("obj")
    detail = [f"in {obj}"] if isinstance(obj, str) and obj else []
    return Finding(f"{location}:{symbol}", KIND, cap_line(head), location,
                   ctx.snippet([*detail, *rest]))
