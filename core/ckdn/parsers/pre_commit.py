"""The ``pre_commit`` parser: the text ``pre-commit run`` prints.

pre-commit has no report file, so this parser reads its hook lines from the
log, streamed::

    check yaml...............................................................Passed
    ruff.....................................................................Failed
    - hook id: ruff
    - exit code: 1
    <blank line, the hook's output, blank line>
    mypy.................................................(no files to check)Skipped

Each ``Failed`` hook is a ``hook_failure`` (id: the hook id; detail: its output,
bounded). Guards: a nonzero exit code must come with at least one ``Failed``
hook, a log with no hook line at all cannot be read, and a run where every hook
was skipped checked nothing: a gate failure unless ``allow_all_skipped = true``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar, Final

from ckdn.parsers._logtext import DetailLines, plain_lines
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

__all__ = ["PreCommitParser"]

KIND = "hook_failure"
#: ``name....[postfix]Status``: pre-commit pads every hook line with at least 3 dots.
_HOOK: Final = re.compile(
    r"^(?P<name>.*?)\.{3,}(?P<postfix>\([^()]*\))?(?P<status>Passed|Failed|Skipped)$")
_META: Final = re.compile(r"^- (?:hook id: (?P<id>.+)|exit code: -?\d+|files were modified by "
                          r"this hook|duration: [\d.]+s)$")
#: Lines pre-commit itself prints after the last hook: not part of that hook's output.
_TRAILER: Final = re.compile(r"^(?:\[(?:INFO|WARNING|ERROR)\] |pre-commit hook\(s\) made changes"
                             r"|All changes made by hooks:|An error has occurred: )")
_ERROR: Final = "An error has occurred: "


class PreCommitParser(BaseParser):
    """Reads hook results from ``pre-commit run`` output in the log."""

    name = "pre_commit"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "allow_all_skipped": Option("bool", help="accept a run in which every hook was skipped"),
    }

    def parse(self, ctx: ParseContext) -> ParseResult:
        return guarded(self.name, _parse, ctx)


class _Hook:
    """A failed hook whose meta and output lines are still arriving."""

    __slots__ = ("blanks", "hook_id", "meta", "name", "output", "output_started")

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.hook_id: str | None = None
        self.meta: list[str] = []
        # A hook may print millions of lines: the first ``limit`` and a count of the rest.
        self.output = DetailLines(limit, keep_borders=True)
        self.blanks = 0  # blank lines held back: the last ones only frame the output
        self.output_started = False

    def add(self, line: str) -> None:
        if not self.output_started:
            meta = _META.match(line)
            if meta:
                if meta.group("id"):
                    self.hook_id = meta.group("id").strip()
                elif not line.startswith("- duration"):
                    self.meta.append(line)
                return
            if not line.strip():
                return  # the blank line pre-commit puts before a hook's output
            self.output_started = True
        if not line.strip():
            self.blanks += 1
            return
        while self.blanks:  # blank lines inside the output are part of it
            self.blanks -= 1
            self.output.add("")
        self.output.add(line)

    def finding(self, seen: dict[str, int]) -> Finding:
        ident = self.hook_id or self.name
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] > 1:  # the same hook id twice in one config
            ident = f"{ident}#{seen[ident]}"
        message = " ".join([f"{self.name} Failed", *self.meta])
        return Finding(ident, KIND, cap_line(message), None, self.output.tuple())


def _parse(ctx: ParseContext) -> ParseResult:
    sink = FindingSink(ctx.top)
    counts = {"hooks": 0, "passed": 0, "failed": 0, "skipped": 0}
    seen: dict[str, int] = {}
    failed: _Hook | None = None
    error: list[str] = []  # "An error has occurred: ..." and its "=====> why" lines
    last = ""
    for line in plain_lines(ctx):
        if line.strip():
            last = line.strip()
        if error and len(error) < 4 and line.startswith("=====> "):
            error.append(line[7:].strip())
        match = _HOOK.match(line)
        if match:
            if failed is not None:
                sink.add(failed.finding(seen))
                failed = None
            status = match.group("status")
            counts["hooks"] += 1
            counts[status.lower()] += 1
            if status == "Failed":
                failed = _Hook(match.group("name").strip(), ctx.max_snippet_lines)
            continue
        if _TRAILER.match(line):
            if failed is not None:
                sink.add(failed.finding(seen))
                failed = None
            if line.startswith(_ERROR):
                error = [line.strip()]
            continue
        if failed is not None:
            failed.add(line)
    if failed is not None:
        sink.add(failed.finding(seen))
    result = sink.result(summary={"counts": counts})
    _guards(ctx, result, counts, " ".join(error) or last)
    return result


def _guards(ctx: ParseContext, result: ParseResult, counts: dict[str, int], why: str) -> None:
    said = f"; log says: {cap_line(why, 300)}" if why else ""
    if not counts["hooks"]:
        result.parser_ok = False
        result.notes.append(f"no pre-commit hook result line in the log (exit code {ctx.rc}): "
                            "pre-commit did not run any hook, or its output format changed"
                            + said)
        return
    if ctx.rc != 0 and not counts["failed"]:
        result.parser_ok = False
        result.notes.append(f"exit code {ctx.rc} but no hook Failed" + said)
    if counts["skipped"] == counts["hooks"] and not ctx.options.get("allow_all_skipped", False):
        result.gate_failures.append(f"every pre-commit hook was skipped ({counts['hooks']})")
        result.notes.append("no hook checked anything; set allow_all_skipped = true if that "
                            "is expected")
