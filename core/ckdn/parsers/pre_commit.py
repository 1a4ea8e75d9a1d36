"""The ``pre_commit`` parser: the text ``pre-commit run`` prints."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from typing import ClassVar, Final

from ckdn.parsers._logtext import (
    DetailLines,
    LogSample,
    LongLines,
    after,
    joined,
    plain_lines,
    quote,
)
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["PreCommitParser", "hook_line"]

# pre-commit has no report file, so this parser reads its hook lines from the
# log, streamed::
#
#     check yaml...............................................................Passed
#     ruff.....................................................................Failed
#     - hook id: ruff
#     - exit code: 1
#     <blank line, the hook's output, blank line>
#     mypy.................................................(no files to check)Skipped
#
# Each ``Failed`` hook is a ``hook_failure`` (id: the hook id; detail: its output,
# bounded).
#
# pre-commit prints no closing summary, so the parser recognises the run by its
# shape instead, and reads anything else as not pre-commit's output: every hook
# line of one run is padded with dots to the same width, at least 79 columns
# (pre-commit's ``_compute_cols``: the longest hook name + 30, at least 80, less
# one); a hook's ``- hook id:`` lines and its output block (framed by blank
# lines) follow it; pre-commit's own log lines start with ``[INFO]``,
# ``[WARNING]`` or ``[ERROR]``; its own failure ("An error has occurred: ...")
# ends the run. A line that fits none of these, a hook line of another width,
# an output block without its closing blank line and a last line without its
# newline (a log cut short) make the log unreadable. Further guards: a nonzero
# exit code must come with a ``Failed`` hook, and a run where every hook was
# skipped checked nothing (a gate failure unless ``allow_all_skipped = true``).
#
# Every test here is a string method, not a regular expression with nested
# repetition: one 200,000-character line costs what reading it costs.

KIND = "hook_failure"
NO_FILES: Final = "(no files to check)"
#: The narrowest hook line pre-commit prints: 80 columns, less one.
MIN_WIDTH = 79
_META: Final = ("- hook id: ", "- exit code: ", "- duration: ")
_MODIFIED: Final = "- files were modified by this hook"
_LOG_LEVELS: Final = ("[INFO] ", "[WARNING] ", "[ERROR] ")
#: pre-commit's own failure (FatalError, any other exception, Ctrl-C): the run ended there.
_ERRORS: Final = ("An error has occurred: ", "An unexpected error has occurred: ",
                  "Interrupted (^C): ")
#: What ``--show-diff-on-failure`` prints after the last hook; the diff follows.
_TRAILER: Final = ("pre-commit hook(s) made changes.",
                   "If you are seeing this message in CI, reproduce locally with: ",
                   "To run `pre-commit` as part of git workflow, use ")
_DIFF: Final = "All changes made by hooks:"


class PreCommitParser(BaseParser):
    """Reads hook results from ``pre-commit run`` output in the log."""

    name = "pre_commit"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "allow_all_skipped": Option("bool", help="accept a run in which every hook was skipped"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


def hook_line(line: str) -> tuple[str, str, int] | None:
    """``(name, status, width)`` of a pre-commit hook line, or None for any other line.

    ``name...Passed``, ``name...Failed``, ``name...Skipped`` or
    ``name...(no files to check)Skipped``, with at least three dots; ``width``
    is the line's display width (East Asian wide characters count twice, as
    pre-commit counts them).
    """
    for status in ("Passed", "Failed", "Skipped"):
        if line.endswith(status):
            break
    else:
        return None
    rest = line[:-len(status)]
    if status == "Skipped" and rest.endswith(NO_FILES):
        rest = rest[:-len(NO_FILES)]
    name = rest.rstrip(".")
    if len(rest) - len(name) < 3:
        return None
    return name.strip(), status, _width(line)


def _width(text: str) -> int:
    if text.isascii():
        return len(text)

    return sum(2 if unicodedata.east_asian_width(c) in "FW" else 1 for c in text)


class _Hook:
    """A hook whose meta and output lines are still arriving.

    After its hook line come pre-commit's ``- hook id:`` lines, then, only after
    those, a blank line, the hook's output and a closing blank line.
    """

    __slots__ = ("blanks", "failed", "hook_id", "meta", "name", "output", "said", "state")

    def __init__(self, name: str, *, failed: bool, limit: int) -> None:
        self.name = name
        self.failed = failed
        self.hook_id: str | None = None
        self.meta: list[str] = []
        # A hook may print millions of lines: the first ``limit`` and a count of the rest.
        self.output = DetailLines(limit, keep_borders=True)
        self.blanks = 0  # blank lines held back: the last ones only frame the output
        self.said = False  # a "- hook id:" line came: an output block may follow
        self.state = "meta"  # then "opened" (the blank before the output), then "output"

    def add(self, line: str) -> bool:
        """Take the hook's next line; False when it cannot be this hook's."""
        blank = not line.strip()
        if self.state == "meta":
            if line.startswith(_META) or line == _MODIFIED:
                self.said = True
                if line.startswith("- hook id: "):
                    self.hook_id = line[len("- hook id: "):].strip()
                elif not line.startswith("- duration: "):
                    self.meta.append(line)
                return True
            if blank:
                if self.said:
                    self.state = "opened"
                return True
            return False
        if blank:
            if self.state == "output":
                self.blanks += 1
            return True
        self.state = "output"
        if self.failed:
            while self.blanks:  # blank lines inside the output are part of it
                self.blanks -= 1
                self.output.add("")
            self.output.add(line)
        self.blanks = 0
        return True

    @property
    def torn(self) -> bool:
        """An output block without its closing blank line: the log was cut inside it."""
        return self.state == "output" and not self.blanks

    def finding(self, seen: dict[str, int]) -> Finding:
        ident = self.hook_id or self.name
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] > 1:  # the same hook id twice in one config
            ident = f"{ident}#{seen[ident]}"
        pieces = [f"{self.name} Failed"]
        for meta in self.meta:
            pieces += (" ", meta)
        message = joined(*pieces)
        return Finding(ident, KIND, cap_line(message), None, self.output.tuple())


class _Scan:
    """One pass over the log: hooks, pre-commit's own lines, and what is neither."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.sink = ctx.sink()
        self.counts = {"hooks": 0, "passed": 0, "failed": 0, "skipped": 0}
        self.seen: dict[str, int] = {}
        self.hook: _Hook | None = None
        self.widths: set[int] = set()
        self.error: list[str] = []  # "An error has occurred: ..." and its "=====> why" lines
        self.trailer = False  # --show-diff-on-failure: the diff follows
        self.torn = 0
        self.unknown = LogSample()

    def close(self) -> None:
        hook, self.hook = self.hook, None
        if hook is None:
            return
        if hook.torn:
            self.torn += 1
        if hook.failed:
            self.sink.add(hook.finding(self.seen))

    def feed(self, line: str) -> None:
        if self.error:
            if len(self.error) < 4 and line.startswith("=====> "):
                self.error.append(quote(after(line, 7), 300))
            return  # the rest of pre-commit's error message
        if self.trailer:
            return  # git's diff of what the hooks changed
        hook = hook_line(line)
        if hook is not None:
            self.close()
            name, status, width = hook
            self.widths.add(width)
            self.counts["hooks"] += 1
            self.counts[status.lower()] += 1
            self.hook = _Hook(name, failed=status == "Failed", limit=self.ctx.max_snippet_lines)
            return
        if line.startswith(_ERRORS):
            self.close()
            self.error = [quote(line, 300)]
            return
        if line.startswith(_TRAILER) or line == _DIFF:
            self.close()
            self.trailer = line == _DIFF
            return
        hook_open = self.hook
        if line.startswith(_LOG_LEVELS) and (hook_open is None or hook_open.state == "meta"
                                             or hook_open.blanks):
            self.close()
            return
        if self.hook is not None and self.hook.add(line):
            return
        self.close()
        if line.strip():
            self.unknown.add(line)


def _cut_short(path: str) -> bool:
    """The log's last byte is not a newline: pre-commit ends every line with one."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if not handle.tell():
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:
        return False


def _parse(ctx: ParseContext) -> ParseResult:
    scan = _Scan(ctx)
    long = LongLines()
    for line in plain_lines(ctx, long):
        scan.feed(line)
    scan.close()
    result = scan.sink.result(summary={"counts": scan.counts})
    _guards(ctx, result, scan)
    long.refuse(result, "pre-commit")
    return result


def _guards(ctx: ParseContext, result: ParseResult, scan: _Scan) -> None:
    counts, notes = scan.counts, result.notes
    said = f"; log says: {' '.join(scan.error)}" if scan.error else ""
    if scan.error:
        result.parser_ok = False
        notes.append(cap_line(f"pre-commit itself failed (exit code {ctx.rc}){said}", 600))
    if not counts["hooks"]:
        result.parser_ok = False
        if not scan.error:
            notes.append(f"no pre-commit hook result line in the log (exit code {ctx.rc}): "
                         "pre-commit did not run any hook, or its output format changed; "
                         + scan.unknown.describe())
        return
    foreign = []
    if scan.unknown.count:
        foreign.append(f"{scan.unknown.count} line(s) that are not pre-commit's output "
                       f"({scan.unknown.describe()})")
    if len(scan.widths) > 1 or min(scan.widths) < MIN_WIDTH:
        foreign.append("hook lines of widths " + ", ".join(map(str, sorted(scan.widths)))
                       + f" (one pre-commit run pads all to one width of at least {MIN_WIDTH})")
    if scan.torn:
        foreign.append(f"{scan.torn} hook output block(s) without their closing blank line")
    if _cut_short(ctx.log_path):
        foreign.append("a last line without its newline (the log was cut short)")
    if foreign:
        result.parser_ok = False
        notes.append(cap_line("the log is not one complete pre-commit run: it holds "
                              + "; ".join(foreign), 600))
    if ctx.rc != 0 and not counts["failed"] and not scan.error:
        result.parser_ok = False
        notes.append(f"exit code {ctx.rc} but no hook Failed")
    if counts["skipped"] == counts["hooks"] and not ctx.options.get("allow_all_skipped", False):
        result.gate_failures.append(f"every pre-commit hook was skipped ({counts['hooks']})")
        notes.append("no hook checked anything; set allow_all_skipped = true if that "
                     "is expected")
