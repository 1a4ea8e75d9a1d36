"""The ``generic`` parser: exit code only.

It promises no findings, so a nonzero exit code with nothing extracted is a
plain ``fail`` (not ``error``), and it always asks for the log tail: without
findings, the tail is the only evidence a reader gets.
"""

from __future__ import annotations

from ckdn.parsers.base import BaseParser, ParseContext, ParseResult

__all__ = ["GenericParser"]


class GenericParser(BaseParser):
    name = "generic"

    def read(self, ctx: ParseContext) -> ParseResult:
        return ParseResult(evidence_expected=False, wants_log_tail=True)
