"""Validating each table of ``ckdn.toml`` in full at load, and wording its mistakes.

A mistake found halfway through an alias would leave an agent with half a verdict;
every refusal names the file, the table and the key, and what was meant.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from ckdn._lite.argv import split_command
from ckdn.config._values import Alias, Check
from ckdn.errors import ConfigError, suggest
from ckdn.parsers import get_parser
from ckdn.parsers.base import OptionError, option_names
from ckdn.redact import DEFAULT, RedactSettings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

CHECK_KEYS = ("command", "parser", "timeout", "env", "top", "description", "requires",
              "env_allow")
ALIAS_KEYS = ("members", "fail_fast", "description")

#: The distribution-name part of a PEP 508 requirement, and what may follow it
#: (compiled by ``re``'s cache when a check first names ``requires``).
_REQUIREMENT = r"\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:[\[(<>=!~;@]|\Z)"

#: The words a POSIX shell reads as operators (or redirections) when they stand alone.
#: ckdn runs no shell, so in a string command they would reach the program as
#: arguments: ``pytest | tee log`` runs pytest with ``|``, ``tee`` and ``log``.
SHELL_OPERATORS = frozenset({"|", "||", "|&", "&", "&&", ";", ";;", "<", "<<", "<<<", ">", ">>",
                             ">|", "&>", "&>>", "2>", "2>>", "2>&1", "1>&2", ">&2"})

#: A timeout past a year is a unit mistake, and far larger values overflow the
#: OS timer APIs the runner waits with.
_TIMEOUT_MAX = 365 * 24 * 3600


class Tables:
    """Reads the tables of one file; every error names ``shown`` and the table."""

    def __init__(self, shown: str, cwd: str) -> None:
        self.shown = shown
        self.cwd = cwd

    def error(self, table: str | None, text: str) -> ConfigError:
        head = f"{self.shown}: [{table}] " if table else f"{self.shown}: "
        return ConfigError(head + text)

    def alias(self, where: str, name: str, table: dict[str, Any],
              raw_checks: dict[str, Any]) -> Alias:
        for key in table:
            if key in ALIAS_KEYS:
                continue
            if key == "command":
                raise self.error(where, "has both 'command' (atomic check) and 'members' "
                                        "(alias); keep one")
            if key in CHECK_KEYS:
                raise self.error(where, f"{key}: belongs to atomic checks; an alias takes only "
                                        f"{', '.join(ALIAS_KEYS)}")
            raise self.error(where, unknown("key", key, ALIAS_KEYS))
        members = table["members"]
        if (not isinstance(members, list) or not members
                or not all(isinstance(m, str) and m for m in members)):
            raise self.error(where, f"members: must be a non-empty array of check names, "
                                    f"not {show(members)}")
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
                                        + suggest(member, atomics))
            if isinstance(target, dict) and "members" in target:
                raise self.error(where, f"members: {member!r} is an alias; aliases do not "
                                        "nest, list its members instead")
        fail_fast = table.get("fail_fast", True)
        if not isinstance(fail_fast, bool):
            raise self.error(where, f"fail_fast: must be true or false, not {show(fail_fast)}")
        return Alias(name=name, members=tuple(members), fail_fast=fail_fast,
                     description=self.description(where, table))

    def atomic(self, where: str, name: str, table: dict[str, Any]) -> Check:
        if "command" not in table:
            for key, value in table.items():
                if isinstance(value, dict) and ("command" in value or "members" in value):
                    dotted = toml_key(f"{name}.{key}")
                    raise self.error(where, f"{key}: is a table; a check name with a dot is "
                                            f"quoted: [check.{dotted}]")
                hint = suggest(key, ("command", "members"))
                if hint:
                    raise self.error(where, f"unknown key {key!r}{hint}")
            raise self.error(where, "needs 'command' (an atomic check) or 'members' (an alias)")
        command, argv = self.command(where, name, table["command"])
        parser_name = table.get("parser")
        if parser_name is None:
            for key in table:  # `parsr = "pytest"`: name the typo, not only the absence
                hint = suggest(key, ("parser",))
                if hint:
                    raise self.error(where, f"unknown key {key!r}{hint}")
            raise self.error(where, "parser: missing; every atomic check names a parser "
                                    "(parser = \"generic\" reads the exit code only)")
        if not isinstance(parser_name, str) or not parser_name:
            raise self.error(where, f"parser: must be a parser name, not {show(parser_name)}")
        timeout = table.get("timeout")
        if timeout is not None:
            timeout = self.timeout(where, timeout)
        top = table.get("top")
        if top is not None:
            top = self.integer(where, "top", top, 1)
        options = {k: v for k, v in table.items() if k not in CHECK_KEYS}
        self.options(where, parser_name, options)
        return Check(
            name=name, command=command, argv=argv, parser=parser_name, timeout=timeout,
            env=MappingProxyType(self.env(where, table.get("env", {}))), top=top,
            options=MappingProxyType(options), description=self.description(where, table),
            requires=self.requires(where, table.get("requires", [])),
            env_allow=self.env_allow(where, table.get("env_allow")),
        )

    def command(self, where: str, name: str,
                value: Any) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
        if isinstance(value, str):
            try:
                argv = tuple(split_command(value))
            except ValueError as exc:
                raise self.error(where, f"command: cannot be split like a shell line: {exc} "
                                        "(no shell runs it; quote each argument)") from None
            command: str | tuple[str, ...] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            argv = command = tuple(value)
        else:
            raise self.error(where, f"command: must be a string or an array of strings, "
                                    f"not {show(value)}")
        if not argv or not argv[0]:
            raise self.error(where, "command: names no program to run")
        if isinstance(value, str) and not SHELL_OPERATORS.isdisjoint(argv):
            operator = bare_operator(value)
            if operator is not None:
                raise self.error(where, (
                    f"command: {operator!r} is a shell operator, but no shell runs this "
                    f"command: {argv[0]} would get {operator!r} as an argument; put the shell "
                    f"line in a script and run that (command = \"sh scripts/{name}.sh\"), "
                    f"or quote {operator!r} if it is an argument"))
        if any("\0" in arg for arg in argv):
            raise self.error(where, "command: contains a NUL character")
        return command, argv

    def timeout(self, where: str, value: Any) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and isinstance(value, int):
            ok = 0 < value <= _TIMEOUT_MAX
        elif ok:
            ok = math.isfinite(value) and 0 < value <= _TIMEOUT_MAX
        if not ok:
            raise self.error(where, f"timeout: must be a number > 0 (seconds, at most "
                                    f"{_TIMEOUT_MAX}), not {show(value)}")
        return float(value)

    def integer(self, where: str, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(where, f"{key}: must be an integer >= {minimum}, not {show(value)}")
        return value

    def description(self, where: str, table: dict[str, Any]) -> str | None:
        value = table.get("description")
        if value is not None and not isinstance(value, str):
            raise self.error(where, f"description: must be a string, not {show(value)}")
        return value

    def env(self, where: str, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.error(where, f"env: must be a table of strings, not {show(value)}")
        for key, item in value.items():
            if not key or "=" in key or "\0" in key:
                raise self.error(where, f"env: {key!r} is not a valid variable name")
            if not isinstance(item, str):
                raise self.error(where, f"env: {key} must be a string, not {show(item)}")
            if "\0" in item:
                raise self.error(where, f"env: {key} contains a NUL character")
        return dict(value)

    def env_allow(self, where: str, value: Any) -> tuple[str, ...] | None:
        """Names the child keeps from ckdn's environment (``NAME``, or ``PREFIX*``)."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(where, f"env_allow: must be an array of variable names, "
                                    f"not {show(value)}")
        for name in value:
            bare = name[:-1] if name.endswith("*") else name
            if not bare or "=" in bare or "*" in bare or "\0" in bare:
                raise self.error(where, f"env_allow: {name!r} is not a variable name (NAME, or"
                                        " PREFIX* for every name that starts with PREFIX)")
        return tuple(value)

    def requires(self, where: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(where, f"requires: must be an array of requirement strings, "
                                    f"not {show(value)}")
        if not value:
            return ()
        import re  # here: `re` costs every run, and only a check with requires needs it

        for item in value:
            if (not isinstance(item, str) or not re.match(_REQUIREMENT, item)
                    or not item.isprintable()):
                raise self.error(where, f"requires: {show(item)} is not a PEP 508 requirement "
                                        "(e.g. \"ruff>=0.5\")")
        return tuple(value)

    def options(self, where: str, parser_name: str, options: dict[str, Any]) -> None:
        for key in options:
            if key in ALIAS_KEYS:
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
                hint = suggest(exc.key, [*CHECK_KEYS, *declared])
                text = (f"unknown key {exc.key!r}{hint}" if hint
                        else f"unknown key {exc.key!r}: {exc.message}")
            elif f"'{exc.key}'" in exc.message:
                text = exc.message
            else:
                text = f"{exc.key}: {exc.message}"
            raise self.error(where, text) from None


def bare_operator(command: str) -> str | None:
    """The first shell operator that stands in ``command`` as a word with no quote or escape.

    ``shlex.split`` loses the quoting (``'|'`` and ``|`` both give ``|``), so the
    line is read again with shlex's POSIX rules, only to see which words were
    written bare. Called only when the split already produced an operator.
    """
    quote = ""
    escaped = quoted = False
    word: list[str] = []
    for char in f"{command} ":
        if escaped:
            escaped = False
            word.append(char)
        elif quote == "'":
            if char == "'":
                quote = ""
        elif quote:
            if char == "\\":
                escaped = True
            elif char == '"':
                quote = ""
        elif char in " \t\r\n":
            if word and not quoted and "".join(word) in SHELL_OPERATORS:
                return "".join(word)
            word, quoted = [], False
        elif char in "'\"":
            quote, quoted = char, True
            word.append(char)
        elif char == "\\":
            escaped = quoted = True
        else:
            word.append(char)
    return None


# -- wording ---------------------------------------------------------------------------

#: What a TOML key may be made of unquoted.
BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def unknown(what: str, key: str, known: Iterable[str]) -> str:
    names = list(known)
    hint = suggest(key, names)
    return f"unknown {what} {key!r}{hint}" if hint else (
        f"unknown {what} {key!r} (known: {', '.join(names)})")


def show(value: Any) -> str:
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


def toml_key(name: str) -> str:
    """``name`` as it would be written in a TOML table header."""
    if name and BARE_KEY.issuperset(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- [run].redact ---------------------------------------------------------------------------

REDACT_KEYS = ("enabled", "full_log", "high_entropy", "allow", "names", "patterns")
_WHERE = "run.redact"
_RULE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def redact_settings(tables: Tables, value: Any) -> RedactSettings:
    """The settings ``[run].redact`` gives (``value``: true/false or the table; a pattern
    is compiled now, and refused in one line when it does not compile or matches "")."""
    if isinstance(value, bool):
        return DEFAULT if value else RedactSettings(enabled=False)
    if not isinstance(value, dict):
        raise tables.error("run", f"redact: must be true, false or a table [run.redact], "
                                  f"not {show(value)}")
    for key in value:
        if key not in REDACT_KEYS:
            raise tables.error(_WHERE, unknown("key", key, REDACT_KEYS))
    flags = {}
    for key in ("enabled", "full_log", "high_entropy"):
        flag = value.get(key, key == "enabled")
        if not isinstance(flag, bool):
            raise tables.error(_WHERE, f"{key}: must be true or false, not {show(flag)}")
        flags[key] = flag
    return RedactSettings(**flags, allow=_strings(tables, value, "allow"),
                          names=_strings(tables, value, "names"),
                          patterns=_patterns(tables, value.get("patterns", {})))


def _strings(tables: Tables, table: dict[str, Any], key: str) -> tuple[str, ...]:
    items = table.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise tables.error(_WHERE, f"{key}: must be an array of non-empty strings, "
                                   f"not {show(items)}")
    return tuple(items)


def _patterns(tables: Tables, table: Any) -> tuple[tuple[str, str], ...]:
    where = f"{_WHERE}.patterns"
    if not isinstance(table, dict):
        raise tables.error(_WHERE, f"patterns: must be a table [{where}] of rule name = "
                                   f"regular expression, not {show(table)}")
    out: list[tuple[str, str]] = []
    for name, source in table.items():
        if not name or not _RULE_CHARS.issuperset(name) or len(name) > 40:
            raise tables.error(where, f"{name!r}: a rule name is lower-case letters, digits "
                                      "and '-' (at most 40); it is shown as [REDACTED:name]")
        if not isinstance(source, str) or not source:
            raise tables.error(where, f"{name}: must be a regular expression string, "
                                      f"not {show(source)}")
        import re  # here: `re` costs every run, and only a config with patterns needs it

        try:
            compiled = re.compile(source)
        except (re.error, OverflowError, RecursionError) as exc:
            raise tables.error(where, f"{name}: not a valid regular expression: {exc}"
                               ) from None
        if compiled.fullmatch(""):
            raise tables.error(where, f"{name}: matches the empty string, so it would match "
                                      "everywhere; make it need at least one character")
        out.append((name, source))
    return tuple(out)
