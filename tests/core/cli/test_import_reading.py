"""`ckdn import FORMAT FILE --as NAME`, read by the import verb without argparse, reads as
argparse reads it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.cli import build_parser
from ckdn.cli.import_run import read_quickly
from ckdn.errors import UsageError

WORDS = st.sampled_from(["import", "junit", "sarif", "jnit", "a.xml", "x", "--as", "--as=x",
                         "--a", "--top", "3", "-3", "+4", "1_0", " 2", "--top=3", "--config",
                         "--config=c.toml", "--cwd", "--cwd=.", "--cwd=", "", "-", "-h",
                         "--help", "run", "export"])


def argparse_reading(argv: list[str]) -> dict[str, Any] | None:
    try:
        return vars(build_parser().parse_args(argv, namespace=SimpleNamespace()))
    except (UsageError, SystemExit):
        return None


@given(st.lists(WORDS, max_size=8))
def test_the_quick_import_reading_never_disagrees_with_argparse(argv: list[str]) -> None:
    quick = read_quickly(argv)
    if quick is not None:
        assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [
    ["import", "junit", "a.xml", "--as", "java"],
    ["--cwd", "d", "import", "sarif", "s.sarif", "--as", "scan", "--top", "5"],
    ["import", "--as", "java", "junit", "a.xml", "--config=c.toml"],
])
def test_the_usual_import_command_lines_are_read_without_argparse(argv: list[str]) -> None:
    quick = read_quickly(argv)
    assert quick is not None
    assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [["import", "jnit", "a.xml", "--as", "j"],
                                  ["import", "junit", "a.xml"], ["import", "--help"],
                                  ["import", "junit", "a.xml", "--as=j"],
                                  ["run", "junit"], ["import", "junit", "a", "b", "--as", "j"]])
def test_every_other_command_line_is_left_to_argparse(argv: list[str]) -> None:
    assert read_quickly(argv) is None
