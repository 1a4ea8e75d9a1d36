"""Long lines for the linear-time tests of the text-reading parsers.

Garbage, truncated, damaged and foreign evidence is the conformance kit's
(``ckdn.testing``, run over every registered parser by test_conformance.py);
what stays here is the one hostile shape the kit does not generate: a single
line long enough to make a backtracking pattern take seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ckdn.parsers.base import BaseParser
from ckdn.testing import run_parser
from tests.timing import growth

__all__ = ["LONG_LINE", "long_lines", "parse_growth"]

#: How long one line of the line-length tests is: 200,000 characters.
LONG_LINE = 200_000


def long_lines(*prefixes: str) -> list[Any]:
    """Generated lines of ``LONG_LINE`` characters shaped to make a backtracking pattern work.

    Runs of one character a pattern repeats (spaces, dots, digits, colons, brackets),
    each after every ``prefix`` a parser's own line starts with, and ending in a
    character that makes the match fail late. Not any tool's output: the point is
    the length and the shape.
    """
    bodies = {"spaces": " ", "dots": ".", "digits": "1", "colon-digits": ":1", "words": "a ",
              "brackets": " [", "parens": "(", "dashes": "-", "pipes": " |", "arrows": "--> ",
              "escapes": "\x1b[0", "backticks": "`"}
    lines = []
    for prefix in ("", *prefixes):
        for name, unit in bodies.items():
            count = (LONG_LINE - len(prefix)) // len(unit)
            shape = f"{prefix!r}+{name}"
            lines.append(pytest.param(shape, prefix + unit * count + "x", id=shape))
    return lines


def shortened(line: str, size: int) -> str:
    """``line`` cut to ``size`` characters, keeping the last one (the late-failing end)."""
    return line if size >= len(line) else line[:size - 1] + line[-1]


def parse_growth(parser: BaseParser, line: str, *, before: str = "", after: str = "\n",
                 rc: int = 0, options: Mapping[str, Any] | None = None) -> float:
    """How much more a log of ``before + line + after`` costs ``parser`` than one whose
    ``line`` is a tenth as long (:func:`tests.timing.growth`: linear is at most 10)."""

    def parse_at(size: int) -> Any:
        log = (before + shortened(line, size) + after).encode()
        return lambda: run_parser(parser, rc, log=log, options=options)

    return growth(parse_at, len(line))
