"""A report's file names, worked out once per file: the same answers, in bounded memory."""

from __future__ import annotations

from pathlib import Path

from ckdn.parsers import base
from ckdn.parsers.base import ParseContext


def test_a_file_named_again_gets_the_same_location_as_the_first_time(tmp_path: Path) -> None:
    ctx = ParseContext("ruff", tmp_path, tmp_path, 1)
    inside, outside = str(tmp_path / "src" / "a.py"), "/elsewhere/b.py"
    first = [ctx.location(inside, 3, 1), ctx.location(outside, 2), ctx.location("./c.py")]
    assert first == ["src/a.py:3:1", "/elsewhere/b.py:2", "c.py"]
    assert [ctx.location(inside, 3, 1), ctx.location(outside, 2), ctx.location("./c.py")] \
        == first


def test_the_table_of_names_stays_bounded_when_every_finding_names_a_new_file(
        tmp_path: Path) -> None:
    ctx = ParseContext("ruff", tmp_path, tmp_path, 1)
    for i in range(10_000):
        assert ctx.location(str(tmp_path / f"m{i}.py")) == f"m{i}.py"
    assert len(base._LOCATED) <= 4096
