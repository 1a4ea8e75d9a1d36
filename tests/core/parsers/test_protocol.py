"""The parser protocol is one module, and its `Parser` holds at run time without `typing`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ckdn
from ckdn.parsers import base, guard
from ckdn.parsers.base import FindingSink, Parser, ParseResult
from ckdn.parsers.generic import GenericParser


class Duck:
    name = "duck"

    def parse(self, ctx: object) -> ParseResult:
        return ParseResult()


class NoParse:
    name = "no-parse"


def test_anything_with_a_name_and_a_parse_is_a_parser() -> None:
    assert isinstance(GenericParser(), Parser)
    assert isinstance(Duck(), Parser)
    assert not isinstance(NoParse(), Parser)
    assert not isinstance(object(), Parser)


def test_the_guard_keeps_its_first_home() -> None:
    assert (guard.guarded, guard.crash_result) == (base.guarded, base.crash_result)


def test_the_sink_keeps_the_first_findings_and_counts_them_all() -> None:
    sink = FindingSink(1)
    for name in ("a", "b"):
        sink.add(base.Finding(name, "k", "m"))
    result = sink.result()
    assert ([f.id for f in result.findings], result.total) == (["a"], 2)


def test_asking_whether_something_is_a_parser_loads_no_typing() -> None:
    code = ("import sys; from ckdn.parsers.base import Parser; "
            "from ckdn.parsers.generic import GenericParser; "
            "assert isinstance(GenericParser(), Parser); print('typing' in sys.modules)")
    core = str(Path(ckdn.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": core}).stdout
    assert out.strip() == "False"
