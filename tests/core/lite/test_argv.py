"""ckdn._lite.argv: the quick `run` reading agrees with argparse, the command split with shlex."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn._lite.argv import quick_run, split_command
from ckdn.cli import build_parser
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
    quick = quick_run(argv)
    if quick is not None:
        assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [["run", "ok"], ["run", "-q", "ok"], ["--cwd", "d", "run", "ok"],
                                  ["run", "ok", "--config=c.toml", "--quiet"]])
def test_the_usual_run_command_lines_are_read_without_argparse(argv: list[str]) -> None:
    quick = quick_run(argv)
    assert quick is not None
    assert vars(quick) == argparse_reading(argv)


# -- the command split agrees with shlex -------------------------------------------------

COMMAND_TEXT = st.text(st.sampled_from("ab-=./{}# \t\r\n\x0b\x0c\x1c\x85\xa0\u2028é'\"\\"),
                       max_size=30)


def shlex_split(command: str) -> list[str] | type[ValueError]:
    import shlex

    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return ValueError


@given(COMMAND_TEXT)
def test_the_command_split_never_disagrees_with_shlex(command: str) -> None:
    try:
        ours: list[str] | type[ValueError] = split_command(command)
    except ValueError:
        ours = ValueError
    assert ours == shlex_split(command)


@pytest.mark.parametrize("command", [
    "ruff check --output-format json --output-file {run_dir}/ruff.json .",
    "pytest -q --junitxml {run_dir}/junit.xml", "true", "  spaced\tout\n  ",
])
def test_plain_commands_are_split_without_shlex(command: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "shlex", None)  # importing it would fail
    assert split_command(command) == command.split()
