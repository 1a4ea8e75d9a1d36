"""The ``generic`` parser: exit code only."""

from __future__ import annotations

from ckdn.parsers._loglines import count_lines
from ckdn.parsers.base import BaseParser, ParseContext, ParseResult

__all__ = ["GenericParser"]

# It promises no findings, so a nonzero exit code with nothing extracted is a
# plain ``fail`` (not ``error``), and it always asks for the log tail: without
# findings, the tail is the only evidence a reader gets. Its summary holds the
# log's size in lines (``log_lines``, a key consumers of the published parser
# read): it tells a reader how much the tail left out. Counting is one pass over
# the bytes in 1 MiB blocks, never decoded (about 5 ms per 10 MB, cached).


class GenericParser(BaseParser):
    name = "generic"
    CHECKS_LOG = False  # the exit code is the verdict: what the log says is the user's

    def read(self, ctx: ParseContext) -> ParseResult:

        result = ParseResult(evidence_expected=False, wants_log_tail=True)
        try:
            result.summary = {"log_lines": count_lines(ctx.log_path)}
        except OSError as exc:  # a check replaced its own full.log: the exit code still counts
            result.notes.append(f"full.log not counted: {exc.strerror or exc}")
        return result
