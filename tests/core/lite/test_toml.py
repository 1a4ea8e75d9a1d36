"""ckdn._lite.read_plain (plain TOML) never disagrees with tomllib (its stand-in rule)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn._lite import read_plain
from ckdn.config import load_config
from ckdn.config.starter import STARTER
from tests.core.test_startup import PLAIN_CONFIG


def same_document(text: str) -> None:
    """``read_plain`` either declines, or returns exactly what tomllib returns."""
    plain = read_plain(text)
    if plain is None:
        return
    # JSON keeps the order and tells 1 from 1.0 from true; tomllib must not refuse it.
    assert json.dumps(plain) == json.dumps(tomllib.loads(text)), text


KEYS = st.sampled_from(["a", "b", "run", "check", "x-1", "_", "1", "true", "é", "a b", ""])
WS = st.sampled_from(["", " ", "\t", "  "])
TEXT = st.text(st.sampled_from("ab \t\"'\\#=[]{}.,é\x7f\x01\u2028"), max_size=6)
SCALARS: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(["0", "1", "-1", "+1", "007", "1.5", "-0.0", "1.", ".5", "1e5", "1_000",
                     "inf", "nan", "0x1f", "1979-05-27", "+", "-", "true", "false", "True",
                     "truex", "1.5.2", "9" * 30, "9" * 5000, ""]),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    TEXT.map(lambda t: f'"{t}"'), TEXT.map(lambda t: f"'{t}'"),
    TEXT.map(lambda t: f'"""{t}"""'), TEXT,
)


@st.composite
def values(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["scalar", "array", "table"]))
    if kind == "scalar":
        return draw(SCALARS)
    sep = draw(st.sampled_from([",", ", ", " , ", ",,"]))
    if kind == "array":
        items = draw(st.lists(st.one_of(SCALARS, st.just("[1]"), st.just("{}")), max_size=3))
        return "[" + draw(WS) + sep.join(items) + draw(st.sampled_from(["", ","])) + "]"
    pairs = draw(st.lists(st.tuples(KEYS, SCALARS), max_size=3))
    inner = sep.join(f"{k}{draw(WS)}={draw(WS)}{v}" for k, v in pairs)
    return "{" + draw(WS) + inner + draw(WS) + draw(st.sampled_from(["", ","])) + "}"


@st.composite
def lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["pair", "pair", "header", "comment", "blank"]))
    lead = draw(WS)
    if kind == "header":
        segments = draw(st.lists(st.one_of(KEYS, KEYS.map(lambda k: f'"{k}"'),
                                           KEYS.map(lambda k: f"'{k}'")), min_size=1,
                                 max_size=3))
        dot = draw(st.sampled_from([".", " . ", ". "]))
        open_, close = draw(st.sampled_from([("[", "]"), ("[ ", " ]"), ("[[", "]]"), ("[", "")]))
        body = open_ + dot.join(segments) + close
    elif kind == "pair":
        key = draw(st.one_of(KEYS, st.just("a.b"), st.just('"q"')))
        body = f"{key}{draw(WS)}={draw(WS)}{draw(values())}"
    elif kind == "comment":
        body = "#" + draw(TEXT)
    else:
        body = ""
    tail = draw(st.sampled_from(["", " # note", "#x", " junk"]))
    return lead + body + tail


@given(st.lists(lines(), max_size=8), st.sampled_from(["\n", "\r\n", "\r"]),
       st.sampled_from(["", "\n"]))
def test_the_plain_toml_reader_never_disagrees_with_tomllib(
        body: list[str], newline: str, end: str) -> None:
    same_document(newline.join(body) + end)


@given(st.text(st.sampled_from('[]{}=.,#"\' \t\n\rab01-+_e\\é'), max_size=40))
def test_the_plain_toml_reader_never_disagrees_with_tomllib_on_any_text(text: str) -> None:
    same_document(text)


#: Printable text: the reader leaves other characters (valid in TOML or not) to tomllib.
PLAIN_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8).filter(
    str.isprintable)
PLAIN_SCALARS: st.SearchStrategy[str] = st.one_of(
    st.integers().map(str), st.booleans().map(lambda b: "true" if b else "false"),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda f: "e" not in f),
    PLAIN_TEXT.filter(lambda t: '"' not in t and "\\" not in t).map(lambda t: f'"{t}"'),
    PLAIN_TEXT.filter(lambda t: "'" not in t).map(lambda t: f"'{t}'"),
)
PAIR_KEYS = st.sampled_from(["command", "parser", "keep", "env", "k-1", "_k", "9"])


@st.composite
def plain_documents(draw: st.DrawFn) -> str:
    """Documents inside the plain subset: one-line values, every key and header once."""
    def pairs() -> list[str]:
        keys = draw(st.lists(PAIR_KEYS, unique=True, max_size=4))
        out = []
        for key in keys:
            kind = draw(st.sampled_from(["scalar", "scalar", "array", "table"]))
            if kind == "scalar":
                value = draw(PLAIN_SCALARS)
            elif kind == "array":
                value = "[" + ", ".join(draw(st.lists(PLAIN_SCALARS, max_size=3))) + "]"
            else:
                inner = draw(st.lists(st.tuples(PAIR_KEYS, PLAIN_SCALARS), max_size=3,
                                      unique_by=lambda kv: kv[0]))
                value = "{" + ", ".join(f"{k} = {v}" for k, v in inner) + "}"
            out.append(f"{key}{draw(WS)}={draw(WS)}{value}{draw(st.sampled_from(['', ' # c']))}")
        return out

    headers = draw(st.lists(st.lists(st.sampled_from(["run", "check", "a.b", "t"]), min_size=1,
                                     max_size=3).map(tuple), unique=True, max_size=4))
    lines = pairs()
    for path in headers:
        lines.append("[" + ".".join(f'"{p}"' if "." in p else p for p in path) + "]")
        lines.extend(pairs())
    return "\n".join(lines) + "\n"


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(plain_documents())
def test_plain_toml_is_read_without_tomllib(text: str) -> None:
    plain = read_plain(text)
    assert plain is not None, text
    assert json.dumps(plain) == json.dumps(tomllib.loads(text))


@pytest.mark.parametrize("text", [STARTER, PLAIN_CONFIG, "", "\n# only a comment\n",
                                  '[check."a.b"]\ncommand = ["x", "y",]\nparser = "generic"\n',
                                  "[a.b]\n[a]\nc = 1\r\n"])
def test_the_configs_ckdn_writes_and_documents_are_read_without_tomllib(text: str) -> None:
    plain = read_plain(text)
    assert plain is not None
    assert json.dumps(plain) == json.dumps(tomllib.loads(text))


@pytest.mark.parametrize("text", ['a = "\\t"\n', "a = 1\na = 2\n", "[a]\n[a]\n", "a = 1e3\n",
                                  'a = """x"""\n', "a.b = 1\n", "d = 1979-05-27\n",
                                  "t = {x = 1}\n[t.y]\n", "a = [\n  1,\n]\n", "a = 1\r"])
def test_toml_beyond_the_plain_subset_is_left_to_tomllib(text: str) -> None:
    assert read_plain(text) is None


def test_a_number_too_long_for_int_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text("[run]\nkeep = " + "9" * 5000 + "\n")
    with pytest.raises(Exception, match=r"^ckdn\.toml: invalid TOML: ") as info:
        load_config(tmp_path)
    assert info.type.__name__ == "ConfigError"
