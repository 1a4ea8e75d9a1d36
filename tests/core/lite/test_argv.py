"""ckdn._lite.split_command agrees with shlex (`ckdn run NAME`: tests/core/cli)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn._lite import split_command

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
