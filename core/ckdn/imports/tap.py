"""TAP (Test Anything Protocol) 12, 13 and 14: the top-level test lines read against the
plan; a ``Bail out!`` or a plan that disagrees is never green. Subtests count through
the line that closes them."""

from __future__ import annotations

import re

from ckdn.imports._model import Imported, ImportRefused, Tally
from ckdn.parsers.base import Finding, ParseContext, cap_line

__all__ = ["read_tap"]

_VERSION = re.compile(r"TAP version (\d+)\s*$")
_PLAN = re.compile(r"1\.\.(\d+)(?:\s*#\s*(.*))?\s*$")
_TEST = re.compile(r"(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$")
_DIRECTIVE = re.compile(r"(skip|todo)\S*", re.IGNORECASE)
#: The longest line read whole (a longer one is cut, counted as text).
_LINE_CAP = 64 * 1024
_BLOCK_KEPT = 12


def read_tap(ctx: ParseContext, path: str) -> Imported:
    sink, tally = ctx.sink(), Tally()
    version = 12
    plan: int | None = None
    skip_all = False
    bailed: str | None = None
    counts = {"tests": 0, "passed": 0, "failures": 0, "skipped": 0, "todo": 0}
    numbers_wrong = 0
    block: list[str] = []
    in_block = False
    pending: tuple[str, str, str] | None = None  # id, message, of the last failure

    def flush() -> None:
        nonlocal pending
        del block[_BLOCK_KEPT:]
        if pending is not None:
            test_id, message, _ = pending
            detail = ctx.snippet(block)
            found = [line[len("message:"):].strip().strip("'\"")
                     for line in block if line.startswith("message:")]
            sink.add(Finding(test_id, "test_failure", cap_line(found[0] if found and found[0]
                                                                else message, 2000),
                             None, detail))
            pending = None

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(_LINE_CAP), ""), 1):
                line = raw.rstrip("\r\n")
                if in_block:
                    if line.strip() == "...":
                        in_block = False
                    elif len(block) < _BLOCK_KEPT:
                        block.append(line.strip())
                    continue
                if line.strip() == "---" and line[:1] == " " and counts["tests"]:
                    in_block = True
                    continue
                if line[:1] in (" ", "\t") or line.startswith("#") or not line.strip():
                    continue  # a subtest, a comment, a blank: the closing line counts it
                if number == 1 and (found := _VERSION.match(line)):
                    version = int(found.group(1))
                    if version not in (13, 14):
                        raise ImportRefused(f"'TAP version {version}': ckdn reads TAP 12 "
                                            "(no version line), 13 and 14")
                    continue
                if found := _PLAN.match(line):
                    if plan is not None:
                        raise ImportRefused(f"a second plan at line {number}")
                    plan = int(found.group(1))
                    skip_all = plan == 0 and bool(found.group(2))
                    continue
                if line.startswith("Bail out!"):
                    bailed = cap_line(line, 200)
                    break
                if line.startswith("pragma "):
                    continue
                test = _TEST.match(line)
                if test is None:
                    raise ImportRefused(f"line {number} is not TAP: {cap_line(line, 80)!r}")
                flush()
                block = []
                counts["tests"] += 1
                if test.group(2) is not None and int(test.group(2)) != counts["tests"]:
                    numbers_wrong += 1
                desc = test.group(3).strip()
                directive = _DIRECTIVE.match(test.group(4) or "")
                tally.count(None if desc else "no_name")
                if directive is not None and directive.group(1).lower() == "skip":
                    counts["skipped"] += 1
                elif directive is not None:
                    counts["todo"] += 1  # a TODO's result never fails the run (TAP says so)
                elif test.group(1) == "ok":
                    counts["passed"] += 1
                else:
                    counts["failures"] += 1
                    test_id = cap_line(f"{counts['tests']} {desc}".strip(), 500)
                    pending = (test_id, desc or "not ok", "")
            flush()
    except OSError as exc:
        raise ImportRefused(f"not readable: {exc.strerror or exc}") from None
    mismatch: str | None = None
    result = sink.result(summary={"counts": {k: v for k, v in counts.items()
                                             if v or k == "tests"}, "plan": plan})
    if bailed is not None:
        result.parser_ok = False
        result.notes.append(f"the producer bailed out: {bailed}")
    elif plan is None:
        mismatch = "the stream has no plan (1..N) to check its tests against"
    elif plan != counts["tests"]:
        mismatch = f"the plan declares 1..{plan} but {counts['tests']} test line(s) were read"
    elif numbers_wrong:
        mismatch = f"{numbers_wrong} test line(s) numbered out of order"
    cases = counts["tests"] or (1 if skip_all else 0)
    return Imported(format="tap", variant=f"tap{version}", producer="unknown", result=result,
                    cases=cases, tally=tally, mismatch=mismatch)
