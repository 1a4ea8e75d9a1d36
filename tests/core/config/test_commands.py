"""A check's ``command`` runs without a shell: a shell operator in it is refused at load.

``pytest | tee log`` would run pytest with the arguments ``|``, ``tee`` and
``log``; the refusal says so in one line, before anything runs. An operator
that is quoted or escaped in the string form, and every element of the array
form, is an argument like any other.
"""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.config import load_config
from ckdn.errors import ConfigError
from tests.project import Project

ROOT = Path(__file__).resolve().parents[3]



#: The words a POSIX shell reads as operators (or redirections) when they stand alone.
SHELL_OPERATORS = frozenset({"|", "||", "|&", "&", "&&", ";", ";;", "<", "<<", "<<<", ">", ">>",
                             ">|", "&>", "&>>", "2>", "2>>", "2>&1", "1>&2", ">&2"})


def write(root: Path, command: str) -> None:
    (root / "ckdn.toml").write_text(textwrap.dedent(f"""\
        [check.t]
        command = {command}
        parser = "generic"
        """), encoding="utf-8")


def toml_string(text: str) -> str:
    """``text`` as a TOML literal string when it can be one, else a basic string."""
    if "'" not in text and "\n" not in text:
        return f"'{text}'"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def refused(root: Path, command: str) -> str:
    write(root, command)
    with pytest.raises(ConfigError) as info:
        load_config(root)
    assert info.value.exit_code == 2
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("command", "operator"), [
    ("pytest -q | tee out.log", "|"),
    ("pytest > out.log", ">"),
    ("pytest >> out.log", ">>"),
    ("pytest < input.txt", "<"),
    ("ruff check . && mypy .", "&&"),
    ("ruff check . || true", "||"),
    ("ruff check . ; mypy .", ";"),
    ("slow-server &", "&"),
    ("pytest -q 2>&1", "2>&1"),
    ("pytest 2> errors.log", "2>"),
    ("pytest -q |& tee out.log", "|&"),
])
def test_a_standalone_shell_operator_is_refused_in_one_line_naming_it(
        tmp_path: Path, command: str, operator: str) -> None:
    message = refused(tmp_path, toml_string(command))
    program = command.split(maxsplit=1)[0]
    assert message == (
        f"ckdn.toml: [check.t] command: {operator!r} is a shell operator, but no shell runs "
        f"this command: {program} would get {operator!r} as an argument; put the shell "
        "line in a script and run that (command = \"sh scripts/t.sh\"), or quote "
        f"{operator!r} if it is an argument")


def test_the_documented_refusal_is_what_ckdn_run_prints(project: Project) -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = page.split("<!-- shell-operator -->\n```text\n", 1)[1].split("```", 1)[0]
    project.config('[check.t]\ncommand = "pytest | tee out.log"\nparser = "generic"\n')
    proc = project.ckdn("run", "t")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == documented
    assert project.run_dirs() == []


def test_the_first_operator_is_the_one_named(tmp_path: Path) -> None:
    assert " '&&' is a shell operator" in refused(tmp_path, "'a && b | c'")


@pytest.mark.parametrize("command", [
    "grep '|' file.txt",
    'grep "|" file.txt',
    "grep \\| file.txt",
    "python -c 'print(1) ; print(2)'",
    'sh -c "pytest | tee out.log"',
    "echo 'a && b'",
    "printf '%s' x'>'",
    "tool a|b c>d 2>&1x",
])
def test_an_operator_that_is_quoted_escaped_or_part_of_a_word_is_an_argument(
        tmp_path: Path, command: str) -> None:
    write(tmp_path, toml_string(command))
    assert load_config(tmp_path).checks["t"].argv == tuple(shlex.split(command))


def test_the_array_form_is_taken_literally_every_element_is_an_argument(
        tmp_path: Path) -> None:
    write(tmp_path, '["grep", "|", "file.txt"]')
    assert load_config(tmp_path).checks["t"].argv == ("grep", "|", "file.txt")
    write(tmp_path, '["sh", "-c", "pytest | tee out.log"]')
    assert load_config(tmp_path).checks["t"].argv == ("sh", "-c", "pytest | tee out.log")


# Words of a command line: plain words, operators, and quoted or escaped forms of both.
plain = st.text(st.sampled_from("abc-._/=|&;<>12"), min_size=1, max_size=6)
operator = st.sampled_from(sorted(SHELL_OPERATORS))
word = st.one_of(
    plain.map(lambda w: ("plain", w)),
    operator.map(lambda w: ("operator", w)),
    st.one_of(plain, operator).map(lambda w: ("quoted", shlex.quote(w) if shlex.quote(w) != w
                                              else f"'{w}'")),
    operator.map(lambda w: ("quoted", '"' + w + '"')),
    operator.map(lambda w: ("quoted", "\\" + w)),
)


@given(words=st.lists(word, min_size=1, max_size=6))
def test_a_command_is_refused_exactly_when_one_of_its_bare_words_is_an_operator(
        tmp_path: Path, words: list[tuple[str, str]]) -> None:
    line = " ".join(["tool", *(text for _, text in words)])
    bare_operator = any(kind == "operator" or (kind == "plain" and text in SHELL_OPERATORS)
                        for kind, text in words)
    write(tmp_path, toml_string(line))
    if bare_operator:
        with pytest.raises(ConfigError, match="is a shell operator"):
            load_config(tmp_path)
    else:
        assert load_config(tmp_path).checks["t"].argv == tuple(shlex.split(line))
