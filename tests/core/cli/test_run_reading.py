"""`ckdn run NAME`, read by the run verb without argparse, reads as argparse reads it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.cli import build_parser
from ckdn.cli.run import read_quickly
from ckdn.errors import UsageError

WORDS = st.sampled_from(["run", "ok", "x", "--quiet", "-q", "--config", "--config=c.toml",
                         "--cwd", "--cwd=.", "--cwd=", "a", "-x", "--all", "--fail-fast",
                         "--no-fail-fast", "", "show", "-h", "--qu", "--conf", "-1", "--gate",
                         "--ga", "baseline"])


def argparse_reading(argv: list[str]) -> dict[str, Any] | None:
    try:
        return vars(build_parser().parse_args(argv, namespace=SimpleNamespace()))
    except UsageError:
        return None


@given(st.lists(WORDS, max_size=6))
def test_the_quick_run_reading_never_disagrees_with_argparse(argv: list[str]) -> None:
    quick = read_quickly(argv)
    if quick is not None:
        assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [["run", "ok"], ["run", "-q", "ok"], ["--cwd", "d", "run", "ok"],
                                  ["run", "ok", "--config=c.toml", "--quiet"]])
def test_the_usual_run_command_lines_are_read_without_argparse(argv: list[str]) -> None:
    quick = read_quickly(argv)
    assert quick is not None
    assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [["run", "--all"], ["run", "ok", "--fail-fast"], ["show", "ok"],
                                  ["run", "--help"], ["--cwd", "run", "ok"]])
def test_every_other_command_line_is_left_to_argparse(argv: list[str]) -> None:
    assert read_quickly(argv) is None
