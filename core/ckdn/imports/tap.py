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
#: The longest line read whole (a longer one is read on as the next line).
_LINE_CAP = 64 * 1024
#: Lines kept of a failure's YAML block (its snippet).
_BLOCK_KEPT = 12


class _Stream:
    """One TAP stream as it is read, line by line."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx, self.sink, self.tally = ctx, ctx.sink(), Tally()
        self.version = 12
        self.plan: int | None = None
        self.skip_all = False
        self.bailed: str | None = None
        self.counts = {"tests": 0, "passed": 0, "failures": 0, "skipped": 0, "todo": 0}
        self.numbers_wrong = 0
        self.block: list[str] = []
        self.in_block = False
        self.pending: tuple[str, str] | None = None  # the last failure: its id and description

    def flush(self) -> None:
        """The failure read last becomes a finding, with its YAML block's message if any."""
        if self.pending is None:
            return
        test_id, description = self.pending
        messages = [line[len("message:"):].strip().strip("'\"") for line in self.block
                    if line.startswith("message:")]
        message = messages[0] if messages and messages[0] else description
        self.sink.add(Finding(test_id, "test_failure", cap_line(message, 2000), None,
                              self.ctx.snippet(self.block)))
        self.pending = None

    def line(self, number: int, line: str) -> bool:
        """Read one line; False once the producer bailed out."""
        if self.in_block:
            if line.strip() == "...":
                self.in_block = False
            elif len(self.block) < _BLOCK_KEPT:
                self.block.append(line.strip())
            return True
        if line.strip() == "---" and line[:1] == " " and self.counts["tests"]:
            self.in_block = True
        elif line[:1] in (" ", "\t") or line.startswith(("#", "pragma ")) or not line.strip():
            pass  # a subtest, a comment, a blank: the closing line counts a subtest
        elif number == 1 and (found := _VERSION.match(line)):
            self.version = int(found.group(1))
            if self.version not in (13, 14):
                raise ImportRefused(f"'TAP version {self.version}': ckdn reads TAP 12 (no "
                                    "version line), 13 and 14")
        elif found := _PLAN.match(line):
            if self.plan is not None:
                raise ImportRefused(f"a second plan at line {number}")
            self.plan = int(found.group(1))
            self.skip_all = self.plan == 0 and bool(found.group(2))
        elif line.startswith("Bail out!"):
            self.bailed = cap_line(line, 200)
            return False
        else:
            self.test(number, line)
        return True

    def test(self, number: int, line: str) -> None:
        test = _TEST.match(line)
        if test is None:
            raise ImportRefused(f"line {number} is not TAP: {cap_line(line, 80)!r}")
        self.flush()
        self.block = []
        counts = self.counts
        counts["tests"] += 1
        if test.group(2) is not None and int(test.group(2)) != counts["tests"]:
            self.numbers_wrong += 1
        description = test.group(3).strip()
        directive = _DIRECTIVE.match(test.group(4) or "")
        self.tally.count(None if description else "no_name")
        if directive is not None and directive.group(1).lower() == "skip":
            counts["skipped"] += 1
        elif directive is not None:
            counts["todo"] += 1  # a TODO's result never fails the run (TAP says so)
        elif test.group(1) == "ok":
            counts["passed"] += 1
        else:
            counts["failures"] += 1
            self.pending = (cap_line(f"{counts['tests']} {description}".strip(), 500),
                            description or "not ok")

    def mismatch(self) -> str | None:
        tests = self.counts["tests"]
        if self.plan is None:
            return "the stream has no plan (1..N) to check its tests against"
        if self.plan != tests:
            return f"the plan declares 1..{self.plan} but {tests} test line(s) were read"
        if self.numbers_wrong:
            return f"{self.numbers_wrong} test line(s) numbered out of order"
        return None


def read_tap(ctx: ParseContext, path: str) -> Imported:
    stream = _Stream(ctx)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(_LINE_CAP), ""), 1):
                if not stream.line(number, raw.rstrip("\r\n")):
                    break
        stream.flush()
    except OSError as exc:
        raise ImportRefused(f"not readable: {exc.strerror or exc}") from None
    counts = stream.counts
    result = stream.sink.result(summary={"counts": {k: v for k, v in counts.items()
                                                    if v or k == "tests"},
                                         "plan": stream.plan})
    mismatch = None
    if stream.bailed is not None:
        result.parser_ok = False
        result.notes.append(f"the producer bailed out: {stream.bailed}")
    else:
        mismatch = stream.mismatch()
    cases = counts["tests"] or (1 if stream.skip_all else 0)
    return Imported(format="tap", variant=f"tap{stream.version}", producer="unknown",
                    result=result, cases=cases, tally=stream.tally, mismatch=mismatch)
