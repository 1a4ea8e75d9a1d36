"""The never-raise guard (ckdn.parsers.guard), in every built-in parser and in the app."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ckdn.app import parse_safely
from ckdn.parsers import BUILTIN, get_parser
from ckdn.parsers.base import LINE_CAP, BaseParser, ParseContext, ParseResult
from ckdn.parsers.guard import crash_result, guarded
from ckdn.reconcile import PASS, Exit, reconcile
from tests.timing import LINEAR_GROWTH, growth

#: Every built-in parser that reads evidence (``generic`` looks at nothing).
READERS = sorted(name for name in BUILTIN if name != "generic")


def _boom(*_args: object) -> Iterator[str]:
    raise RuntimeError("boom")


def _explode(ctx: ParseContext) -> ParseResult:
    raise RecursionError("deep")


def test_an_exception_inside_parse_becomes_parser_ok_false_with_a_note(tmp_path: Path) -> None:
    ctx = ParseContext(check="mypy", run_dir=tmp_path, cwd=tmp_path, rc=0)
    result = guarded("mypy", _explode, ctx)
    assert not result.parser_ok
    assert result.notes == ["parser 'mypy' crashed on this run's evidence: RecursionError: deep"]
    assert reconcile(Exit(0), result).status != PASS


def test_what_parse_returns_passes_through_the_guard_untouched(tmp_path: Path) -> None:
    ctx = ParseContext(check="x", run_dir=tmp_path, cwd=tmp_path, rc=0)
    facts = ParseResult(summary={"counts": {"x": 1}})
    assert guarded("x", lambda _ctx: facts, ctx) is facts


def test_ctrl_c_inside_a_parser_is_not_swallowed(tmp_path: Path) -> None:
    def interrupted(ctx: ParseContext) -> ParseResult:
        raise KeyboardInterrupt

    ctx = ParseContext(check="x", run_dir=tmp_path, cwd=tmp_path, rc=0)
    with pytest.raises(KeyboardInterrupt):
        guarded("x", interrupted, ctx)


def test_a_huge_exception_message_is_capped_in_the_note() -> None:
    note = crash_result("x", ValueError("v" * 10 * LINE_CAP)).notes[0]
    assert len(note) < 2 * LINE_CAP
    assert note.endswith("chars]")


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("rc", [0, 1])
def test_every_built_in_parser_turns_an_unexpected_exception_into_loud_facts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, rc: int) -> None:
    # Every read of the run's evidence raises, as a bug in the parser would.
    monkeypatch.setattr(ParseContext, "artifact", _boom)
    monkeypatch.setattr(ParseContext, "log_lines", _boom)
    monkeypatch.setattr(ParseContext, "log_spans", _boom)
    result = get_parser(name).parse(ParseContext(check=name, run_dir=tmp_path, cwd=tmp_path,
                                                 rc=rc))
    assert result.notes == [f"parser '{name}' crashed on this run's evidence: RuntimeError: boom"]
    assert not result.parser_ok
    assert reconcile(Exit(rc), result).status != PASS


# --- the guard is written once, in BaseParser.parse -------------------------------------------

@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_built_in_parser_takes_its_guard_from_the_base_class(name: str) -> None:
    parser = get_parser(name)
    assert isinstance(parser, BaseParser)
    assert type(parser).parse is BaseParser.parse
    assert type(parser).read is not BaseParser.read


class _Reader(BaseParser):
    name = "reader"

    def __init__(self, outcome: ParseResult | Exception) -> None:
        self.outcome = outcome

    def read(self, ctx: ParseContext) -> ParseResult:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def test_a_parser_that_defines_read_is_guarded_by_the_base(tmp_path: Path) -> None:
    ctx = ParseContext(check="reader", run_dir=tmp_path, cwd=tmp_path, rc=0)
    result = _Reader(KeyError("file")).parse(ctx)
    assert result.notes == [crash_result("reader", KeyError("file")).notes[0]]
    assert not result.parser_ok
    facts = ParseResult(summary={"counts": {"x": 1}})
    assert _Reader(facts).parse(ctx) is facts


def test_a_parser_that_overrides_parse_itself_keeps_working(tmp_path: Path) -> None:
    class OwnParse(BaseParser):
        name = "own"

        def parse(self, ctx: ParseContext) -> ParseResult:
            return ParseResult(summary={"own": True})

    ctx = ParseContext(check="own", run_dir=tmp_path, cwd=tmp_path, rc=0)
    assert OwnParse().parse(ctx).summary == {"own": True}


def test_a_parser_that_defines_neither_read_nor_parse_is_loud(tmp_path: Path) -> None:
    class Empty(BaseParser):
        name = "empty"

    result = Empty().parse(ParseContext(check="empty", run_dir=tmp_path, cwd=tmp_path, rc=0))
    assert not result.parser_ok
    assert result.notes == ["parser 'empty' crashed on this run's evidence: NotImplementedError: "
                            "parser 'empty' (Empty) defines neither read(ctx) nor parse(ctx)"]


# --- the application applies the same guard to any parser, plugins included ----------------

class _Plugin:
    name = "mytool"

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome

    def parse(self, ctx: ParseContext) -> object:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def test_the_app_turns_a_crashing_plugin_into_the_same_note(tmp_path: Path) -> None:
    ctx = ParseContext(check="mytool", run_dir=tmp_path, cwd=tmp_path, rc=1)
    result = parse_safely(_Plugin(KeyError("report")), ctx)
    assert result.notes == [crash_result("mytool", KeyError("report")).notes[0]]
    assert not result.parser_ok


def test_the_app_refuses_a_plugin_that_returns_no_parse_result(tmp_path: Path) -> None:
    ctx = ParseContext(check="mytool", run_dir=tmp_path, cwd=tmp_path, rc=0)
    result = parse_safely(_Plugin({"findings": []}), ctx)
    assert result.notes == ["parser 'mytool' returned dict, not a ParseResult"]
    assert not result.parser_ok


def test_the_app_contains_a_plugin_without_a_parse_method(tmp_path: Path) -> None:
    ctx = ParseContext(check="mytool", run_dir=tmp_path, cwd=tmp_path, rc=0)
    result = parse_safely(object(), ctx)
    assert not result.parser_ok
    assert result.notes[0].startswith("parser '?' crashed on this run's evidence: AttributeError")


# --- no parser pattern backtracks: time linear in the line, whatever the line ----------------

#: The modules whose patterns read a tool's text (log lines, or report text such as
#: messages); the parsers of other helpers keep their own tests.
PATTERN_MODULES = ["mypy_output", "pre_commit", "ty_text", "reformat", "ruff_json", "pip_audit",
                   "_logtext", "pylint_json2", "pyright_json", "_sarif_log", "bandit", "sarif"]
#: ruff's report streamer matches these at one position of its buffer, never searches.
MATCH_ONLY = {("ruff_json", "_OPEN"), ("ruff_json", "_SEP")}
_UNITS = [" ", ".", "1", ":1", "a ", " [", "(", "-", " |", "--> ", "\x1b[0", "`", "a:", ": ",
          "[a", "]", "\t"]
_PREFIXES = ["", "a.py:1: error: ", "error[", "Found ", "would reformat ", "a.py:1:1: ", "x: [",
             " \u2022 Findings: ", "Ran 1 rules on 1 file: "]


def pattern_growth(op: Callable[[str], object], prefix: str, unit: str) -> float:
    """How much more ``op`` costs on a 50,000-character line than on a 5,000 one."""

    def line_of(size: int) -> str:
        return prefix + unit * ((size - len(prefix)) // len(unit)) + "x"

    long_line = line_of(50_000)

    def op_at(size: int) -> Callable[[], object]:
        line = long_line if size == 50_000 else line_of(size)
        return lambda: op(line)

    return growth(op_at, 50_000, floor=long_line.encode)


@pytest.mark.parametrize("module", PATTERN_MODULES)
def test_no_pattern_of_a_text_reading_parser_backtracks_on_a_long_line(module: str) -> None:
    # 50,000 characters against 5,000: a linear pattern grows at most 10x, a quadratic one
    # 100x (pre_commit's old hook-line pattern took 111 s at 50,000, mypy's old code
    # pattern 19 s). The floor is one linear pass over the long line, measured beside it.
    patterns = [(name, value) for name, value in
                vars(importlib.import_module(f"ckdn.parsers.{module}")).items()
                if isinstance(value, re.Pattern)]
    steepest = (0.0, "")
    for name, pattern in patterns:
        ops = [pattern.match] if (module, name) in MATCH_ONLY else [pattern.match, pattern.search]
        for prefix in _PREFIXES:
            for unit in _UNITS:
                for op in ops:
                    ratio = pattern_growth(op, prefix, unit)
                    if ratio > steepest[0]:
                        steepest = (ratio, f"{name}.{op.__name__}({prefix!r} + {unit!r}...)")
    assert steepest[0] < LINEAR_GROWTH, steepest
