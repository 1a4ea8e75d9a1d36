"""CTRF (Common Test Report Format) JSON: ``results.tests`` streamed one test at a time and
checked against ``results.summary``; a test ckdn exported carries its finding exactly."""

from __future__ import annotations

from ckdn.imports._model import Imported, ImportRefused, Tally, declared_mismatch, place
from ckdn.parsers.base import Finding, ParseContext, cap_line
from ckdn.parsers.readers import JsonStream

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.parsers.base import FindingSink

__all__ = ["STATUSES", "read_ctrf"]

#: The statuses CTRF defines; ``other`` is read as a failure (it is not a pass).
STATUSES = ("passed", "failed", "skipped", "pending", "other")
_RED = ("failed", "other")


def read_ctrf(ctx: ParseContext, path: str) -> Imported:
    sink, tally = ctx.sink(), Tally()
    counts = dict.fromkeys(STATUSES, 0)
    counts["tests"] = 0
    summary: dict[str, Any] = {}
    tool: dict[str, Any] = {}
    spec = ""
    seen_results = False
    flaky = 0
    checks: list[tuple[str, str]] = []
    try:
        with JsonStream.open(path) as reader:
            for key in reader.members():
                if key == "specVersion":
                    spec = str(reader.value())[:40]
                elif key == "results":
                    seen_results = True
                    for part in reader.members():
                        if part == "tool":
                            tool = _object(reader.value())
                        elif part == "summary":
                            summary = _object(reader.value())
                        elif part == "tests":
                            for test in reader.items():
                                flaky += _test(ctx, sink, tally, counts, test, checks)
            reader.finish()
    except (OSError, ValueError, RecursionError) as exc:
        raise ImportRefused(f"not readable as CTRF JSON: {cap_line(str(exc), 300)}") from None
    if not seen_results:
        raise ImportRefused("a JSON document without 'results': not a CTRF report")
    declared = {k: summary[k] for k in ("tests", *STATUSES) if k in summary}
    mismatch = declared_mismatch("results.summary", declared, counts)
    if not summary:
        mismatch = "the report has no results.summary to check its tests against"
    producer = cap_line(str(tool.get("name") or "unknown"), 80)
    shown = {key: value for key, value in counts.items() if value or key == "tests"}
    if flaky:
        shown["flaky"] = flaky
    result = sink.result(summary={"counts": shown, "tool": producer})
    for status, message in checks:
        if status == "other":
            result.parser_ok = False
            result.notes.append(cap_line(f"the exported run was not green: {message}"))
        elif not result.total:  # a red run with findings: they say it
            result.gate_failures.append(cap_line(message))
    return Imported(format="ctrf", variant=f"ctrf{('-' + spec) if spec else ''}",
                    producer=producer, result=result, cases=counts["tests"], tally=tally,
                    mismatch=mismatch)


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _test(ctx: ParseContext, sink: FindingSink, tally: Tally, counts: dict[str, int],  # noqa: PLR0917
          test: object, checks: list[tuple[str, str]]) -> int:
    if not isinstance(test, dict):
        raise ValueError("a results.tests item that is not an object")
    status = test.get("status")
    if status not in STATUSES:
        raise ValueError(f"a test with status {cap_line(repr(status), 40)}, which CTRF does not "
                         "define")
    counts["tests"] += 1
    counts[status] += 1
    name = test.get("name")
    tally.count(None if isinstance(name, str) and name else "no_name")
    if status in _RED:
        exported = _object(_object(test.get("extra")).get("ckdn"))
        if exported.get("check") is True:  # ckdn's export: the check itself, not a finding
            checks.append((status, str(test.get("message") or status)))
        elif exported:
            sink.add(Finding(str(exported.get("id") or "?"), str(exported.get("kind") or "?"),
                             str(test.get("message") or ""), exported.get("location") or None))
        elif sink.wants():
            location, _ = place(ctx, test.get("filePath"), test.get("line"))
            suite = test.get("suite")
            prefix = f"{suite}::" if isinstance(suite, str) and suite else ""
            message = str(test.get("message") or status)
            trace = test.get("trace")
            detail = ctx.snippet(trace.splitlines()) if isinstance(trace, str) and trace else ()
            sink.add(Finding(cap_line(f"{prefix}{name or '?'}", 500), "test_failure",
                             cap_line(message.strip().splitlines()[0] if message.strip()
                                      else status, 2000), location, detail))
        else:
            sink.total += 1
    return 1 if test.get("flaky") is True else 0
