"""What keeps `ckdn run` starting fast: its import diet, and the fast paths that pay for it.

A trivial check must cost little more than starting Python (DESIGN.md), so `ckdn run`
reads its command line without argparse, its config without tomllib, and builds its
values without dataclasses. The first tests pin that diet in a real process, by the
modules it loads (never by timing); the others hold each fast path to the standard
module it stands in for. The figures are in bench/bench_startup.py.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckdn
from ckdn._record import Record, record
from ckdn._toml import read_plain
from ckdn.cli import _quick_run, build_parser
from ckdn.config import Check, load_config
from ckdn.errors import ConfigError, UsageError
from ckdn.parsers.base import Finding, ParseContext, ParseResult
from ckdn.reconcile import Exit, Verdict
from ckdn.starter import STARTER
from ckdn.store import _parse as store_parse
from ckdn.store import check_of
from tests.project import clean_env

HYPOTHESIS = settings(max_examples=300, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow,
                                             HealthCheck.function_scoped_fixture])

#: Modules a plain `ckdn run` must not load: each cost start-up time once.
COSTLY = (
    "argparse", "gettext",  # the command line
    "dataclasses", "inspect", "ast", "dis", "tokenize",  # values
    "tomllib", "typing", "string", "datetime",  # the config file
    "hashlib", "shutil", "bz2", "lzma", "importlib.util",  # hashing, pruning, parsers
    "pathlib", "urllib.parse", "ipaddress", "fnmatch",  # paths (plain str on the run path)
    "subprocess", "threading", "selectors", "locale", "contextlib",  # the spawn (ckdn.spawn)
    "json", "json.decoder", "json.scanner",  # the documents are written by ckdn.documents
    "ckdn.progress",  # the live line: only on a terminal
)

PLAIN_CONFIG = """\
# a plain config: headers, one-line values, an inline table, an array
[run]
keep = 3

[check.ok]
command = "true"
parser = "generic"
timeout = 60.5
env = { LANG = "C", HOME = '/tmp' }
description = 'passes'

[check.all-ok]
members = ["ok"]
"""

#: Runs ckdn's CLI in a process without site (so nothing else was imported first) and
#: prints the modules it loaded on stderr.
WRAPPER = """\
import sys
sys.path.insert(0, sys.argv[1])
from ckdn.cli import main
code = main(sys.argv[2:])
sys.stderr.write(" ".join(sorted(sys.modules)))
raise SystemExit(code)
"""


def loaded_by_ckdn(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = clean_env()
    core = str(Path(ckdn.__file__).parent.parent)
    proc = subprocess.run([sys.executable, "-S", "-c", WRAPPER, core, *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc, set(proc.stderr.split())


@pytest.mark.parametrize("args", [("run", "ok"), ("--config", "ckdn.toml", "run", "-q", "all-ok")])
def test_a_plain_ckdn_run_loads_none_of_the_costly_modules(tmp_path: Path,
                                                          args: tuple[str, ...]) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    for _ in range(5):  # the later runs prune, as every run does once `keep` is reached
        proc, loaded = loaded_by_ckdn(tmp_path, *args)
        assert proc.returncode == 0, proc.stderr
    assert {"ckdn.runner", "ckdn.digest", "ckdn.store"} <= loaded  # it did run the check
    runs = [p.name for p in (tmp_path / ".agent-runs").glob("*T*Z*") if p.is_dir()]
    assert [check_of(name) for name in runs].count("ok") == 3  # and pruned
    assert sorted(loaded.intersection(COSTLY)) == []


def test_a_config_beyond_plain_toml_is_read_by_tomllib(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text('[check.ok]\ncommand = """true"""\nparser = "generic"\n')
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "pass"
    assert "tomllib" in loaded


# -- the plain TOML reader agrees with tomllib -------------------------------------------


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


@HYPOTHESIS
@given(st.lists(lines(), max_size=8), st.sampled_from(["\n", "\r\n", "\r"]),
       st.sampled_from(["", "\n"]))
def test_the_plain_toml_reader_never_disagrees_with_tomllib(
        body: list[str], newline: str, end: str) -> None:
    same_document(newline.join(body) + end)


@HYPOTHESIS
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


@HYPOTHESIS
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


# -- the quick `run` reading agrees with argparse ----------------------------------------

WORDS = st.sampled_from(["run", "ok", "x", "--quiet", "-q", "--config", "--config=c.toml",
                         "--cwd", "--cwd=.", "--cwd=", "a", "-x", "--all", "--fail-fast",
                         "--no-fail-fast", "", "show", "-h", "--qu", "--conf", "-1"])


def argparse_reading(argv: list[str]) -> dict[str, Any] | None:
    try:
        return vars(build_parser().parse_args(argv, namespace=SimpleNamespace()))
    except UsageError:
        return None


@HYPOTHESIS
@given(st.lists(WORDS, max_size=6))
def test_the_quick_run_reading_never_disagrees_with_argparse(argv: list[str]) -> None:
    quick = _quick_run(argv)
    if quick is not None:
        assert vars(quick) == argparse_reading(argv)


@pytest.mark.parametrize("argv", [["run", "ok"], ["run", "-q", "ok"], ["--cwd", "d", "run", "ok"],
                                  ["run", "ok", "--config=c.toml", "--quiet"]])
def test_the_usual_run_command_lines_are_read_without_argparse(argv: list[str]) -> None:
    quick = _quick_run(argv)
    assert quick is not None
    assert vars(quick) == argparse_reading(argv)


# -- names are read as the patterns that define them -------------------------------------

RUN_NAME = re.compile(r"(\d{8}T\d{6}Z)(?:\.(\d{3,}))?-([^/\0]+)")
CHECK_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]{0,63}\Z")


@st.composite
def run_names(draw: st.DrawFn) -> str:
    digit = st.sampled_from("0123456789\u0663x")
    stamp = "".join(draw(st.lists(digit, min_size=8, max_size=8)))
    stamp += draw(st.sampled_from(["T", "t"])) + "".join(draw(st.lists(digit, min_size=6,
                                                                       max_size=6)))
    seq = draw(st.sampled_from(["", ".", ".01", ".001", ".0001", ".1x3", ".\u0663\u0663\u0663"]))
    label = draw(st.text(st.sampled_from("ab-./\0\n.Z"), max_size=5))
    return stamp + draw(st.sampled_from(["Z", "", "z"])) + seq + draw(st.sampled_from(["-", ""])
                                                                    ) + label


@HYPOTHESIS
@given(st.one_of(run_names(), st.text(max_size=30)))
def test_run_dir_names_are_read_as_their_pattern_reads_them(name: str) -> None:
    match = RUN_NAME.fullmatch(name)
    expected = None if match is None else (match[1], int(match[2] or 0), match[3])
    assert store_parse(name) == expected


@HYPOTHESIS
@given(st.text(st.sampled_from("aZ09_+.-/ é"), max_size=66))
def test_check_names_are_accepted_as_their_pattern_accepts_them(tmp_path_factory: Any,
                                                                name: str) -> None:
    root = tmp_path_factory.mktemp("names")
    (root / "ckdn.toml").write_text(f'[check.{json.dumps(name)}]\ncommand = "x"\n'
                                    'parser = "generic"\n')
    try:
        accepted = name in load_config(root).checks
    except ConfigError as exc:
        accepted = "invalid check name" not in exc.message
    assert accepted == bool(CHECK_NAME.match(name))


# -- records behave as the dataclasses they replace --------------------------------------


def test_records_compare_hash_and_show_their_fields() -> None:
    finding = Finding("t::x", "test_failure", "boom", location="t.py:3")
    assert finding == Finding(id="t::x", kind="test_failure", message="boom", location="t.py:3")
    assert finding != Finding("t::x", "test_failure", "boom")
    assert hash(finding) == hash(Finding("t::x", "test_failure", "boom", "t.py:3", ()))
    assert repr(finding) == ("Finding(id='t::x', kind='test_failure', message='boom', "
                             "location='t.py:3', detail=())")
    assert Verdict("pass", None) != ("pass", None)


def test_a_frozen_record_refuses_changes_as_a_frozen_dataclass_does() -> None:
    exit = Exit(3)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'rc'"):
        exit.rc = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del exit.rc


def test_a_mutable_record_changes_and_is_unhashable() -> None:
    result = ParseResult()
    result.notes.append("x")
    result.parser_ok = False
    assert result == ParseResult(parser_ok=False, notes=["x"])
    assert ParseResult().findings is not ParseResult().findings
    with pytest.raises(TypeError):
        hash(result)


def test_records_work_with_the_dataclasses_functions(tmp_path: Path) -> None:
    ctx = ParseContext(check="c", run_dir=tmp_path, cwd=tmp_path, rc=1)
    assert dataclasses.is_dataclass(ctx)
    assert [f.name for f in dataclasses.fields(ctx)] == [
        "check", "run_dir", "cwd", "rc", "options", "top", "max_snippet_lines"]
    changed = dataclasses.replace(ctx, options={"format": "json"})
    assert changed.options == {"format": "json"}
    assert changed.rc == 1
    assert dataclasses.asdict(Exit(2, notes=("n",)))["notes"] == ("n",)


def test_records_copy_pickle_and_match_by_position() -> None:
    check = Check("ruff", "ruff check", ("ruff", "check"), "ruff", timeout=9.0)
    assert copy.copy(check) == check
    exit = Exit(124, timed_out=True, notes=("late",))
    assert pickle.loads(pickle.dumps(exit)) == exit
    match Verdict("fail", "exit code 1"):
        case Verdict(status, reason):
            assert (status, reason) == ("fail", "exit code 1")


def test_a_subclass_of_a_record_is_as_frozen_as_its_base() -> None:
    class Collected(ParseResult):
        pass

    class Located(Finding):
        pass

    collected = Collected()
    collected.parser_ok = False
    assert collected.parser_ok is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        Located("i", "k", "m").id = "j"  # type: ignore[misc]


def test_a_record_whose_init_and_slots_differ_is_refused() -> None:
    with pytest.raises(TypeError, match="one slot per parameter"):

        @record
        class Broken(Record):  # pyright: ignore[reportUnusedClass]
            __slots__ = ("a",)
            a: int

            def __init__(self, b: int) -> None:
                self._assign(b)
