"""Damaged evidence for the "garbage never passes" property tests every parser has.

Each parser is fed its real fixture truncated, with bytes overwritten, or bytes
that were never a report, and must neither raise nor come out ``pass`` when
the exit code is red or the evidence could not be read. Every parser test file
writes its own properties (what counts as readable differs per format); these
are the pieces they share.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from ckdn.parsers.base import BaseParser, ParseContext, ParseResult
from ckdn.reconcile import PASS, Exit, reconcile

__all__ = [
    "LONG_LINE",
    "assert_never_green",
    "cut_and_mutated",
    "foreign_logs",
    "long_lines",
    "mutated",
    "parse_run",
    "timed_parse",
]

_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def parse_run(parser: BaseParser, rc: int, *, log: bytes = b"",
              files: Mapping[str, bytes] | None = None,
              options: Mapping[str, Any] | None = None) -> ParseResult:
    """``parser`` on a fresh run dir holding ``log`` as full.log and ``files`` beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        (run_dir / "full.log").write_bytes(log)
        for name, data in (files or {}).items():
            (run_dir / name).write_bytes(data)
        return parser.parse(ParseContext(check=parser.name, run_dir=run_dir, cwd=run_dir, rc=rc,
                                         options=options or {}))


_ANY_BYTE = st.integers(min_value=0, max_value=255)


def mutated(data: st.DataObject, original: bytes, *, least: int = 1, most: int = 5,
            values: st.SearchStrategy[int] = _ANY_BYTE) -> bytes:
    """``original`` with ``least`` to ``most`` drawn bytes overwritten by drawn ``values``."""
    damaged = bytearray(original)
    for _ in range(data.draw(st.integers(min_value=least, max_value=most))):
        if damaged:
            index = data.draw(st.integers(min_value=0, max_value=len(damaged) - 1))
            damaged[index] = data.draw(values)
    return bytes(damaged)


def cut_and_mutated(data: st.DataObject, originals: Sequence[bytes]) -> bytes:
    """One of ``originals``, cut at a drawn length, then with up to three bytes overwritten."""
    original = data.draw(st.sampled_from(originals))
    cut = original[:data.draw(st.integers(min_value=0, max_value=len(original)))]
    return mutated(data, cut, least=0, most=3)


def assert_never_green(result: ParseResult, rc: int, *, readable: bool) -> None:
    """A red exit code never passes; evidence that could not be read is loud and never passes."""
    verdict = reconcile(Exit(rc), result).status
    if rc != 0:
        assert verdict != PASS
    if not readable:
        assert not result.parser_ok
        assert verdict != PASS


def foreign_logs(family: str) -> list[tuple[str, bytes]]:
    """Every recorded ``full.log`` of the other fixture families: real logs of other tools.

    A parser must never read another tool's log (a clean one included) as its own
    tool's clean run. Empty logs are left out: they say nothing about any tool.
    """
    logs = []
    for path in sorted(_FIXTURES.glob("*/*/full.log")):
        other = path.parent.parent.name
        if other != family and path.stat().st_size:
            logs.append((f"{other}/{path.parent.name}", path.read_bytes()))
    return logs


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


def timed_parse(parser: BaseParser, line: str, *, rc: int = 0,
                options: Mapping[str, Any] | None = None) -> float:
    """Seconds ``parser`` takes over a log that is ``line`` alone."""
    start = time.perf_counter()
    parse_run(parser, rc, log=line.encode() + b"\n", options=options)
    return time.perf_counter() - start
