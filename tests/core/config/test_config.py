"""ckdn.toml is read strictly: every mistake is one line naming the file, table and key."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn import parsers
from ckdn.config import (
    CONFIG_ENV,
    Alias,
    Check,
    Config,
    RunSettings,
    config_path,
    default_config,
    load_config,
)
from ckdn.errors import CkdnError, ConfigError, UsageError
from ckdn.parsers.base import BaseParser, Option, OptionError, ParseContext, ParseResult


class GateParser(BaseParser):
    """A parser with declared options, standing in for coverage/pylint/sarif."""

    name = "gate"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "fail_under": Option("number", minimum=0, maximum=100),
        "report": Option("str"),
        "levels": Option("str_list", choices=("error", "warning")),
    }

    def parse(self, ctx: ParseContext) -> ParseResult:
        return ParseResult()


class PluginParser:
    """A plugin-style parser without validate_options: it accepts any option."""

    name = "plugin"

    def parse(self, ctx: ParseContext) -> ParseResult:
        return ParseResult()


class StrictPluginParser:
    """A plugin parser validating its own options, with messages that omit the key."""

    name = "strict"
    OPTIONS: ClassVar[Mapping[str, Option]] = {"level": Option("int")}

    def validate_options(self, options: Mapping[str, Any]) -> None:
        if options.get("level", 0) > 2:
            raise OptionError("level", "too loud")

    def parse(self, ctx: ParseContext) -> ParseResult:
        return ParseResult()


@pytest.fixture(autouse=True)
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    # A file named by --config is found from the process cwd: here, the test's own dir.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(parsers._cache, "gate", GateParser())
    monkeypatch.setitem(parsers._cache, "plugin", PluginParser())
    monkeypatch.setitem(parsers._cache, "strict", StrictPluginParser())


def write(root: Path, text: str, name: str = "ckdn.toml") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def refusal(root: Path, text: str, explicit: str | None = None) -> str:
    """Load ``text`` expecting a refusal; return its message after the common checks."""
    write(root, text, explicit or "ckdn.toml")
    with pytest.raises(ConfigError) as info:
        load_config(root, explicit)
    message = str(info.value)
    assert isinstance(info.value, CkdnError)
    assert info.value.exit_code == 2
    assert "\n" not in message
    assert "\r" not in message
    assert message.startswith(f"{explicit or 'ckdn.toml'}: ")
    return message


ATOMIC = '[check.ruff]\ncommand = "ruff check ."\nparser = "generic"\n'
GATE = '[check.cov]\ncommand = "pytest"\nparser = "gate"\n'
TWO = '[check.a]\ncommand = "a"\nparser = "generic"\n[check.b]\ncommand = "b"\nparser = "generic"\n'

# (id, document, table as shown, key, a fragment saying what was wrong)
REFUSALS: list[tuple[str, str, str, str, str]] = [
    # [run]
    ("run keep float", "[run]\nkeep = 1.5\n", "[run]", "keep", "1.5"),
    ("run keep bool", "[run]\nkeep = true\n", "[run]", "keep", "true"),
    ("parser key misspelt", '[check.t]\ncommand = "pytest"\nparsr = "pytest"\n', "[check.t]",
     "parsr", "did you mean 'parser'?"),
    ("run keep negative", "[run]\nkeep = -1\n", "[run]", "keep", ">= 0"),
    ("run keep string", '[run]\nkeep = "5"\n', "[run]", "keep", "'5'"),
    ("run top zero", "[run]\ntop = 0\n", "[run]", "top", ">= 1"),
    ("run top float", "[run]\ntop = 2.0\n", "[run]", "top", "2.0"),
    ("run snippet negative", "[run]\nmax_snippet_lines = -1\n", "[run]", "max_snippet_lines",
     ">= 0"),
    ("run baseline not a path", "[run]\nbaseline = 3\n", "[run]", "baseline", "path string"),
    ("run baseline empty", '[run]\nbaseline = " "\n', "[run]", "baseline", "path string"),
    ("run policy unknown", '[run]\ncommand_policy = "strict"\n', "[run]", "command_policy",
     "'workspace', 'allowlist', 'off'"),
    ("run allowlist prefix unsplittable",
     '[run]\ncommand_policy = "allowlist"\n[run.command_allowlist]\nprefixes = ["uv \'run"]\n',
     "[run.command_allowlist]", "prefixes", "cannot be split like a shell line"),
    ("run require_lock not a bool", '[run]\nrequire_lock = "yes"\n', "[run]", "require_lock",
     "must be true or false, not 'yes'"),
    ("run private not a bool", "[run]\nprivate = 1\n", "[run]", "private",
     "must be true or false, not 1"),
    ("run inherit_env not a bool", '[run]\ninherit_env = "no"\n', "[run]", "inherit_env",
     "must be true or false"),
    ("run max_age_days zero", "[run]\nmax_age_days = 0\n", "[run]", "max_age_days",
     "must be a number of days > 0"),
    ("run max_age_days text", '[run]\nmax_age_days = "30d"\n', "[run]", "max_age_days",
     "not '30d'"),
    ("run max_bytes zero", "[run]\nmax_bytes = 0\n", "[run]", "max_bytes",
     "must be an integer number of bytes >= 1"),
    ("run max_bytes float", "[run]\nmax_bytes = 1.5\n", "[run]", "max_bytes", "not 1.5"),
    ("check env_allow not a list", '[check.a]\ncommand = "true"\nparser = "generic"\n'
     'env_allow = "CI"\n', "[check.a]", "env_allow", "must be an array of variable names"),
    ("check env_allow bad name", '[check.a]\ncommand = "true"\nparser = "generic"\n'
     'env_allow = ["A=B"]\n', "[check.a]", "env_allow", "is not a variable name"),
    ("run allowlist not a table", "[run]\ncommand_allowlist = 3\n", "[run]",
     "command_allowlist", "must be a table"),
    ("run allowlist empty", "[run.command_allowlist]\nprefixes = []\n",
     "[run.command_allowlist]", "prefixes", "non-empty list"),
    ("run allowlist blank prefix", '[run.command_allowlist]\nprefixes = ["uv run", " "]\n',
     "[run.command_allowlist]", "prefixes", "non-empty strings"),
    ("run allowlist unknown key", '[run.command_allowlist]\nprefix = ["uv"]\n',
     "[run.command_allowlist]", "prefix", "did you mean 'prefixes'"),
    ("run allowlist beside another policy",
     '[run]\ncommand_policy = "off"\n[run.command_allowlist]\nprefixes = ["uv run"]\n',
     "[run.command_allowlist]", "allowlist", "is read only with command_policy = 'allowlist'"),
    ("run tail negative", "[run]\nlog_tail_lines = -1\n", "[run]", "log_tail_lines", ">= 0"),
    ("run tail bool", "[run]\nlog_tail_lines = false\n", "[run]", "log_tail_lines", "false"),
    ("run keep date", "[run]\nkeep = 1979-05-27\n", "[run]", "keep", "not a date"),
    ("run runs_dir int", "[run]\nruns_dir = 5\n", "[run]", "runs_dir", "5"),
    ("run runs_dir empty", '[run]\nruns_dir = ""\n', "[run]", "runs_dir", "non-empty"),
    ("run unknown key", "[run]\ncolour = 1\n", "[run]", "colour", "unknown key"),
    # atomic checks: command
    ("no command", '[check.ruff]\nparser = "generic"\n', "[check.ruff]", "command", "members"),
    ("command empty", '[check.ruff]\ncommand = ""\nparser = "generic"\n', "[check.ruff]",
     "command", "no program"),
    ("command blank", '[check.ruff]\ncommand = "   "\nparser = "generic"\n', "[check.ruff]",
     "command", "no program"),
    ("command empty list", '[check.ruff]\ncommand = []\nparser = "generic"\n', "[check.ruff]",
     "command", "no program"),
    ("command empty program", '[check.ruff]\ncommand = ["", "x"]\nparser = "generic"\n',
     "[check.ruff]", "command", "no program"),
    ("command list of ints", '[check.ruff]\ncommand = [1]\nparser = "generic"\n',
     "[check.ruff]", "command", "array of strings"),
    ("command int", '[check.ruff]\ncommand = 5\nparser = "generic"\n', "[check.ruff]",
     "command", "not 5"),
    ("command unclosed quote", '[check.ruff]\ncommand = "ruff \'check"\nparser = "generic"\n',
     "[check.ruff]", "command", "No closing quotation"),
    ("command NUL", '[check.ruff]\ncommand = "ruff\\u0000x"\nparser = "generic"\n',
     "[check.ruff]", "command", "NUL"),
    # atomic checks: parser
    ("parser missing", '[check.ruff]\ncommand = "ruff"\n', "[check.ruff]", "parser", "missing"),
    ("parser int", '[check.ruff]\ncommand = "ruff"\nparser = 3\n', "[check.ruff]", "parser",
     "not 3"),
    ("parser empty", '[check.ruff]\ncommand = "ruff"\nparser = ""\n', "[check.ruff]", "parser",
     "not ''"),
    ("parser unknown", '[check.ruff]\ncommand = "ruff"\nparser = "no-such-parser-x"\n',
     "[check.ruff]", "parser", "unknown parser 'no-such-parser-x'"),
    # atomic checks: typed keys
    ("timeout zero", ATOMIC + "timeout = 0\n", "[check.ruff]", "timeout", "not 0"),
    ("timeout negative", ATOMIC + "timeout = -1.5\n", "[check.ruff]", "timeout", "not -1.5"),
    ("timeout bool", ATOMIC + "timeout = true\n", "[check.ruff]", "timeout", "not true"),
    ("timeout string", ATOMIC + 'timeout = "5"\n', "[check.ruff]", "timeout", "not '5'"),
    ("timeout nan", ATOMIC + "timeout = nan\n", "[check.ruff]", "timeout", "not nan"),
    ("timeout inf", ATOMIC + "timeout = inf\n", "[check.ruff]", "timeout", "not inf"),
    ("timeout huge", ATOMIC + "timeout = 1e12\n", "[check.ruff]", "timeout", "at most"),
    ("env string", ATOMIC + 'env = "A=1"\n', "[check.ruff]", "env", "table"),
    ("env int value", ATOMIC + "env = { A = 1 }\n", "[check.ruff]", "env", "A must be a string"),
    ("env empty name", ATOMIC + 'env = { "" = "x" }\n', "[check.ruff]", "env", "variable name"),
    ("env name with =", ATOMIC + 'env = { "A=B" = "x" }\n', "[check.ruff]", "env", "'A=B'"),
    ("env NUL value", ATOMIC + 'env = { A = "x\\u0000" }\n', "[check.ruff]", "env", "NUL"),
    ("top zero", ATOMIC + "top = 0\n", "[check.ruff]", "top", ">= 1"),
    ("top float", ATOMIC + "top = 1.0\n", "[check.ruff]", "top", "1.0"),
    ("top bool", ATOMIC + "top = true\n", "[check.ruff]", "top", "true"),
    ("description int", ATOMIC + "description = 1\n", "[check.ruff]", "description", "string"),
    ("requires string", ATOMIC + 'requires = "ruff"\n', "[check.ruff]", "requires", "array"),
    ("requires empty item", ATOMIC + 'requires = [""]\n', "[check.ruff]", "requires", "PEP 508"),
    ("requires bad name", ATOMIC + 'requires = ["-ruff"]\n', "[check.ruff]", "requires",
     "'-ruff'"),
    ("requires no operator", ATOMIC + 'requires = ["ruff 1.0"]\n', "[check.ruff]", "requires",
     "'ruff 1.0'"),
    ("requires int item", ATOMIC + "requires = [5]\n", "[check.ruff]", "requires", "5"),
    ("atomic with fail_fast", ATOMIC + "fail_fast = false\n", "[check.ruff]", "fail_fast",
     "aliases"),
    # parser options
    ("generic takes no option", ATOMIC + "zzzz = 1\n", "[check.ruff]", "zzzz",
     "parser 'generic' takes no option"),
    ("option wrong type", GATE + 'fail_under = "high"\n', "[check.cov]", "fail_under",
     "must be a number"),
    ("option out of range", GATE + "fail_under = 101\n", "[check.cov]", "fail_under", "<= 100"),
    ("option refused by its parser", '[check.x]\ncommand = "x"\nparser = "strict"\nlevel = 3\n',
     "[check.x]", "level", "level: too loud"),
    ("option bad choice", GATE + 'levels = ["fatal"]\n', "[check.cov]", "levels", "'fatal'"),
    # check names
    ("name empty", '[check.""]\ncommand = "x"\nparser = "generic"\n', '[check.""]', "''",
     "invalid check name"),
    ("name slash", '[check."a/b"]\ncommand = "x"\nparser = "generic"\n', '[check."a/b"]',
     "'a/b'", "invalid check name"),
    ("name backslash", '[check."a\\\\b"]\ncommand = "x"\nparser = "generic"\n',
     '[check."a\\\\b"]', "'a\\\\b'", "invalid check name"),
    ("name space", '[check."a b"]\ncommand = "x"\nparser = "generic"\n', '[check."a b"]',
     "'a b'", "invalid check name"),
    ("name tab", '[check."a\\tb"]\ncommand = "x"\nparser = "generic"\n', '[check."a\\tb"]',
     "'a\\tb'", "invalid check name"),
    ("name newline", '[check."a\\nb"]\ncommand = "x"\nparser = "generic"\n', '[check."a\\nb"]',
     "'a\\nb'", "invalid check name"),
    ("name control char", '[check."a\\u0001"]\ncommand = "x"\nparser = "generic"\n',
     "[check.", "'a\\x01'", "invalid check name"),
    ("name leading dot", '[check.".a"]\ncommand = "x"\nparser = "generic"\n', '[check.".a"]',
     "'.a'", "invalid check name"),
    ("name leading dash", '[check.-a]\ncommand = "x"\nparser = "generic"\n', "[check.-a]",
     "'-a'", "invalid check name"),
    ("name too long", f'[check.{"a" * 65}]\ncommand = "x"\nparser = "generic"\n',
     f"[check.{'a' * 65}]", "a" * 65, "at most 64"),
    ("name case collision", TWO.replace("check.b", "check.A"), "[check.A]", "'A'",
     "only in letter case"),
    ("check not a table", "[check]\nruff = 5\n", "[check.ruff]", "ruff", "must be a table"),
    # aliases
    ("members empty", TWO + "[check.lint]\nmembers = []\n", "[check.lint]", "members",
     "non-empty"),
    ("members string", TWO + '[check.lint]\nmembers = "a"\n', "[check.lint]", "members",
     "array"),
    ("members int", TWO + "[check.lint]\nmembers = [1]\n", "[check.lint]", "members", "array"),
    ("member unknown", TWO + '[check.lint]\nmembers = ["a", "zzz"]\n', "[check.lint]",
     "members", "unknown check 'zzz'"),
    ("member nested", TWO + '[check.l1]\nmembers = ["a"]\n[check.l2]\nmembers = ["l1"]\n',
     "[check.l2]", "members", "do not nest"),
    ("member is itself", TWO + '[check.lint]\nmembers = ["a", "lint"]\n', "[check.lint]",
     "members", "this alias itself"),
    ("member duplicate", TWO + '[check.lint]\nmembers = ["a", "b", "a"]\n', "[check.lint]",
     "members", "listed twice"),
    ("fail_fast string", TWO + '[check.lint]\nmembers = ["a"]\nfail_fast = "yes"\n',
     "[check.lint]", "fail_fast", "true or false"),
    ("alias description int", TWO + '[check.lint]\nmembers = ["a"]\ndescription = 2\n',
     "[check.lint]", "description", "string"),
    ("command and members", TWO + '[check.lint]\nmembers = ["a"]\ncommand = "x"\n',
     "[check.lint]", "command", "keep one"),
    ("alias with parser", TWO + '[check.lint]\nmembers = ["a"]\nparser = "generic"\n',
     "[check.lint]", "parser", "atomic checks"),
    ("alias with timeout", TWO + '[check.lint]\nmembers = ["a"]\ntimeout = 5\n',
     "[check.lint]", "timeout", "atomic checks"),
    ("alias with option", TWO + '[check.lint]\nmembers = ["a"]\nfail_under = 90\n',
     "[check.lint]", "fail_under", "unknown key"),
]


@pytest.mark.parametrize(("doc", "table", "key", "fragment"),
                         [case[1:] for case in REFUSALS], ids=[case[0] for case in REFUSALS])
def test_each_mistake_is_refused_in_one_line_naming_file_table_and_key(
        tmp_path: Path, doc: str, table: str, key: str, fragment: str) -> None:
    message = refusal(tmp_path, doc)
    assert table in message
    assert key in message
    assert fragment in message


def test_refusal_names_the_table_before_the_key(tmp_path: Path) -> None:
    message = refusal(tmp_path, ATOMIC + "timeout = 0\n")
    assert message == ("ckdn.toml: [check.ruff] timeout: must be a number > 0 "
                       "(seconds, at most 31536000), not 0")


def test_unknown_top_level_table_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    assert refusal(tmp_path, "[runs]\nkeep = 3\n") == (
        "ckdn.toml: unknown top-level key 'runs'; did you mean 'run'?")


def test_unknown_top_level_key_without_near_miss_lists_the_known_ones(tmp_path: Path) -> None:
    message = refusal(tmp_path, "zebra = 1\n")
    assert "unknown top-level key 'zebra'" in message
    assert "run, check" in message


def test_a_check_key_that_is_not_a_table_of_checks_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, "check = 1\n")
    assert "check: must be tables [check.NAME]" in message


def test_a_run_key_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    assert "run: must be a table [run]" in refusal(tmp_path, "run = 1\n")


def test_check_keys_written_directly_under_check_point_at_the_table_form(
        tmp_path: Path) -> None:
    assert refusal(tmp_path, '[check]\ncommand = "ruff"\n') == (
        "ckdn.toml: [check] command: belongs in a check's own table: [check.NAME], "
        "then command = ...")


def test_an_unquoted_dotted_check_name_says_to_quote_it(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[check.py3.12]\ncommand = "x"\nparser = "generic"\n')
    assert message == ('ckdn.toml: [check.py3] 12: is a table; a check name with a dot is '
                       'quoted: [check."py3.12"]')


def test_near_miss_in_run_suggests_the_key(tmp_path: Path) -> None:
    assert refusal(tmp_path, "[run]\nkep = 3\n") == (
        "ckdn.toml: [run] unknown key 'kep'; did you mean 'keep'?")


def test_near_miss_of_a_check_key_suggests_the_check_key(tmp_path: Path) -> None:
    assert refusal(tmp_path, ATOMIC + "timout = 5\n") == (
        "ckdn.toml: [check.ruff] unknown key 'timout'; did you mean 'timeout'?")


def test_near_miss_of_a_parser_option_suggests_the_option(tmp_path: Path) -> None:
    assert refusal(tmp_path, GATE + "fail_undr = 90\n") == (
        "ckdn.toml: [check.cov] unknown key 'fail_undr'; did you mean 'fail_under'?")


def test_near_miss_of_command_suggests_command(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[check.ruff]\ncomand = "ruff"\nparser = "generic"\n')
    assert message == "ckdn.toml: [check.ruff] unknown key 'comand'; did you mean 'command'?"


def test_near_miss_of_a_member_suggests_the_atomic_check(tmp_path: Path) -> None:
    message = refusal(tmp_path, ATOMIC + '[check.lint]\nmembers = ["ruf"]\n')
    assert message == ("ckdn.toml: [check.lint] members: unknown check 'ruf'; "
                       "did you mean 'ruff'?")


def test_near_miss_of_a_parser_name_suggests_the_parser(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[check.ruff]\ncommand = "ruff"\nparser = "generc"\n')
    assert message == ("ckdn.toml: [check.ruff] parser: unknown parser 'generc'; "
                       "did you mean 'generic'?")


def test_invalid_toml_is_refused_with_the_tomllib_message(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[check.ruff\n")
    assert message.startswith("ckdn.toml: invalid TOML: ")
    assert "line 1" in message


def test_toml_nested_past_the_parser_limit_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, "x = " + "[" * 2000 + "]" * 2000 + "\n")
    assert message == "ckdn.toml: invalid TOML: nested too deeply"


def test_duplicate_check_tables_are_invalid_toml(tmp_path: Path) -> None:
    message = refusal(tmp_path, ATOMIC + ATOMIC)
    assert message.startswith("ckdn.toml: invalid TOML: ")


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_bytes(b"[run]\nruns_dir = \"\xff\"\n")
    with pytest.raises(ConfigError, match=r"^ckdn\.toml: invalid TOML: not UTF-8 \(byte 0xff"):
        load_config(tmp_path)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_bytes(b"\xef\xbb\xbf" + ATOMIC.encode())
    assert list(load_config(tmp_path).checks) == ["ruff"]


def test_an_unreadable_config_is_refused_with_the_os_error(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == "ckdn.toml: cannot read config file: Is a directory"


def ckdn_with_config(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    """``ckdn --config CONFIG checks`` in a real process held to 512 MiB of address space
    and 20 seconds: reading a config without bounds fails either way, loudly."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    from tests.project import clean_env

    return subprocess.run([sys.executable, "-m", "ckdn", "--config", config, "checks"],
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                          timeout=20, preexec_fn=limit, check=False)


def assert_one_line_refusal(proc: subprocess.CompletedProcess[str]) -> str:
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    return line


def test_a_config_that_is_a_device_is_refused_unread(tmp_path: Path) -> None:
    line = assert_one_line_refusal(ckdn_with_config(tmp_path, "/dev/zero"))
    assert line == ("ckdn: /dev/zero: not a regular file; ckdn reads its config only from"
                    " a regular file (name a ckdn.toml with --config)")


def test_a_config_that_is_a_fifo_is_refused_without_waiting_for_a_writer(
        tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    line = assert_one_line_refusal(ckdn_with_config(tmp_path, "pipe.toml"))
    assert line.startswith("ckdn: pipe.toml: not a regular file;")


def test_a_config_larger_than_the_cap_is_refused_unread(tmp_path: Path) -> None:
    from ckdn.config._load import MAX_CONFIG_BYTES

    (tmp_path / "ckdn.toml").write_text("#" * MAX_CONFIG_BYTES + "\n" + ATOMIC)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == (
        f"ckdn.toml: larger than {MAX_CONFIG_BYTES >> 20} MiB; a ckdn.toml is a few"
        " kilobytes: name the right file")
    (tmp_path / "ckdn.toml").write_text("#" * (MAX_CONFIG_BYTES - len(ATOMIC) - 1) + "\n"
                                        + ATOMIC)
    assert list(load_config(tmp_path).checks) == ["ruff"]


def test_a_missing_required_config_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == (f"no ckdn.toml in {tmp_path}; run `ckdn init` or pass --config")
    assert info.value.exit_code == 2


def test_a_missing_optional_config_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path, required=False)
    assert config == default_config(tmp_path)
    assert config.path is None
    assert config.run == RunSettings(runs_dir=str(tmp_path / ".agent-runs"))
    assert dict(config.checks) == {}
    assert dict(config.aliases) == {}


def test_a_missing_file_named_by_config_is_refused_even_when_optional(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, "other.toml", required=False)
    assert str(info.value) == ("other.toml: no such config file (named by --config; "
                               f"looked for {tmp_path / 'other.toml'})")


def test_a_missing_file_named_by_the_environment_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, "gone.toml")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, required=False)
    assert str(info.value) == ("gone.toml: no such config file (named by $CKDN_CONFIG; "
                               f"looked for {tmp_path / 'gone.toml'})")


FULL = """\
[run]
runs_dir = "evidence/runs"
keep = 5
top = 7
max_snippet_lines = 3
log_tail_lines = 0

[check.ruff]
command = "ruff check --output-format json --output-file '{run_dir}/ruff out.json' ."
parser = "generic"
timeout = 90
env = { RUFF_CACHE_DIR = "{run_dir}/cache", NO_COLOR = "1" }
top = 4
description = "lint with ruff"
requires = ["ruff>=0.5", "ruff-lsp[extra] ; python_version >= '3.11'", "pkg @ https://x/y.whl"]

[check.cov]
command = ["pytest", "-q", "--cov-report=xml:{run_dir}/coverage.xml", ""]
parser = "gate"
timeout = 2.5
fail_under = 96.0
report = "{run_dir}/coverage.xml"
levels = ["error"]

[check."py3.12+x"]
command = "python -V"
parser = "plugin"
anything = { goes = [1, 2] }

[check.lint]
members = ["ruff", "cov"]
fail_fast = false
description = "every linter"

[check.quick]
members = ["py3.12+x"]
"""


def test_a_full_config_loads_every_key(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_config(tmp_path)
    assert config.path == str(path)
    assert config.cwd == str(tmp_path)
    assert config.run == RunSettings(runs_dir=str(tmp_path / "evidence" / "runs"), keep=5,
                                     top=7, max_snippet_lines=3, log_tail_lines=0)
    assert list(config.checks) == ["ruff", "cov", "py3.12+x"]
    assert list(config.aliases) == ["lint", "quick"]
    assert config.checks["ruff"] == Check(
        name="ruff",
        command="ruff check --output-format json --output-file '{run_dir}/ruff out.json' .",
        argv=("ruff", "check", "--output-format", "json", "--output-file",
              "{run_dir}/ruff out.json", "."),
        parser="generic", timeout=90.0,
        env={"RUFF_CACHE_DIR": "{run_dir}/cache", "NO_COLOR": "1"}, top=4, options={},
        description="lint with ruff",
        requires=("ruff>=0.5", "ruff-lsp[extra] ; python_version >= '3.11'",
                  "pkg @ https://x/y.whl"),
    )
    assert config.checks["cov"] == Check(
        name="cov", command=("pytest", "-q", "--cov-report=xml:{run_dir}/coverage.xml", ""),
        argv=("pytest", "-q", "--cov-report=xml:{run_dir}/coverage.xml", ""),
        parser="gate", timeout=2.5,
        options={"fail_under": 96.0, "report": "{run_dir}/coverage.xml", "levels": ["error"]},
    )
    assert config.checks["py3.12+x"].options == {"anything": {"goes": [1, 2]}}
    assert config.aliases["lint"] == Alias(name="lint", members=("ruff", "cov"),
                                           fail_fast=False, description="every linter")
    assert config.aliases["quick"] == Alias(name="quick", members=("py3.12+x",))


def test_timeout_is_always_a_float(tmp_path: Path) -> None:
    write(tmp_path, ATOMIC + "timeout = 90\n")
    timeout = load_config(tmp_path).checks["ruff"].timeout
    assert type(timeout) is float
    assert timeout == 90.0


def test_loaded_values_cannot_be_changed(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    config = load_config(tmp_path)
    ruff = config.checks["ruff"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ruff.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        ruff.env["X"] = "1"  # type: ignore[index]
    with pytest.raises(TypeError):
        config.checks["x"] = ruff  # type: ignore[index]


def test_defaults_apply_to_keys_left_out(tmp_path: Path) -> None:
    write(tmp_path, ATOMIC)
    config = load_config(tmp_path)
    assert config.run == RunSettings(runs_dir=str(tmp_path / ".agent-runs"))
    assert config.checks["ruff"] == Check(name="ruff", command="ruff check .",
                                          argv=("ruff", "check", "."), parser="generic")


@pytest.mark.parametrize("name", ["a", "A-1", "_x", "+x", "a.b", "a+b", "py3.12", "x" * 64])
def test_names_of_letters_digits_and_safe_punctuation_are_accepted(
        tmp_path: Path, name: str) -> None:
    write(tmp_path, f'[check."{name}"]\ncommand = "x"\nparser = "generic"\n')
    assert list(load_config(tmp_path).checks) == [name]


def test_relative_runs_dir_resolves_from_cwd_not_the_config_folder(tmp_path: Path) -> None:
    write(tmp_path, '[run]\nruns_dir = "out/runs"\n', "sub/dir/ckdn.toml")
    config = load_config(tmp_path, "sub/dir/ckdn.toml")
    assert config.path == str(tmp_path / "sub" / "dir" / "ckdn.toml")
    assert config.run.runs_dir == str(tmp_path / "out" / "runs")


def test_absolute_runs_dir_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    write(tmp_path, f"[run]\nruns_dir = {json.dumps(str(target))}\n")
    assert load_config(tmp_path).run.runs_dir == str(target)


def test_a_relative_cwd_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, ATOMIC)
    monkeypatch.chdir(tmp_path.parent)
    config = load_config(Path(tmp_path.name))
    assert config.cwd == str(tmp_path)
    assert config.run.runs_dir == str(tmp_path / ".agent-runs")


def test_errors_in_a_config_below_cwd_name_it_relative_to_cwd(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[run]\nkeep = -1\n", "sub/ckdn.toml")
    assert message.startswith("sub/ckdn.toml: [run] keep:")


def test_errors_in_a_named_config_name_it_from_the_process_cwd_or_absolute(
        tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere", "[run]\nkeep = -1\n", "outside.toml")
    cwd = tmp_path / "project"
    cwd.mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(cwd, str(outside))  # --cwd project --config /abs/elsewhere/outside.toml
    assert str(info.value).startswith("elsewhere/outside.toml: [run] keep:")
    os.chdir(cwd)
    with pytest.raises(ConfigError) as info:
        load_config(cwd, "../elsewhere/outside.toml")
    assert str(info.value).startswith(f"{outside}: [run] keep:")


def test_config_path_prefers_explicit_then_environment_then_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_path(tmp_path) == str(tmp_path / "ckdn.toml")
    monkeypatch.setenv(CONFIG_ENV, "env/ckdn.toml")
    assert config_path(tmp_path) == str(tmp_path / "env" / "ckdn.toml")
    assert config_path(tmp_path, "cli.toml") == str(tmp_path / "cli.toml")


def test_a_named_config_is_found_from_the_process_cwd_and_cwd_sets_only_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cd tmp; ckdn --cwd proj --config sub.toml``: ``./sub.toml``, not ``proj/sub.toml``;
    checks run in ``proj`` and relative ``[run]`` paths are taken from it."""
    proj = tmp_path / "proj"
    write(proj, ATOMIC, "sub.toml")  # the trap: the old rule read this one
    write(tmp_path, '[run]\nruns_dir = "evidence"\n' + ATOMIC.replace("[check.", "[check.x"),
          "sub.toml")
    config = load_config(proj, "sub.toml")
    assert config.path == str(tmp_path / "sub.toml")
    assert config.cwd == str(proj)
    assert config.run.runs_dir == str(proj / "evidence")
    assert config_path(proj) == str(proj / "ckdn.toml")  # the default is still --cwd's
    monkeypatch.setenv(CONFIG_ENV, "sub.toml")
    assert load_config(proj).path == str(tmp_path / "sub.toml")


def test_the_config_environment_variable_is_honoured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, ATOMIC, "ckdn.toml")
    write(tmp_path, '[check.other]\ncommand = "x"\nparser = "generic"\n', "conf/alt.toml")
    monkeypatch.setenv(CONFIG_ENV, "conf/alt.toml")
    config = load_config(tmp_path)
    assert config.path == str(tmp_path / "conf" / "alt.toml")
    assert list(config.checks) == ["other"]


def test_an_empty_config_environment_variable_means_unset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, ATOMIC)
    monkeypatch.setenv(CONFIG_ENV, "")
    assert load_config(tmp_path).path == str(tmp_path / "ckdn.toml")


def test_run_dir_placeholder_is_kept_as_written(tmp_path: Path) -> None:
    write(tmp_path, '[check.t]\ncommand = "tool --out {run_dir}/r.json"\nparser = "generic"\n'
                    'env = { OUT = "{run_dir}" }\n')
    check = load_config(tmp_path).checks["t"]
    assert check.argv == ("tool", "--out", "{run_dir}/r.json")
    assert check.env == {"OUT": "{run_dir}"}


def test_a_string_command_is_split_like_a_posix_shell_line_but_never_run_by_one(
        tmp_path: Path) -> None:
    write(tmp_path, '[check.t]\ncommand = "tool \\"a b\\" c\\\\ d \'e|f\' \'&&\' g"\n'
                    'parser = "generic"\n')
    assert load_config(tmp_path).checks["t"].argv == ("tool", "a b", "c d", "e|f", "&&", "g")


def test_get_returns_atomic_checks_and_aliases(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    config = load_config(tmp_path)
    assert config.get("ruff") is config.checks["ruff"]
    assert config.get("lint") is config.aliases["lint"]


def test_get_of_an_unknown_name_suggests_and_lists_the_configured_ones(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    with pytest.raises(UsageError) as info:
        load_config(tmp_path).get("rufff")
    assert str(info.value) == ("unknown check 'rufff'; did you mean 'ruff'? "
                               "(configured: ruff, cov, py3.12+x, lint, quick)")
    assert info.value.exit_code == 2


def test_get_without_a_config_file_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        default_config(tmp_path).get("ruff")
    assert str(info.value) == (f"unknown check 'ruff'; no ckdn.toml in {tmp_path}; "
                               "run `ckdn init` or pass --config")


def test_get_in_a_config_without_checks_says_so(tmp_path: Path) -> None:
    write(tmp_path, "[run]\nkeep = 3\n")
    with pytest.raises(UsageError, match=r"^unknown check 'x'; ckdn\.toml defines no checks"):
        load_config(tmp_path).get("x")


def test_loading_a_valid_config_imports_no_difflib(tmp_path: Path) -> None:
    write(tmp_path, ATOMIC + 'timeout = 5\n[check.lint]\nmembers = ["ruff"]\n')
    code = ("import sys\nfrom pathlib import Path\nfrom ckdn.config import load_config\n"
            "load_config(Path(sys.argv[1]))\nprint('difflib' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != CONFIG_ENV}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# -- properties ---------------------------------------------------------------------------

CHECK_KEYS = ["command", "parser", "timeout", "env", "top", "description", "requires",
              "members", "fail_fast", "fail_under", "report", "levels", "timout"]
RUN_KEYS = ["runs_dir", "keep", "top", "max_snippet_lines", "log_tail_lines"]
TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
SCALARS = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(), TEXT,
    st.sampled_from(["generic", "gate", "plugin", "echo {run_dir}", "a", "b", "x 'y",
                     ".agent-runs", "ruff>=1", "error"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
NAMES = st.sampled_from(["a", "b", "lint", "A", ".x", "a/b", ""]) | st.sampled_from("abc") | TEXT


def toml_value(value: Any) -> str:
    """TOML for ``value`` (tomllib has no writer; inline tables keep this small)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def rarely(odd: st.SearchStrategy[Any], usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``odd`` one time in five, else ``usual``: most documents reach past the first key."""
    return st.integers(0, 4).flatmap(lambda i: odd if i == 0 else usual)


RUN_TABLES = st.fixed_dictionaries({}, optional={
    key: rarely(VALUES, st.sampled_from(["out", ".runs"]) if key == "runs_dir"
                else st.integers(0, 50))
    for key in RUN_KEYS})
ATOMIC_TABLES = st.fixed_dictionaries(
    {"command": st.sampled_from(["echo hi", ["a", "{run_dir}"], "x 'y"]) | VALUES,
     "parser": st.sampled_from(["generic", "gate", "plugin"]) | VALUES},
    optional={key: rarely(VALUES, st.integers(0, 100) | st.floats(0, 100) | SCALARS)
              for key in ["timeout", "env", "top", "description", "requires", "fail_under",
                          "report", "levels", "timout", "fail_fast"]},
)
ALIAS_TABLES = st.fixed_dictionaries(
    {"members": st.lists(NAMES, max_size=3) | VALUES},
    optional={"fail_fast": st.booleans() | VALUES, "description": VALUES, "parser": VALUES},
)
DOCUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "run": rarely(VALUES, RUN_TABLES),
        "check": st.dictionaries(
            NAMES,
            rarely(VALUES | st.dictionaries(st.sampled_from(CHECK_KEYS) | TEXT, VALUES,
                                            max_size=5),
                   ATOMIC_TABLES | ALIAS_TABLES),
            max_size=4,
        ),
    },
)


def assert_loads_or_refuses(root: Path) -> None:
    try:
        config = load_config(root)
    except ConfigError as exc:
        text = str(exc)
        assert text.isprintable(), text
        assert text.startswith("ckdn.toml: ")
    else:
        assert isinstance(config, Config)


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(doc=DOCUMENTS)
def test_random_documents_load_or_are_refused_in_one_line(
        tmp_path: Path, doc: dict[str, Any]) -> None:
    body = "".join(f"{toml_value(k)} = {toml_value(v)}\n" for k, v in doc.items())
    (tmp_path / "ckdn.toml").write_text(body, encoding="utf-8")
    assert_loads_or_refuses(tmp_path)


@given(text=st.text(st.sampled_from(list("[]{}=\"'.,#\n abckrun_-0123456789\\"))
                    | st.characters(codec="utf-8"), max_size=80))
def test_random_text_loads_or_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "ckdn.toml").write_text(text, encoding="utf-8")
    assert_loads_or_refuses(tmp_path)


NAME_CHARS = "abcXYZ019_+.-"
ATOMIC_NAMES = st.text(NAME_CHARS, min_size=1, max_size=12).filter(lambda n: n[0] not in ".-")
PRINTABLE = st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]), max_size=10)


@st.composite
def valid_configs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Check], dict[str, Alias]]:
    names = draw(st.lists(ATOMIC_NAMES, min_size=1, max_size=4, unique_by=str.casefold))
    atomics: dict[str, Check] = {}
    aliases: dict[str, Alias] = {}
    doc: dict[str, Any] = {}
    split = draw(st.integers(1, len(names)))
    for name in names[:split]:
        argv = (draw(PRINTABLE.filter(bool)), *draw(st.lists(PRINTABLE, max_size=3)))
        timeout = draw(st.none() | st.floats(0.001, 3600))
        env = draw(st.dictionaries(st.text("ABC_1", min_size=1, max_size=6), PRINTABLE,
                                   max_size=2))
        top = draw(st.none() | st.integers(1, 500))
        table: dict[str, Any] = {"command": list(argv), "parser": "gate", "env": env}
        options: dict[str, Any] = {}
        if draw(st.booleans()):
            options["fail_under"] = draw(st.floats(0, 100))
        if timeout is not None:
            table["timeout"] = timeout
        if top is not None:
            table["top"] = top
        doc[name] = {**table, **options}
        atomics[name] = Check(name=name, command=argv, argv=argv, parser="gate",
                              timeout=timeout, env=env, top=top, options=options)
    for name in names[split:]:
        members = tuple(draw(st.lists(st.sampled_from(names[:split]), min_size=1, unique=True)))
        fail_fast = draw(st.booleans())
        doc[name] = {"members": list(members), "fail_fast": fail_fast}
        aliases[name] = Alias(name=name, members=members, fail_fast=fail_fast)
    return doc, atomics, aliases


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(case=valid_configs())
def test_generated_valid_configs_load_to_the_values_written(
        tmp_path: Path, case: tuple[dict[str, Any], dict[str, Check], dict[str, Alias]]) -> None:
    doc, atomics, aliases = case
    (tmp_path / "ckdn.toml").write_text(f"check = {toml_value(doc)}\n", encoding="utf-8")
    config = load_config(tmp_path)
    assert dict(config.checks) == atomics
    assert dict(config.aliases) == aliases
