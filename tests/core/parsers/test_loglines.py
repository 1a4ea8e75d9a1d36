"""Reading the log in bounded memory: ``ParseContext.log_lines`` and the parsers' use of it.

A line longer than the reading width (64 KiB) arrives cut, as a counted ``Cut``;
every other line is exactly what reading the whole file line by line gives. A
parser cannot vouch for a line it did not read, so a log with a cut line is
never green. The memory figures are in ``test_reading_memory.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.documents.textcap import Cut
from ckdn.parsers import _loglines, get_parser
from ckdn.parsers._loglines import LINE_BYTES, log_lines, numbered_lines
from ckdn.parsers._logtext import LongLines, group, joined, plain_lines, quote
from ckdn.parsers.base import ParseContext
from ckdn.reconcile import PASS, Exit, reconcile

from .conftest import FIXTURES, CaseLoader


def whole_lines(path: Path) -> list[str]:
    """What reading the file whole, line by line, gives (the reader before the bound)."""
    with open(path, "rb") as handle:
        return [raw.decode("utf-8", "replace").rstrip("\r\n") for raw in handle]


_BYTES = st.lists(st.sampled_from([b"a", b"b", b" ", b"\r", b"\n", b"\n", b"\xc3\xa9",
                                   b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff", b"\xc3",
                                   b"\x1b[31m"]), max_size=60).map(b"".join)


@given(data=_BYTES, width=st.integers(1, 16), block=st.integers(1, 24))
def test_lines_within_the_width_are_read_exactly_and_longer_ones_cut_with_their_count(
        tmp_path_factory: pytest.TempPathFactory, data: bytes, width: int, block: int) -> None:
    path = tmp_path_factory.mktemp("log") / "full.log"
    path.write_bytes(data)
    old_block = _loglines._BLOCK
    _loglines._BLOCK = block  # small blocks: lines straddle them in every way
    try:
        got = list(log_lines(str(path), width))
        spans = list(numbered_lines(str(path), width))
    finally:
        _loglines._BLOCK = old_block
    whole = whole_lines(path)
    assert len(got) == len(whole)
    raws = data.split(b"\n")
    for line, expected, raw in zip(got, whole, raws, strict=False):
        if len(raw) <= width:
            assert line == expected
            assert not isinstance(line, Cut)
        elif isinstance(line, Cut):
            assert len(line.body) + line.omitted == len(expected)
            assert len(line.body.encode("utf-8", "surrogateescape")) <= 3 * width
        else:  # only line-ending carriage returns or a replaced byte past the width
            assert line == expected
    assert [line for _, _, line in spans] == got
    _loglines._BLOCK = block
    try:
        assert _loglines.count_lines(str(path)) == len(got)  # generic's log_lines
    finally:
        _loglines._BLOCK = old_block
    offset = 0
    for (start, end, _), raw in zip(spans, raws, strict=False):
        assert (start, end) == (offset, min(offset + len(raw) + 1, len(data)))
        offset = end


def test_a_line_past_the_width_is_a_cut_counting_every_character_after_it(tmp_path: Path) -> None:
    log = tmp_path / "full.log"
    log.write_bytes(b"before\n" + "\u00e9".encode() * 100_000 + b"\nafter\n")
    before, long, after = ParseContext(check="x", run_dir=tmp_path, cwd=tmp_path,
                                       rc=0).log_lines()
    assert (before, after) == ("before", "after")
    assert isinstance(long, Cut)
    assert long.body == "\u00e9" * (LINE_BYTES // 2)
    assert long.omitted == 100_000 - LINE_BYTES // 2


def test_a_symlinked_log_is_never_read_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.log"
    elsewhere.write_bytes((FIXTURES / "mypy" / "text_clean" / "full.log").read_bytes())
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "full.log").symlink_to(elsewhere)
    ctx = ParseContext(check="mypy", run_dir=run_dir, cwd=run_dir, rc=0)
    with pytest.raises(OSError, match="symlink"):
        list(ctx.log_lines())
    result = get_parser("mypy").parse(ctx)  # mypy's clean log, from elsewhere: not this run's
    assert not result.parser_ok
    assert reconcile(Exit(0), result).status != PASS


def test_a_fifo_in_place_of_the_log_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "full.log")  # reading it would block forever: no writer comes
    code = ("import sys; from ckdn.parsers import get_parser; "
            "from ckdn.parsers.base import ParseContext; "
            "r = get_parser('mypy').parse(ParseContext(check='m', run_dir=sys.argv[1], "
            "cwd=sys.argv[1], rc=0)); print(r.parser_ok, r.notes[0])")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=30, check=True)
    assert proc.stdout.startswith("False ")
    assert "not a regular file" in proc.stdout


# --- a log read only in part is never green -------------------------------------------------

#: Every parser that reads the log to decide, with the real clean case it reads it beside.
LOG_READERS = {
    "mypy": ("mypy", "text_clean"), "ty": ("ty", "full_clean"),
    "reformat": ("reformat", "black_clean"), "pre_commit": ("pre_commit", "passing"),
    "pyright": ("pyright", "clean"), "ruff": ("ruff", "clean"), "bandit": ("bandit", "clean"),
    "pip_audit": ("pip_audit", "clean"), "pylint": ("pylint", "clean"),
    "sarif": ("sarif", "semgrep_clean"),
}


@pytest.mark.parametrize("parser", sorted(LOG_READERS))
def test_a_clean_log_with_one_line_past_the_width_is_never_green(
        load_case: CaseLoader, parser: str) -> None:
    ctx = load_case(*LOG_READERS[parser])
    assert reconcile(Exit(ctx.rc), get_parser(parser).parse(ctx)).status == PASS
    log = Path(ctx.log_path)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True) or ["\n"]
    # The log's own verdict (its longest line) repeated past the width: its start still
    # reads like the tool's verdict, but what follows it was never read.
    unit = max((line.rstrip("\n") for line in lines), key=len) or "All checks passed!"
    long = unit * (2 * LINE_BYTES // len(unit))
    log.write_text(lines[0] + long + "\n" + "".join(lines[1:]), encoding="utf-8")
    result = get_parser(parser).parse(ctx)
    assert not result.parser_ok
    assert reconcile(Exit(ctx.rc), result).status != PASS
    note = next(n for n in result.notes if "read only in part" in n)
    assert f"line 2 of the log is {len(long):,} characters long" in note


def test_the_start_of_a_cut_line_quoted_in_a_note_counts_every_character_cut() -> None:
    line = Cut("x" * 1000, 5_000_000)
    long = LongLines()
    long.see(7, line)
    note = long.note("mypy")
    assert "line 7 of the log is 5,001,000 characters long" in note
    assert f"it starts: {'x' * 80}... [+{5_001_000 - 80} chars]" in note
    assert quote(Cut("   " + "y" * 300, 10), 200) == Cut("y" * 200, 110)


def test_a_pattern_group_running_to_a_cut_stays_a_cut_with_its_count() -> None:
    import re

    line = Cut("a.py:1: error: " + "m" * 100, 1_000)
    match = re.match(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<msg>.*)$", line)
    assert match is not None
    message = group(match, "msg")
    assert isinstance(message, Cut)
    assert (message.body, message.omitted) == ("m" * 100, 1_000)
    assert group(match, "path") == "a.py"
    assert joined("code: ", message) == Cut("code: " + "m" * 100, 1_000)


def test_plain_lines_strip_colour_from_a_cut_line_and_keep_its_count(tmp_path: Path) -> None:
    (tmp_path / "full.log").write_bytes(b"\x1b[31m" + b"r" * (2 * LINE_BYTES) + b"\n")
    ctx = ParseContext(check="x", run_dir=tmp_path, cwd=tmp_path, rc=0)
    long = LongLines()
    (line,) = plain_lines(ctx, long)
    assert isinstance(line, Cut)
    assert line.body == "r" * (LINE_BYTES - 5)
    assert line.omitted == 2 * LINE_BYTES - (LINE_BYTES - 5)
    assert long.count == 1


def test_generic_counts_the_lines_of_a_real_log_and_a_missing_log_has_none(
        tmp_path: Path) -> None:
    parser = get_parser("generic")
    for family, case in (("ruff", "violations"), ("pytest", "failing"), ("mypy", "json_errors")):
        log = FIXTURES / family / case / "full.log"
        data = log.read_bytes()
        run_dir = tmp_path / f"{family}-{case}"
        run_dir.mkdir()
        (run_dir / "full.log").write_bytes(data)
        ctx = ParseContext(check="g", run_dir=run_dir, cwd=run_dir, rc=0, options={})
        result = parser.parse(ctx)
        assert result.summary == {"log_lines": len(whole_lines(log))}
        assert reconcile(Exit(0), result).status == PASS
    empty = tmp_path / "empty"
    empty.mkdir()
    ctx = ParseContext(check="g", run_dir=empty, cwd=empty, rc=0, options={})
    assert parser.parse(ctx).summary == {"log_lines": 0}


def test_generic_names_a_log_it_cannot_count_and_the_exit_code_still_decides(
        tmp_path: Path) -> None:
    (tmp_path / "elsewhere.log").write_text("x\n")
    (tmp_path / "full.log").symlink_to(tmp_path / "elsewhere.log")
    ctx = ParseContext(check="g", run_dir=tmp_path, cwd=tmp_path, rc=3, options={})
    result = get_parser("generic").parse(ctx)
    assert result.summary == {}
    assert result.notes == ["full.log not counted: full.log is a symlink, not followed"]
    assert reconcile(Exit(3), result).status != PASS
