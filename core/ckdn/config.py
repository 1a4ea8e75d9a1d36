"""Reading ``ckdn.toml`` into frozen values, refusing every mistake at load.

A config mistake found halfway through an alias (a typo'd option, a member that
does not exist) would leave an agent with half a verdict, so the whole file is
validated before anything runs: every wrong type, unknown key and broken alias
is a :class:`~ckdn.errors.ConfigError` of one line naming the file, the table
and the key. Parser options are validated by the parser that owns them.

Loading happens on every ``ckdn run``: ``tomllib`` (for a file beyond plain
TOML, see :mod:`ckdn._toml`), ``shlex`` and ``difflib`` are imported only by the
code path that needs them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ckdn._record import Record, record
from ckdn._toml import read_plain
from ckdn.errors import ConfigError, UsageError
from ckdn.parsers import get_parser
from ckdn.parsers.base import OptionError, option_names
from ckdn.runname import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONFIG_ENV",
    "CONFIG_NAME",
    "Alias",
    "Check",
    "Config",
    "RunSettings",
    "config_path",
    "default_config",
    "load_config",
]

CONFIG_NAME = "ckdn.toml"
CONFIG_ENV = "CKDN_CONFIG"

_RUN_KEYS = ("runs_dir", "keep", "top", "max_snippet_lines", "log_tail_lines")
_CHECK_KEYS = ("command", "parser", "timeout", "env", "top", "description", "requires")
_ALIAS_KEYS = ("members", "fail_fast", "description")
_TOP_KEYS = ("run", "check")

#: What a TOML key may be made of unquoted.
_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
#: Names become run directory names and lock names: no separators, nothing a
#: shell or a filesystem treats specially, nothing hidden. At most 64 characters.
_NAME_FIRST = (_BARE_KEY - {"-"}) | {"+"}
_NAME_CHARS = _BARE_KEY | {"+", "."}
_NAME_RULE = ("use letters, digits, '_', '-', '.', '+' (at most 64, not starting with '.' or '-')")

#: The distribution-name part of a PEP 508 requirement, and what may follow it
#: (compiled by ``re``'s cache when a check first names ``requires``).
_REQUIREMENT = r"\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:[\[(<>=!~;@]|\Z)"

_BOM = b"\xef\xbb\xbf"

#: A timeout past a year is a unit mistake, and far larger values overflow the
#: OS timer APIs the runner waits with.
_TIMEOUT_MAX = 365 * 24 * 3600


_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@record
class RunSettings(Record):
    """The ``[run]`` table; ``runs_dir`` is absolute, taken from the invocation cwd."""

    __slots__ = ("keep", "log_tail_lines", "max_snippet_lines", "runs_dir", "top")
    runs_dir: str
    keep: int
    top: int
    max_snippet_lines: int
    log_tail_lines: int

    def __init__(self, runs_dir: str, keep: int = 20, top: int = 20,
                 max_snippet_lines: int = 12, log_tail_lines: int = 40) -> None:
        self._assign(runs_dir, keep, top, max_snippet_lines, log_tail_lines)


@record
class Check(Record):
    """An atomic check: one command, run without a shell, read by one parser.

    ``argv`` keeps ``{run_dir}`` as written: the app substitutes it per run.
    ``options`` are every key that is not a check key, already accepted by the
    parser. ``requires`` is information for installers; running ignores it.
    ``env`` and ``options`` default to an empty read-only mapping.
    """

    __slots__ = ("argv", "command", "description", "env", "name", "options", "parser",
                 "requires", "timeout", "top")
    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]
    parser: str
    timeout: float | None
    env: Mapping[str, str]
    top: int | None
    options: Mapping[str, Any]
    description: str | None
    requires: tuple[str, ...]

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, name: str, command: str | tuple[str, ...], argv: tuple[str, ...], parser: str,
            timeout: float | None = None, env: Mapping[str, str] = _EMPTY,
            top: int | None = None, options: Mapping[str, Any] = _EMPTY,
            description: str | None = None, requires: tuple[str, ...] = ()) -> None:
        self._assign(name, command, argv, parser, timeout, env, top, options, description,
                     requires)


@record
class Alias(Record):
    """A named, ordered group of atomic checks (never of other aliases)."""

    __slots__ = ("description", "fail_fast", "members", "name")
    name: str
    members: tuple[str, ...]
    fail_fast: bool
    description: str | None

    def __init__(self, name: str, members: tuple[str, ...], fail_fast: bool = True,
                 description: str | None = None) -> None:
        self._assign(name, members, fail_fast, description)


@record
class Config(Record):
    """A validated ``ckdn.toml`` (``path`` None: no file, defaults in use)."""

    __slots__ = ("aliases", "checks", "cwd", "path", "run")
    path: str | None
    cwd: str
    run: RunSettings
    checks: Mapping[str, Check]
    aliases: Mapping[str, Alias]

    def __init__(self, path: str | None, cwd: str, run: RunSettings,
                 checks: Mapping[str, Check] = _EMPTY,
                 aliases: Mapping[str, Alias] = _EMPTY) -> None:
        self._assign(path, cwd, run, checks, aliases)

    def get(self, name: str) -> Check | Alias:
        """The atomic check or alias called ``name``; UsageError naming the choices."""
        found = self.checks.get(name) or self.aliases.get(name)
        if found is not None:
            return found
        names = [*self.checks, *self.aliases]
        if not names:
            where = (f"no {CONFIG_NAME} in {self.cwd}" if self.path is None
                     else f"{shown_path(self.path, self.cwd)} defines no checks")
            raise UsageError(_one_line(
                f"unknown check {name!r}; {where}; run `ckdn init` or pass --config"))
        hint = _suggest(name, names)
        raise UsageError(_one_line(
            f"unknown check {name!r}{hint} (configured: {', '.join(names)})"))


def config_path(cwd: str | os.PathLike[str], explicit: str | None = None) -> str:
    """The config file to read: ``--config``, else ``$CKDN_CONFIG``, else ``cwd/ckdn.toml``.

    Relative paths are taken from ``cwd`` (the invocation cwd), so ``--cwd``
    and ``--config`` compose the same way wherever ckdn was started.
    """
    base = _absolute(cwd)
    chosen = explicit if explicit is not None else os.environ.get(CONFIG_ENV) or None
    if chosen is None:
        return os.path.join(base, CONFIG_NAME)
    return _absolute(os.path.join(base, os.path.expanduser(chosen)))


def default_config(cwd: str | os.PathLike[str]) -> Config:
    """The settings in force when there is no config file (read-only commands)."""
    base = _absolute(cwd)
    return Config(path=None, cwd=base, run=RunSettings(runs_dir=os.path.join(base, ".agent-runs")))


def load_config(cwd: str | os.PathLike[str], explicit: str | None = None, *,
                required: bool = True) -> Config:
    """Read and validate the config file for ``cwd``.

    A missing default ``ckdn.toml`` gives :func:`default_config` when not
    ``required``. A file named by ``--config`` or ``$CKDN_CONFIG`` must exist
    either way: silently ignoring a file the user pointed at would run the
    wrong checks.
    """
    base = _absolute(cwd)
    path = config_path(base, explicit)
    shown = shown_path(path, base)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        if explicit is not None or os.environ.get(CONFIG_ENV):
            source = "--config" if explicit is not None else f"${CONFIG_ENV}"
            message = f"{shown}: no such config file (named by {source})"
            raise ConfigError(_one_line(message)) from None
        if not required:
            return default_config(base)
        raise ConfigError(_one_line(
            f"no {CONFIG_NAME} in {base}; run `ckdn init` or pass --config")) from None
    except OSError as exc:
        raise ConfigError(_one_line(
            f"{shown}: cannot read config file: {exc.strerror or exc}")) from None
    return _Loader(shown, base).load(path, data)


# -- validation ---------------------------------------------------------------------------


class _Loader:
    """Validates one parsed document; every error names ``shown`` and the table."""

    def __init__(self, shown: str, cwd: str) -> None:
        self.shown = shown
        self.cwd = cwd

    def error(self, table: str | None, text: str) -> ConfigError:
        head = f"{self.shown}: [{table}] " if table else f"{self.shown}: "
        return ConfigError(_one_line(head + text))

    def load(self, path: str, data: bytes) -> Config:
        doc = self.parse_toml(data)
        for key in doc:
            if key not in _TOP_KEYS:
                raise self.error(None, _unknown("top-level key", key, _TOP_KEYS))
        run = self.run_settings(doc.get("run", {}))
        raw_checks = doc.get("check", {})
        if not isinstance(raw_checks, dict):
            raise self.error(None, f"check: must be tables [check.NAME], not {_show(raw_checks)}")
        checks: dict[str, Check] = {}
        aliases: dict[str, Alias] = {}
        folded: dict[str, str] = {}
        for name, table in raw_checks.items():
            where = f"check.{_toml_key(name)}"
            if not isinstance(table, dict) and name in (*_CHECK_KEYS, *_ALIAS_KEYS):
                raise self.error("check", f"{name}: belongs in a check's own table: "
                                          f"[check.NAME], then {name} = ...")
            self.check_name(where, name, folded)
            if not isinstance(table, dict):
                raise self.error(where, f"must be a table, not {_show(table)}")
            if "members" in table:
                aliases[name] = self.alias(where, name, table, raw_checks)
            else:
                checks[name] = self.atomic(where, name, table)
        return Config(path=path, cwd=self.cwd, run=run, checks=MappingProxyType(checks),
                      aliases=MappingProxyType(aliases))

    def parse_toml(self, data: bytes) -> dict[str, Any]:
        # A leading byte order mark is skipped, as "utf-8-sig" would (without loading that codec).
        skip = len(_BOM) if data.startswith(_BOM) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = skip + exc.start
            raise self.error(None, f"invalid TOML: not UTF-8 (byte {data[offset]:#04x} "
                                   f"at offset {offset})") from None
        plain = read_plain(text)
        if plain is not None:
            return plain
        import tomllib  # lazy: only a file beyond plain TOML needs it (see ckdn._toml)

        try:
            return tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or int() refusing a 5000-digit number
            raise self.error(None, f"invalid TOML: {exc}") from None
        except RecursionError:
            raise self.error(None, "invalid TOML: nested too deeply") from None

    def run_settings(self, table: Any) -> RunSettings:
        if not isinstance(table, dict):
            raise self.error(None, f"run: must be a table [run], not {_show(table)}")
        for key in table:
            if key not in _RUN_KEYS:
                raise self.error("run", _unknown("key", key, _RUN_KEYS))
        runs_dir = table.get("runs_dir", ".agent-runs")
        if not isinstance(runs_dir, str) or not runs_dir.strip() or "\0" in runs_dir:
            raise self.error("run", f"runs_dir: must be a non-empty path string, "
                                    f"not {_show(runs_dir)}")
        ints = {key: self.integer("run", key, table[key], 0 if key == "log_tail_lines" else 1)
                for key in _RUN_KEYS[1:] if key in table}
        runs = os.path.join(self.cwd, os.path.expanduser(runs_dir))
        return RunSettings(runs_dir=_absolute(runs), **ints)

    def check_name(self, where: str, name: str, folded: dict[str, str]) -> None:
        if not (0 < len(name) <= 64 and name[0] in _NAME_FIRST and _NAME_CHARS.issuperset(name)):
            raise self.error(where, f"invalid check name {name!r}: {_NAME_RULE}")
        # Names become run-dir and lock names: two that differ only in case
        # would share them on a case-insensitive filesystem.
        other = folded.setdefault(name.casefold(), name)
        if other != name:
            raise self.error(where, f"check name {name!r} differs from {other!r} only in "
                                    "letter case; rename one")

    def alias(self, where: str, name: str, table: dict[str, Any],
              raw_checks: dict[str, Any]) -> Alias:
        for key in table:
            if key in _ALIAS_KEYS:
                continue
            if key == "command":
                raise self.error(where, "has both 'command' (atomic check) and 'members' "
                                        "(alias); keep one")
            if key in _CHECK_KEYS:
                raise self.error(where, f"{key}: belongs to atomic checks; an alias takes only "
                                        f"{', '.join(_ALIAS_KEYS)}")
            raise self.error(where, _unknown("key", key, _ALIAS_KEYS))
        members = table["members"]
        if (not isinstance(members, list) or not members
                or not all(isinstance(m, str) and m for m in members)):
            raise self.error(where, f"members: must be a non-empty array of check names, "
                                    f"not {_show(members)}")
        seen: set[str] = set()
        for member in members:
            if member == name:
                raise self.error(where, f"members: {member!r} is this alias itself")
            if member in seen:
                raise self.error(where, f"members: {member!r} is listed twice")
            seen.add(member)
            target = raw_checks.get(member)
            if target is None:
                atomics = [n for n, t in raw_checks.items()
                           if isinstance(t, dict) and "members" not in t]
                raise self.error(where, f"members: unknown check {member!r}"
                                        + _suggest(member, atomics))
            if isinstance(target, dict) and "members" in target:
                raise self.error(where, f"members: {member!r} is an alias; aliases do not "
                                        "nest, list its members instead")
        fail_fast = table.get("fail_fast", True)
        if not isinstance(fail_fast, bool):
            raise self.error(where, f"fail_fast: must be true or false, not {_show(fail_fast)}")
        return Alias(name=name, members=tuple(members), fail_fast=fail_fast,
                     description=self.description(where, table))

    def atomic(self, where: str, name: str, table: dict[str, Any]) -> Check:
        if "command" not in table:
            for key, value in table.items():
                if isinstance(value, dict) and ("command" in value or "members" in value):
                    dotted = _toml_key(f"{name}.{key}")
                    raise self.error(where, f"{key}: is a table; a check name with a dot is "
                                            f"quoted: [check.{dotted}]")
                hint = _suggest(key, ("command", "members"))
                if hint:
                    raise self.error(where, f"unknown key {key!r}{hint}")
            raise self.error(where, "needs 'command' (an atomic check) or 'members' (an alias)")
        command, argv = self.command(where, table["command"])
        parser_name = table.get("parser")
        if parser_name is None:
            raise self.error(where, "parser: missing; every atomic check names a parser "
                                    "(parser = \"generic\" reads the exit code only)")
        if not isinstance(parser_name, str) or not parser_name:
            raise self.error(where, f"parser: must be a parser name, not {_show(parser_name)}")
        timeout = table.get("timeout")
        if timeout is not None:
            timeout = self.timeout(where, timeout)
        top = table.get("top")
        if top is not None:
            top = self.integer(where, "top", top, 1)
        options = {k: v for k, v in table.items() if k not in _CHECK_KEYS}
        self.options(where, parser_name, options)
        return Check(
            name=name, command=command, argv=argv, parser=parser_name, timeout=timeout,
            env=MappingProxyType(self.env(where, table.get("env", {}))), top=top,
            options=MappingProxyType(options), description=self.description(where, table),
            requires=self.requires(where, table.get("requires", [])),
        )

    def command(self, where: str, value: Any) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
        if isinstance(value, str):
            import shlex  # lazy: only string commands need it

            try:
                argv = tuple(shlex.split(value, posix=True))
            except ValueError as exc:
                raise self.error(where, f"command: cannot be split like a shell line: {exc} "
                                        "(no shell runs it; quote each argument)") from None
            command: str | tuple[str, ...] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            argv = command = tuple(value)
        else:
            raise self.error(where, f"command: must be a string or an array of strings, "
                                    f"not {_show(value)}")
        if not argv or not argv[0]:
            raise self.error(where, "command: names no program to run")
        if any("\0" in arg for arg in argv):
            raise self.error(where, "command: contains a NUL character")
        return command, argv

    def timeout(self, where: str, value: Any) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and isinstance(value, int):
            ok = 0 < value <= _TIMEOUT_MAX
        elif ok:
            import math  # lazy: a shared library that only a fractional timeout needs

            ok = math.isfinite(value) and 0 < value <= _TIMEOUT_MAX
        if not ok:
            raise self.error(where, f"timeout: must be a number > 0 (seconds, at most "
                                    f"{_TIMEOUT_MAX}), not {_show(value)}")
        return float(value)

    def integer(self, where: str, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(where, f"{key}: must be an integer >= {minimum}, not {_show(value)}")
        return value

    def description(self, where: str, table: dict[str, Any]) -> str | None:
        value = table.get("description")
        if value is not None and not isinstance(value, str):
            raise self.error(where, f"description: must be a string, not {_show(value)}")
        return value

    def env(self, where: str, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.error(where, f"env: must be a table of strings, not {_show(value)}")
        for key, item in value.items():
            if not key or "=" in key or "\0" in key:
                raise self.error(where, f"env: {key!r} is not a valid variable name")
            if not isinstance(item, str):
                raise self.error(where, f"env: {key} must be a string, not {_show(item)}")
            if "\0" in item:
                raise self.error(where, f"env: {key} contains a NUL character")
        return dict(value)

    def requires(self, where: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(where, f"requires: must be an array of requirement strings, "
                                    f"not {_show(value)}")
        for item in value:
            if (not isinstance(item, str) or not re.match(_REQUIREMENT, item)
                    or not item.isprintable()):
                raise self.error(where, f"requires: {_show(item)} is not a PEP 508 requirement "
                                        "(e.g. \"ruff>=0.5\")")
        return tuple(value)

    def options(self, where: str, parser_name: str, options: dict[str, Any]) -> None:
        for key in options:
            if key in _ALIAS_KEYS:
                raise self.error(where, f"{key}: belongs to aliases (members = [...]); an "
                                        "atomic check does not take it")
        try:
            parser = get_parser(parser_name)
        except ConfigError as exc:
            raise self.error(where, f"parser: {exc.message}") from None
        validate = getattr(parser, "validate_options", None)
        if validate is None:
            return
        try:
            validate(options)
        except OptionError as exc:
            declared = option_names(parser)
            if exc.key not in declared:
                hint = _suggest(exc.key, [*_CHECK_KEYS, *declared])
                text = (f"unknown key {exc.key!r}{hint}" if hint
                        else f"unknown key {exc.key!r}: {exc.message}")
            elif f"'{exc.key}'" in exc.message:
                text = exc.message
            else:
                text = f"{exc.key}: {exc.message}"
            raise self.error(where, text) from None


# -- message helpers ----------------------------------------------------------------------


def _unknown(what: str, key: str, known: Iterable[str]) -> str:
    names = list(known)
    hint = _suggest(key, names)
    return f"unknown {what} {key!r}{hint}" if hint else (
        f"unknown {what} {key!r} (known: {', '.join(names)})")


def _suggest(word: str, candidates: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for a near miss, else empty. difflib only on this error path."""
    import difflib  # lazy: only error messages need it

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _show(value: Any) -> str:
    """A short, one-line rendering of a TOML value for 'not X' in a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:40]) + "..."
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _toml_key(name: str) -> str:
    """``name`` as it would be written in a TOML table header."""
    if name and _BARE_KEY.issuperset(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _one_line(text: str) -> str:
    """Escape anything non-printable so a message from user text stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _absolute(path: str | os.PathLike[str]) -> str:
    """Absolute and normalised, without following symlinks (so relative displays hold)."""
    return os.path.abspath(path)
